"""``perf stat`` output: the default table, its aggregation modes (``--per-socket``,
``--per-die``, ``--per-core``, ``-A`` per CPU, ``--per-node``, ``--per-thread``), repeats
(``-r``), interval mode (``-I``) and the CSV form (``-x,``).

A row is ``[interval] [scope [cpus]] value [unit] event [# metric] [(multiplex%)]``; values
keep perf's thousands separators out (``6,887,216,716,185``), ``<not counted>`` and
``<not supported>`` are kept as events without a value. The header gives the target
(``'system wide'``, ``process id '1234'``, a command) and ``# started on`` the start time;
the footer the elapsed, user and sys seconds. Counter rows: ``device`` = the scope (``S0``,
``CPU12``, ``N0``) or ``all``, one snapshot per interval.

A file often holds several runs appended one after the other (before/after a change, one run
per setting): each ``Performance counter stats for ...`` block is a run with its command (the
``$ perf stat ...`` prompt line before it), its target, its counters and its times. Counter
rows pasted without their header (a fragment) are read too when they look like perf's (a
``# metric`` comment, a unit, a multiplexing share or a known event name).

Large files (a collector's appended runs, a long ``-I`` log) are read in 1 MiB blocks
(issue 27). What a line does depends on its text alone (``_effect``; the state it is applied
to decides the rest), so a run of lines read once, from a run's or an interval's first line
to the next line like it, is kept as a template: a later copy line for line the same is
added in bulk, and a copy with other digits in the same places reads each row's cells at the
template's places, without perf's patterns. Every other line is read on its own.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Iterator
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import CounterSample, SampleBuffer, prompt
from artifacts.fabric.parsers.line_blocks import BLOCK_BYTES, BlockReader
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import (
    find_timestamp,
    head_text,
    iso_plus_seconds,
    to_number,
)

KIND = "perf_stat"
VERSION = 1
# Event rows one file keeps: a long ``perf stat -I`` log holds millions. Each run still
# counts all of its rows and intervals; the warning says how many were dropped (issue 27).
MAX_EVENTS = 100_000
# Text only this tool prints: with it, detection is sure (artifacts/parsers/detection.py).
BANNERS = (b"Performance counter stats for",)

_TARGET = re.compile(r"Performance counter stats for (?P<target>.+?):?\s*$")
_PID = re.compile(r"process id '?(?P<pid>\d+)")
_REPEATS = re.compile(r"\s*\((?P<n>\d+) runs\)\s*$")  # -r N: "for 'sleep 1' (5 runs):"
_STARTED = re.compile(r"^#\s*started on (?P<t>.+?)\s*$")
_INTERVAL_HEADER = re.compile(r"^#\s+time\s+(?:\S+\s+)*counts\b")
# aggregation scopes: socket/die/core, NUMA node, CPU, and --per-thread's "comm-tid"
_SCOPE = r"(?:S\d+(?:-D\d+)?(?:-C\d+)?|N\d+|CPU\d+|C\d+|[A-Za-z_][\w.:]*-\d+)"
_VARIANCE = r"(?:\(\s*\+-\s*(?P<var>\d+(?:\.\d+)?)%\s*\))?"
_ROW = re.compile(
    r"^\s*(?:(?P<interval>\d+\.\d+)\s+)?(?:(?P<scope>" + _SCOPE + r")\s+(?:(?P<cpus>\d+)\s+)?)?"
    r"(?P<value>[\d,]+(?:\.\d+)?|<not counted>|<not supported>)\s+"
    r"(?:(?P<unit>msec|ns|us|ms|Joules|MiB|W)\s+)?(?P<event>[\w\-./:=,@\[\]]+?(?:/[^\s]*/)?\w*)"
    r"(?:\s+#\s*(?P<metric>.*?))?\s*" + _VARIANCE + r"\s*(?:\((?P<pct>\d+(?:\.\d+)?)%\))?\s*$"
)
# newer perf prints further metrics of an event on lines of their own: "      #  1.2 insn per cycle"
_METRIC_ONLY = re.compile(r"^\s{8,}#\s+(?P<metric>\S.*?)\s*(?:\((?P<pct>\d+(?:\.\d+)?)%\))?\s*$")
_CSV_ROW = re.compile(
    r"^(?:\d+\.\d+,)?(?:" + _SCOPE + r",\d*,)?(?:[\d.]+|<not counted>|<not supported>),[^,]*,"
    r"[A-Za-z][\w\-./:=@]*,"
)
_FOOTER = re.compile(
    r"^\s*(?P<v>\d+(?:\.\d+)?)\s+(?:\+-\s+\d+(?:\.\d+)?\s+)?seconds\s+"
    r"(?P<what>time elapsed|user|sys)\s*" + _VARIANCE + r"\s*$"
)
# perf's own event names: a row without a header is taken only if it looks like perf's
_KNOWN_EVENTS = frozenset(
    {
        "task-clock", "cpu-clock", "cycles", "instructions", "branches", "branch-misses",
        "cache-references", "cache-misses", "context-switches", "cs", "cpu-migrations",
        "migrations", "page-faults", "faults", "minor-faults", "major-faults",
        "stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles", "bus-cycles",
        "L1-dcache-loads", "L1-dcache-load-misses", "L1-icache-load-misses", "LLC-loads",
        "LLC-load-misses", "dTLB-loads", "dTLB-load-misses", "iTLB-loads", "iTLB-load-misses",
        "duration_time", "user_time", "system_time", "alignment-faults", "emulation-faults",
    }
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class PerfEvent:
    event: str
    value: float | None  # None: <not counted> / <not supported>
    unit: str | None  # msec for task-clock, None for plain counts
    scope: str | None  # S0, CPU12, N0, perf-3407; None = whole target
    cpus: int | None  # CPUs aggregated into the scope
    interval_s: float | None  # -I: seconds since start
    metric: str | None  # perf's comment: "1.19  insn per cycle"
    multiplexed_pct: float | None  # share of time the event was counted
    status: str  # counted | not counted | not supported
    run: int = 0  # the block (run) of the file the row belongs to
    variance_pct: float | None = None  # -r: "( +-  0.12% )" over the repeats
    more_metrics: tuple[str, ...] = ()  # metric-only lines printed under the row


@dataclasses.dataclass(frozen=True)
class PerfRun:
    """One ``Performance counter stats for ...`` block (or a fragment without its header)."""

    index: int
    line: int  # where the block starts in the file
    command: str | None  # the "$ perf stat ..." prompt line before it
    target: str | None  # as printed: "system wide", "process id '1884396'", "sleep 1"
    pid: int | None
    repeats: int | None  # -r N
    started_at: str | None
    elapsed_s: float | None
    elapsed_variance_pct: float | None
    user_s: float | None
    sys_s: float | None
    events: int
    intervals: int  # -I: distinct intervals of the block


@dataclasses.dataclass(frozen=True)
class PerfStatResult(ParseResult):
    kind: ClassVar[str] = "perf_stat"

    host: str | None = None
    target: str | None = None
    started_at: str | None = None
    elapsed_s: float | None = None
    user_s: float | None = None
    sys_s: float | None = None
    events: tuple[PerfEvent, ...] = ()
    samples: tuple[CounterSample, ...] = ()
    runs: tuple[PerfRun, ...] = ()
    # which parts of perf's output the file held: header, started, counters, footer, ...
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        totals: dict[str, float] = {}
        for e in self.events:
            if e.value is not None and e.interval_s is None and e.run == self.events[-1].run:
                totals[e.event] = totals.get(e.event, 0.0) + e.value
        cycles, instructions = totals.get("cycles"), totals.get("instructions")
        return {
            "target": self.target,
            "events": len({e.event for e in self.events}),
            "scopes": sorted({e.scope for e in self.events if e.scope}),
            "elapsed_s": self.elapsed_s,
            "ipc": round(instructions / cycles, 3) if cycles and instructions else None,
            "not_counted": sorted({e.event for e in self.events if e.status != "counted"}),
            "runs": len(self.runs),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if "Performance counter stats for" in text:
        return True
    lines = text.splitlines()
    if "perf stat" in text:
        rows = sum(1 for line in lines if _ROW.match(line) or _CSV_ROW.match(line))
        return rows >= 3
    # a fragment: rows of perf's table without its header, told by perf's metric comments
    return sum(1 for line in lines[:2000] if _fragment_row(_ROW.match(line))) >= 3


def parse(stream: BinaryIO) -> PerfStatResult:
    reader = _NumberedBlocks(stream, block_bytes=BLOCK_BYTES)
    state = _State()
    for piece in reader:
        if type(piece) is str:
            state.feed(piece, reader.line_no)
        else:
            reader.line_no += state.feed_block(piece, reader.line_no + 1)
    if not state.events:
        raise ParseError("no perf stat counter rows found")
    return state.result(reader.repair_warnings())


def _fragment_row(m: re.Match[str] | None) -> bool:
    """A row read without a header: only when it looks like perf's own."""
    if m is None:
        return False
    event = m["event"]
    return bool(
        m["metric"]
        or m["pct"]
        or m["unit"]
        or m["var"]
        or event in _KNOWN_EVENTS
        or event.split(":", 1)[0] in _KNOWN_EVENTS
        or ("/" in event and event.endswith("/"))  # PMU events: uncore_imc/cas_count_read/
    )


