"""Charts and evidence cards inside page bodies, pinned as in post-mortems.

A page body may contain the post-mortem shortcodes (``{{chart run=12}}``,
``{{artifact id=3}}``, ``{{report id=7 chart=...}}``): the kinds, their pinning and their
rendering are the one registry in incidents/embeds.py. What this module adds is where a
page's pins live (``PageEmbed`` rows) and the one function that turns a page body into HTML.
Saving a page rewrites each new shortcode to ``... pin=<PageEmbed id>``; the page then keeps
showing what was pinned even after a re-parse or when the run is deleted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.utils.safestring import SafeString

from knowledge.models import Page, PageEmbed
from perfhub.markdown import render_markdown

# Any shortcode; kept in sync with the registry's own pattern by reading it when available.
_SHORTCODE = re.compile(r"\{\{\s*[a-z_]+(?:\s+[a-z_]+=[\w.:-]+)*\s*\}\}")


class PageEmbedError(ValueError):
    """A shortcode in a page body that cannot be pinned (says which and why)."""


def _registry() -> Any | None:
    try:
        from incidents import embeds
    except ImportError:  # the incidents app (and its registry) is optional
        return None
    return embeds


def has_shortcodes(body: str) -> bool:
    return bool(_SHORTCODE.search(body or ""))


def strip_shortcodes(body: str) -> str:
    """The body without shortcodes (for the search index: they are not words)."""
    return _SHORTCODE.sub(" ", body or "")


def pin_body(page: Page, body: str, *, by: Any) -> str:
    """``body`` with every unpinned shortcode pinned to a new PageEmbed of ``page``."""
    registry = _registry()
    if registry is None or not has_shortcodes(body):
        return body
    try:
        return registry.pin_shortcodes(body, create=_creator(page, by))
    except registry.EmbedError as exc:
        raise PageEmbedError(str(exc)) from exc


def _creator(page: Page, by: Any) -> Callable[[str, dict[str, str], Any], int]:
    def create(kind: str, args: dict[str, str], pinned: Any) -> int:
        embed = PageEmbed.objects.create(
            page=page, kind=kind, params=args, pinned=pinned.pinned, snapshot=pinned.snapshot,
            created_by=by if getattr(by, "pk", None) else None,
        )  # fmt: skip
        return embed.pk

    return create


def page_html(body: str, page: Page | None = None, *, interactive: bool = True) -> SafeString:
    """Sanitized HTML of a page body (or of one of its revisions), embeds drawn from the
    page's pins. Without shortcodes this is exactly ``render_markdown``."""
    registry = _registry()
    if registry is None or not has_shortcodes(body):
        return render_markdown(body)
    pins: dict[int, Any] = {}
    if page is not None and page.pk:
        pins = {
            e.pk: registry.Pinned(e.pinned, e.snapshot)
            for e in PageEmbed.objects.filter(page=page).only("id", "pinned", "snapshot")
        }
    html = registry.render_with_embeds(body, pins=pins, interactive=interactive)
    # the registry's preview note speaks of post-mortems
    return SafeString(html.replace("pinned when the post-mortem is saved", "pinned on save"))
