"""One cleaning step for every text file, shared by detection and parsing.

Evidence rarely arrives as the tool wrote it: it is pasted from a terminal (prompt lines,
markdown fences, colour codes), written through a launcher that prefixes every line
(``[1,0]<stdout>:``, Slurm ``0: ``, torchrun ``[rank3]:``, pdsh ``host: ``), collected by
``kubectl logs --timestamps`` or journald, saved by a Windows tool as UTF-16, or glued to
another process's line. ``plan`` looks at a bounded sample once and decides what to strip
(a ``View``); ``clean_line``/``pieces`` say what one line becomes, and cleaning.py applies a
view to a whole sample or stream.

Two kinds of layers. Unambiguous ones are stripped wherever they appear (an Open MPI tag
cannot be anything else). Ambiguous ones (a leading number, word or timestamp) are stripped
only when most lines of the sample carry one and the values repeat the way a launcher's do:
``rx_packets: 12`` lines have as many different "prefixes" as lines, ``gpu07: `` repeats.
Nothing is joined that was not split; a line is split only where a known line start (an NCCL
``host:pid:tid [n] NCCL`` header, a launcher tag) appears in the middle of it.

Pure Python, no Django.
"""

from __future__ import annotations

import codecs
import functools
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

# --- encodings ------------------------------------------------------------------------------

_BINARY_MAGIC = (b"\x1f\x8b", b"SQLite format 3\x00", b"PK\x03\x04", b"\x7fELF")


