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
(issue 27). What a line does depends on its text alone (``effects.py``; the state it is
applied to decides the rest), so a run of lines read once, from a run's or an interval's
first line to the next line like it, is kept as a template (``templates.py``): a later copy
line for line the same is added in bulk, and a copy with other digits in the same places
reads each row's cells at the template's places, without perf's patterns. Every other line
is read on its own.

This module is the reading state: it applies each line's effect, learns templates and finds
their copies in a block. ``results.py`` holds what the file reads as (``PerfEvent``,
``PerfRun``, ``PerfStatResult``, importable from here as before).
"""

from __future__ import annotations

import dataclasses
from typing import Any, BinaryIO

from artifacts.fabric.parsers.counters_common import CounterSample, SampleBuffer
from artifacts.fabric.parsers.line_blocks import BLOCK_BYTES, NumberedBlocks
from artifacts.fabric.parsers.perf_stat.effects import (
    CSV_ROW,
    FX_COMMAND,
    INTERVAL_CELL,
    ROW,
    Cells,
    Effect,
    csv_cells,
    event_fields,
    fragment_row,
    line_effect,
)
from artifacts.fabric.parsers.perf_stat.results import (
    PerfEvent,
    PerfRun,
    PerfStatResult,
    Run,
    counter_sample,
    perf_event,
)
from artifacts.fabric.parsers.perf_stat.templates import (
    DIGITS,
    MAX_TEMPLATE_LINES,
    ZERO,
    Recording,
    Rows,
    ShapedRows,
    Spans,
    Template,
    next_copy,
    starts_unit,
)
from artifacts.parsers.base import ParseError
from artifacts.parsers.textutil import head_text, iso_plus_seconds

KIND = "perf_stat"
VERSION = 1
# Event rows one file keeps: a long ``perf stat -I`` log holds millions. Each run still
# counts all of its rows and intervals; the warning says how many were dropped (issue 27).
MAX_EVENTS = 100_000
# Text only this tool prints: with it, detection is sure (artifacts/parsers/detection.py).
BANNERS = (b"Performance counter stats for",)


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if "Performance counter stats for" in text:
        return True
    lines = text.splitlines()
    if "perf stat" in text:
        rows = sum(1 for line in lines if ROW.match(line) or CSV_ROW.match(line))
        return rows >= 3
    # a fragment: rows of perf's table without its header, told by perf's metric comments
    return sum(1 for line in lines[:2000] if fragment_row(ROW.match(line))) >= 3


def parse(stream: BinaryIO) -> PerfStatResult:
    reader = NumberedBlocks(stream, block_bytes=BLOCK_BYTES)
    state = _State()
    line_no = 0  # of the last line read, 1-based as LineReader.line_no counts
    for piece in reader:
        if type(piece) is bytes:
            line_no += state.feed_block(piece, line_no + 1)
        else:  # a line LineReader repaired (a \r, bytes not UTF-8, cut, no newline)
            advanced, line = piece
            line_no += advanced
            state.feed(line, line_no)
    if not state.events:
        raise ParseError("no perf stat counter rows found")
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.host: str | None = None
        self.events: list[PerfEvent] = []
        self.runs: list[Run] = [Run(0, 0)]
        self.in_stats = False
        self.parts: dict[str, None] = {}
        self.line_no = 0
        self.dropped = 0  # event rows beyond MAX_EVENTS
        # Reading whole blocks (issue 27): a run of lines read one by one from a line that
        # starts a run or an interval up to the next line like it becomes the template; its
        # later copies are added in bulk, lines with other digits in a row's cells each.
        self.template: Template | None = None
        self.recording: Recording | None = None

    @property
    def run(self) -> Run:
        return self.runs[-1]

    def _next_run(self, when: bool) -> Run:
        """The block to write to: a new one when the current one already holds what ``when``
        says; it starts at the line that gives it its first content."""
        if when:
            self.runs.append(Run(len(self.runs), self.line_no))
        run = self.runs[-1]
        run.line = run.line or self.line_no
        return run

    # -- line by line ---------------------------------------------------------------------

    def feed(self, line: str, line_no: int = 0) -> None:
        self.recording = None
        self.line_no = line_no
        self._apply(line_effect(line))

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
        if effect[0] == FX_COMMAND:
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
        run = self._take(cells[INTERVAL_CELL])
        if run is not None:
            self.events.append(perf_event(fields or event_fields(cells), run.index))
        self.parts.setdefault(part, None)

    def _take(self, interval: str | None) -> Run | None:
        """Count a row in its run: the run when the row is kept, None past MAX_EVENTS."""
        # counters after a footer, with no header between: the next block's header was cut
        run = self._next_run(bool(self.runs[-1].footer) and interval is None)
        run.events += 1
        if interval:
            run.add_intervals({float(interval)})
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
                    shapes = shapes or chunk.translate(ZERO)
                    if shapes.startswith(template.shape_text, pos):
                        self.recording = None
                        self._shaped_copy(template, chunk, pos, line_no)
                        pos += len(template.text)
                        line_no += template.size
                        continue
                    stop = next_copy(shapes, template.shape_text, pos)
                    stop = end if stop < 0 else stop
                at = next_copy(chunk, template.text, pos)
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
        effect = line_effect(line.decode())
        recording = self.recording
        if recording is not None and len(recording.effects) > MAX_TEMPLATE_LINES:
            self.recording = recording = None
        if effect is not None and starts_unit(effect, above):
            key = line.translate(None, DIGITS).split()
            if recording is not None and key == recording.key:
                self.recording = None
                template = Template.of(lines[recording.start : i], recording.effects, _APPLY)
                if template is not None:
                    self.template = template
                    if template.begins(line):
                        return False
                recording = None
            if recording is None:
                self.recording = recording = Recording(i, key)
        if recording is not None:
            recording.effects.append(effect)
        self.line_no = line_no
        self._apply(effect)
        return True

    def _follow(self, template: Template, lines: list[bytes], i: int, first_line: int) -> int:
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

    def _program(self, template: Template, line_no: int) -> None:
        """One copy of the template, line for line the same: its effects, rows in bulk."""
        for offset, apply, effect in template.program:
            self.line_no = line_no + offset
            apply(self, effect)

    def _copy(self, template: Template, lines: list[bytes], i: int, line_no: int) -> int:
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
            self._apply(line_effect(line.decode()))
        return fresh

    def _span_row(self, text: str, spans: Spans, part: str) -> bool:
        """A text row where the template's row was, with other digits in the same places:
        perf's patterns have no digit of their own, so ``ROW`` matches it the same way and
        its cells are the same slices. False when the row may need perf's header."""
        if part == "csv":
            self._csv_row(text, spans)
            return True
        start, end = spans[INTERVAL_CELL]
        interval = text[start:end] if start >= 0 else None
        if interval is None and not self.in_stats:
            return False
        run = self._take(interval)
        if run is not None:
            self.events.append(perf_event(event_fields(_row_cells(text, spans, part)), run.index))
        self.parts.setdefault(part, None)
        return True

    def _shaped_copy(self, template: Template, chunk: bytes, pos: int, line_no: int) -> None:
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
            self._apply(effect if line == lines[offset] else line_effect(line.decode()))

    def _csv_row(self, text: str, spans: Spans) -> None:
        """A ``-x,`` row where the template's was, with other digits in the same places
        (``templates._csv_spans``): a row too, its time at the same place; split only when kept."""
        start, end = spans[0]
        run = self._take(text[start:end].strip() if start >= 0 else None)
        if run is not None:
            self.events.append(perf_event(event_fields(_row_cells(text, spans, "csv")), run.index))
        self.parts.setdefault("csv", None)

    def _shaped_rows(self, rows: ShapedRows, chunk: bytes, pos: int) -> None:
        """Rows of a copy with other digits: ``_span_row`` for each, together."""
        line_no = self.line_no
        run = self.runs[-1]
        if run.footer or not (rows.timed or self.in_stats):
            for offset, start, length, spans, part in rows.each:  # one may open a run
                self.line_no = line_no + offset
                text = chunk[pos + start : pos + start + length].decode()
                if not self._span_row(text, spans, part):
                    self._apply(line_effect(text))
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
            cells = _row_cells(text, spans, part)
            self.events.append(perf_event(event_fields(cells), run.index))
        self.dropped += max(0, count - room)
        for part in rows.parts:
            self.parts.setdefault(part, None)

    def _rows(self, effect: Effect) -> None:
        """Consecutive rows of a template (``_take`` and ``_row`` for each, together)."""
        rows: Rows = effect[1]
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
            events += [perf_event(fields, index) for fields in rows.fields[:room]]
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
            samples.append(counter_sample(self.host, e, when, index[(e.run, e.interval_s or 0.0)]))
        return samples

    def _frozen_runs(self) -> list[PerfRun]:
        """The runs with content, frozen in place: each ``Run`` is let go as soon as its
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


def _row_cells(text: str, spans: Spans, part: str) -> Cells:
    """The cells of a row where the template's row was, with other digits in the same
    places: a text row's are the slices at the template's ``spans`` (perf's patterns have
    no digit of their own); a ``-x,`` row is split (its cells are no fixed slices)."""
    if part == "csv":
        cells = csv_cells(text)
        assert cells is not None  # a row, as the template's
        return cells
    return tuple(text[a:b] if a >= 0 else None for a, b in spans)


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