# ---------------------------------------------------------------------------------------
# What one line does. A line's effect is a function of its text alone (the state it is
# applied to decides the rest), so the effect of a line read once holds for every copy of
# it: that is what lets repeated runs be added without reading them again (issue 27).
# ---------------------------------------------------------------------------------------

_FX_STARTED = 0  # (kind, ISO time or None): "# started on ..."
_FX_PART = 1  # (kind, part): the interval header, which only names a part
_FX_METRIC = 2  # (kind, text, effect of the line if no row of the run is there to take it)
_FX_HOST = 3  # (kind, host or None): a shell prompt of another command
_FX_COMMAND = 4  # (kind, host or None, command): the "$ perf stat ..." prompt
_FX_HEADER = 5  # (kind, target): "Performance counter stats for ..."
_FX_FOOTER = 6  # (kind, what, seconds, variance % or None)
_FX_ROW = 7  # (kind, cells, part, kept without a header, fields or None)
_FX_ROWS = 8  # (kind, _Rows): consecutive rows of a template, added together

# A row's cells as printed, in this order (None where the row has no such cell).
_CELLS = ("event", "value", "unit", "scope", "cpus", "interval", "metric", "pct", "var")
_INTERVAL_CELL = 5

Effect = tuple[Any, ...]
Cells = tuple[str | None, ...]
Fields = tuple[Any, ...]


