"""The generic reading of a file: its key/value pairs, tables and labelled numbers, each
with the line of the uploaded file it stands on, read in one bounded pass.

Pure Python, no Django. The stream is read once, a block of lines at a time (a block ends
at a blank line or after BLOCK_LINES), through the same cleaning a parse applies
(normalize.py: encodings, colour codes, collector prefixes), with line numbers mapped back
to the file as uploaded. What is kept is capped; what is left out is counted.
"""

from __future__ import annotations

import dataclasses
import io
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from artifacts.parsers.cleaning import CleanStream
from artifacts.parsers.generic import patterns
from artifacts.parsers.generic.tables import Line, aligned_pairs_at, table_at
from artifacts.parsers.normalize import View

VERSION = 1
MAX_BYTES = 4 * 1024 * 1024  # read at most (~1 s a MiB); the reading says where it stopped
MAX_LINE = 4096  # characters of one line looked at
BLOCK_LINES = 2000
MAX_PAIRS = 500
MAX_TABLES = 25
MAX_ROWS = 100  # per table
MAX_NUMBERS = 500
MAX_TEXT = 300  # characters of one key, value, cell or label
SEARCH_CHARS = 200_000


@dataclass
class GenericReading:
    pairs: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    numbers: list[dict[str, Any]] = field(default_factory=list)
    lines: int = 0  # lines read
    bytes_read: int = 0
    complete: bool = True  # False when MAX_BYTES stopped the reading
    binary: bool = False
    left_out: dict[str, int] = field(
        default_factory=lambda: {"pairs": 0, "tables": 0, "rows": 0, "numbers": 0}
    )

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, **dataclasses.asdict(self)}

    @property
    def empty(self) -> bool:
        return not (self.pairs or self.tables or self.numbers)


def read_generic(
    stream: BinaryIO, view: View | None = None, *, max_bytes: int = MAX_BYTES
) -> GenericReading:
    """Read ``stream`` (decompressed, at its start) generically; ``view``: the cleaning
    detection chose (a transcript's part is ignored: the whole file is read)."""
    view = view or View()
    if view.binary:
        return GenericReading(binary=True)
    counted = _Counted(stream, max_bytes)
    clean = CleanStream(counted, dataclasses.replace(view, part=None, needed=True))
    text = io.TextIOWrapper(
        io.BufferedReader(clean, buffer_size=64 * 1024), encoding="utf-8", errors="replace"
    )
    reader = _Reader()
    block: list[Line] = []
    for number, raw in enumerate(text, start=1):
        line = raw.rstrip("\n")[:MAX_LINE]
        if not line.strip():
            reader.block(block, ended=True)
            block = []
            continue
        block.append((clean.line_map.original(number), line))
        if len(block) >= BLOCK_LINES:
            reader.block(block, ended=False)
            block = []
        reader.out.lines = number
    reader.block(block, ended=True)
    reader.out.bytes_read = counted.done
    reader.out.complete = not counted.stopped
    text.detach()
    return reader.out


