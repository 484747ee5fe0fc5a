"""Differences between two versions of a page, for history and conflict screens. Pure."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class DiffLine:
    op: Literal["add", "del", "ctx", "hunk"]
    text: str


def text_diff(old: str, new: str, *, context: int = 3) -> list[DiffLine]:
    """A unified diff of two texts as typed lines (the header lines left out)."""
    lines: list[DiffLine] = []
    diff = difflib.unified_diff(
        (old or "").splitlines(), (new or "").splitlines(), lineterm="", n=context
    )
    for raw in diff:
        if raw.startswith(("---", "+++")):
            continue
        if raw.startswith("@@"):
            lines.append(DiffLine("hunk", raw))
        elif raw.startswith("+"):
            lines.append(DiffLine("add", raw[1:]))
        elif raw.startswith("-"):
            lines.append(DiffLine("del", raw[1:]))
        else:
            lines.append(DiffLine("ctx", raw[1:]))
    return lines


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: str
    new: str


def field_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldChange]:
    """Every content field except the body whose value differs, shown as compact text."""
    changes: list[FieldChange] = []
    for name in old.keys() | new.keys():
        if name == "body" or old.get(name) == new.get(name):
            continue
        changes.append(
            FieldChange(name.replace("_", " "), _show(old.get(name)), _show(new.get(name)))
        )
    return sorted(changes, key=lambda c: c.field)


def _show(value: Any) -> str:
    if isinstance(value, str | int | float) or value is None:
        return "" if value is None else str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
