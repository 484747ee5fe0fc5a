"""Number formats of the trace pages (one place, so pages and tests agree on rounding)."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@register.filter
def us(value: Any) -> str:
    """Microseconds with one decimal and thousands separators; '—' when missing."""
    number = _number(value)
    return "—" if number is None else f"{number:,.1f}"


@register.filter
def ms(value: Any) -> str:
    """Microseconds shown as milliseconds, two decimals."""
    number = _number(value)
    return "—" if number is None else f"{number / 1e3:,.2f}"


@register.filter
def pct(value: Any) -> str:
    number = _number(value)
    return "—" if number is None else f"{number:.1f}"


@register.filter
def score(value: Any) -> str:
    number = _number(value)
    return "—" if number is None else f"{number:+.1f}"


@register.filter
def signed(value: Any) -> str:
    number = _number(value)
    return "—" if number is None else f"{number:+,.1f}"
