"""Templates: a run of ``perf stat`` lines read once, kept with what each line did, so that
its later copies in a block are added without reading their lines again (issue 27: a
collector's appended runs and a long ``-I`` log repeat the same lines by the hundred
thousand).

What each part is for:

- ``Recording``: the effects (``effects.py``) of the lines read one by one since a line
  where a template may begin (``starts_unit``: a run's prompt, ``# started on`` or header,
  or an interval's first row). When the next such line comes with the same words, the lines
  between become a ``Template``.
- ``Template``: those lines, their effects and two ways to replay them. ``program`` is for a
  copy line for line the same: each effect in order, consecutive rows grouped into ``Rows``
  (their events' fields built once) so that the reading state adds them together.
  ``shaped_program`` is for a copy with other digits in the same places (``-I`` intervals,
  counters that changed): the block with every digit read as 0 (``ZERO``) matches the
  template's ``shape_text``; a line that is not a row is read afresh where it differs, and
  rows are grouped into ``ShapedRows``, which say where each row's cells are in the copy.
- ``_row_spans`` and ``_csv_spans``: where a row's cells are (text table) or its time is
  (``-x,``), and whether a copy with other digits there is sure to be a row with the same
  cells; None where it is not (such a row is read afresh wherever a copy differs).
- ``next_copy``: where the next line-aligned copy of a template begins in a block, so that
  only the lines between copies are split and read one by one.

A template does not know the reading state: it is given ``apply``, the state's table of
what applies each kind of effect, and keeps for each line the function its effect needs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from artifacts.fabric.parsers.perf_stat.effects import (
    CELLS,
    FX_COMMAND,
    FX_HEADER,
    FX_ROW,
    FX_ROWS,
    FX_STARTED,
    INTERVAL_CELL,
    ROW,
    Cells,
    Effect,
    csv_like,
    event_fields,
)

# applies an effect to the reading state (``_State``'s methods, by kind of effect)
Apply = Callable[[Any, Effect], None]

DIGITS = b"0123456789"
ZERO = bytes.maketrans(DIGITS, b"0" * len(DIGITS))  # every digit read as 0
MAX_TEMPLATE_LINES = 10_000
Spans = tuple[tuple[int, int], ...]


class Recording:
    """The effects of the lines read one by one since line ``start`` of the block."""

    def __init__(self, start: int, key: list[bytes]) -> None:
        self.start = start
        self.key = key  # the first line's words without their digits: where the next begins
        self.effects: list[Effect | None] = []


class Rows:
    """Consecutive rows of a template: their events' fields, intervals and parts."""

    def __init__(self, each: list[tuple[int, Effect]]) -> None:
        self.each = [(offset - each[0][0], effect) for offset, effect in each]
        self.fields = [effect[4] for _, effect in each]
        self.headless = all(effect[3] for _, effect in each)  # kept without a header
        self.intervals = {float(i) for _, e in each if (i := e[1][INTERVAL_CELL])}
        self.parts = tuple(dict.fromkeys(effect[2] for _, effect in each))


class ShapedRows:
    """Consecutive rows of a template, for its copies with other digits: where each row's
    line and cells are in a copy."""

    def __init__(self, template: Template, offsets: list[int]) -> None:
        first = offsets[0]
        self.each = [
            (offset - first, template.starts[offset], len(template.lines[offset]),
             template.spans[offset], template.effects[offset][2])
            for offset in offsets
        ]  # fmt: skip
        spans = [template.spans[offset] for offset in offsets]
        # every row is -x, or has its interval: none of them needs perf's header to be kept
        self.timed = all(s is not None and (len(s) == 1 or s[INTERVAL_CELL][0] >= 0) for s in spans)
        self.stamps = []  # where the rows' intervals are in a copy
        for offset, row_spans in zip(offsets, spans, strict=True):
            if row_spans is None:
                continue
            a, b = row_spans[0] if len(row_spans) == 1 else row_spans[INTERVAL_CELL]
            if a >= 0:
                self.stamps.append((template.starts[offset] + a, template.starts[offset] + b))
        self.parts = tuple(dict.fromkeys(row[4] for row in self.each))


