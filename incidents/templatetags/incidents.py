from typing import Any

from django import template
from django.utils.safestring import SafeString

from perfhub.markdown import render_markdown

register = template.Library()


@register.filter
def markdown(text: Any) -> SafeString:
    """Sanitized HTML of Markdown text (perfhub.markdown)."""
    return render_markdown(str(text or ""))


@register.filter
def severity_class(severity: str) -> str:
    return f"sev sev-{str(severity).lower()}"


@register.filter
def duration(value: Any) -> str:
    """A timedelta as 2d 3h 4m / 3h 4m / 4m 5s; an em dash when unknown."""
    from incidents.bundle_docs import human_duration

    return human_duration(value)
