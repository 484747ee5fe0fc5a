"""Readers for query-string filters: junk values mean "no filter", never a 500."""

from __future__ import annotations

from datetime import date
from typing import Any


def int_param(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def date_param(value: Any) -> date | None:
    """An ISO date (YYYY-MM-DD), or None for missing or unreadable input."""
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value)) if value else None
    except ValueError:
        return None
