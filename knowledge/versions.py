"""Version strings as clusters print them, compared as versions, and ranges over them.

Pure (no Django). Versions on an AI cluster come in many shapes: NCCL ``2.23.4`` or
``2.21.5+cuda12.4``, drivers ``550.54.15``, CUDA ``12.4``, kernels ``5.15.0-91-generic``,
DOCA/OFED ``24.07-0.6.1.0`` / ``5.8-3.0.7.0``, ConnectX firmware ``28.39.1002``. They are
compared component by component as numbers, so ``2.23.10`` > ``2.23.4`` (a string comparison
gets that wrong). Rules, in order of how often they matter:

* Components are the runs of digits and of letters; separators (``.``, ``-``, ``_``) only split.
* Trailing zeros do not count: ``2.23`` == ``2.23.0``.
* ``a``/``alpha``/``b``/``beta``/``rc``/``pre``/``dev`` mark a pre-release, which sorts before
  the release: ``2.24.0rc1`` < ``2.24``. Other words (``generic``) sort after numbers.
* A ``+local`` suffix (``+cuda12.4`` on NCCL packages) says what it was built for, not which
  version it is, and is ignored; a leading ``v`` is ignored too.

A range is a comma-separated list of clauses, all of which must hold: ``>=2.19, <2.24``,
``==2.23.*`` (or just ``2.23.*``), ``!=2.20.3``, a bare ``2.21.5`` (exactly that version).
An empty range (or ``*``) allows every version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

PRERELEASE = frozenset({"a", "alpha", "b", "beta", "c", "rc", "pre", "preview", "dev"})
_TOKEN = re.compile(r"\d+|[a-z]+")
_CLAUSE = re.compile(r"^(?P<op>>=|<=|==|!=|>|<|=)?\s*(?P<version>[^\s,<>=!]+?)(?P<star>\.\*)?$")

# Kinds of component, in sort order: pre-release word < end of version < number < other word.
_PRE, _END, _NUM, _WORD = 0, 1, 2, 3
_END_MARK = (_END, 0)


class VersionError(ValueError):
    """A string that is not a version, or a range that cannot be read."""


def version_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key: ``version_key(a) < version_key(b)`` exactly when version a is older."""
    core = str(text).strip().lower().split("+", 1)[0]
    if core.startswith("v") and core[1:2].isdigit():
        core = core[1:]
    tokens = _TOKEN.findall(core)
    if not core[:1].isdigit():
        raise VersionError(f"{text!r} is not a version (it should start with a number)")
    parts: list[tuple[int, int | str]] = []
    for token in tokens:
        if token.isdigit():
            parts.append((_NUM, int(token)))
        else:
            _drop_trailing_zeros(parts)  # "2.24.0rc1" is a pre-release of 2.24
            parts.append((_PRE if token in PRERELEASE else _WORD, token))
    _drop_trailing_zeros(parts)
    parts.append(_END_MARK)  # "2.23" must sort after "2.23rc1" and before "2.23.1"
    return tuple(parts)


def _drop_trailing_zeros(parts: list[tuple[int, int | str]]) -> None:
    while len(parts) > 1 and parts[-1] == (_NUM, 0):
        parts.pop()


def is_version(text: str) -> bool:
    try:
        version_key(text)
    except VersionError:
        return False
    return True


@total_ordering
@dataclass(frozen=True)
class Version:
    text: str

    def __post_init__(self) -> None:
        version_key(self.text)  # fail at construction on junk

    @property
    def key(self) -> tuple[tuple[int, int | str], ...]:
        return version_key(self.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __lt__(self, other: Version) -> bool:
        return self.key < other.key

    def __str__(self) -> str:
        return self.text


def compare(a: str, b: str) -> int:
    """-1, 0 or 1 as version a is older than, the same as, or newer than b."""
    ka, kb = version_key(a), version_key(b)
    return (ka > kb) - (ka < kb)


@dataclass(frozen=True)
class Clause:
    op: str  # one of >= <= > < == !=
    version: str

    def allows(self, key: tuple[tuple[int, int | str], ...]) -> bool:
        bound = version_key(self.version)
        return {
            ">=": key >= bound,
            "<=": key <= bound,
            ">": key > bound,
            "<": key < bound,
            "==": key == bound,
            "!=": key != bound,
        }[self.op]

    def __str__(self) -> str:
        return f"{self.op}{self.version}"


@dataclass(frozen=True)
class VersionRange:
    """A conjunction of clauses; no clauses means every version."""

    clauses: tuple[Clause, ...] = ()

    @classmethod
    def parse(cls, spec: str) -> VersionRange:
        text = str(spec or "").strip()
        if text in {"", "*", "any"}:
            return cls()
        clauses: list[Clause] = []
        for raw in text.split(","):
            part = raw.strip()
            if not part:
                continue
            clauses.extend(_parse_clause(part, spec))
        return cls(tuple(clauses))

    @property
    def is_any(self) -> bool:
        return not self.clauses

    def contains(self, version: str) -> bool:
        """Whether ``version`` is in the range; junk is never in a constrained range."""
        if self.is_any:
            return True
        try:
            key = version_key(version)
        except VersionError:
            return False
        return all(c.allows(key) for c in self.clauses)

    def __str__(self) -> str:
        return ", ".join(str(c) for c in self.clauses) or "any"

    def describe(self) -> str:
        """For badges: ``≥2.19, <2.24``."""
        pretty = {">=": "≥", "<=": "≤", "==": "", "!=": "≠", ">": ">", "<": "<"}
        return ", ".join(f"{pretty[c.op]}{c.version}" for c in self.clauses) or "any"


def _parse_clause(part: str, spec: str) -> list[Clause]:
    match = _CLAUSE.match(part)
    if not match:
        raise VersionError(
            f"{part!r} in {spec!r} is not a version clause; write e.g. '>=2.19', '<2.24', "
            "'2.23.*' or '2.21.5', separated by commas"
        )
    op = match["op"] or "=="
    op = "==" if op == "=" else op
    version = match["version"]
    if not is_version(version) or "x" in _TOKEN.findall(version.lower()):
        raise VersionError(
            f"{version!r} in {spec!r} is not a version (for a wildcard write 2.23.*)"
        )
    if match["star"]:
        if op not in {"==", "!="}:
            raise VersionError(f"{part!r}: a wildcard works only with == or !=")
        if op == "!=":
            raise VersionError(f"{part!r}: write '!=2.23.*' as two ranges instead ('<2.23, ...')")
        return [Clause(">=", version), Clause("<", _next_release(version))]
    return [Clause(op, version)]


def _next_release(prefix: str) -> str:
    """``2.23`` -> ``2.24``: the first version after everything that starts with the prefix."""
    numbers = re.findall(r"\d+", prefix)
    return ".".join([*numbers[:-1], str(int(numbers[-1]) + 1)])


def newest(versions: list[str]) -> str | None:
    """The newest of some version strings (junk ignored), or None."""
    valid = [v for v in versions if is_version(v)]
    return max(valid, key=version_key) if valid else None