def _effect(line: str) -> Effect | None:
    """What ``line`` does; None for a line perf stat's reading skips."""
    if line.lstrip()[:1] == "#":
        # "#" lines before prompts: "# started on" and "#    time" look like a root's "# cmd"
        if m := _STARTED.match(line):
            stamp = find_timestamp(m["t"])
            return (_FX_STARTED, stamp[0] if stamp else None)
        if _INTERVAL_HEADER.match(line):  # "#           time             counts unit events"
            return (_FX_PART, "interval_header")
        if m := _METRIC_ONLY.match(line):
            return (_FX_METRIC, " ".join(m["metric"].split()), _plain_effect(line))
    return _plain_effect(line)


def _plain_effect(line: str) -> Effect | None:
    """A line that is not perf's own comment: a prompt, the header, the footer or a row."""
    # each pattern only where its words are: most lines are counter rows (issue 27)
    shell = prompt(line) if _maybe_prompt(line) else None
    if shell is not None:
        if "perf" in shell[1] and "stat" in shell[1]:
            return (_FX_COMMAND, shell[0], shell[1])
        return (_FX_HOST, shell[0])
    if "Performance counter stats for" in line and (m := _TARGET.search(line)):
        return (_FX_HEADER, _target(m["target"]))
    if "seconds" in line and (m := _FOOTER.match(line)):
        variance = float(m["var"]) if m["what"] == "time elapsed" and m["var"] else None
        return (_FX_FOOTER, m["what"], float(m["v"]), variance)
    if _csv_like(line) and (cells := _csv_cells(line)) is not None:
        return (_FX_ROW, cells, "csv", True, None)
    m = _ROW.match(line)
    if m is None:
        return None
    cells = m.group(*_CELLS)
    part = "interval" if m["interval"] else "counters"
    return (_FX_ROW, cells, part, bool(m["interval"]) or _fragment_row(m), None)


def _csv_like(line: str) -> bool:
    """-x, rows have no column padding; "1,234,567   cycles" is the text table."""
    stripped = line.strip()
    return stripped.count(",") >= 3 and "  " not in stripped and stripped[:1] != "#"


def _csv_cells(line: str) -> Cells | None:
    """``-x,``: [interval,] [scope, cpus,] value, unit, event, run, pct[, metric, name]."""
    cells = [c.strip() for c in line.rstrip("\n").split(",")]
    interval = None
    if (
        len(cells) > 4
        and re.fullmatch(r"\d+\.\d+", cells[0])
        and (to_number(cells[1]) is not None or cells[1].startswith("<not"))
        and re.search(r"[A-Za-z]", cells[3])
    ):
        interval, cells = cells[0], cells[1:]
    scope = cpus = None
    if re.fullmatch(_SCOPE, cells[0] or ""):
        scope, cells = cells[0], cells[1:]
        if cells and cells[0].isdigit() and len(cells) > 4:
            cpus, cells = cells[0], cells[1:]
    if len(cells) < 3:
        return None
    value, unit, event = cells[0], cells[1] or None, cells[2]
    if not event or (to_number(value) is None and not value.startswith("<not")):
        return None
    pct = cells[4] if len(cells) > 4 else None
    if pct and not _is_float(pct):
        return None  # not perf's run share: nvidia-smi's CSV ("0, 8192 MiB, ..., 200.00 W")
    metric = " ".join(c for c in cells[5:7] if c) or None
    return (event, value, unit, scope, cpus, interval, metric, pct, None)


def _fields(cells: Cells) -> Fields:
    """A PerfEvent's fields but its run, in its order, from a row's cells. Built only for the
    rows kept: ``int`` of a cell of thousands of digits raises, as it did past the cap."""
    event, value, unit, scope, cpus, interval, metric, pct, variance = cells
    assert event is not None and value is not None
    status = "counted"
    number: float | None = None
    if value.startswith("<not"):
        status = value.strip("<>")
    else:
        parsed = to_number(value)
        number = float(parsed) if parsed is not None else None
    return (
        event,
        number,
        unit,
        scope,
        int(cpus) if cpus else None,
        float(interval) if interval else None,
        " ".join(metric.split()) if metric else None,
        float(pct) if pct not in (None, "") else None,
        status,
        float(variance) if variance else None,
    )


# Frozen dataclasses filled through ``__dict__``: their ``__init__`` sets each field through
# ``object.__setattr__``, 3x slower, and a capped file builds 100,000 events and samples and
# tens of thousands of runs (issue 27). One key at a time, in the fields' order: the
# instance keeps the class's shared keys (168 bytes) where ``dict.update`` would give it a
# dict of its own (464).
_new = object.__new__


def _event(fields: Fields, run: int) -> PerfEvent:
    """``PerfEvent(*fields, run=run)``."""
    event, value, unit, scope, cpus, interval_s, metric, pct, status, variance = fields
    row = _new(PerfEvent)
    values = row.__dict__
    values["event"] = event
    values["value"] = value
    values["unit"] = unit
    values["scope"] = scope
    values["cpus"] = cpus
    values["interval_s"] = interval_s
    values["metric"] = metric
    values["multiplexed_pct"] = pct
    values["status"] = status
    values["run"] = run
    values["variance_pct"] = variance
    values["more_metrics"] = ()
    return row


