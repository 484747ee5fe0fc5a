"""``perf stat`` output: the default table, its aggregation modes (``--per-socket``,
``--per-die``, ``--per-core``, ``-A`` per CPU, ``--per-node``), interval mode (``-I``) and
the CSV form (``-x,``).

A row is ``[interval] [scope [cpus]] value [unit] event [# metric] [(multiplex%)]``; values
keep perf's thousands separators out (``6,887,216,716,185``), ``<not counted>`` and
``<not supported>`` are kept as events without a value. The header gives the target
(``'system wide'``, ``process id '1234'``, a command) and ``# started on`` the start time;
the footer the elapsed, user and sys seconds. Counter rows: ``device`` = the scope (``S0``,
``CPU12``, ``N0``) or ``all``, one snapshot per interval.
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
# Text only this tool prints: with it, detection is sure (artifacts/parsers/detection.py).
BANNERS = (b"Performance counter stats for",)

_TARGET = re.compile(r"Performance counter stats for (?P<target>.+?):?\s*$")
_STARTED = re.compile(r"^#\s*started on (?P<t>.+?)\s*$")
_SCOPE = r"(?:S\d+(?:-D\d+)?(?:-C\d+)?|N\d+|CPU\d+|C\d+)"
_ROW = re.compile(
    r"^\s*(?:(?P<interval>\d+\.\d+)\s+)?(?:(?P<scope>" + _SCOPE + r")\s+(?:(?P<cpus>\d+)\s+)?)?"
    r"(?P<value>[\d,]+(?:\.\d+)?|<not counted>|<not supported>)\s+"
    r"(?:(?P<unit>msec|ns|us|ms|Joules|MiB|W)\s+)?(?P<event>[\w\-./:=,@\[\]]+?(?:/[^\s]*/)?\w*)"
    r"(?:\s+#\s*(?P<metric>.*?))?\s*(?:\((?P<pct>\d+(?:\.\d+)?)%\))?\s*$"
)
_CSV_ROW = re.compile(
    r"^(?:\d+\.\d+,)?(?:" + _SCOPE + r",\d*,)?(?:[\d.]+|<not counted>|<not supported>),[^,]*,"
    r"[A-Za-z][\w\-./:=@]*,"
)
_FOOTER = re.compile(r"^\s*(?P<v>\d+(?:\.\d+)?)\s+seconds\s+(?P<what>time elapsed|user|sys)\s*$")


@dataclasses.dataclass(frozen=True)
class PerfEvent:
    event: str
    value: float | None  # None: <not counted> / <not supported>
    unit: str | None  # msec for task-clock, None for plain counts
    scope: str | None  # S0, CPU12, N0; None = whole target
    cpus: int | None  # CPUs aggregated into the scope
    interval_s: float | None  # -I: seconds since start
    metric: str | None  # perf's comment: "1.19  insn per cycle"
    multiplexed_pct: float | None  # share of time the event was counted
    status: str  # counted | not counted | not supported


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

    def summary(self) -> dict[str, Any]:
        totals: dict[str, float] = {}
        for e in self.events:
            if e.value is not None and e.interval_s is None:
                totals[e.event] = totals.get(e.event, 0.0) + e.value
        cycles, instructions = totals.get("cycles"), totals.get("instructions")
        return {
            "target": self.target,
            "events": len({e.event for e in self.events}),
            "scopes": sorted({e.scope for e in self.events if e.scope}),
            "elapsed_s": self.elapsed_s,
            "ipc": round(instructions / cycles, 3) if cycles and instructions else None,
            "not_counted": sorted({e.event for e in self.events if e.status != "counted"}),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if "Performance counter stats for" in text:
        return True
    if "perf stat" not in text:  # checked before the row count: same answer, no scan
        return False
    rows = sum(1 for line in text.splitlines() if _ROW.match(line) or _CSV_ROW.match(line))
    return rows >= 3


def parse(stream: BinaryIO) -> PerfStatResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    if not state.events:
        raise ParseError("no perf stat counter rows found")
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.host: str | None = None
        self.target: str | None = None
        self.started: str | None = None
        self.footer: dict[str, float] = {}
        self.events: list[PerfEvent] = []
        self.in_stats = False

    def feed(self, line: str) -> None:
        if m := _STARTED.match(line):  # before prompts: "# started on" looks like "# cmd"
            stamp = find_timestamp(m["t"])
            self.started = stamp[0] if stamp else None
            return
        shell = prompt(line)
        if shell is not None:
            self.host = shell[0] or self.host
            return
        if m := _TARGET.search(line):
            self.target = m["target"].strip().strip("'")
            self.in_stats = True
            return
        if m := _FOOTER.match(line):
            self.footer[m["what"]] = float(m["v"])
            return
        # -x, rows have no column padding; "1,234,567   cycles" is the text table
        stripped = line.strip()
        csv_like = stripped.count(",") >= 3 and "  " not in stripped and stripped[:1] != "#"
        if csv_like and self._csv(line):
            return
        m = _ROW.match(line)
        if m is None or not (self.in_stats or m["interval"]):
            return
        self._add(m["event"], m["value"], m["unit"], m["scope"], m["cpus"], m["interval"],
                  m["metric"], m["pct"])  # fmt: skip

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
        metric = " ".join(c for c in cells[5:7] if c) or None
        self._add(event, value, unit, scope, cpus, interval, metric, pct)
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
    ) -> None:
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
            )
        )

    def result(self, warnings: list[str]) -> PerfStatResult:
        buffer = SampleBuffer()
        intervals = sorted({e.interval_s for e in self.events if e.interval_s is not None})
        index = {t: i for i, t in enumerate(intervals)}
        for e in self.events:
            if e.value is None:
                continue
            when = self.started
            if self.started and e.interval_s is not None:
                when = iso_plus_seconds(self.started, e.interval_s)
            buffer.add(
                CounterSample(
                    host=self.host,
                    device=e.scope or "all",
                    port=None,
                    counter=e.event,
                    value=e.value,
                    unit=e.unit or "count",
                    captured_at=when,
                    snapshot=index.get(e.interval_s, 0) if e.interval_s is not None else 0,
                )
            )
        if any(
            e.status == "counted" and e.multiplexed_pct is not None and e.multiplexed_pct < 100
            for e in self.events
        ):
            warnings.append("some events were multiplexed (counted part of the time, scaled)")
        return PerfStatResult(
            host=self.host,
            target=self.target,
            started_at=self.started,
            elapsed_s=self.footer.get("time elapsed"),
            user_s=self.footer.get("user"),
            sys_s=self.footer.get("sys"),
            events=tuple(self.events),
            samples=tuple(buffer.rows),
            warnings=tuple(warnings + buffer.warnings()),
        )
