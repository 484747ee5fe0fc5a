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

Identifiers the parsers extracted (``known``: rank hosts, host facts, GPU UUIDs, serials...)
are certain, so they are replaced wherever their literal text occurs, also glued to other
text (``P2P/CUMEM/gpu07:1234``, ``/var/log/gpu07/``, ``http://gpu07.example/``), longest
first so ``gpu070`` is not read as ``gpu07`` + ``0``. Names only guessed from context in
pass 1 stay whole-word matches: a guess such as "host: GPU" must not eat every "GPU".

``LeakAudit`` re-reads finished output (bytes, streamed) for every original, so a bundle
that still holds one is refused rather than published.
"""

from __future__ import annotations

import bisect
import io
import ipaddress
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

HOST, IPV4, IPV6, MAC, USER, EMAIL, GUID, SERIAL = (
    "host", "ipv4", "ipv6", "mac", "user", "email", "guid", "serial",
)  # fmt: skip
CATEGORIES = (HOST, IPV4, IPV6, MAC, USER, EMAIL, GUID, SERIAL)

# Names too generic to be secrets, never treated as user or host names.
NOT_SECRET = frozenset(
    {
        "root", "nobody", "daemon", "localhost", "user", "users", "admin", "none", "null",
        "true", "false", "unknown", "default", "home", "tmp", "var", "data", "local",
        "host", "node", "gpu", "cpu", "nccl", "info", "warn", "net", "n/a", "na", "not",
        "not specified", "not available", "to be filled by o.e.m.", "default string",
        "system serial number", "0123456789", "123456789", "hostname", "redacted",
    }
)  # fmt: skip
# Matched without regard to case: names and hex identifiers are written in either case
# (GPU07, 0C:42:A1:..., GUIDs). Serials and user names are case-sensitive strings.
CASELESS = frozenset({HOST, IPV4, IPV6, MAC, GUID, EMAIL})
MIN_NAME_LENGTH = 3
MAX_LITERAL_LENGTH = 255  # longer "identifiers" are sentences a parser took for a name
AUDIT_CHUNK = 1024 * 1024
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


# The built-in categories as one plan, for pass 1: values found there become literals that
# pass 2 replaces wherever they occur (an IP seen once in "OOB ens1:10.0.8.14" is then also
# replaced inside "x10.0.8.14" where the shape regex alone would not see it).
_BUILTIN_PLAN: tuple[tuple[str, re.Pattern[str], Callable[[str], bool] | None], ...] = tuple(
    (category, re.compile(source), gate) for category, source, gate in _SOURCES
)
# The literal plan entries (parsed identifiers and pass-1 values), by how they match:
# marker -> caseless. The ":word" ones hold identifiers made of letters only ("crow",
# "WORK"): as substrings they would eat ordinary words ("crowd", "network"), so they are
# replaced, and audited, as whole words like guessed names.
_LITERAL_MARKERS = {
    "literal:caseless": True,
    "literal:exact": False,
    "literal:caseless:word": True,
    "literal:exact:word": False,
}
_WORDLIKE = re.compile(r"[^\W\d]+")  # letters (and "_") only: no digit, dot or dash
# Whole-word guard of names guessed from context: not glued to a letter or digit, so
# "gdr114-ib0", "/var/log/gdr114/" and "gdr114_x" are replaced, "gdr1140" is not.
_GUARD_BEFORE, _GUARD_AFTER = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"
_GPU_UUID_PREFIX = re.compile(r"(?i)^(?:GPU|MIG)-(?=[0-9a-f]{8}-)")

Plan = list[tuple[str, re.Pattern[str], Callable[[str], bool] | None]]


@dataclass(frozen=True)
class Replacement:
    original: str
    alias: str
    category: str
    occurrences: int
    files: tuple[str, ...]


@dataclass(frozen=True)
class AuditTerm:
    """One original the audit looks for: ``whole`` = only where not glued to a letter/digit."""

    category: str
    text: str
    caseless: bool
    whole: bool


class Redactor:
    """One bundle's redaction state: learned names and the original → pseudonym maps."""

    def __init__(
        self,
        *,
        known_hosts: Iterable[str] = (),
        known_users: Iterable[str] = (),
        known: Mapping[str, Iterable[str]] | None = None,
        patterns: Iterable[tuple[str, str]] = (),
    ) -> None:
        # (caseless, text as matched: lower-cased when caseless) -> category. Identifiers
        # that parsers extracted, and (after pass 1) values the category regexes found.
        self._literals: dict[tuple[bool, str], str] = {}
        for category, values in sorted((known or {}).items()):
            for value in sorted(values):
                self._add_literal(category, value)
        for name in sorted(known_hosts):
            self._add_literal(HOST, name)
        for name in sorted(known_users):
            self._add_literal(USER, name)
        self._hosts: set[str] = set()
        self._users: set[str] = set()
        self._patterns = [(_pattern_name(n), compile_pattern(rx)) for n, rx in patterns]
        self._plan: Plan | None = None
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
        if self._plan is None:  # values found after pass 2 began would miss earlier lines
            for category, match in _resolve(line, _BUILTIN_PLAN, {}):
                value = match["value"] if category == SERIAL else match.group(0)
                self._add_literal(category, value)

    @property
    def hosts(self) -> set[str]:
        return set(self._hosts)

    @property
    def users(self) -> set[str]:
        return set(self._users)

    # --- pass 2 ----------------------------------------------------------------------------

    def redact(self, line: str, file: str = "") -> str:
        plan = self._plan if self._plan is not None else self._compile()
        winners = _resolve(line, plan, self._literals)
        if not winners:
            return line
        out: list[str] = []
        cursor = 0
        for category, match in winners:
            out.append(line[cursor : match.start()])
            out.append(self._replace(category, match, file))
            cursor = match.end()
        out.append(line[cursor:])
        return "".join(out)

    def redact_text(self, text: str, file: str = "") -> str:
        return "".join(self.redact(line, file) for line in text.splitlines(keepends=True))

    # --- audit -----------------------------------------------------------------------------

    def audit_terms(self) -> list[AuditTerm]:
        """Every original this redactor knows of, for ``LeakAudit`` over its output.

        Literals (parsed identifiers and values found in pass 1) are replaced as substrings,
        so they are searched as substrings; guessed names, pattern matches and values first
        seen in pass 2 as whole words, the way they were replaced.
        """
        terms: dict[tuple[bool, str], AuditTerm] = {}
        for (caseless, text), category in self._literals.items():
            whole = _WORDLIKE.fullmatch(text) is not None
            terms[caseless, text] = AuditTerm(category, text, caseless, whole=whole)
        for names, category in ((self._hosts, HOST), (self._users, USER)):
            for name in names:
                caseless = category in CASELESS
                key = (caseless, name.lower() if caseless else name)
                terms.setdefault(key, AuditTerm(category, key[1], caseless, whole=True))
        for category, text in self._memo:
            caseless = category in CASELESS
            key = (caseless, text.lower() if caseless else text)
            terms.setdefault(key, AuditTerm(category, key[1], caseless, whole=True))
        return sorted(terms.values(), key=lambda t: (t.category, t.text, t.caseless))

    def pseudonyms(self) -> list[str]:
        """Every pseudonym handed out: an original inside one of these is not a leak."""
        return sorted({alias for aliases in self._aliases.values() for alias in aliases.values()})

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

    def _add_literal(self, category: str, value: str | None) -> None:
        """Take an identifier for substring replacement, unless it is noise or a placeholder.

        Substring replacement of a common word would shred the evidence, so only values that
        can identify something are taken: no short names, no "N/A", no all-zero ids.
        """
        if category not in CATEGORIES:
            raise ValueError(f"unknown identifier category {category!r}")
        value = (value or "").strip()
        if category in (HOST, USER):
            value = value.strip(".")
            if category == HOST and _IPV4_FULL.fullmatch(value):
                category = IPV4  # a rank "host" that is an address
        if category == GUID:
            value = _GPU_UUID_PREFIX.sub("", value)  # "GPU-<uuid>": the uuid is the secret
        lower = value.lower()
        if not MIN_NAME_LENGTH <= len(value) <= MAX_LITERAL_LENGTH or lower in NOT_SECRET:
            return
        if value.isdigit() and len(value) < 6:
            return  # a rank, a port, a count: replacing every "1234" would wreck the numbers
        if not _VALID.get(category, _always)(value):
            return
        if category in (GUID, SERIAL) and len(set(lower.removeprefix("0x")) - {"-", ":"}) < 2:
            return  # 0000..., ffff...: placeholders, not identifiers
        caseless = category in CASELESS
        self._literals.setdefault((caseless, lower if caseless else value), category)

    def _compile(self) -> Plan:
        """The pass-2 plan, in priority order; built once, after pass 1 learned the names.

        One regex per category, each behind a cheap substring gate: most lines of a log
        hold no e-mail, no UUID, no serial, and the gate skips those regexes entirely. The
        literals go first: at one position the longest match wins, and on a tie a literal
        (whose category is certain) beats a shape.
        """
        plan: Plan = []
        for marker, caseless in _LITERAL_MARKERS.items():
            word = marker.endswith(":word")
            texts = [t for (flag, t) in self._literals if flag == caseless]
            texts = [t for t in texts if (_WORDLIKE.fullmatch(t) is not None) == word]
            if texts:
                body = _trie(texts)
                if word:
                    body = f"{_GUARD_BEFORE}(?:{body}){_GUARD_AFTER}"
                flags = re.IGNORECASE if caseless else 0
                plan.append((marker, re.compile(body, flags), None))
        plan += [(category, rx, gate) for category, rx, gate in _BUILTIN_PLAN]
        plan += [(f"pattern:{name}", rx, None) for name, rx in self._patterns]
        literal_hosts = {t for (c, t), cat in self._literals.items() if cat == HOST}
        guessed_hosts = {h for h in self._hosts if h.lower() not in literal_hosts}
        if guessed_hosts:
            plan.append((HOST, re.compile(_guarded(guessed_hosts), re.IGNORECASE), None))
        literal_users = {t for (c, t), cat in self._literals.items() if cat == USER}
        guessed_users = self._users - literal_users
        if guessed_users:
            plan.append((USER, re.compile(_guarded(guessed_users), re.IGNORECASE), None))
        self._short_hosts = {h.lower() for h in self._hosts} | literal_hosts
        self._plan = plan
        return plan

    def _replace(self, category: str, match: re.Match[str], file: str) -> str:
        text = match.group(0)
        if category == SERIAL and "value" in match.re.groupindex:  # keep "Serial Number : "
            value = match["value"]
            return text[: len(text) - len(value)] + self._alias(SERIAL, value, file)
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


def identifiers_in(text: str) -> list[tuple[str, str]]:
    """(category, value) of every address, GUID, MAC, e-mail and serial in a parsed value."""
    return [
        (category, match["value"] if category == SERIAL else match.group(0))
        for category, match in _resolve(text, _BUILTIN_PLAN, {})
    ]


@dataclass(frozen=True)
class Leak:
    """An original left in finished output; ``masked`` never shows it whole."""

    category: str
    masked: str
    file: str
    count: int


class LeakAudit:
    """Reads finished output back, as bytes and streaming, for every original.

    An occurrence inside a pseudonym is not a leak (an original "host-00" is in every
    "host-001"); anything else is, and is counted per original and file.
    """

    def __init__(self, terms: Iterable[AuditTerm], pseudonyms: Iterable[str] = ()) -> None:
        self._terms: dict[tuple[bool, bytes], AuditTerm] = {}
        groups: dict[tuple[bool, bool], list[str]] = defaultdict(list)
        longest = 0
        # Substring terms first: a text that is both kinds is searched the stricter way.
        for term in sorted(terms, key=lambda t: (t.whole, t.category, t.text)):
            data = term.text.encode("utf-8", "surrogateescape")
            key = data.lower() if term.caseless else data
            if not data or (term.caseless, key) in self._terms:
                continue
            self._terms[term.caseless, key] = term
            groups[term.caseless, term.whole].append(key.decode("latin-1"))
            longest = max(longest, len(data))
        self._regexes: list[tuple[bool, re.Pattern[bytes]]] = []
        for (caseless, whole), words in sorted(groups.items()):
            body = _trie(words)
            if whole:
                body = f"{_GUARD_BEFORE}(?:{body}){_GUARD_AFTER}"
            flags = re.IGNORECASE if caseless else 0
            self._regexes.append((caseless, re.compile(body.encode("latin-1"), flags)))
        aliases = [a.encode("utf-8").decode("latin-1") for a in pseudonyms if a]
        self._aliases = re.compile(_trie(aliases).encode("latin-1")) if aliases else None
        longest = max([longest, *(len(a) for a in aliases)])
        self._keep = longest + 2  # one byte each side for the whole-word guards
        self._counts: Counter[tuple[str, str, str]] = Counter()  # category, text, file
        self.terms = len(self._terms)
        self.files = 0
        self.bytes_read = 0

    def scan(self, file: str, stream: IO[bytes], *, count_file: bool = True) -> int:
        """Every byte of ``stream``; returns how many leaks it held."""
        self.files += count_file
        before = sum(self._counts.values())
        buffer, decided = b"", 0
        while True:
            chunk = stream.read(AUDIT_CHUNK)
            self.bytes_read += len(chunk)
            buffer += chunk
            # A match starting before ``limit`` is whole in the buffer, with the byte after.
            limit = len(buffer) if not chunk else max(decided, len(buffer) - self._keep)
            if limit > decided:
                self._window(file, buffer, decided, limit)
                decided = limit
            if not chunk:
                return sum(self._counts.values()) - before
            # Keep enough before the undecided part to see a pseudonym around a match.
            cut = max(0, decided - self._keep)
            buffer, decided = buffer[cut:], decided - cut

    def scan_bytes(self, file: str, data: bytes, *, count_file: bool = True) -> int:
        return self.scan(file, io.BytesIO(data), count_file=count_file)

    def _window(self, file: str, buffer: bytes, low: int, high: int) -> None:
        if not self._regexes:
            return
        spans = [m.span() for m in self._aliases.finditer(buffer)] if self._aliases else []
        starts = [a for a, _ in spans]
        for caseless, rx in self._regexes:
            position = low
            while (match := rx.search(buffer, position)) is not None and match.start() < high:
                position = match.start() + 1  # overlapping: every start is looked at
                i = bisect.bisect_right(starts, match.start()) - 1
                if i >= 0 and spans[i][1] >= match.end():
                    continue  # inside a pseudonym
                data = match.group(0)
                term = self._terms[caseless, data.lower() if caseless else data]
                self._counts[term.category, term.text, file] += 1

    @property
    def leaks(self) -> list[Leak]:
        return [
            Leak(category, mask(text), file, n)
            for (category, text, file), n in sorted(self._counts.items())
        ]

    @property
    def clean(self) -> bool:
        return not self._counts


def mask(text: str) -> str:
    """First and last character only: enough to tell two leaks apart, not to leak."""
    if len(text) <= 2:
        return "*" * len(text)
    return text[0] + "*" * (len(text) - 2) + text[-1]


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


def _resolve(
    line: str,
    plan: Sequence[tuple[str, re.Pattern[str], Any]],
    literals: dict[tuple[bool, str], str],
) -> list[tuple[str, re.Match[str]]]:
    """The matches to replace in ``line``, left to right, none overlapping.

    Leftmost first; at one position the longest, then the earlier plan entry. A shape
    match that fails its check (an invalid address) is dropped before this choice, so it
    cannot shadow a name it overlaps. Literal entries resolve to their category here.
    """
    found: list[tuple[int, int, int, str, re.Match[str]]] = []
    for priority, (category, rx, gate) in enumerate(plan):
        if gate is not None and not gate(line):
            continue
        for match in rx.finditer(line):
            text = match.group(0)
            if not text:
                continue
            caseless = _LITERAL_MARKERS.get(category)
            if caseless is not None:
                resolved = literals[caseless, text.lower() if caseless else text]
            elif category == SERIAL or _VALID.get(category, _always)(text):
                resolved = category
            else:
                continue
            found.append((match.start(), -len(text), priority, resolved, match))
    if not found:
        return []
    found.sort(key=lambda f: f[:3])
    winners: list[tuple[str, re.Match[str]]] = []
    cursor = 0
    for start, _length, _priority, category, match in found:
        if start >= cursor:
            winners.append((category, match))
            cursor = match.end()
    return winners


def _trie(words: Iterable[str]) -> str:
    """One regex for many literals, as a trie: each position costs the length of the
    longest candidate, not the number of candidates (thousands of hosts on a cluster).
    Longer continuations are tried before a word ends there, so the longest match wins:
    "gpu070" rather than "gpu07" followed by "0"."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _trie_node(root)


def _trie_node(node: dict[str, Any]) -> str:
    branches = [re.escape(char) + _trie_node(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if "" in node:  # a word may end here: try the longer ones first (greedy ?)
        body = "(?:" + body + ")?"
    return body


def _guarded(names: set[str]) -> str:
    """Names guessed from context, as whole words, longest first."""
    return _GUARD_BEFORE + "(?:" + _trie(n.lower() for n in names) + ")" + _GUARD_AFTER


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