def _sample(
    host: str | None, event: PerfEvent, captured_at: str | None, snapshot: int
) -> CounterSample:
    """The counter row of a kept event, as ``CounterSample(...)``."""
    row = _new(CounterSample)
    values = row.__dict__
    values["host"] = host
    values["device"] = event.scope or "all"
    values["port"] = None
    values["counter"] = event.event
    values["value"] = event.value
    values["unit"] = event.unit or "count"
    values["captured_at"] = captured_at
    values["snapshot"] = snapshot
    return row


class _Run:
    """The block being read; frozen into a PerfRun at the end. Slots: a tiled log holds
    tens of thousands of runs."""

    __slots__ = (
        "command",
        "elapsed_variance",
        "events",
        "footer",
        "index",
        "intervals",
        "line",
        "started",
        "target",
    )

    def __init__(self, index: int, line: int) -> None:
        self.index = index
        self.line = line
        self.command: str | None = None
        self.target: str | None = None
        self.started: str | None = None
        # made at their first entry: a run without them costs no empty dict or set
        self.footer: dict[str, float] | None = None
        self.elapsed_variance: float | None = None
        self.events = 0
        self.intervals: set[float] | None = None

    def empty(self) -> bool:
        return not (self.events or self.footer or self.target or self.started or self.command)

    def freeze(self) -> PerfRun:
        target, pid, repeats = _target_facts(self.target)
        footer = self.footer or {}
        run = _new(PerfRun)  # as _event
        values = run.__dict__
        values["index"] = self.index
        values["line"] = self.line
        values["command"] = self.command
        values["target"] = target
        values["pid"] = pid
        values["repeats"] = repeats
        values["started_at"] = self.started
        values["elapsed_s"] = footer.get("time elapsed")
        values["elapsed_variance_pct"] = self.elapsed_variance
        values["user_s"] = footer.get("user")
        values["sys_s"] = footer.get("sys")
        values["events"] = self.events
        values["intervals"] = len(self.intervals or ())
        return run

    def add_intervals(self, intervals: set[float]) -> None:
        if self.intervals is None:
            self.intervals = set()
        self.intervals.update(intervals)


@functools.lru_cache(maxsize=1024)  # runs of one file share a few targets
def _target_facts(target: str | None) -> tuple[str | None, int | None, int | None]:
    """The target as listed, its pid and -r's repeats."""
    repeats = _REPEATS.search(target or "")
    if target and repeats:
        target = _target(target[: repeats.start()])
    pid = _PID.search(target or "")
    return target, int(pid["pid"]) if pid else None, int(repeats["n"]) if repeats else None


