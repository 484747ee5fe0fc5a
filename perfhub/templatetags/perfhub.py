from typing import Any

from django import template
from django.http import QueryDict

from perfhub.units import human_bytes as _human_bytes

register = template.Library()


@register.filter
def human_bytes(value: Any) -> str:
    return _human_bytes(value)


@register.filter
def gbps(value: Any) -> str:
    return "" if value is None else f"{value:,.2f}"


@register.filter
def num(value: Any) -> str:
    """Numbers as nccl-tests prints them: whole values without '.0', None as N/A."""
    if value is None:
        return "N/A"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@register.filter
def grouped(value: Any) -> str:
    """Counter values with thousands separators (708,441,419 reads faster than 708441419)."""
    if value is None:
        return "N/A"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError, OverflowError):
        return str(value)


@register.filter
def display(value: Any) -> str:
    """Summary values: lists joined, floats rounded, the rest as text."""
    if isinstance(value, list | tuple):
        return ", ".join(display(v) for v in value)
    if isinstance(value, float):
        return f"{value:,.2f}"
    return "" if value is None else str(value)


@register.simple_tag(takes_context=True)
def query_with(context: dict[str, Any], **changes: Any) -> str:
    """The current query string with some keys replaced (pagination and export links)."""
    params: QueryDict = context["request"].GET.copy()
    for key, value in changes.items():
        if value in (None, ""):
            params.pop(key, None)
        else:
            params[key] = value
    return "?" + params.urlencode()
