"""Redaction with consistent pseudonyms, for evidence that leaves the building.

Pure Python (no Django): usable from the bundle builder, the preview page and benchmarks.

Two passes over the same files, in the same order:

1. ``discover(line)`` learns host and user names from the places they show up in our
   evidence (NCCL line headers ``host:pid:tid [dev]``, nccl-tests rank lines ``on host
   device``, ``hostname=``, ``/home/<user>/``, ``USER=``, ...), on top of the names already
   known from parsed facts.
2. ``redact(line, file)`` replaces every host name, IPv4/IPv6 and MAC address, UUID/GUID,
   serial number, e-mail address, user name and configured pattern by a pseudonym.

The same original always gets the same pseudonym in every file of a bundle, and pseudonyms
are numbered in order of first appearance, so the output is deterministic. Pseudonyms keep
the shape of what they replace, so redacted logs still parse: IPv4 → 198.18.x.y (RFC 2544
benchmarking range), IPv6 → 2001:db8::n (documentation prefix), MAC → 02:00:00:xx:xx:xx
(locally administered), hosts → host-001, users → user-001.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

HOST, IPV4, IPV6, MAC, USER, EMAIL, GUID, SERIAL = (
    "host", "ipv4", "ipv6", "mac", "user", "email", "guid", "serial",
)  # fmt: skip
CATEGORIES = (HOST, IPV4, IPV6, MAC, USER, EMAIL, GUID, SERIAL)

# Names too generic to be secrets, never treated as user or host names.
NOT_SECRET = frozenset(
    {
        "root", "nobody", "daemon", "localhost", "user", "users", "admin", "none", "null",
        "true", "false", "unknown", "default", "home", "tmp", "var", "data", "local",
    }
)  # fmt: skip
MIN_NAME_LENGTH = 3
# Internal DNS suffixes: names under them are hosts even when nothing else says so.
INTERNAL_SUFFIXES = (
    "local", "internal", "lan", "corp", "intra", "intranet", "cluster", "localdomain", "priv",
)  # fmt: skip

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?"
_SUFFIXES = "|".join(INTERNAL_SUFFIXES)

# Pass 1: where names show up. Each regex runs only on lines that contain one of its cheap
# substrings (checked on the lower-cased line): most log lines contain none of them.
_HOST_CONTEXTS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    # NCCL_DEBUG line header, optionally after a launcher prefix: "mew0:1234:1234 [0] NCCL"
    (
        ("",),
        re.compile(
            rf"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:\s*|\d+:\s+|\[rank\d+\]:\s*)?(?P<name>{_NAME})"
            r":\d+:\d+ \["
        ),
    ),
    # nccl-tests device list: "#  Rank  0 Group  0 Pid 123 on  mew0 device  0 [0x17] ..."
    (("pid",), re.compile(rf"\bPid\s+\d+\s+on\s+(?P<name>{_NAME})\s+device\b")),
    (
        ("host", "node"),
        re.compile(
            rf"(?i)\b(?:host(?:_?name)?|node(?:_?name)?|nodelist)\"?\s*[=:]\s*\"?(?P<name>{_NAME})"
        ),
    ),
    (("ssh",), re.compile(rf"\bssh\s+(?:-\S+\s+)*(?:\w+@)?(?P<name>{_NAME})\b")),
    (
        tuple(f".{suffix}" for suffix in INTERNAL_SUFFIXES),
        re.compile(rf"(?i)(?P<name>{_NAME}\.(?:{_SUFFIXES}))\b"),
    ),
)
_USER_CONTEXTS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (
        ("/home/", "/users/", "/scratch/", "/u/"),
        re.compile(r"/(?:home|Users|scratch|u)/(?P<name>[A-Za-z_][\w.-]*)"),
    ),
    (
        ("user=", "logname="),
        re.compile(r"\b(?:USER|LOGNAME|SLURM_JOB_USER|SUDO_USER)=(?P<name>[A-Za-z_][\w.-]*)"),
    ),
    (("user",), re.compile(r"(?i)\buser(?:_?name)?\"?\s*[=:]\s*\"?(?P<name>[A-Za-z_][\w.-]*)")),
    (("uid=",), re.compile(r"\buid=\d+\((?P<name>[A-Za-z_][\w.-]*)\)")),
    (("@",), re.compile(rf"\b(?P<name>[a-z_][\w.-]*)@{_NAME}:")),  # shell prompt user@host:~$
)

# Pass 2: one regex per category, each behind a cheap gate (a substring test on the line).
# Where matches overlap the one that starts first wins, and at one position the earlier
# category below: e-mail before user, UUID before host, MAC before IPv6, and so on.
_SOURCES: tuple[tuple[str, str, Callable[[str], bool] | None], ...] = (
    (EMAIL, r"\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b", lambda s: "@" in s),
    (
        GUID,
        r"\b[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\b",
        lambda s: s.count("-") >= 4,
    ),
    (
        MAC,
        r"(?<![\w:-])[0-9A-Fa-f]{2}(?P<sep>[:-])[0-9A-Fa-f]{2}(?:(?P=sep)[0-9A-Fa-f]{2}){4}"
        r"(?![\w:-])",
        lambda s: s.count(":") >= 5 or s.count("-") >= 5,
    ),
    (
        IPV6,
        r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:%[\w.]+)?(?![\w:])",
        lambda s: "::" in s or s.count(":") >= 7,
    ),
    (IPV4, r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)", lambda s: s.count(".") >= 3),
    (
        GUID,
        r"\b0x[0-9A-Fa-f]{16}\b|(?<![\w:])[0-9A-Fa-f]{4}(?::[0-9A-Fa-f]{4}){3}(?![\w:])",
        lambda s: "0x" in s or s.count(":") >= 3,
    ),
    (
        SERIAL,
        r"(?i)\b(?:serial(?:[ _-]?(?:number|no))?|s/n)\s*[:=]\s*\"?(?P<value>[A-Za-z0-9][\w-]{3,})",
        lambda s: "erial" in s or "ERIAL" in s or "s/n" in s or "S/N" in s,
    ),
)
_IPV4_FULL = re.compile(r"(?:\d{1,3}\.){3}\d{1,3}")


@dataclass(frozen=True)
class Replacement:
    original: str
    alias: str
    category: str
    occurrences: int
    files: tuple[str, ...]


class Redactor:
    """One bundle's redaction state: learned names and the original → pseudonym maps."""

    def __init__(
        self,
        *,
        known_hosts: Iterable[str] = (),
        known_users: Iterable[str] = (),
        patterns: Iterable[tuple[str, str]] = (),
    ) -> None:
        self._hosts: set[str] = set()
        self._users: set[str] = set()
        for name in known_hosts:
            self._learn(self._hosts, name)
        for name in known_users:
            self._learn(self._users, name)
        self._patterns = [(_pattern_name(n), compile_pattern(rx)) for n, rx in patterns]
        self._plan: list[tuple[str, re.Pattern[str], Callable[[str], bool] | None]] | None = None
        self._aliases: dict[str, dict[str, str]] = defaultdict(dict)  # category: key -> alias
        self._memo: dict[tuple[str, str], str] = {}  # (category, text as found) -> alias
        self._hits: Counter[tuple[str, str, str]] = Counter()  # (category, alias, file)
        self._short_hosts: set[str] = set()

    # --- pass 1 ----------------------------------------------------------------------------

    def discover(self, line: str) -> None:
        lower = line.lower()
        for needles, rx in _HOST_CONTEXTS:
            if any(n in lower for n in needles):
                for match in rx.finditer(line):
                    self._learn(self._hosts, match["name"])
        for needles, rx in _USER_CONTEXTS:
            if any(n in lower for n in needles):
                for match in rx.finditer(line):
                    self._learn(self._users, match["name"])

    @property
    def hosts(self) -> set[str]:
        return set(self._hosts)

    @property
    def users(self) -> set[str]:
        return set(self._users)

    # --- pass 2 ----------------------------------------------------------------------------

    def redact(self, line: str, file: str = "") -> str:
        plan = self._plan if self._plan is not None else self._compile()
        found: list[tuple[int, int, re.Match[str]]] = []
        for priority, (_category, rx, gate) in enumerate(plan):
            if gate is None or gate(line):
                found.extend((m.start(), priority, m) for m in rx.finditer(line))
        if not found:
            return line
        found.sort(key=lambda f: (f[0], f[1]))
        out: list[str] = []
        cursor = 0
        for start, priority, match in found:
            if start < cursor:
                continue  # inside an earlier (or higher-priority) replacement
            out.append(line[cursor:start])
            out.append(self._replace(plan[priority][0], match, file))
            cursor = match.end()
        out.append(line[cursor:])
        return "".join(out)

    def redact_text(self, text: str, file: str = "") -> str:
        return "".join(self.redact(line, file) for line in text.splitlines(keepends=True))

    def replacements(self) -> list[Replacement]:
        """original → alias with counts (for the preview page only: it shows originals)."""
        occurrences: Counter[tuple[str, str]] = Counter()
        files: dict[tuple[str, str], set[str]] = defaultdict(set)
        for (category, alias, file), n in self._hits.items():
            occurrences[category, alias] += n
            if file:
                files[category, alias].add(file)
        out = [
            Replacement(
                original,
                alias,
                category,
                occurrences[category, alias],
                tuple(sorted(files[category, alias])),
            )
            for category, aliases in self._aliases.items()
            for original, alias in aliases.items()
        ]
        return sorted(out, key=lambda r: (r.category, r.alias))

    def report(self) -> dict[str, object]:
        """What was redacted, without the originals (this goes into the bundle)."""
        by_alias: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        per_file: dict[str, Counter[str]] = defaultdict(Counter)
        for (category, alias, file), n in sorted(self._hits.items()):
            entry = by_alias[category].setdefault(alias, {"occurrences": 0, "files": []})
            entry["occurrences"] += n
            if file:
                entry["files"].append(file)
                per_file[file][category] += n
        return {
            "categories": {
                category: {
                    "pseudonyms": len(aliases),
                    "occurrences": sum(a["occurrences"] for a in aliases.values()),
                    "aliases": dict(sorted(aliases.items())),
                }
                for category, aliases in sorted(by_alias.items())
            },
            "files": {name: dict(sorted(c.items())) for name, c in sorted(per_file.items())},
            "patterns": [name for name, _ in self._patterns],
        }

    # --- internals -------------------------------------------------------------------------

    def _learn(self, names: set[str], name: str | None) -> None:
        name = (name or "").strip().strip(".")
        if len(name) < MIN_NAME_LENGTH or name.lower() in NOT_SECRET or name.isdigit():
            return
        if _IPV4_FULL.fullmatch(name):
            return  # an address, handled as one
        names.add(name)

    def _compile(self) -> list[tuple[str, re.Pattern[str], Callable[[str], bool] | None]]:
        """The pass-2 plan, in priority order; built once, after pass 1 learned the names.

        One regex per category, each behind a cheap substring gate: most lines of a log
        hold no e-mail, no UUID, no serial, and the gate skips those regexes entirely.
        """
        plan = [(category, re.compile(source), gate) for category, source, gate in _SOURCES]
        plan += [(f"pattern:{name}", rx, None) for name, rx in self._patterns]
        if self._hosts:
            plan.append((HOST, re.compile(_literal(self._hosts)), None))
        if self._users:
            plan.append((USER, re.compile(_literal(self._users)), None))
        self._short_hosts = {h.lower() for h in self._hosts}
        self._plan = plan
        return plan

    def _replace(self, category: str, match: re.Match[str], file: str) -> str:
        text = match.group(0)
        if category == SERIAL:  # keep "Serial Number : ", replace the value
            value = match["value"]
            return text[: len(text) - len(value)] + self._alias(SERIAL, value, file)
        if not text or not _VALID.get(category, _always)(text):
            return text
        return self._alias(category, text, file)

    def _alias(self, category: str, value: str, file: str) -> str:
        alias = self._memo.get((category, value))
        if alias is None:
            key = self._key(category, value)
            aliases = self._aliases[category]
            alias = aliases.get(key)
            if alias is None:
                alias = aliases[key] = _pseudonym(category, len(aliases) + 1)
            self._memo[category, value] = alias
        self._hits[category, alias, file] += 1
        return alias

    def _key(self, category: str, value: str) -> str:
        """Spellings of one thing share a pseudonym: case, FQDN vs short name, IPv6 forms."""
        if category == IPV6:
            return str(ipaddress.IPv6Address(value.split("%", 1)[0]))
        if category not in (HOST, EMAIL, MAC, GUID):
            return value
        key = value.lower().replace("-", ":") if category == MAC else value.lower()
        if category == HOST:
            short = key.split(".", 1)[0]
            if short != key and short in self._short_hosts:
                return short
        return key