class _State:
    def __init__(self) -> None:
        self.host: str | None = None
        self.events: list[PerfEvent] = []
        self.runs: list[_Run] = [_Run(0, 0)]
        self.in_stats = False
        self.parts: dict[str, None] = {}
        self.line_no = 0
        self.dropped = 0  # event rows beyond MAX_EVENTS
        # Reading whole blocks (issue 27): a run of lines read one by one from a line that
        # starts a run or an interval up to the next line like it becomes the template; its
        # later copies are added in bulk, lines with other digits in a row's cells each.
        self.template: _Template | None = None
        self.recording: _Recording | None = None

    @property
    def run(self) -> _Run:
        return self.runs[-1]

    def _next_run(self, when: bool) -> _Run:
        """The block to write to: a new one when the current one already holds what ``when``
        says; it starts at the line that gives it its first content."""
        if when:
            self.runs.append(_Run(len(self.runs), self.line_no))
        run = self.runs[-1]
        run.line = run.line or self.line_no
        return run

    # -- line by line ---------------------------------------------------------------------

    def feed(self, line: str, line_no: int = 0) -> None:
        self.recording = None
        self.line_no = line_no
        self._apply(_effect(line))

    def _apply(self, effect: Effect | None) -> None:
        if effect is not None:
            _APPLY[effect[0]](self, effect)

    def _started(self, effect: Effect) -> None:
        run = self.run
        run = self._next_run(bool(run.events or run.footer or run.target or run.started))
        run.started = effect[1]
        self.parts.setdefault("started", None)

    def _part(self, effect: Effect) -> None:
        self.parts.setdefault(effect[1], None)

    def _prompt(self, effect: Effect) -> None:
        self.host = effect[1] or self.host
        if effect[0] == _FX_COMMAND:
            self._next_run(not self.run.empty()).command = effect[2]
            self.parts.setdefault("command", None)

    def _header(self, effect: Effect) -> None:
        run = self.run
        self._next_run(bool(run.events or run.footer or run.target)).target = effect[1]
        self.in_stats = True
        self.parts.setdefault("header", None)

    def _footer(self, effect: Effect) -> None:
        run = self._next_run(False)
        if run.footer is None:
            run.footer = {}
        run.footer[effect[1]] = effect[2]
        if effect[3] is not None:
            run.elapsed_variance = effect[3]
        self.parts.setdefault("footer", None)

    def _metric(self, effect: Effect) -> None:
        """A metric-only line belongs to the row above it when that row is the run's."""
        if self.events and self.events[-1].run == self.run.index:
            last = self.events[-1]
            self.events[-1] = dataclasses.replace(
                last, more_metrics=(*last.more_metrics, effect[1])
            )
        else:
            self._apply(effect[2])

    def _row(self, effect: Effect) -> None:
        _, cells, part, headless, fields = effect
        if not (headless or self.in_stats):
            return  # a row-like line before any header that does not look like perf's
        run = self._take(cells[_INTERVAL_CELL])
        if run is not None:
            self.events.append(_event(fields or _fields(cells), run.index))
        self.parts.setdefault(part, None)

    def _take(self, interval: str | None) -> _Run | None:
        """Count a row in its run: the run when the row is kept, None past MAX_EVENTS."""
        # counters after a footer, with no header between: the next block's header was cut
        run = self._next_run(bool(self.runs[-1].footer) and interval is None)
        run.events += 1
        if interval:
            if run.intervals is None:
                run.intervals = set()
            run.intervals.add(float(interval))
        if len(self.events) >= MAX_EVENTS:
            self.dropped += 1
            return None
        return run

    # -- whole blocks ---------------------------------------------------------------------

    def feed_block(self, chunk: bytes, first_line: int) -> int:
        """Whole lines, the first of them line ``first_line``; how many there were. Copies
        of the template, byte for byte the same or with other digits in the same places
        (``-I`` intervals), are found in the block as they are; only the lines between them
        are split."""
        pos, line_no, end = 0, first_line, len(chunk)
        shapes = b""  # the block with every digit read as 0, made when a template needs it
        while pos < end:
            template = self.template
            stop = end
            if template is not None:
                if chunk.startswith(template.text, pos):
                    self.recording = None
                    pos += len(template.text)
                    self._program(template, line_no)
                    line_no += template.size
                    continue
                if template.shaped:
                    shapes = shapes or chunk.translate(_ZERO)
                    if shapes.startswith(template.shape_text, pos):
                        self.recording = None
                        self._shaped_copy(template, chunk, pos, line_no)
                        pos += len(template.text)
                        line_no += template.size
                        continue
                    stop = _next_copy(shapes, template.shape_text, pos)
                    stop = end if stop < 0 else stop
                at = _next_copy(chunk, template.text, pos)
                stop = stop if at < 0 else min(at, stop)
            above = chunk[chunk.rfind(b"\n", 0, pos - 1) + 1 : pos - 1] if pos else b""
            line_no += self._lines(chunk[pos:stop].split(b"\n")[:-1], line_no, above)
            pos = stop
        return line_no - first_line

    def _lines(self, lines: list[bytes], first_line: int, above: bytes) -> int:
        """Lines read one by one or as copies of the template that differ from it (``above``:
        the line before the first, where the block has one)."""
        self.recording = None
        i, size = 0, len(lines)
        while i < size:
            template = self.template
            if template is not None and i + template.size <= size and template.begins(lines[i]):
                self.recording = None
                i = self._follow(template, lines, i, first_line)
                continue
            if self._line(lines, i, first_line + i, lines[i - 1] if i else above):
                i += 1
        self.recording = None  # it holds places in these lines
        return size

    def _line(self, lines: list[bytes], i: int, line_no: int, above: bytes) -> bool:
        """Read line ``i`` on its own, recording; False when it closed the recording into a
        template that begins there (the line is then read as the template's)."""
        line = lines[i]
        effect = _effect(line.decode())
        recording = self.recording
        if recording is not None and len(recording.effects) > _MAX_TEMPLATE_LINES:
            self.recording = recording = None
        if effect is not None and _starts_unit(effect, above):
            key = line.translate(None, _DIGITS).split()
            if recording is not None and key == recording.key:
                self.recording = None
                template = _Template.of(lines[recording.start : i], recording.effects)
                if template is not None:
                    self.template = template
                    if template.begins(line):
                        return False
                recording = None
            if recording is None:
                self.recording = recording = _Recording(i, key)
        if recording is not None:
            recording.effects.append(effect)
        self.line_no = line_no
        self._apply(effect)
        return True

    def _follow(self, template: _Template, lines: list[bytes], i: int, first_line: int) -> int:
        """Read the copies of ``template`` from line ``i`` on; the line after them."""
        size, end = template.size, len(lines)
        while i + size <= end:
            if lines[i : i + size] == template.lines:
                self._program(template, first_line + i)
            elif template.begins(lines[i]):
                if self._copy(template, lines, i, first_line + i) > size // 2:
                    self.template = None  # most lines differ: learn a better one
                    return i + size
            else:
                break
            i += size
        return i

    def _program(self, template: _Template, line_no: int) -> None:
        """One copy of the template, line for line the same: its effects, rows in bulk."""
        for offset, apply, effect in template.program:
            self.line_no = line_no + offset
            apply(self, effect)

    def _copy(self, template: _Template, lines: list[bytes], i: int, line_no: int) -> int:
        """One copy whose lines differ from the template's; how many were read afresh."""
        fresh = 0
        for j in range(template.size):
            line = lines[i + j]
            self.line_no = line_no + j
            if line == template.lines[j]:
                self._apply(template.effects[j])
                continue
            same = template.same_shape(j, line)
            spans = template.spans[j]
            if same and spans and self._span_row(line.decode(), spans, template.effects[j][2]):
                continue
            fresh += not same
            self._apply(_effect(line.decode()))
        return fresh

    def _span_row(self, text: str, spans: _Spans, part: str) -> bool:
        """A text row where the template's row was, with other digits in the same places:
        perf's patterns have no digit of their own, so ``_ROW`` matches it the same way and
        its cells are the same slices. False when the row may need perf's header."""
        if part == "csv":
            self._csv_row(text, spans)
            return True
        start, end = spans[_INTERVAL_CELL]
        interval = text[start:end] if start >= 0 else None
        if interval is None and not self.in_stats:
            return False
        run = self._take(interval)
        if run is not None:
            cells = tuple(text[a:b] if a >= 0 else None for a, b in spans)
            self.events.append(_event(_fields(cells), run.index))
        self.parts.setdefault(part, None)
        return True

    def _shaped_copy(self, template: _Template, chunk: bytes, pos: int, line_no: int) -> None:
        """A copy of the template at ``pos`` with other digits in the same places: a line
        that is not a row is read afresh where it differs, rows at the template's places."""
        lines = template.lines
        for offset, rows, effect in template.shaped_program:
            self.line_no = line_no + offset
            if rows is not None:
                self._shaped_rows(rows, chunk, pos)
                continue
            start = pos + template.starts[offset]
            line = chunk[start : start + len(lines[offset])]
            self._apply(effect if line == lines[offset] else _effect(line.decode()))

    def _csv_row(self, text: str, spans: _Spans) -> None:
        """A ``-x,`` row where the template's was, with other digits in the same places
        (``_csv_spans``): a row too, its time at the same place; split only when kept."""
        start, end = spans[0]
        run = self._take(text[start:end].strip() if start >= 0 else None)
        if run is not None:
            cells = _csv_cells(text)
            assert cells is not None  # a row, as the template's
            self.events.append(_event(_fields(cells), run.index))
        self.parts.setdefault("csv", None)

    def _shaped_rows(self, rows: _ShapedRows, chunk: bytes, pos: int) -> None:
        """Rows of a copy with other digits: ``_span_row`` for each, together."""
        line_no = self.line_no
        run = self.runs[-1]
        if run.footer or not (rows.timed or self.in_stats):
            for offset, start, length, spans, part in rows.each:  # one may open a run
                self.line_no = line_no + offset
                text = chunk[pos + start : pos + start + length].decode()
                if not self._span_row(text, spans, part):
                    self._apply(_effect(text))
            return
        run.line = run.line or line_no
        count = len(rows.each)
        run.events += count
        if rows.stamps:
            stamps = {chunk[pos + a : pos + b] for a, b in rows.stamps}
            run.add_intervals({float(stamp.decode()) for stamp in stamps})
        room = max(0, MAX_EVENTS - len(self.events))
        for _, start, length, spans, part in rows.each[:room]:
            text = chunk[pos + start : pos + start + length].decode()
            if part == "csv":
                cells = _csv_cells(text)
                assert cells is not None  # a row, as the template's
            else:
                cells = tuple(text[a:b] if a >= 0 else None for a, b in spans)
            self.events.append(_event(_fields(cells), run.index))
        self.dropped += max(0, count - room)
        for part in rows.parts:
            self.parts.setdefault(part, None)

    def _rows(self, effect: Effect) -> None:
        """Consecutive rows of a template (``_take`` and ``_row`` for each, together)."""
        rows: _Rows = effect[1]
        line_no = self.line_no
        run = self.runs[-1]
        if run.footer or not (rows.headless or self.in_stats):
            for offset, row in rows.each:  # one of them may open a run or be skipped
                self.line_no = line_no + offset
                self._row(row)
            return
        run.line = run.line or line_no
        count = len(rows.fields)
        run.events += count
        if rows.intervals:
            run.add_intervals(rows.intervals)
        events = self.events
        room = max(0, MAX_EVENTS - len(events))
        if room:
            index = run.index
            events += [_event(fields, index) for fields in rows.fields[:room]]
        self.dropped += max(0, count - room)
        for part in rows.parts:
            self.parts.setdefault(part, None)

    # -- the result -----------------------------------------------------------------------

    def _samples(self, started: dict[int, str | None]) -> list[CounterSample]:
        """The counter rows of the events with a value."""
        # one snapshot per (run, interval): runs appended in one file never merge
        keys = sorted({(e.run, e.interval_s or 0.0) for e in self.events})
        index = {k: i for i, k in enumerate(keys)}
        shifted: dict[tuple[str, float], str | None] = {}  # a start plus an interval, once
        samples = []
        for e in self.events:
            if e.value is None:
                continue
            when = started.get(e.run)
            if when and e.interval_s is not None:
                key = (when, e.interval_s)
                if key not in shifted:
                    shifted[key] = iso_plus_seconds(when, e.interval_s)
                when = shifted[key]
            samples.append(_sample(self.host, e, when, index[(e.run, e.interval_s or 0.0)]))
        return samples

    def _frozen_runs(self) -> list[PerfRun]:
        """The runs with content, frozen in place: each ``_Run`` is let go as soon as its
        ``PerfRun`` is made (a tiled log holds tens of thousands)."""
        runs: list[Any] = self.runs
        kept = 0
        for run in runs:
            if not run.empty():
                runs[kept] = run.freeze()
                kept += 1
        del runs[kept:]
        self.runs = []
        return runs

    def result(self, warnings: list[str]) -> PerfStatResult:
        runs = self._frozen_runs()
        buffer = SampleBuffer()
        samples = self._samples({r.index: r.started_at for r in runs})
        room = buffer.room()  # what SampleBuffer.add does for each, at once
        buffer.rows += samples[:room]
        buffer.dropped += max(0, len(samples) - room)
        if any(
            e.status == "counted" and e.multiplexed_pct is not None and e.multiplexed_pct < 100
            for e in self.events
        ):
            warnings.append("some events were multiplexed (counted part of the time, scaled)")
        if self.dropped:
            warnings.append(
                f"{self.dropped} event row(s) beyond {MAX_EVENTS} were not kept "
                "(the runs count them all)"
            )
        if "header" not in self.parts and "csv" not in self.parts and "interval" not in self.parts:
            warnings.append("counter rows without perf's header: read as a fragment")

        def last(field: str) -> Any:
            return next((getattr(r, field) for r in reversed(runs) if getattr(r, field)), None)

        return PerfStatResult(
            host=self.host,
            target=last("target"),
            started_at=last("started_at"),
            elapsed_s=last("elapsed_s"),
            user_s=last("user_s"),
            sys_s=last("sys_s"),
            events=tuple(self.events),
            samples=tuple(buffer.rows),
            runs=tuple(runs),
            parts=tuple(self.parts),
            warnings=tuple(warnings + buffer.warnings()),
        )