def sniff_encoding(head: bytes) -> str:
    """ "utf-8", "utf-8-sig", "utf-16-le", "utf-16-be" or "binary"."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le"
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be"
    if head.startswith(_BINARY_MAGIC):
        return "binary"
    probe = head[:4096]
    if len(probe) >= 8:
        # UTF-16 without a BOM (PowerShell's Out-File): ASCII text with every other byte 0.
        even_zero = probe[0::2].count(0) / len(probe[0::2])
        odd_zero = probe[1::2].count(0) / len(probe[1::2])
        if odd_zero > 0.4 and even_zero < 0.05:
            return "utf-16-le"
        if even_zero > 0.4 and odd_zero < 0.05:
            return "utf-16-be"
    if b"\x00" in probe:
        return "binary"
    return "utf-8"


# --- line shapes ----------------------------------------------------------------------------

# CSI (colours, cursor moves) and OSC (window titles, hyperlinks) escape sequences.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w+-]*\s*$")
# Shell prompts (they start the parts of a transcript), recognised by their shape: what a
# shell prints before the command, ending in "$ ", "# ", "% " or "> ". Styles parsers read as
# they are: bash user@host:~/dir$ cmd, root@gpu07:~# cmd, [user@host dir]$ cmd, (venv) ...,
# sh-5.1# cmd and a bare "$ cmd". The command is kept as the part's title.
_BASH_PROMPT = (
    r"(?:[\w.\-]+@[\w.\-]+:[^\s$#]*\s?[$#]|\[[\w.\-]+@[\w.\-]+(?: [^\]]*)?\]\s?[$#]"
    r"|(?:sh|bash|zsh)-\d+(?:\.\d+)*[$#]|\$)"
)
_VENV = r"(?:\([\w.\- ]+\)\s+)?"
_PROMPT = re.compile(rf"^{_VENV}{_BASH_PROMPT}\s+(?P<cmd>\S.*)$")
# Other shells' styles, rewritten to the bash style the parsers read (``user@host:~$ cmd``,
# or ``$ cmd`` without a host): zsh "user@host dir % " and "host% ", fish "user@host ~> ",
# PowerShell "PS C:\dir> ", starship/oh-my-zsh "\u276f " / "\u279c  dir ", and a bare "# ", "% " or
# "> ". The bare ones are also how comments, mail quotes and headings start, so they count
# only before a command word (a lower-case program name, then an option, a path or nothing).
_OTHER_PROMPT = re.compile(
    rf"^{_VENV}(?:"
    r"(?P<user>[\w.\-]+)@(?P<host>[\w.\-]+)(?: [^\s%>#$]+)? ?[%>#]"
    r"|[\w.\-]+%|PS [A-Za-z]:[^>\n]*>|(?:\u279c +\S+|[\u276f\u03bb\u00bb])"
    r"|(?P<bare>[#%>]))"
    r" +(?P<cmd>\S.*)$"
)
_ARGUMENTS = r" +(?:-|/|~|\.{1,2}/|\||\w+=)\S*.*"
_COMMAND_WORD = re.compile(
    rf"^(?:sudo +)?(?:[a-z][\w.+\-]*{_ARGUMENTS}|[a-z][\w.+]*[\-_\d][\w.+\-]*\s*"
    rf"|\.{{0,2}}/[\w./+\-]+(?:{_ARGUMENTS}|\s.*|))$"
)


# Characters without which a line is no prompt of any style above: every style ends in
# "$", "#" (bash), "% ", "> ", "# " (the others) or is an arrow, a lambda or a guillemet.
# Spelled out (not a loop, not a regex): a line is tested in a third of a microsecond.
def _may_be_prompt(line: str) -> bool:
    return "$" in line or "#" in line or _may_be_other_prompt(line)


def _may_be_other_prompt(line: str) -> bool:
    """... and without which no prompt of another style (the rewritten ones)."""
    return (
        "% " in line
        or "> " in line
        or "# " in line
        or "\u279c" in line
        or "\u276f" in line
        or "\u03bb" in line
        or "\u00bb" in line
    )


def prompt_command(line: str) -> tuple[str, str | None] | None:
    """(command, host) of a prompt line in any of the shapes above, or None."""
    if not _may_be_prompt(line):
        return None
    match = _PROMPT.match(line)
    if match:
        return match.group("cmd").strip(), None
    match = _OTHER_PROMPT.match(line)
    if match is None:
        return None
    command = match.group("cmd").strip()
    if match.group("bare") and not _COMMAND_WORD.match(command):
        return None
    return command, match.group("host")


def _bash_style(line: str) -> str:
    """A prompt of another shell written the bash way (parsers read host and command from
    it); every other line as it is."""
    if not _may_be_other_prompt(line):
        return line
    match = _OTHER_PROMPT.match(line)
    if match is None or _PROMPT.match(line):
        return line
    found = prompt_command(line)
    if found is None:
        return line
    command, host = found
    return f"{match.group('user')}@{host}:~$ {command}" if host else f"$ {command}"


# Unambiguous launcher tags, stripped wherever they start a line (and split where glued).
# Both print the tag right before the program's text, without a space of their own.
_OPENMPI = r"\s*\[\d+,\d+\]<(?:stdout|stderr)>:"
_TORCHRUN = r"\[(?:rank|default)\d+\]:"
TAG_MARKS = ("]<std", "[rank", "[default")  # what a line holding one of them holds
# Both tags may stand in front of each other (torchrun under mpirun): all are stripped.
_ALWAYS = re.compile(rf"^(?:{_OPENMPI}|{_TORCHRUN})+")

# Ambiguous layers, in the order they nest (the collector's stamp is outermost).
_LAYERS: dict[str, re.Pattern[str]] = {
    # kubectl logs --timestamps: RFC 3339 with a zone, then one space.
    "kubectl": re.compile(
        r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}) "
    ),
    # journald/syslog: "Feb 23 16:24:18 host prog[pid]: " (the kernel's own lines are dmesg
    # content and stay: the dmesg parser reads them with their time).
    "syslog": re.compile(
        r"^(?:[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-][\d:]+))"
        r" [\w.\-]+ (?!kernel\b)[\w./\-]+(?:\[\d+\])?: "
    ),
    # tee through moreutils ts / a logger: "[2024-05-01 10:00:00] ", "2024-05-01 10:00:00.123 ".
    "timestamp": re.compile(
        r"^(?:\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]"
        r"|\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)?"
        r"|[A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2}) "
    ),
    # srun --label: "0: ", " 12: " (task ids repeat).
    "slurm": re.compile(r"^ {0,4}(?P<key>\d{1,5}): "),
    # pdsh/clush -L: "gpu07: " (host names repeat).
    "host": re.compile(r"^(?P<key>[A-Za-z][\w.\-]{0,62}): "),
}
# Layers that are a time: kept for logs whose lines have none of their own (detection.py).
TIME_LAYERS = ("kubectl", "syslog", "timestamp")
KEEP = "keep:"
# A layer is stripped when at least this share of the sample's non-empty lines carry it...
_LAYER_SHARE = 0.6
# ... and, for the keyed layers, when its values repeat: at most one distinct value per
# this many lines (a launcher prints many lines per task; a "name: value" list does not).
_LINES_PER_KEY = 4

# --- layers found by their shape ------------------------------------------------------------
# The named layers above are fast paths. Any other collector's or launcher's prefix is found
# by its shape: a stamp (dates, clock times, epoch seconds, the kernel's uptime), or a short
# tag ending in a separator (": ", " | ", "] ", "> ") whose values repeat the way hosts,
# ranks and services do. Such a layer is stored in the View as "time:<regex>" or
# "tag:<regex>".
_STAMP_SHAPES = (
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?: ?(?:Z|UTC|[+-]\d{2}:?\d{2}))?",
    r"\d{4}/\d{2}/\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?",
    r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?",
    r"\d{10}(?:\.\d{1,9})?",
    r"\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?",
)
# A stamp, bare or in brackets, then its separator; the kernel's "[   12.345678] " apart.
_STAMP = re.compile(
    r"^(?:(?P<open>\[)?(?P<stamp>" + "|".join(f"(?:{s})" for s in _STAMP_SHAPES) + r")"
    r"(?(open)\])(?P<sep> \| |: |\t| )|(?P<uptime>\[ *\d+\.\d{3,9}\]) )"
)
# A tag: "[worker-2] ", "gpu07 | ", "web_1    | ", "10.0.0.5: ", "rank3> ".
_TAG = re.compile(
    r"^(?:\[(?P<bracketed>[\w.\-@/:]{1,40})\] "
    r"|(?P<tag>[A-Za-z0-9][\w.\-@/]{0,63})(?P<sep> *\| |: |> ))"
)
_DIGITS = re.compile(r"\d+")
# A stamp's separator is the one nearly all its lines share (else the space they start with).
_SAME_SEPARATOR = 0.9
# A tag layer has at most this many shapes of values ("gpu0", "login0", "web_0").
_MAX_TAG_SHAPES = 8

# NCCL's own line start, for splitting lines that two processes wrote into one.
_NCCL_START = re.compile(r"(?P<host>[A-Za-z0-9][\w.\-]*):\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE)")
HEADER_END = "] NCCL "  # what every header _NCCL_START finds holds


@dataclass(frozen=True)
class Part:
    """A command's output inside a terminal transcript: its prompt line and its lines."""

    title: str  # the command, e.g. "mlnx_qos -i rdma0"
    # Line numbers (1-based) in the cleaned file, before any part is cut out.
    start: int  # its prompt line: parsers read host and device from the command
    end: int  # the last line of its output (inclusive)


