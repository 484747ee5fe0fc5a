"""Report tables: a DataFrame frozen into plain JSON (what a saved report stores) and back.

A stored table is ``{"name", "title", "columns": [{"key", "label", "format", "decimals"}],
"rows": [[...], ...]}``. Numbers are rounded once, here, when the table is frozen; the page,
the CSV, the HTML export and the embeds all print the stored values through ``format_cell``,
so a number reads the same everywhere. Pure: no Django imports.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from perfhub.units import human_bytes

# How a column prints: "text" as is, "int" without decimals, "number" with a fixed number of
# decimals, "percent" a change (Δ %, signed: "+2.1"), "share" a part of a whole (% of peak,
# unsigned: "80.4"), "bytes" as a human size (the exact byte count goes in a sibling column).
FORMATS = ("text", "int", "number", "percent", "share", "bytes")
DECIMAL_FORMATS = ("number", "percent", "share")


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    format: str = "text"
    decimals: int = 2

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"column {self.key}: unknown format {self.format!r}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "format": self.format,
            "decimals": self.decimals,
        }


def freeze(
    frame: pd.DataFrame, *, name: str, title: str, columns: Sequence[Column], note: str = ""
) -> dict[str, Any]:
    """The stored form of ``frame`` restricted to ``columns`` (in that order), JSON-safe."""
    missing = [c.key for c in columns if c.key not in frame.columns]
    if missing:
        raise KeyError(f"table {name}: frame lacks columns {missing}")
    rows = [
        [_json_value(value, column) for value, column in zip(record, columns, strict=True)]
        for record in frame[[c.key for c in columns]].itertuples(index=False, name=None)
    ]
    return {
        "name": name,
        "title": title,
        "note": note,
        "columns": [c.as_dict() for c in columns],
        "rows": rows,
    }


def thaw(table: dict[str, Any]) -> pd.DataFrame:
    """A stored table back as a DataFrame (column keys as names); ``None`` becomes NaN/None."""
    keys = [c["key"] for c in table["columns"]]
    return pd.DataFrame(table["rows"], columns=keys)


def records(table: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows as objects keyed by column key (the API's and the JSON export's shape)."""
    keys = [c["key"] for c in table["columns"]]
    return [dict(zip(keys, row, strict=True)) for row in table["rows"]]


def format_cell(value: Any, column: dict[str, Any]) -> str:
    """One cell as text, identically for the page, CSV, HTML export and embeds."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    fmt = column.get("format", "text")
    if fmt == "bytes":
        return human_bytes(value)
    if fmt == "int":
        return str(int(value))
    if fmt in DECIMAL_FORMATS:
        decimals = int(column.get("decimals", 2))
        text = f"{float(value):.{decimals}f}"
        return f"+{text}" if fmt == "percent" and float(value) > 0 else text
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def formatted_rows(table: dict[str, Any]) -> Iterable[list[str]]:
    columns = table["columns"]
    for row in table["rows"]:
        yield [format_cell(v, c) for v, c in zip(row, columns, strict=True)]


def _json_value(value: Any, column: Column) -> Any:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    if column.format == "int" or column.format == "bytes":
        return int(value)
    if column.format in DECIMAL_FORMATS:
        return round(float(value), column.decimals)
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    if hasattr(value, "item"):  # numpy scalar in a text column
        value = value.item()
    return value if isinstance(value, str | int | float | bool) else str(value)
