from typing import Any

from django import template
from django.utils.safestring import SafeString

from documents.markdown import render_markdown

register = template.Library()


@register.filter
def markdown(text: Any) -> SafeString:
    """Sanitized HTML of Markdown text (documents.markdown)."""
    return render_markdown(str(text or ""))


@register.filter
def severity_class(severity: str) -> str:
    return f"sev sev-{str(severity).lower()}"


@register.filter
def duration(value: Any) -> str:
    """A timedelta as 2d 3h 4m / 3h 4m / 4m 5s; an em dash when unknown."""
    from incidents.bundles.docs import human_duration

    return human_duration(value)


@register.filter
def precise_time(value: Any) -> str:
    """A time as 2025-03-01 10:07:08.408271 in the current zone; the fraction only when the
    source had one (evidence timestamps often do, hand-typed times rarely), to the microsecond."""
    from django.utils import timezone

    if not value:
        return ""
    local = timezone.localtime(value) if timezone.is_aware(value) else value
    text = local.strftime("%Y-%m-%d %H:%M:%S")
    if local.microsecond:
        text += f".{local.microsecond:06d}".rstrip("0")
    return text
