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
_NUM = r"(-?[0-9]{1,30}(?:\.[0-9]{0,30})?|N/A)"
_NUM_UNUSED = r"(?:-?[0-9]{1,30}(?:\.[0-9]{0,30})?|N/A)"  # a column no field reads
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
        # Per half: where time, algbw, busbw and wrong are among the groups (-1: not printed).
        self.halves: list[tuple[int, int, int, int]] = []
        for columns, width in zip(layout.columns, layout.widths, strict=True):
            where = {index: field for field, index in enumerate(columns) if index is not None}
            fields = [-1, -1, -1, -1]
            for index in range(width):
                if index in where:
                    parts += [_GAP, _NUM]
                    fields[where[index]] = group
                    group += 1
                else:
                    parts += [_GAP, _NUM_UNUSED]
            self.halves.append((fields[0], fields[1], fields[2], fields[3]))
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
        redop, root, error_column = self.redop, self.root, self.error_column
        halves = self.halves
        two = len(halves) == 2
        rows = []
        append = rows.append
        for groups in found:
            measured = [
                NcclMeasurement(
                    _number(groups, time_us),
                    _number(groups, algbw),
                    _number(groups, busbw),
                    _wrong(_number(groups, wrong), error_column),
                )
                for time_us, algbw, busbw, wrong in halves
            ]
            append(
                NcclRow(
                    size_bytes=int(groups[0]),
                    count=int(groups[1]),
                    dtype=groups[2],
                    redop=groups[redop] if redop >= 0 else None,
                    root=int(groups[root]) if root >= 0 else None,
                    out_of_place=measured[0],
                    in_place=measured[1] if two else None,
                )
            )
        return rows


def _number(groups: tuple[str, ...], index: int) -> float | None:
    """values.num of a token _NUM matched (float reads it the same), None where the column
    is not printed."""
    if index < 0:
        return None
    token = groups[index]
    return None if token == "N/A" else float(token)


def _wrong(value: float | None, error_column: bool) -> int | float | None:
    """values.wrong_value."""
    if value is None or error_column:
        return value
    return int(value) if value.is_integer() else value


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
