"""nccl-tests results tables: the column layout of a header line, and the rows under it.

Package-private to ``artifacts.runs.parsers.nccl_tests``. Handles every layout seen in the wild:
the current one (``redop root`` + ``time algbw busbw #wrong`` twice), the old 2.x ``error``
column, rows without ``redop``/``root``, ``cputime``, a ``timestamp`` column, per-iteration
``i_*`` extras and in-place-only rows. Pure Python, no Django.
"""

from __future__ import annotations

import dataclasses
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


def _measure(names: tuple[str, ...], tokens: list[str], error_column: bool) -> NcclMeasurement:
    values: dict[str, float | None] = {}
    for name, token in zip(names, tokens, strict=True):
        number = num(token)  # every column must be numeric, even the ones not reported
        key = _COLUMN_KEYS.get(name)
        if key is not None:
            values[key] = number
    return NcclMeasurement(
        time_us=values.get("time_us"),
        algbw_gbps=values.get("algbw_gbps"),
        busbw_gbps=values.get("busbw_gbps"),
        wrong=wrong_value(values.get("wrong"), error_column=error_column),
    )


def parse_row(tokens: list[str], layout: Layout) -> NcclRow:
    """One data row; raises BadValue when the tokens do not fit the layout."""
    size, count, dtype, rest = integer(tokens[0]), integer(tokens[1]), tokens[2], tokens[3:]
    if layout.timestamp and len(rest) >= 2 and _DATE_RE.match(rest[-2]):
        rest = rest[:-2]
    widths = [len(g) for g in layout.groups]
    total = sum(widths)
    halves: list[NcclMeasurement | None]
    if len(rest) >= total:
        lead, metrics = rest[: len(rest) - total], rest[len(rest) - total :]
        halves, offset = [], 0
        for names in layout.groups:
            halves.append(
                _measure(names, metrics[offset : offset + len(names)], layout.error_column)
            )
            offset += len(names)
    elif len(layout.groups) == 2 and len(rest) >= widths[1]:
        # nccl-tests prints a blank out-of-place half when it only runs in place.
        lead, metrics = rest[: len(rest) - widths[1]], rest[len(rest) - widths[1] :]
        halves = [None, _measure(layout.groups[1], metrics, layout.error_column)]
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