@dataclass(frozen=True)
class View:
    """What cleaning a file takes: decided once from a sample, applied to every line."""

    encoding: str = "utf-8"
    layers: tuple[str, ...] = ()
    # Hosts seen at NCCL line starts: a glued line is split before one of them.
    hosts: tuple[str, ...] = ()
    # The command whose output this artifact is, when the file is a terminal transcript.
    part: Part | None = None
    # A JSON or XML document pasted under its prompt line (``$ cat topo.xml``): the prompt
    # is dropped, since a document parser reads from the first byte.
    document: bool = False
    # Whether the sample showed anything to clean; a clean file is parsed as it is, byte
    # for byte (and a 300 MB one-line JSON trace is never split into lines).
    needed: bool = True

    @property
    def binary(self) -> bool:
        return self.encoding == "binary"

    def describe(self) -> list[str]:
        """What was cleaned, for the artifact's warnings and the detection panel."""
        out = []
        if self.encoding not in ("utf-8", "binary"):
            out.append(f"decoded from {self.encoding.upper()}")
        if self.layers:
            out.append("stripped line prefixes: " + ", ".join(self.layers))
        if self.part:
            out.append(f"output of `{self.part.title}` (lines {self.part.start}-{self.part.end})")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "encoding": self.encoding,
            "layers": list(self.layers),
            "hosts": list(self.hosts),
            "part": None if self.part is None else vars(self.part),
            "document": self.document,
            "needed": self.needed,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> View:
        part = data.get("part")
        return cls(
            encoding=str(data.get("encoding", "utf-8")),
            layers=tuple(name for name in data.get("layers", ()) if _known_layer(name)),
            hosts=tuple(str(h) for h in data.get("hosts", ())),
            part=Part(**part) if isinstance(part, dict) else None,
            document=bool(data.get("document", False)),
            needed=bool(data.get("needed", True)),
        )