def compile_pattern(regex: str) -> re.Pattern[str]:
    """A configured pattern, refused with a clear message when it is not a usable regex."""
    try:
        compiled = re.compile(regex)
    except re.error as exc:
        raise ValueError(f"redaction pattern {regex!r} is not a valid regex: {exc}") from None
    if compiled.fullmatch(""):
        raise ValueError(f"redaction pattern {regex!r} matches the empty string")
    return compiled


def _pattern_name(name: str) -> str:
    clean = re.sub(r"[^a-z0-9]+", "-", (name or "pattern").lower()).strip("-")
    return clean or "pattern"


def _pseudonym(category: str, n: int) -> str:
    if category == IPV4:
        return f"198.{18 + (n >> 16)}.{(n >> 8) & 255}.{n & 255}"
    if category == IPV6:
        return f"2001:db8::{n:x}"
    if category == MAC:
        return f"02:00:00:{(n >> 16) & 255:02x}:{(n >> 8) & 255:02x}:{n & 255:02x}"
    if category == EMAIL:
        return f"user-{n:03d}@example.invalid"
    if category == GUID:
        return f"guid-{n:04d}"
    if category.startswith("pattern:"):
        return f"{category.split(':', 1)[1]}-{n:03d}"
    return f"{category}-{n:03d}"


def _literal(names: set[str]) -> str:
    """Whole names only, longest first, so "mew0.cluster.local" wins over "mew0"."""
    alternation = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))
    return rf"(?i)(?<![\w.-])(?:{alternation})(?![\w-])"


def _valid_ipv4(text: str) -> bool:
    try:
        address = ipaddress.IPv4Address(text)
    except ValueError:
        return False
    # Loopback, "any" and netmasks carry meaning and identify nobody.
    return not (address.is_loopback or address.is_unspecified or text.startswith("255."))


def _valid_ipv6(text: str) -> bool:
    if text.count(":") < 2:
        return False
    try:
        address = ipaddress.IPv6Address(text.split("%", 1)[0])
    except ValueError:
        return False
    return not (address.is_loopback or address.is_unspecified)


def _valid_mac(text: str) -> bool:
    digits = text.replace(":", "").replace("-", "").lower()
    return digits not in ("000000000000", "ffffffffffff")


def _always(text: str) -> bool:
    return True


_VALID = {IPV4: _valid_ipv4, IPV6: _valid_ipv6, MAC: _valid_mac}