# What applies each kind of effect, by kind.
_APPLY = (
    _State._started,
    _State._part,
    _State._metric,
    _State._prompt,
    _State._prompt,
    _State._header,
    _State._footer,
    _State._row,
    _State._rows,
)


# ---------------------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------------------

_DIGITS = b"0123456789"
_ZERO = bytes.maketrans(_DIGITS, b"0" * len(_DIGITS))  # every digit read as 0
_MAX_TEMPLATE_LINES = 10_000
_Spans = tuple[tuple[int, int], ...]


class _Recording:
    """The effects of the lines read one by one since line ``start`` of the block."""

    def __init__(self, start: int, key: list[bytes]) -> None:
        self.start = start
        self.key = key  # the first line's words without their digits: where the next begins
        self.effects: list[Effect | None] = []


class _Rows:
    """Consecutive rows of a template: their events' fields, intervals and parts."""

    def __init__(self, each: list[tuple[int, Effect]]) -> None:
        self.each = [(offset - each[0][0], effect) for offset, effect in each]
        self.fields = [effect[4] for _, effect in each]
        self.headless = all(effect[3] for _, effect in each)  # kept without a header
        self.intervals = {float(i) for _, e in each if (i := e[1][_INTERVAL_CELL])}
        self.parts = tuple(dict.fromkeys(effect[2] for _, effect in each))


