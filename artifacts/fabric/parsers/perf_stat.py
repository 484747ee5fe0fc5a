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
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import CounterSample, SampleBuffer, prompt
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import (
    LineReader,
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
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line, reader.line_no)
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


class _Run:
    """The block being read; frozen into a PerfRun at the end."""

    def __init__(self, index: int, line: int) -> None:
        self.index = index
        self.line = line
        self.command: str | None = None
        self.target: str | None = None
        self.started: str | None = None
        self.footer: dict[str, float] = {}
        self.elapsed_variance: float | None = None
        self.events = 0
        self.intervals: set[float] = set()

    def empty(self) -> bool:
        return not (self.events or self.footer or self.target or self.started or self.command)

    def freeze(self) -> PerfRun:
        target = self.target
        repeats = _REPEATS.search(target or "")
        if target and repeats:
            target = _target(target[: repeats.start()])
        pid = _PID.search(target or "")
        return PerfRun(
            index=self.index,
            line=self.line,
            command=self.command,
            target=target,
            pid=int(pid["pid"]) if pid else None,
            repeats=int(repeats["n"]) if repeats else None,
            started_at=self.started,
            elapsed_s=self.footer.get("time elapsed"),
            elapsed_variance_pct=self.elapsed_variance,
            user_s=self.footer.get("user"),
            sys_s=self.footer.get("sys"),
            events=self.events,
            intervals=len(self.intervals),
        )


class _State:
    def __init__(self) -> None:
        self.host: str | None = None
        self.events: list[PerfEvent] = []
        self.runs: list[_Run] = [_Run(0, 0)]
        self.in_stats = False
        self.parts: dict[str, None] = {}
        self.line_no = 0
        self.dropped = 0  # event rows beyond MAX_EVENTS

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

    def feed(self, line: str, line_no: int = 0) -> None:
        self.line_no = line_no
        # "#" lines before prompts: "# started on" and "#    time" look like a root's "# cmd"
        if line.lstrip()[:1] == "#" and self._comment(line):
            return
        # each pattern only where its words are: most lines are counter rows (issue 27)
        shell = prompt(line) if _maybe_prompt(line) else None
        if shell is not None:
            self.host = shell[0] or self.host
            if "perf" in shell[1] and "stat" in shell[1]:
                self._next_run(not self.run.empty()).command = shell[1]
                self.parts.setdefault("command", None)
            return
        if "Performance counter stats for" in line and (m := _TARGET.search(line)):
            run = self.run
            self._next_run(bool(run.events or run.footer or run.target)).target = _target(
                m["target"]
            )
            self.in_stats = True
            self.parts.setdefault("header", None)
            return
        if "seconds" in line and (m := _FOOTER.match(line)):
            run = self._next_run(False)
            run.footer[m["what"]] = float(m["v"])
            if m["what"] == "time elapsed" and m["var"]:
                run.elapsed_variance = float(m["var"])
            self.parts.setdefault("footer", None)
            return
        # -x, rows have no column padding; "1,234,567   cycles" is the text table
        stripped = line.strip()
        csv_like = stripped.count(",") >= 3 and "  " not in stripped and stripped[:1] != "#"
        if csv_like and self._csv(line):
            self.parts.setdefault("csv", None)
            return
        m = _ROW.match(line)
        if m is None:
            return
        if not (self.in_stats or m["interval"]) and not _fragment_row(m):
            return
        self._add(m["event"], m["value"], m["unit"], m["scope"], m["cpus"], m["interval"],
                  m["metric"], m["pct"], m["var"])  # fmt: skip
        self.parts.setdefault("interval" if m["interval"] else "counters", None)

    def _comment(self, line: str) -> bool:
        """``# started on``, the interval header and metric-only lines; True when one."""
        if m := _STARTED.match(line):
            run = self.run
            run = self._next_run(bool(run.events or run.footer or run.target or run.started))
            stamp = find_timestamp(m["t"])
            run.started = stamp[0] if stamp else None
            self.parts.setdefault("started", None)
            return True
        if _INTERVAL_HEADER.match(line):  # "#           time             counts unit events"
            self.parts.setdefault("interval_header", None)
            return True
        m = _METRIC_ONLY.match(line)
        if m and self.events and self.events[-1].run == self.run.index:
            last = self.events[-1]
            more = (*last.more_metrics, " ".join(m["metric"].split()))
            self.events[-1] = dataclasses.replace(last, more_metrics=more)
            return True
        return False

    def _csv(self, line: str) -> bool:
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
            return False
        value, unit, event = cells[0], cells[1] or None, cells[2]
        if not event or (to_number(value) is None and not value.startswith("<not")):
            return False
        pct = cells[4] if len(cells) > 4 else None
        if pct and not _is_float(pct):
            return False  # not perf's run share: nvidia-smi's CSV ("0, 8192 MiB, ..., 200.00 W")
        metric = " ".join(c for c in cells[5:7] if c) or None
        self._add(event, value, unit, scope, cpus, interval, metric, pct, None)
        return True

    def _add(
        self,
        event: str,
        value: str,
        unit: str | None,
        scope: str | None,
        cpus: str | None,
        interval: str | None,
        metric: str | None,
        pct: str | None,
        variance: str | None,
    ) -> None:
        # counters after a footer, with no header between: the next block's header was cut
        run = self._next_run(bool(self.run.footer) and interval is None)
        run.events += 1
        if interval:
            run.intervals.add(float(interval))
        if len(self.events) >= MAX_EVENTS:
            self.dropped += 1
            return
        status = "counted"
        number: float | None = None
        if value.startswith("<not"):
            status = value.strip("<>")
        else:
            parsed = to_number(value)
            number = float(parsed) if parsed is not None else None
        self.events.append(
            PerfEvent(
                event=event,
                value=number,
                unit=unit,
                scope=scope,
                cpus=int(cpus) if cpus else None,
                interval_s=float(interval) if interval else None,
                metric=" ".join(metric.split()) if metric else None,
                multiplexed_pct=float(pct) if pct not in (None, "") else None,
                status=status,
                run=run.index,
                variance_pct=float(variance) if variance else None,
            )
        )

    def result(self, warnings: list[str]) -> PerfStatResult:
        runs = [r.freeze() for r in self.runs if not r.empty()]
        buffer = SampleBuffer()
        # one snapshot per (run, interval): runs appended in one file never merge
        keys = sorted({(e.run, e.interval_s or 0.0) for e in self.events})
        index = {k: i for i, k in enumerate(keys)}
        started = {r.index: r.started_at for r in runs}
        for e in self.events:
            if e.value is None:
                continue
            when = started.get(e.run)
            if when and e.interval_s is not None:
                when = iso_plus_seconds(when, e.interval_s)
            buffer.add(
                CounterSample(
                    host=self.host,
                    device=e.scope or "all",
                    port=None,
                    counter=e.event,
                    value=e.value,
                    unit=e.unit or "count",
                    captured_at=when,
                    snapshot=index[(e.run, e.interval_s or 0.0)],
                )
            )
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
