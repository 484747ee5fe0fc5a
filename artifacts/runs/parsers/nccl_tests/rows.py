"""A run of results-table rows read by one pattern per table layout (issue 27).

Package-private to ``artifacts.runs.parsers.nccl_tests``. ``text.TextReader`` reads a row
at a time with ``table.parse_row`` (split, then a Python step per token); a log of many
short runs spends most of its time there. ``RowPlan`` compiles, once per layout, a pattern
that matches only the rows ``parse_row`` reads without a question: ASCII, the exact number
of columns, plain numbers that ``float`` reads as ``values.num`` does, a redop that is not a
number, no timestamp. ``RowPlan.read`` gives the rows of a block of such lines, or None
when one line is anything else (the caller then reads the block line by line, as before).
"""

from __future__ import annotations

import re

from artifacts.runs.parsers.nccl_tests.model import NcclMeasurement, NcclRow
from artifacts.runs.parsers.nccl_tests.table import Layout

# Tokens as str.split() sees them in an ASCII line: runs of anything but space and tab (no
# other whitespace is let in: a line holding any goes the slow way).
_GAP = r"[ \t]+"
_INT = r"([0-9]{1,30})"  # values.integer's digit cap
# What parse_row's _numbers turns into float(token) (at most 61 characters of digits and one
# point: always finite) or None ("N/A"). Exponents, signs other than "-", nan and inf are
# left to the slow way.
_NUM_BODY = r"-?[0-9]{1,30}(?:\.[0-9]{0,30})?|N/A"
_NUM = "(" + _NUM_BODY + ")"
_NUM_UNUSED = "(?:" + _NUM_BODY + ")"  # a column no field reads
# A redop that values.NUM_RE cannot read as a number: a word that is not nan or inf.
_REDOP = r"(?!(?i:nan|inf)[ \t])([A-Za-z_][A-Za-z0-9_]*)"
_ROOT = r"(-?[0-9]{1,30})"


class RowPlan:
    """How the rows of one layout are read in bulk; ``for_layout`` says whether they can be."""

    def __init__(self, layout: Layout) -> None:
        self.error_column = layout.error_column
        parts = [r"^[ \t]*", _INT, _GAP, _INT, _GAP, r"([A-Za-z_][A-Za-z0-9_]*)"]
        group = 3  # groups captured so far: size, count, dtype
        self.redop = self.root = -1
        for name in layout.lead:
            parts += [_GAP, _REDOP if name == "redop" else _ROOT]
            if name == "redop":
                self.redop = group
            else:
                self.root = group
            group += 1
        # read() takes the captured numbers, the groups after the lead, in order; per half,
        # which of them are time, algbw, busbw and wrong (-1: not printed, read as None).
        self.first_number = group
        captured = 0
        self.halves: list[tuple[int, int, int, int]] = []
        for columns, width in zip(layout.columns, layout.widths, strict=True):
            where = {index: field for field, index in enumerate(columns) if index is not None}
            fields = [-1, -1, -1, -1]
            for index in range(width):
                if index in where:
                    parts += [_GAP, _NUM]
                    fields[where[index]] = captured
                    captured += 1
                else:
                    parts += [_GAP, _NUM_UNUSED]
            self.halves.append((fields[0], fields[1], fields[2], fields[3]))
        # The type and redop words seen, one string each for all the rows that print them.
        self._words: dict[str, str] = {}
        parts.append(r"[ \t]*\n")
        self.pattern = re.compile("".join(parts), re.M)

    @staticmethod
    def for_layout(layout: Layout) -> RowPlan | None:
        """None where the layout's rows need parse_row's questions: a timestamp column (a
        date to drop) or a lead column named twice."""
        if layout.timestamp or len(set(layout.lead)) != len(layout.lead):
            return None
        if not layout.groups or len(layout.groups) > 2:
            return None
        return RowPlan(layout)

    def read(self, lines: str) -> list[NcclRow] | None:
        """The rows of ``lines`` (whole lines, each ending in a newline), or None unless
        every line is a row this plan reads."""
        found = self.pattern.findall(lines)
        # Each match is one whole line ('^' ... newline): as many matches as lines means
        # that every line matched.
        if len(found) != lines.count("\n"):
            return None
        first, redop, root = self.first_number, self.redop, self.root
        error_column, halves = self.error_column, self.halves
        number = _number if "N/A" in lines else float
        # One string for each distinct word (a few: float, double, sum, none...); past 256
        # of them (plus one block's), each row keeps its own.
        word = self._words.setdefault if len(self._words) < 256 else _same
        rows = []
        append = rows.append
        for groups in found:
            # Each column's value, and None last: where a half's field is not printed (-1).
            values = [*map(number, groups[first:]), None]
            measured = []
            for time_us, algbw, busbw, wrong in halves:
                half = new(NcclMeasurement)
                set_time(half, values[time_us])
                set_algbw(half, values[algbw])
                set_busbw(half, values[busbw])
                value = values[wrong]
                if value is not None and not error_column:  # values.wrong_value
                    value = int(value) if value.is_integer() else value
                set_wrong(half, value)
                measured.append(half)
            row = new(NcclRow)
            set_size(row, int(groups[0]))
            set_count(row, int(groups[1]))
            set_dtype(row, word(groups[2], groups[2]))
            set_redop(row, word(groups[redop], groups[redop]) if redop >= 0 else None)
            set_root(row, int(groups[root]) if root >= 0 else None)
            set_out_of_place(row, measured[0])
            set_in_place(row, measured[1] if len(measured) > 1 else None)
            append(row)
        return rows


def _same(text: str, _default: str) -> str:
    return text


def _number(token: str) -> float | None:
    """values.num of a token _NUM matched: float reads it the same, "N/A" is None."""
    return None if token == "N/A" else float(token)


# The frozen rows, built as their dataclass __init__ builds them (each field set, nothing
# else) without its per-field object.__setattr__ by name: half the time (issue 27).
new = object.__new__
set_time = NcclMeasurement.time_us.__set__  # type: ignore[attr-defined]
set_algbw = NcclMeasurement.algbw_gbps.__set__  # type: ignore[attr-defined]
set_busbw = NcclMeasurement.busbw_gbps.__set__  # type: ignore[attr-defined]
set_wrong = NcclMeasurement.wrong.__set__  # type: ignore[attr-defined]
set_size = NcclRow.size_bytes.__set__  # type: ignore[attr-defined]
set_count = NcclRow.count.__set__  # type: ignore[attr-defined]
set_dtype = NcclRow.dtype.__set__  # type: ignore[attr-defined]
set_redop = NcclRow.redop.__set__  # type: ignore[attr-defined]
set_root = NcclRow.root.__set__  # type: ignore[attr-defined]
set_out_of_place = NcclRow.out_of_place.__set__  # type: ignore[attr-defined]
set_in_place = NcclRow.in_place.__set__  # type: ignore[attr-defined]


class RowPlans:
    """The plan of each layout seen, made once (a bounded memo: a file of endless distinct
    headers is read with fresh plans, not more memory)."""

    LIMIT = 64

    def __init__(self) -> None:
        self._plans: dict[Layout, RowPlan | None] = {}

    def get(self, layout: Layout) -> RowPlan | None:
        try:
            return self._plans[layout]
        except KeyError:
            pass
        if len(self._plans) >= self.LIMIT:
            self._plans.clear()
        plan = self._plans[layout] = RowPlan.for_layout(layout)
        return plan