class _ShapedRows:
    """Consecutive rows of a template, for its copies with other digits: where each row's
    line and cells are in a copy."""

    def __init__(self, template: _Template, offsets: list[int]) -> None:
        first = offsets[0]
        self.each = [
            (offset - first, template.starts[offset], len(template.lines[offset]),
             template.spans[offset], template.effects[offset][2])
            for offset in offsets
        ]  # fmt: skip
        spans = [template.spans[offset] for offset in offsets]
        # every row is -x, or has its interval: none of them needs perf's header to be kept
        self.timed = all(
            s is not None and (len(s) == 1 or s[_INTERVAL_CELL][0] >= 0) for s in spans
        )
        self.stamps = []  # where the rows' intervals are in a copy
        for offset, row_spans in zip(offsets, spans, strict=True):
            if row_spans is None:
                continue
            a, b = row_spans[0] if len(row_spans) == 1 else row_spans[_INTERVAL_CELL]
            if a >= 0:
                self.stamps.append((template.starts[offset] + a, template.starts[offset] + b))
        self.parts = tuple(dict.fromkeys(row[4] for row in self.each))


class _Template:
    """Lines read one by one and what each did; ``program`` is the same, rows grouped."""

    def __init__(self, lines: list[bytes], effects: list[Effect | None]) -> None:
        self.lines = lines
        self.text = b"".join(line + b"\n" for line in lines)
        self.size = len(lines)
        self.effects = effects
        self.shapes = [line.translate(_ZERO) for line in lines]
        self.spans = [_row_spans(line, effect) for line, effect in zip(lines, effects, strict=True)]
        # (offset, _APPLY of the effect, effect) for each line that does something
        self.program: list[tuple[int, Any, Effect]] = []
        rows: list[tuple[int, Effect]] = []
        for offset, effect in enumerate(effects):
            if effect is not None and effect[0] == _FX_ROW:
                rows.append((offset, effect))
                continue
            if rows:
                self.program.append((rows[0][0], _State._rows, (_FX_ROWS, _Rows(rows))))
                rows = []
            if effect is not None:
                self.program.append((offset, _APPLY[effect[0]], effect))
        if rows:
            self.program.append((rows[0][0], _State._rows, (_FX_ROWS, _Rows(rows))))
        self._shaped()

    def _shaped(self) -> None:
        """What a copy with other digits in the same places (``shape_text``) needs: each
        line that is not a row, does something or has digits, by its place in the copy, and
        the rows' cells (``shaped`` is False where a row has no cells to read that way)."""
        self.shape_text = self.text.translate(_ZERO)
        self.starts = list(itertools.accumulate((len(line) + 1 for line in self.lines), initial=0))
        self.shaped = self.text.isascii()  # str places are byte places
        self.shaped_program: list[tuple[int, _ShapedRows | None, Effect | None]] = []
        group: list[int] = []
        for offset, (line, effect) in enumerate(zip(self.lines, self.effects, strict=True)):
            if effect is not None and effect[0] == _FX_ROW:
                self.shaped = self.shaped and self.spans[offset] is not None
                group.append(offset)
                continue
            if group:
                self.shaped_program.append((group[0], _ShapedRows(self, group), None))
                group = []
            if effect is not None or line != self.shapes[offset]:
                self.shaped_program.append((offset, None, effect))
        if group:
            self.shaped_program.append((group[0], _ShapedRows(self, group), None))

    @classmethod
    def of(cls, lines: list[bytes], effects: list[Effect | None]) -> _Template | None:
        """The template of these lines, their rows' fields built once; None when a row's
        cells cannot be read (the line-by-line reading then says what happens)."""
        ready: list[Effect | None] = []
        for effect in effects:
            if effect is not None and effect[0] == _FX_ROW:
                try:
                    fields = _fields(effect[1])
                except ValueError:
                    return None
                effect = (*effect[:4], fields)
            ready.append(effect)
        return cls(lines, ready)

    def same_shape(self, index: int, line: bytes) -> bool:
        """``line`` is the template's line ``index`` with other digits in its digits' places."""
        return len(line) == len(self.lines[index]) and line.translate(_ZERO) == self.shapes[index]

    def begins(self, line: bytes) -> bool:
        return line == self.lines[0] or self.same_shape(0, line)


