"""The generic reading of a file no parser takes (docs/formats.md, "Generic reading"):
key/value pairs, tables and labelled numbers with their lines (reader.py, from the line
shapes of patterns.py and the blocks of tables.py), and the nearest kinds with why each
declined (nearest.py).

Pure Python, no Django.
"""

from __future__ import annotations

from artifacts.parsers.generic.reader import GenericReading, read_generic, search_text

__all__ = ["GenericReading", "read_generic", "search_text"]