def clean_line(line: str, view: View) -> Iterator[str]:
    """The clean line(s) one original line becomes: none for fences and srun's own lines.
    Prompt lines stay (parsers read host and device from the command), and so does the rest
    of a line: a clean file must read exactly as it did before cleaning."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if (
        (("```" in line or "~~~" in line) and _FENCE.match(line))
        or line.startswith("srun: ")
        or (view.document and prompt_command(line))
    ):
        return
    line = _bash_style(_strip(line, view.layers))
    first, *glued = _split_glued(line, view.hosts)
    yield first
    for piece in glued:  # another process's line: it carries its own prefixes
        yield _strip(piece, view.layers)


def _strip(line: str, layers: tuple[str, ...]) -> str:
    if "[" in line:  # both launcher tags hold one
        line = _ALWAYS.sub("", line, count=1)
    if not layers:
        return line
    kept = ""  # the text of kept layers ("keep:<name>"): a collector's time an NCCL log reads
    for name in layers:
        match = layer_pattern(name).match(line)
        if match:
            if name.startswith(KEEP):
                kept += match.group(0)
            line = line[match.end() :]
            if "[" in line:
                line = _ALWAYS.sub("", line, count=1)
    return kept + line


@functools.lru_cache(maxsize=64)
def layer_pattern(name: str) -> re.Pattern[str]:
    """The regex of a layer: a named one, or one found by its shape ("time:" / "tag:")."""
    name = name.removeprefix(KEEP)
    if name in _LAYERS:
        return _LAYERS[name]
    return re.compile(name.split(":", 1)[1])


def is_time_layer(name: str) -> bool:
    """Whether a layer is a time stamp (kept for logs that have no time of their own)."""
    return name in TIME_LAYERS or name.startswith("time:")


def kept(name: str) -> str:
    """A layer that stays in the clean line, while the layers inside it are stripped."""
    return name if name.startswith(KEEP) else KEEP + name


def _known_layer(name: str) -> bool:
    name = name.removeprefix(KEEP)
    if name in _LAYERS:
        return True
    if not name.startswith(("time:", "tag:")):
        return False
    try:
        layer_pattern(name)
    except re.error:
        return False
    return True


def _shaped_layer(lines: list[str]) -> str | None:
    """A layer no name lists, found by its shape in most of ``lines`` (see _STAMP, _TAG)."""
    if len(lines) < 2:
        return None
    needed = _LAYER_SHARE * len(lines)
    stamps: Counter[tuple[str, str]] = Counter()
    tags: Counter[tuple[str, str]] = Counter()  # (form, separator) -> lines
    values: dict[tuple[str, str], Counter[str]] = {}
    for line in lines:
        match = _STAMP.match(line)
        if match:
            stamps[_stamp_form(match)] += 1
            continue
        match = _TAG.match(line)
        if match:
            bracketed = match.group("bracketed")
            shape = ("bracket", "] ") if bracketed else ("tag", _sep_form(match.group("sep")))
            tags[shape] += 1
            values.setdefault(shape, Counter())[bracketed or match.group("tag")] += 1
    by_stamp: Counter[str] = Counter()
    for (stamp, _sep), count in stamps.items():
        by_stamp[stamp] += count
    for stamp, count in by_stamp.most_common(1):
        if count < needed:
            break
        seps = Counter({sep: n for (shape, sep), n in stamps.items() if shape == stamp})
        sep, most = seps.most_common(1)[0]
        if most < _SAME_SEPARATOR * count:
            # lines disagree after the stamp ("| " is also how a table row starts): the
            # stamp ends at the space they all begin with
            if not all(s.startswith(" ") or s.startswith(r"\ ") for s in seps):
                break
            sep = " "
        return "time:^" + stamp + sep
    for shape, count in tags.most_common(2):
        if count >= needed and _repeats(shape, values[shape], count):
            return "tag:" + _tag_regex(shape, values[shape])
    return None


def _stamp_form(match: re.Match[str]) -> tuple[str, str]:
    """(regex of the stamp, regex of its separator) of one line's stamp."""
    if match.group("uptime"):
        return r"\[ *\d+\.\d{3,9}\]", " "
    stamp = match.group("stamp")
    shape = next(s for s in _STAMP_SHAPES if re.fullmatch(s, stamp))
    if match.group("open"):
        shape = rf"\[{shape}\]"
    return shape, re.escape(match.group("sep"))


