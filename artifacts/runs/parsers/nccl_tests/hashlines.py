"""What a nccl-tests '#' line says, read once per distinct line (issue 27).

Package-private to ``artifacts.runs.parsers.nccl_tests``. Each run prints about 16 '#' lines
(version, collective, parameters, the column header, footers) and most of them are the same
in every run of a log. ``read_hash_line`` turns one into what ``text.TextReader`` acts on,
from the line's text alone, so that the reader can remember it by the text and skip the
patterns when the line comes again; what it does with it depends on its state and stays
there.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from artifacts.runs.parsers.nccl_tests.table import Layout

RANK_RE = re.compile(
    r"^#\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)"
    r"\s+device\s+(?P<device>\d+)\s+\[(?P<busid>[^\]]*)\]\s*(?P<gpu>.*?)\s*$"
)
_PARAMS_RE = re.compile(r"^#\s*nThread\s+\d+")
_PARAM_PAIR_RE = re.compile(r"([A-Za-z][A-Za-z ]*?)\s*:?\s+(-?\d{1,30})(?:\((\w+)\))?")
_VERSION_RE = re.compile(
    r"^#\s*nccl-tests version\s+(?P<version>\S+)"
    r"(?:\s+nccl-headers=(?P<headers>\d+))?(?:\s+nccl-library=(?P<library>\d+))?"
)
_STARTING_RE = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_CONCLUDED_RE = re.compile(r"^#\s*Collective test concluded:\s*(\S+)")
_HEADER_RE = re.compile(r"^#\s*size\s+count\s+type\b")
_OOB_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d{1,30})")
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_REDUCING_RE = re.compile(r"^#\s*Reducing maxBytes to\s+(\d{1,30})")
_HASH_ERROR_RE = re.compile(r"^#\s*error:\s*(\S.*)$")
# What follows "#" and spaces on a '#' line that is read (Rank, nThread, nccl-tests,
# Collective, size, Out of bounds, Avg, Reducing, error): other '#' lines are skipped early.
_HASH_STARTS = frozenset("RnCsOAe")


class HashLine(NamedTuple):
    """A '#' line read: ``kind`` says what it is, ``value`` what the reader needs of it.

    rank (the RANK_RE match), params (``(name, value, unit)`` pairs), version (``(version,
    library code or None)``), starting, concluded (the collective as printed), header (its
    ``Layout``, None without a time column), oob (the count), avg (the token), reducing (the
    bytes), error (the line); None: a line the reader skips.
    """

    kind: str | None
    value: Any = None


SKIPPED = HashLine(None)


def read_hash_line(text: str) -> HashLine:
    """What ``text`` (a stripped line starting with '#') says; each pattern is tried only
    where its first letter is, in the same order as ever."""
    first = text[1:].lstrip()[:1]
    if first not in _HASH_STARTS:
        return SKIPPED
    rank = first == "R" and RANK_RE.match(text)
    if rank:
        return HashLine("rank", rank)
    if first == "n" and _PARAMS_RE.match(text):
        return HashLine("params", _params(text))
    version = first == "n" and _VERSION_RE.match(text)
    if version:
        library = version.group("library") or version.group("headers")
        code = int(library) if library and len(library) <= 9 else None
        return HashLine("version", (version.group("version"), code))
    starting = first == "C" and _STARTING_RE.match(text)
    if starting:
        return HashLine("starting", starting[1])
    if first == "s" and _HEADER_RE.match(text):
        return HashLine("header", Layout.from_header(text))
    oob = first == "O" and _OOB_RE.match(text)
    if oob:
        return HashLine("oob", int(oob.group(1)))
    avg = first == "A" and _AVG_RE.match(text)
    if avg:
        return HashLine("avg", avg.group(1))
    concluded = first == "C" and _CONCLUDED_RE.match(text)
    if concluded:
        return HashLine("concluded", concluded.group(1))
    reducing = first == "R" and _REDUCING_RE.match(text)
    if reducing:
        return HashLine("reducing", int(reducing.group(1)))
    if first == "e" and _HASH_ERROR_RE.match(text):
        return HashLine("error", text)
    return SKIPPED


def _params(text: str) -> tuple[tuple[str, int, str], ...]:
    """The (name, value, unit) pairs of a parameter line, in print order."""
    return tuple(
        ("_".join(key.split()), int(value), unit)
        for key, value, unit in _PARAM_PAIR_RE.findall(text.lstrip("#"))
    )


class HashLines:
    """What each '#' line seen says, remembered by its text, and what each run of '#' lines
    seen does, remembered by its bytes (both forgotten all at once past their bounds)."""

    MAX_LINES = 4096
    MAX_LINE_TEXT = 4096  # longer lines are read each time
    MAX_RUNS = 256
    MAX_RUN_BYTES = 1 << 20  # of the remembered runs together

    def __init__(self) -> None:
        self._lines: dict[str, HashLine] = {}
        self._runs: dict[bytes, tuple[tuple[int, HashLine], ...] | None] = {}
        self._run_bytes = 0

    def line(self, text: str) -> HashLine:
        """``read_hash_line(text)``, remembered."""
        line = self._lines.get(text)
        if line is None:
            line = read_hash_line(text)
            if len(text) <= self.MAX_LINE_TEXT:
                if len(self._lines) >= self.MAX_LINES:
                    self._lines.clear()
                self._lines[text] = line
        return line

    def run(self, chunk: bytes) -> tuple[tuple[int, HashLine], ...] | None:
        """For whole lines that are all '#' lines or blank (stripped): the '#' lines that
        say something, each with how many '#' lines end with it (the reader counts every
        one of them, ``text.TextReader.lineno``); the last may be SKIPPED, to count the
        lines after the last that says something. None when a line is anything else."""
        found = self._runs.get(chunk, False)
        if found is not False:
            return found
        found = self._read_run(chunk)
        if len(chunk) <= self.MAX_RUN_BYTES:
            if (
                len(self._runs) >= self.MAX_RUNS
                or self._run_bytes + len(chunk) > self.MAX_RUN_BYTES
            ):
                self._runs.clear()
                self._run_bytes = 0
            self._runs[chunk] = found
            self._run_bytes += len(chunk)
        return found

    def _read_run(self, chunk: bytes) -> tuple[tuple[int, HashLine], ...] | None:
        steps: list[tuple[int, HashLine]] = []
        count = 0
        for raw in chunk.decode("utf-8").split("\n")[:-1]:
            text = raw.strip()
            if not text:
                continue  # the reader skips it without counting it
            if text[0] != "#":
                return None
            count += 1
            line = self.line(text)
            if line.kind is not None:
                steps.append((count, line))
                count = 0
        if count:
            steps.append((count, SKIPPED))
        return tuple(steps)