def _starts_unit(effect: Effect, above: bytes) -> bool:
    """Where a template may begin: a run's prompt, start or header, or an interval's first
    row, the line ``above`` not beginning with its time (each interval of ``-I`` repeats the
    one before)."""
    kind = effect[0]
    if kind == _FX_ROW:
        interval = effect[1][_INTERVAL_CELL]
        if interval is None:
            return False
        stamp = interval.encode()
        above = above.lstrip()
        return not (above.startswith(stamp) and above[len(stamp) : len(stamp) + 1] in b" \t,")
    return kind in (_FX_COMMAND, _FX_STARTED, _FX_HEADER)


def _csv_spans(text: str, cells: Cells) -> _Spans | None:
    """Where a ``-x,`` row's time is ((-1, -1) when it has none), when a copy with other
    digits in the same places is a row too: ``_csv_cells`` decides by the cells' places and
    characters, and by ``to_number`` of the value (and of the second cell), which is None
    for numbers too large for a float: cells of 300 or more characters or with an exponent
    are not taken."""
    split = text.split(",")
    shift = sum(cell is not None for cell in cells[3:6])  # scope, cpus, interval before it
    numbers = split[1:2] + split[shift : shift + 1]
    if any(len(cell) >= 300 or "e" in cell or "E" in cell for cell in numbers):
        return None
    return ((0, len(split[0])),) if cells[_INTERVAL_CELL] is not None else ((-1, -1),)


def _next_copy(chunk: bytes, text: bytes, start: int) -> int:
    """Where in ``chunk`` (whole lines) the next line-aligned copy of ``text`` begins after
    ``start``, or -1."""
    at = chunk.find(text, start + 1)
    while at > 0 and chunk[at - 1] != 10:  # not at a line's start: look further
        at = chunk.find(text, at + 1)
    return at


def _row_spans(line: bytes, effect: Effect | None) -> _Spans | None:
    """Where a text row's cells are, for its copies with other digits; for a ``-x,`` row
    only where its time is (its other cells are split again)."""
    if effect is None or effect[0] != _FX_ROW:
        return None
    text = line.decode()
    if effect[2] == "csv":
        return _csv_spans(text, effect[1])
    m = _ROW.match(text)
    if m is None or _csv_like(text):
        return None
    return tuple(m.span(name) for name in _CELLS)


class _NumberedBlocks(BlockReader):
    """``line_blocks.BlockReader`` that numbers the lines it repairs: ``line_no`` is the
    number (1-based, as ``LineReader.line_no`` counts) of the last line given when that was
    a ``str``. Its caller adds the lines of each ``bytes`` piece (its ``split`` counts them)."""

    def __init__(self, stream: BinaryIO, *, block_bytes: int) -> None:
        super().__init__(stream, block_bytes=block_bytes)
        self.line_no = 0

    def _repaired(self, raw: bytes) -> Iterator[str]:
        """``BlockReader._repaired``, numbering its lines (a ``\\r`` splits one line)."""
        for advanced, text in self._numbered(raw):
            self.line_no += advanced
            yield text


def _maybe_prompt(line: str) -> bool:
    """Could ``prompt`` see a shell prompt here? It needs "user@host" or a line starting
    with "$", "#", ">" or "sh-", "bash-", "zsh-" (counters_common._PROMPT, _BARE_PROMPT)."""
    if "@" in line:
        return True
    start = line.lstrip()
    return start[:1] in ("$", "#", ">") or start.startswith(("sh-", "bash-", "zsh-"))


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _target(text: str) -> str:
    """``'system wide'`` -> ``system wide``; ``process id '1884396'`` stays as printed."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1]
    return text
