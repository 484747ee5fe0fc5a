"""What a ``perf stat`` file reads as: its events, runs and result, and how the reading
state makes them fast (a capped file builds 100,000 events and samples and tens of thousands
of runs, issue 27): ``perf_event`` and ``counter_sample`` fill frozen dataclasses without
their ``__init__``, and ``Run`` is the block being read, frozen into a ``PerfRun`` at the
end.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, ClassVar

from artifacts.fabric.parsers.counters_common import CounterSample
from artifacts.fabric.parsers.perf_stat.effects import Fields, unquoted_target
from artifacts.parsers.base import ParseResult

_PID = re.compile(r"process id '?(?P<pid>\d+)")
_REPEATS = re.compile(r"\s*\((?P<n>\d+) runs\)\s*$")  # -r N: "for 'sleep 1' (5 runs):"


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


# Frozen dataclasses filled through ``__dict__``: their ``__init__`` sets each field through
# ``object.__setattr__``, 3x slower, and a capped file builds 100,000 events and samples and
# tens of thousands of runs (issue 27). One key at a time, in the fields' order: the
# instance keeps the class's shared keys (168 bytes) where ``dict.update`` would give it a
# dict of its own (464).
_new = object.__new__


def perf_event(fields: Fields, run: int) -> PerfEvent:
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


def counter_sample(
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


class Run:
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
        target, pid, repeats = target_facts(self.target)
        footer = self.footer or {}
        run = _new(PerfRun)  # as perf_event
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
def target_facts(target: str | None) -> tuple[str | None, int | None, int | None]:
    """The target as listed, its pid and -r's repeats."""
    repeats = _REPEATS.search(target or "")
    if target and repeats:
        target = unquoted_target(target[: repeats.start()])
    pid = _PID.search(target or "")
    return target, int(pid["pid"]) if pid else None, int(repeats["n"]) if repeats else None
