"""Number formats of the Nsight pages (the tables use artifacts.nsight.tables instead)."""

from __future__ import annotations

from typing import Any

from django import template

from artifacts.nsight import tables as nsight_tables

register = template.Library()


@register.filter
def us3(ns: Any) -> str:
    """Nanoseconds as microseconds with three decimals."""
    return nsight_tables.fmt_us(ns) if isinstance(ns, int | float) else ""


@register.filter
def ms3(ns: Any) -> str:
    return f"{ns / 1e6:,.3f}" if isinstance(ns, int | float) else ""


@register.filter
def pct2(value: Any) -> str:
    return nsight_tables.fmt_pct(value) if isinstance(value, int | float) else ""