def _sep_form(sep: str) -> str:
    return r" *\| " if "|" in sep else re.escape(sep)


def _repeats(shape: tuple[str, str], seen: Counter[str], count: int) -> bool:
    """Whether a tag's values repeat as a launcher's do: few values for many lines, and for
    "word: " (which is also how every "name: value" line starts) values that number
    something (hosts, ranks, addresses) rather than name it."""
    if len(seen) * _LINES_PER_KEY > count and not (len(seen) == 1 and count >= 3):
        return False
    if shape[1] == re.escape(": ") and not all(any(c.isdigit() for c in v) for v in seen):
        return False
    if shape[0] == "bracket" and not all(any(c.isalpha() for c in v) for v in seen):
        return False
    return len({_DIGITS.sub("0", v) for v in seen}) <= _MAX_TAG_SHAPES


def _tag_regex(shape: tuple[str, str], seen: Counter[str]) -> str:
    """The tag layer as a regex of any value of its shape, not only those the sample saw:
    a collector's hosts take turns in long runs, and the sample may hold one of them. A
    "word: " tag must hold a digit (as "gpu07: " does, and "rx_packets: " does not)."""
    if shape[0] == "bracket":  # a name, not a number: "[000] " is a bpftrace event's
        return r"^\[(?=[^\]]*[A-Za-z])[\w.\-@/:]{1,40}\] "
    if shape[1] == re.escape(": "):
        return r"^(?=[\w.\-@/]*\d)[A-Za-z0-9][\w.\-@/]{0,63}: "
    return rf"^[A-Za-z0-9][\w.\-@/]{{0,63}}{shape[1]}"


def _other_prompt(text: str) -> bool:
    """Whether a prompt of another shell than bash stands in the text (it is rewritten)."""
    if not (
        _may_be_other_prompt(text) or "%" in text or ">" in text or "#" in text or "PS " in text
    ):
        return False  # none of the characters any such prompt holds
    if _OTHER_PROMPT_LINE.search(text) is None:
        return False  # most files: one search instead of a match per line
    return any(
        _OTHER_PROMPT.match(row) is not None
        and not _PROMPT.match(row)
        and prompt_command(row) is not None
        for row in text.split("\n")
        if _PROMPT_START.match(row)
    )


def _split_glued(line: str, hosts: tuple[str, ...]) -> list[str]:
    """Split an NCCL log's line before another process's header (or a launcher tag) that
    starts in its middle. ``hosts`` are the hosts seen at line starts, longest first; with
    none, nothing is split (other formats put their broken lines back together themselves).
    """
    if not hosts or ("NCCL" not in line and "]<std" not in line and "[rank" not in line):
        return [line]
    own = _NCCL_START.match(line)
    if own and line.count("NCCL") < 2 and "]<std" not in line and "[rank" not in line:
        return [line]  # one header, its own: nothing glued (most lines; checked cheaply)
    after = own.end() if own else 1
    if line.find(HEADER_END, after) < 0 and not any(tag in line for tag in TAG_MARKS):
        # no header after its own (every header ends in "] NCCL ") and no launcher tag:
        # nothing to cut, and no pattern search along a long line
        return [line]
    cuts = []
    for match in _NCCL_START.finditer(line, after):
        host = match.group("host")
        # The header's host may have swallowed the end of the text before it
        # ("...P2P/CUMEM/readgpu07:1:1 [0] NCCL"): cut before the known host it ends with.
        known = next((h for h in hosts if host.endswith(h)), None) or _sibling(host, hosts)
        if known is None:
            continue  # not a host this log's own lines name: one long line beats a phantom
        cut = match.end("host") - len(known)
        if not cuts and _only_prefixes(line[:cut]):
            continue  # a collector's stamp or a launcher tag before the header: one line
        cuts.append(cut)
    for match in re.finditer(rf"{_OPENMPI}|{_TORCHRUN}", line):
        if match.start() > 0 and not line[: match.start()].isspace():
            cuts.append(match.start())
    if not cuts:
        return [line]
    pieces, last = [], 0
    for cut in sorted(set(cuts)):
        pieces.append(line[last:cut])
        last = cut
    pieces.append(line[last:])
    return [p for p in pieces if p.strip()] or [line]


