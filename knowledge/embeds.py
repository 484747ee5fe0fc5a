"""Charts and evidence cards inside page bodies, pinned as in post-mortems.

A page body may contain the post-mortem shortcodes (``{{chart run=12}}``,
``{{artifact id=3}}``, ``{{report id=7 chart=...}}``): the kinds, their pinning and their
rendering are the one registry in documents/embeds.py. What this module adds is where a
page's pins live (``PageEmbed`` rows) and the one function that turns a page body into HTML.
Saving a page rewrites each new shortcode to ``... pin=<PageEmbed id>``; the page then keeps
showing what was pinned even after a re-parse or when the run is deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.safestring import SafeString

from documents.embeds import SHORTCODE, EmbedError, Pinned, pin_shortcodes, render_with_embeds
from documents.markdown import render_markdown
from knowledge.models import Page, PageEmbed


class PageEmbedError(ValueError):
    """A shortcode in a page body that cannot be pinned (says which and why)."""


def has_shortcodes(body: str) -> bool:
    return bool(SHORTCODE.search(body or ""))


def strip_shortcodes(body: str) -> str:
    """The body without shortcodes (for the search index: they are not words)."""
    return SHORTCODE.sub(" ", body or "")


def pin_body(page: Page, body: str, *, by: Any) -> str:
    """``body`` with every unpinned shortcode pinned to a new PageEmbed of ``page``."""
    if not has_shortcodes(body):
        return body
    try:
        return pin_shortcodes(body, create=_creator(page, by))
    except EmbedError as exc:
        raise PageEmbedError(str(exc)) from exc


def _creator(page: Page, by: Any) -> Callable[[str, dict[str, str], Pinned], int]:
    def create(kind: str, args: dict[str, str], pinned: Pinned) -> int:
        embed = PageEmbed.objects.create(
            page=page, kind=kind, params=args, pinned=pinned.pinned, snapshot=pinned.snapshot,
            created_by=by if getattr(by, "pk", None) else None,
        )  # fmt: skip
        return embed.pk

    return create


def page_html(body: str, page: Page | None = None, *, interactive: bool = True) -> SafeString:
    """Sanitized HTML of a page body (or of one of its revisions), embeds drawn from the
    page's pins. Without shortcodes this is exactly ``render_markdown``."""
    if not has_shortcodes(body):
        return render_markdown(body)
    pins: dict[int, Pinned] = {}
    if page is not None and page.pk:
        pins = {
            e.pk: Pinned(e.pinned, e.snapshot)
            for e in PageEmbed.objects.filter(page=page).only("id", "pinned", "snapshot")
        }
    html = render_with_embeds(body, pins=pins, interactive=interactive)
    # the registry's preview note speaks of post-mortems
    return SafeString(html.replace("pinned when the post-mortem is saved", "pinned on save"))