class Template:
    """Lines read one by one and what each did; ``program`` is the same, rows grouped."""

    def __init__(
        self, lines: list[bytes], effects: list[Effect | None], apply: Sequence[Apply]
    ) -> None:
        self.lines = lines
        self.text = b"".join(line + b"\n" for line in lines)
        self.size = len(lines)
        self.effects = effects
        self.shapes = [line.translate(ZERO) for line in lines]
        self.spans = [_row_spans(line, effect) for line, effect in zip(lines, effects, strict=True)]
        # (offset, what applies the effect, effect) for each line that does something
        self.program: list[tuple[int, Apply, Effect]] = []
        rows: list[tuple[int, Effect]] = []
        for offset, effect in enumerate(effects):
            if effect is not None and effect[0] == FX_ROW:
                rows.append((offset, effect))
                continue
            if rows:
                self.program.append((rows[0][0], apply[FX_ROWS], (FX_ROWS, Rows(rows))))
                rows = []
            if effect is not None:
                self.program.append((offset, apply[effect[0]], effect))
        if rows:
            self.program.append((rows[0][0], apply[FX_ROWS], (FX_ROWS, Rows(rows))))
        self._shaped()

    def _shaped(self) -> None:
        """What a copy with other digits in the same places (``shape_text``) needs: each
        line that is not a row, does something or has digits, by its place in the copy, and
        the rows' cells (``shaped`` is False where a row has no cells to read that way)."""
        self.shape_text = self.text.translate(ZERO)
        self.starts = list(itertools.accumulate((len(line) + 1 for line in self.lines), initial=0))
        self.shaped = self.text.isascii()  # str places are byte places
        self.shaped_program: list[tuple[int, ShapedRows | None, Effect | None]] = []
        group: list[int] = []
        for offset, (line, effect) in enumerate(zip(self.lines, self.effects, strict=True)):
            if effect is not None and effect[0] == FX_ROW:
                self.shaped = self.shaped and self.spans[offset] is not None
                group.append(offset)
                continue
            if group:
                self.shaped_program.append((group[0], ShapedRows(self, group), None))
                group = []
            if effect is not None or line != self.shapes[offset]:
                self.shaped_program.append((offset, None, effect))
        if group:
            self.shaped_program.append((group[0], ShapedRows(self, group), None))

    @classmethod
    def of(
        cls, lines: list[bytes], effects: list[Effect | None], apply: Sequence[Apply]
    ) -> Template | None:
        """The template of these lines, their rows' fields built once; None when a row's
        cells cannot be read (the line-by-line reading then says what happens). ``apply``:
        what applies each kind of effect, by kind."""
        ready: list[Effect | None] = []
        for effect in effects:
            if effect is not None and effect[0] == FX_ROW:
                try:
                    fields = event_fields(effect[1])
                except ValueError:
                    return None
                effect = (*effect[:4], fields)
            ready.append(effect)
        return cls(lines, ready, apply)

    def same_shape(self, index: int, line: bytes) -> bool:
        """``line`` is the template's line ``index`` with other digits in its digits' places."""
        return len(line) == len(self.lines[index]) and line.translate(ZERO) == self.shapes[index]

    def begins(self, line: bytes) -> bool:
        return line == self.lines[0] or self.same_shape(0, line)


def starts_unit(effect: Effect, above: bytes) -> bool:
    """Where a template may begin: a run's prompt, start or header, or an interval's first
    row, the line ``above`` not beginning with its time (each interval of ``-I`` repeats the
    one before)."""
    kind = effect[0]
    if kind == FX_ROW:
        interval = effect[1][INTERVAL_CELL]
        if interval is None:
            return False
        stamp = interval.encode()
        above = above.lstrip()
        return not (above.startswith(stamp) and above[len(stamp) : len(stamp) + 1] in b" \t,")
    return kind in (FX_COMMAND, FX_STARTED, FX_HEADER)


def _csv_spans(text: str, cells: Cells) -> Spans | None:
    """Where a ``-x,`` row's time is ((-1, -1) when it has none), when a copy with other
    digits in the same places is a row too: ``csv_cells`` decides by the cells' places and
    characters, and by ``to_number`` of the value (and of the second cell), which is None
    for numbers too large for a float: cells of 300 or more characters or with an exponent
    are not taken."""
    split = text.split(",")
    shift = sum(cell is not None for cell in cells[3:6])  # scope, cpus, interval before it
    numbers = split[1:2] + split[shift : shift + 1]
    if any(len(cell) >= 300 or "e" in cell or "E" in cell for cell in numbers):
        return None
    return ((0, len(split[0])),) if cells[INTERVAL_CELL] is not None else ((-1, -1),)


def next_copy(chunk: bytes, text: bytes, start: int) -> int:
    """Where in ``chunk`` (whole lines) the next line-aligned copy of ``text`` begins after
    ``start``, or -1."""
    at = chunk.find(text, start + 1)
    while at > 0 and chunk[at - 1] != 10:  # not at a line's start: look further
        at = chunk.find(text, at + 1)
    return at


def _row_spans(line: bytes, effect: Effect | None) -> Spans | None:
    """Where a text row's cells are, for its copies with other digits; for a ``-x,`` row
    only where its time is (its other cells are split again)."""
    if effect is None or effect[0] != FX_ROW:
        return None
    text = line.decode()
    if effect[2] == "csv":
        return _csv_spans(text, effect[1])
    m = ROW.match(text)
    if m is None or csv_like(text):
        return None
    return tuple(m.span(name) for name in CELLS)
