"""nccl-tests results tables: the column layout of a header line, and the rows under it.

Package-private to ``artifacts.runs.parsers.nccl_tests``. Handles every layout seen in the wild:
the current one (``redop root`` + ``time algbw busbw #wrong`` twice), the old 2.x ``error``
column, rows without ``redop``/``root``, ``cputime``, a ``timestamp`` column, per-iteration
``i_*`` extras and in-place-only rows. Pure Python, no Django.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re

from artifacts.runs.parsers.nccl_tests.model import NcclMeasurement, NcclRow
from artifacts.runs.parsers.nccl_tests.values import (
    INT_RE,
    NUM_RE,
    BadValue,
    integer,
    num,
    wrong_value,
)

_DATE_RE = re.compile(r"^\d{4}-\d\d-\d\d$")
# The characters of numbers as nccl-tests prints them ("-1", "798.52"): a token of only
# these that float() reads is one values.num reads the same (no exponent, inf, nan, "_"),
# and "N/A" is None to both.
_NUMBER_CHARS = "0123456789.-"

_COLUMN_KEYS = {
    "time": "time_us",
    "cputime": "time_us",
    "algbw": "algbw_gbps",
    "busbw": "busbw_gbps",
    "#wrong": "wrong",
    "wrong": "wrong",
    "error": "wrong",
    "#error": "wrong",
}


@dataclasses.dataclass(frozen=True)
class Layout:
    """Column layout of a results table, read from its ``#  size  count  type ...`` line."""

    lead: tuple[str, ...]  # which of "redop"/"root" follow size/count/type, in order
    groups: tuple[tuple[str, ...], ...]  # out-of-place columns, then in-place columns
    timestamp: bool
    error_column: bool
    cputime: bool
    extra_columns: bool

    # Worked out once per layout (functools.cached_property keeps them in __dict__).
    @functools.cached_property
    def widths(self) -> tuple[int, ...]:
        """How many columns each group has."""
        return tuple(len(g) for g in self.groups)

    @functools.cached_property
    def columns(self) -> tuple[tuple[int | None, ...], ...]:
        """Each group's ``_columns``."""
        return tuple(_columns(g) for g in self.groups)

    @classmethod
    def from_header(cls, line: str) -> Layout | None:
        tokens = [t.lower() for t in line.lstrip("#").split()]
        starts = [i for i, t in enumerate(tokens) if t in ("time", "cputime")]
        if not starts:
            return None
        timestamp = "timestamp" in tokens
        lead = tuple(t for t in tokens[3 : starts[0]] if t in ("redop", "root"))
        ends = [*starts[1:], len(tokens)]
        groups = tuple(
            tuple(t for t in tokens[a:b] if t != "timestamp")
            for a, b in zip(starts, ends, strict=True)
        )[:2]
        names = {t for g in groups for t in g}
        return cls(
            lead=lead,
            groups=groups,
            timestamp=timestamp,
            error_column="error" in names or "#error" in names,
            cputime="cputime" in names,
            extra_columns=bool(names - set(_COLUMN_KEYS)),
        )


# Today's layout, assumed for a fragment that starts inside a table.
MODERN = Layout(
    lead=("redop", "root"),
    groups=(("time", "algbw", "busbw", "#wrong"),) * 2,
    timestamp=False,
    error_column=False,
    cputime=False,
    extra_columns=False,
)


def _columns(names: tuple[str, ...]) -> tuple[int | None, ...]:
    """Where time, algbw, busbw and wrong are in a group of columns (the last of each)."""
    where: dict[str, int] = {}
    for index, name in enumerate(names):
        key = _COLUMN_KEYS.get(name)
        if key is not None:
            where[key] = index
    return tuple(where.get(key) for key in ("time_us", "algbw_gbps", "busbw_gbps", "wrong"))


def _numbers(tokens: list[str]) -> list[float | None]:
    """``num`` of each token (BadValue if one is not a number), without num's pattern per
    token where every token is a plain finite number or "N/A"."""
    plain = [token for token in tokens if token != "N/A"]
    if not "".join(plain).strip(_NUMBER_CHARS):  # no other character in any token
        try:
            values = list(map(float, plain))
        except ValueError:
            pass
        else:
            if math.isfinite(sum(values)):  # num turns inf (1e999) into None
                numbers = iter(values)
                return [None if token == "N/A" else next(numbers) for token in tokens]
    return [num(token) for token in tokens]


def _measure(
    columns: tuple[int | None, ...], numbers: list[float | None], error_column: bool
) -> NcclMeasurement:
    """One half of a row from its columns' numbers (every column must be numeric, even the
    ones not reported); ``columns`` from ``_columns``."""
    time_us, algbw, busbw, wrong = [None if i is None else numbers[i] for i in columns]
    return NcclMeasurement(time_us, algbw, busbw, wrong_value(wrong, error_column=error_column))


def _integer(token: str) -> int:
    """``values.integer``, without its pattern for plain digits."""
    if token.isascii() and token.isdigit() and len(token) <= 30:
        return int(token)
    return integer(token)


def parse_row(tokens: list[str], layout: Layout) -> NcclRow:
    """One data row; raises BadValue when the tokens do not fit the layout."""
    size, count, dtype, rest = _integer(tokens[0]), _integer(tokens[1]), tokens[2], tokens[3:]
    if layout.timestamp and len(rest) >= 2 and _DATE_RE.match(rest[-2]):
        rest = rest[:-2]
    widths = layout.widths
    total = sum(widths)
    halves: list[NcclMeasurement | None]
    if len(rest) >= total:
        lead, metrics = rest[: len(rest) - total], rest[len(rest) - total :]
        numbers = _numbers(metrics)
        halves, offset = [], 0
        for width, columns in zip(widths, layout.columns, strict=True):
            halves.append(_measure(columns, numbers[offset : offset + width], layout.error_column))
            offset += width
    elif len(layout.groups) == 2 and len(rest) >= widths[1]:
        # nccl-tests prints a blank out-of-place half when it only runs in place.
        lead, metrics = rest[: len(rest) - widths[1]], rest[len(rest) - widths[1] :]
        halves = [None, _measure(layout.columns[1], _numbers(metrics), layout.error_column)]
    else:
        raise BadValue("too few columns")
    redop, root = _assign_lead(lead, layout.lead)
    return NcclRow(
        size_bytes=size,
        count=count,
        dtype=dtype,
        redop=redop,
        root=root,
        out_of_place=halves[0],
        in_place=halves[1] if len(halves) > 1 else None,
    )


def _assign_lead(lead: list[str], names: tuple[str, ...]) -> tuple[str | None, int | None]:
    """redop/root values; old alltoall prints the redop column blank, so fewer tokens occur."""
    if len(lead) > len(names):
        raise BadValue("too many columns")
    pairs: dict[str, str] = {}
    if len(lead) == len(names):
        pairs = dict(zip(names, lead, strict=True))
    else:
        for token in lead:
            slot = "root" if INT_RE.match(token) and "root" in names else "redop"
            if slot not in names or slot in pairs:
                raise BadValue("ambiguous columns")
            pairs[slot] = token
    root = pairs.get("root")
    redop = pairs.get("redop")
    if redop is not None and NUM_RE.match(redop):
        raise BadValue("numeric redop")
    return redop, integer(root) if root is not None else None
