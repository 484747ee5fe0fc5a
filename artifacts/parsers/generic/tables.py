"""Blocks of lines the generic reading takes together: tables (pipe, tab, CSV, aligned
columns, JSON lines) under a header row, and runs of aligned ``key   value`` lines.

Pure Python, no Django. A block is a list of (line number, text); each finder looks at the
block from one index and answers what it found and where it ended, or None.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from artifacts.parsers.generic.patterns import MAX_KEY_WORDS, Pair, is_number

Line = tuple[int, str]
MAX_CELLS = 64  # wider lines are no table row (a long CSV record is read up to this)
MAX_CELL_WORDS = 6  # a longer cell is a sentence: its commas or tabs make no columns
_RULE = re.compile(r"^\s*[|+:]?(?:[\s:|+]*[-=]{3,}[\s:|+]*)+$")
_SPACES = re.compile(r"\s{2,}|\t")


class Table(NamedTuple):
    separator: str  # pipe, tab, csv, spaces, space, jsonl
    line: int  # the header's line
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (line, cells)


def _pipe(text: str) -> list[str] | None:
    if "|" not in text:
        return None
    cells = text.strip()
    if cells.startswith("|"):
        cells = cells[1:]
    if cells.endswith("|"):
        cells = cells[:-1]
    return [c.strip() for c in cells.split("|")]


def _tab(text: str) -> list[str] | None:
    return [c.strip() for c in text.strip("\n").split("\t")] if "\t" in text.strip() else None


def _csv(text: str) -> list[str] | None:
    if "," not in text:
        return None
    try:
        return [c.strip() for c in next(csv.reader([text]))]
    except (csv.Error, StopIteration):
        return None


def _spaces(text: str) -> list[str] | None:
    return _SPACES.split(text.strip()) if text.strip() else None


def _space(text: str) -> list[str] | None:
    return text.split() or None


# Strictest first: a pipe table's cells may hold commas, a CSV's cells double spaces.
SPLITTERS: tuple[tuple[str, Callable[[str], list[str] | None], int], ...] = (
    ("pipe", _pipe, 1),
    ("tab", _tab, 1),
    ("csv", _csv, 1),
    ("spaces", _spaces, 2),
    ("space", _space, 2),
)
_LOOSE = frozenset({"spaces", "space"})


def table_at(
    block: Sequence[Line], index: int, said: Sequence[list[Pair]]
) -> tuple[Table, int] | None:
    """A table whose header is ``block[index]``: (table, index after its last row).
    ``said``: the pairs each line of the block states (``pairs_of``), computed once."""
    jsonl = _jsonl_at(block, index)
    if jsonl is not None:
        return jsonl
    text = block[index][1]
    for separator, split, least in SPLITTERS:
        header = split(text)
        if not header or not 2 <= len(header) <= MAX_CELLS or any(not c for c in header):
            continue
        if separator != "pipe" and (said[index] or _prose(header)):
            continue  # `key: value` lines are pairs, and sentences with commas no columns
        rows: list[tuple[int, list[str]]] = []
        end = index + 1
        while end < len(block):
            number, row_text = block[end]
            if _RULE.match(row_text):
                end += 1
                continue
            cells = split(row_text)
            if cells is None or len(cells) != len(header):
                break
            if separator != "pipe" and (said[end] or _prose(cells)):
                break
            rows.append((number, cells))
            end += 1
        if len(rows) >= least and _is_header(header, [cells for _, cells in rows], separator):
            return Table(separator, block[index][0], header, list(rows)), end
    return None


def _prose(cells: list[str]) -> bool:
    return any(len(cell.split()) > MAX_CELL_WORDS for cell in cells)


def _is_header(header: list[str], rows: list[list[str]], separator: str) -> bool:
    """A header names columns: none of its cells is a number, and the rows under it hold
    numbers where it holds words (or, for a delimited table, digits where it has none)."""
    if any(is_number(cell) for cell in header):
        return False
    numeric_columns = sum(
        1
        for column in range(len(header))
        if sum(is_number(row[column]) for row in rows) * 2 >= len(rows)
    )
    if separator == "space":  # single spaces also separate words of prose: ask for more
        return numeric_columns >= 1 and all(any(is_number(c) for c in row) for row in rows)
    if numeric_columns:
        return True
    if separator in _LOOSE:
        return False
    digits = any(ch.isdigit() for cell in header for ch in cell)
    return not digits and any(ch.isdigit() for row in rows for cell in row for ch in cell)


def aligned_pairs_at(
    block: Sequence[Line], index: int, said: Sequence[list[Pair]]
) -> tuple[list[tuple[int, Pair]], int]:
    """A run of ``key   value`` lines (two columns, the values aligned) from ``index``, or of
    ``name number`` lines (sysfs counters, /proc files): ([(line, pair)], end); empty if none."""
    found: list[tuple[int, Pair]] = []
    columns: list[int] = []
    end = index
    while end < len(block):
        number, text = block[end]
        # a colon or an equals sign says better where the key ends
        pair = None if said[end] else _aligned(text)
        if pair is None:
            break
        found.append((number, pair))
        # the column the value starts in: aligned values share it
        columns.append(text.find(pair.value, len(text) - len(text.lstrip()) + len(pair.key)))
        end += 1
    if len(found) < 2:
        return [], index
    aligned = max(columns.count(c) for c in set(columns)) * 3 >= len(columns) * 2
    numbers = all(is_number(p.value) for _, p in found)
    if aligned or (numbers and len(found) >= 3):
        return found, end
    return [], index


def _aligned(text: str) -> Pair | None:
    cells = _SPACES.split(text.strip())
    if len(cells) != 2:
        cells = text.split()
        if len(cells) != 2 or not is_number(cells[1]):
            return None
    key, value = cells
    if is_number(key) or len(key.split()) > MAX_KEY_WORDS or not any(c.isalpha() for c in key):
        return None
    return Pair(key, value)


def _jsonl_at(block: Sequence[Line], index: int) -> tuple[Table, int] | None:
    """Consecutive JSON objects, one a line: a table whose columns are the first one's keys."""
    first = _json_object(block[index][1])
    if first is None:
        return None
    header = list(first)[:MAX_CELLS]
    rows: list[tuple[int, list[str]]] = []
    end = index
    while end < len(block):
        record = first if end == index else _json_object(block[end][1])
        if record is None:
            break
        rows.append((block[end][0], [_cell(record.get(key)) for key in header]))
        end += 1
    return Table("jsonl", block[index][0], header, list(rows)), end


def _json_object(text: str) -> dict[str, Any] | None:
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return _flat(value) if isinstance(value, dict) and value else None


def _flat(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and prefix.count(".") < 2:
            out.update(_flat(value, f"{name}."))
        else:
            out[name] = value
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value)