def _only_prefixes(text: str) -> bool:
    """Whether ``text`` is nothing but line prefixes (timestamps, labels, launcher tags)."""
    rest = text
    while rest.strip():
        rest = rest.lstrip()
        for pattern in (_ALWAYS, *_LAYERS.values(), _STAMP, _TAG):
            match = pattern.match(rest)
            if match and match.end():
                rest = rest[match.end() :]
                break
        else:
            return False
    return True


def _sibling(host: str, hosts: tuple[str, ...]) -> str | None:
    """The tail of a glued header's host that is named like a known host ("readgpu08" ends
    with "gpu08", named like "gpu07"): same length, and the same first half."""
    for known in hosts:
        if len(host) > len(known) >= 4:
            tail = host[-len(known) :]
            if tail[: len(known) // 2] == known[: len(known) // 2]:
                return tail
    return None


# --- planning -------------------------------------------------------------------------------


def decode_sample(head: bytes, encoding: str) -> str:
    codec = "utf-8" if encoding == "binary" else encoding
    return head.decode(codec, errors="replace")


# Lines that always need cleaning, searched over the whole sample in one pass.
_NEEDS_CLEANING = re.compile(
    rf"(?m)^(?:\s*(?:```|~~~)|srun: |{_OPENMPI}|{_TORCHRUN})|\x1b|\r(?!\n)|\A\ufeff"
)


def _needs_cleaning(text: str) -> bool:
    """``_NEEDS_CLEANING`` found in the text; first the substrings its matches hold (a
    substring search is many times faster than the pattern's, and most files hold none)."""
    if not (
        "\x1b" in text
        or "\r" in text
        or "```" in text
        or "~~~" in text
        or "srun: " in text
        or "]<std" in text
        or "[rank" in text
        or "[default" in text
        or text.startswith("\ufeff")
    ):
        return False
    return _NEEDS_CLEANING.search(text) is not None


# Voting reads this many non-empty lines: enough to tell a launcher from a format.
VOTE_LINES = 600


def plan(sample: bytes) -> View:
    """Decide the cleaning of a file from a sample of it (its head, plus later windows)."""
    encoding = sniff_encoding(sample)
    if encoding == "binary":
        return View(encoding="binary")
    text = decode_sample(sample, encoding)
    body: list[str] = []
    for line in text.split("\n"):
        line = _ANSI.sub("", line).replace("\r", "") if "\x1b" in line or "\r" in line else line
        if line.strip() and not (
            (("```" in line or "~~~" in line) and _FENCE.match(line))
            or line.startswith("srun: ")
            or prompt_command(line)
        ):
            body.append(line)
            if len(body) >= VOTE_LINES:
                break
    layers = _voted_layers(body)
    # hosts from every line of the sample: an NCCL log's lines may start past the voted ones
    nccl = (
        [
            (_ANSI.sub("", ln) if "\x1b" in ln else ln).rstrip("\r")
            for ln in text.split("\n")
            if " NCCL " in ln
        ]
        if " NCCL " in text
        else []
    )
    hosts = _nccl_hosts(nccl, layers)
    document = _prompted_document(text)
    needed = (
        document
        or encoding != "utf-8"
        or bool(layers)
        or _needs_cleaning(text)
        or _other_prompt(text)
        or any(len(_split_glued(ln, hosts)) > 1 for ln in nccl)
    )
    return View(encoding=encoding, layers=layers, hosts=hosts, document=document, needed=needed)


_DOCUMENT_START = re.compile(r'<[?!A-Za-z]|\{\s*(?:"|$)|\[\s*(?:[{"\[]|$)')


def _prompted_document(text: str) -> bool:
    """Whether prompt lines (and fences) stand before a JSON or XML document."""
    prompted = False
    for line in text.split("\n", 20)[:20]:
        bare = _ANSI.sub("", line).strip("\r\ufeff ")
        if not bare or _FENCE.match(bare):
            continue
        if prompt_command(bare):
            prompted = True
            continue
        return prompted and _DOCUMENT_START.match(bare) is not None
    return False


def _voted_layers(lines: list[str]) -> tuple[str, ...]:
    current = [_ALWAYS.sub("", ln, count=1) if "[" in ln else ln for ln in lines]
    chosen: list[str] = []
    for _ in range(4):  # layers nest at most a few deep (kubectl + slurm + host ...)
        # A layer may come twice (a collector's stamp over a launcher's, two hosts' tags):
        # each pass must again be carried by most of what the last one left.
        known = (name for name in _LAYERS if _carried(name, current))
        found = next(known, None) or _shaped_layer(current)
        if found is None:
            break
        chosen.append(found)
        pattern = layer_pattern(found)
        current = [pattern.sub("", ln, count=1) for ln in current]
        current = [_ALWAYS.sub("", ln, count=1) if "[" in ln else ln for ln in current]
    return tuple(chosen)


def _carried(name: str, lines: list[str]) -> bool:
    if len(lines) < 2:
        return False
    pattern = _LAYERS[name]
    needed = _LAYER_SHARE * len(lines)
    matches = []
    missed = 0
    for line in lines:
        match = pattern.match(line)
        if match:
            matches.append(match)
        else:
            missed += 1
            if len(lines) - missed < needed:
                return False  # too few lines left to carry it (most layers: early on)
    if len(matches) < needed:
        return False
    if "key" not in pattern.groupindex:
        return True
    keys = Counter(m.group("key") for m in matches)
    if name == "host" and all(key.isupper() for key in keys):
        return False  # "NVRM: ", "WARNING: ": a driver's or a level's name, not a host's
    return len(keys) * _LINES_PER_KEY <= len(matches)


def _nccl_hosts(lines: list[str], layers: tuple[str, ...]) -> tuple[str, ...]:
    hosts: Counter[str] = Counter()
    for line in lines:
        match = _NCCL_START.match(_strip(line, layers))
        if match:
            hosts[match.group("host")] += 1
    # longest first: a glued header is cut before the longest host it ends with
    return tuple(sorted(hosts, key=len, reverse=True)[:256])


_PROMPT_BYTES = re.compile(
    rb"(?m)^(?:\([^)\n]*\)\s+)?(?:(?:\S*@\S*|\[\S+@[^\]\n]*\]|\w+-[\d.]+)[$#]|\$) \S"
    rb"|^(?:\([^)\n]*\)\s+)?(?:\S+@\S+(?: \S+)? ?[%>#]|\S+%|PS [A-Za-z]:[^>\n]*>|"
    rb"\xe2\x9e\x9c +\S+|\xe2\x9d\xaf|[#%>]) +(?:sudo +)?[a-z./]"
)
# A line that may be another shell's prompt, searched in a whole sample at once.
_OTHER_PROMPT_LINE = re.compile(
    r"(?m)^(?:\([^)\n]*\) +)?(?:[\w.\-]+@[\w.\-]+(?: \S+)? ?[%>#]|[\w.\-]+%|PS |[#%>] "
    r"|[\u279c\u276f\u03bb\u00bb])"
)
# What a prompt line may start with (a cheap filter before ``prompt_command``).
_PROMPT_START = re.compile(
    r"^(?:\(|\[|[\w.\-]+[@%$#]|\$|[#%>] |PS |[\u279c\u276f\u03bb\u00bb]|(?:sh|bash|zsh)-)"
)


def has_prompt(data: bytes) -> bool:
    """Cheap test before ``transcript_parts``: a line that may be a shell prompt."""
    return _PROMPT_BYTES.search(data) is not None


def prompt_row(row: str) -> str | None:
    """The command of a clean line that starts a transcript's part (a prompt), or None."""
    found = prompt_command(row) if _PROMPT_START.match(row) else None
    return found[0] if found is not None else None


def transcript_parts(text: str) -> list[Part]:
    """Commands and their outputs, when prompt lines separate several commands. Lines before
    the first prompt are a part of their own (title "")."""
    prompts: list[tuple[int, str]] = []
    for line, row in enumerate(text.split("\n"), 1):
        command = prompt_row(row)
        if command is not None:
            prompts.append((line, command))
    if not prompts:
        return []
    total = text.count("\n") + (0 if text.endswith("\n") else 1)
    parts = []
    first = prompts[0][0]
    if first > 1 and any(line.strip() for line in text.split("\n", first - 1)[: first - 1]):
        parts.append(Part(title="", start=1, end=first - 1))
    for index, (number, command) in enumerate(prompts):
        end = prompts[index + 1][0] - 1 if index + 1 < len(prompts) else total
        if end > number:
            parts.append(Part(title=command[:200], start=number, end=end))
    return parts


def pieces(line: str, view: View) -> Iterable[str]:
    # Bare CR (progress bars) ends a line in a terminal; keep the segments as lines.
    if "\r" in line:
        for segment in line.split("\r"):
            yield from clean_line(segment, view)
    else:
        yield from clean_line(line, view)