class _Reader:
    def __init__(self) -> None:
        self.out = GenericReading()
        # open sections: (indent, name, flat); a flat one (its lines not indented below it,
        # as in "Operational Info" + its lines) closes at a blank line
        self.sections: list[tuple[int, str, bool | None]] = []

    def block(self, block: list[Line], *, ended: bool) -> None:
        said = [patterns.pairs_of(text) for _, text in block]
        index = 0
        while index < len(block):
            found = table_at(block, index, said)
            if found is not None:
                self._table(*found[0])
                index = found[1]
                continue
            aligned, end = aligned_pairs_at(block, index, said)
            if aligned:
                for number, pair in aligned:
                    self._pair(number, pair.key, pair.value)
                index = end
                continue
            self._line(*block[index], said[index])
            index += 1
        if ended:
            self.sections = [s for s in self.sections if s[2] is False]

    def _line(self, number: int, text: str, pairs: list[patterns.Pair]) -> None:
        indent = len(text) - len(text.lstrip())
        ini = patterns.ini_section(text)
        if ini is not None:
            self.sections = [(-1, ini, True)]
            return
        if len(pairs) == 1 and patterns.opens_section(pairs[0].value):
            self._close(indent)
            # a heading ends the flat section of the heading before it at its indent
            self.sections = [s for s in self.sections if not (s[2] and s[0] >= indent)]
            self.sections.append((indent, pairs[0].key, None))
            return
        if pairs:
            self._close(indent)
            for pair in pairs:
                self._pair(number, pair.key, pair.value)
            return
        item = patterns.list_item(text)
        if item is not None and self.sections:
            self._pair(number, self.sections[-1][1], item)
            return
        for value, unit, label in patterns.numbers_in(text):
            self._number(number, value, unit, label)

    def _close(self, indent: int) -> None:
        """Settle the sections a line at ``indent`` stands in: a section whose first line is
        indented below it is nested (closed by a line at its own indent or left of it)."""
        kept = []
        for start, name, flat in self.sections:
            if flat is None:
                flat = indent <= start
            if flat or indent > start:
                kept.append((start, name, flat))
        self.sections = kept

    def _pair(self, number: int, key: str, value: str) -> None:
        if len(self.out.pairs) >= MAX_PAIRS:
            self.out.left_out["pairs"] += 1
            return
        key = " ".join(key.split())
        item: dict[str, Any] = {"line": number, "key": key[:MAX_TEXT], "value": value[:MAX_TEXT]}
        section = ".".join(name for _, name, _ in self.sections if name != key)
        if section:
            item["section"] = section[:MAX_TEXT]
        parsed = patterns.number_of(value)
        if parsed is not None:
            item["number"], item["unit"] = parsed
        self.out.pairs.append(item)

    def _table(self, separator: str, line: int, header: list[str], rows: list[Any]) -> None:
        if len(self.out.tables) >= MAX_TABLES:
            self.out.left_out["tables"] += 1
            self.out.left_out["rows"] += len(rows)
            return
        self.out.left_out["rows"] += max(0, len(rows) - MAX_ROWS)
        self.out.tables.append(
            {
                "line": line,
                "separator": separator,
                "header": [cell[:MAX_TEXT] for cell in header],
                "rows": [
                    {"line": n, "cells": [c[:MAX_TEXT] for c in cells]}
                    for n, cells in rows[:MAX_ROWS]
                ],
                "row_count": len(rows),
            }
        )

    def _number(self, number: int, value: float, unit: str, label: str) -> None:
        if len(self.out.numbers) >= MAX_NUMBERS:
            self.out.left_out["numbers"] += 1
            return
        self.out.numbers.append(
            {"line": number, "label": label[:MAX_TEXT], "value": value, "unit": unit}
        )


def search_text(reading: dict[str, Any]) -> str:
    """The words of a stored reading (``to_json``) a search should find: keys and values,
    table headers and cells, numbers with their labels and units."""
    parts: list[str] = []
    for pair in reading.get("pairs", ()):
        parts.append(f"{pair.get('section', '')} {pair.get('key', '')} {pair.get('value', '')}")
    for table in reading.get("tables", ()):
        parts.append(" ".join(table.get("header", ())))
        parts += [" ".join(row.get("cells", ())) for row in table.get("rows", ())]
    for item in reading.get("numbers", ()):
        parts.append(f"{item.get('label', '')} {_shown(item.get('value'))} {item.get('unit', '')}")
    text, size = [], 0
    for part in parts:
        part = " ".join(part.split())
        size += len(part) + 1
        if size > SEARCH_CHARS:
            break
        text.append(part)
    return "\n".join(text)


def _shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Counted(io.RawIOBase):
    """The first ``limit`` bytes of a stream, counted."""

    def __init__(self, raw: BinaryIO, limit: int) -> None:
        self._raw = raw
        self._left = limit
        self.done = 0
        self.stopped = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._left <= 0:
            self.stopped = self.stopped or bool(self._raw.read(1))
            return 0
        data = self._raw.read(min(len(buffer), self._left))
        buffer[: len(data)] = data
        self._left -= len(data)
        self.done += len(data)
        return len(data)
