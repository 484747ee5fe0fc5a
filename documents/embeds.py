"""Live evidence inside Markdown documents (post-mortems, knowledge pages), by shortcode.

``{{chart run=123}}``: ``EMBED_KINDS`` is the registry. A kind knows how to *pin* itself
(freeze what it shows into a row of its document when the document is saved) and how to
*render* a pinned snapshot, either interactively (plotly on the page) or statically
(exports, evidence bundles). Saving rewrites ``{{chart run=123}}`` to
``{{chart run=123 pin=7}}`` so the text says which version it shows; a later re-parse or a
deleted run never changes a published document. Apps register the kinds of their own data
from ``AppConfig.ready`` (``artifacts/embeds.py``: chart, artifact, finding, trace;
``reports/embeds.py``: report); this package knows none of them.

Rendering: shortcodes are swapped for random tokens before Markdown and the sanitizer run, and
the (trusted, escaped) embed HTML replaces the tokens afterwards.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from django.utils.html import format_html, json_script
from django.utils.safestring import SafeString, mark_safe

from documents.markdown import markdown_to_unsafe_html, sanitize_html

SHORTCODE = re.compile(r"\{\{\s*(?P<kind>[a-z_]+)(?P<args>(?:\s+[a-z_]+=[\w.:-]+)*)\s*\}\}")
_ARG = re.compile(r"([a-z_]+)=([\w.:-]+)")
# Shortcodes inside code (fenced blocks, `inline`) are text, so docs can show the syntax.
_CODE = re.compile(r"^(```|~~~).*?^\1[ \t]*$|`[^`\n]+`", re.MULTILINE | re.DOTALL)


class EmbedError(Exception):
    """A shortcode that cannot be pinned (unknown kind, missing run, bad arguments)."""


@dataclass(frozen=True)
class Pinned:
    pinned: dict[str, Any]  # which version of the evidence (ids, sha256, parser version)
    snapshot: dict[str, Any]  # what is drawn


class EmbedKind(Protocol):
    name: str
    example: str

    def pin(self, args: dict[str, str]) -> Pinned: ...

    def render(self, pinned: Pinned, *, interactive: bool, dom_id: str) -> str: ...


# kind name -> kind; apps add theirs with register() from their AppConfig.ready()
EMBED_KINDS: dict[str, EmbedKind] = {}


def register(*kinds: EmbedKind) -> None:
    """Add embed kinds to the registry (first registration of a name wins)."""
    for kind in kinds:
        EMBED_KINDS.setdefault(kind.name, kind)


def parse_args(text: str) -> dict[str, str]:
    return dict(_ARG.findall(text or ""))


def pin_shortcodes(body: str, *, create: Callable[[str, dict[str, str], Pinned], int]) -> str:
    """Pin every unpinned shortcode; ``create(kind, args, pinned)`` stores one, returns its id.

    Raises EmbedError for the first shortcode that cannot be pinned, so a save never
    stores a post-mortem with a dangling embed.
    """

    code = _code_ranges(body)

    def replace(match: re.Match[str]) -> str:
        if _inside(match.start(), code):
            return match.group(0)
        kind, args = match["kind"], parse_args(match["args"])
        if kind not in EMBED_KINDS:
            raise EmbedError(
                f"unknown embed {match.group(0)!r}; known: "
                + ", ".join(k.example for k in EMBED_KINDS.values())
            )
        if "pin" in args:
            return match.group(0)
        pinned = EMBED_KINDS[kind].pin(args)
        pin_id = create(kind, args, pinned)
        arg_text = " ".join(f"{k}={v}" for k, v in args.items())
        return "{{" + f"{kind} {arg_text} pin={pin_id}".replace("  ", " ") + "}}"

    return SHORTCODE.sub(replace, body)


def render_with_embeds(
    body: str,
    *,
    pins: dict[int, Pinned],
    interactive: bool,
    strip_images: bool = False,
) -> SafeString:
    """Sanitized HTML of a post-mortem, embeds drawn from ``pins`` (``pin=`` id → snapshot).

    Unpinned shortcodes (a live preview before saving) are pinned in memory for display only.
    ``strip_images`` drops <img> for self-contained exports (no external resources).
    """
    nonce = secrets.token_hex(8)
    rendered: dict[str, str] = {}
    code = _code_ranges(body or "")

    def swap(match: re.Match[str]) -> str:
        if _inside(match.start(), code):
            return match.group(0)
        token = f"PHEMBED{nonce}N{len(rendered)}"
        rendered[token] = _render_one(
            match["kind"], parse_args(match["args"]), pins, interactive, f"embed-{len(rendered)}"
        )
        return f"\n\n{token}\n\n"

    source = SHORTCODE.sub(swap, body or "")
    html = sanitize_html(markdown_to_unsafe_html(source))
    if strip_images:
        html = re.sub(r"<img\b[^>]*>", "", html)
    for token, embed_html in rendered.items():
        html = html.replace(f"<p>{token}</p>", embed_html).replace(token, embed_html)
    return mark_safe(html)  # the Markdown part is sanitized; embed HTML is ours, escaped


def _render_one(
    kind: str, args: dict[str, str], pins: dict[int, Pinned], interactive: bool, dom_id: str
) -> str:
    embed_kind = EMBED_KINDS.get(kind)
    if embed_kind is None:
        return format_html('<p class="embed-missing">unknown embed “{}”</p>', kind)
    try:
        pin_id = int(args["pin"]) if "pin" in args else None
        if pin_id is not None:
            pinned = pins.get(pin_id)
            if pinned is None:
                return format_html('<p class="embed-missing">embed pin={} not found</p>', pin_id)
        else:
            pinned = embed_kind.pin(args)
        html = embed_kind.render(pinned, interactive=interactive, dom_id=dom_id)
    except (EmbedError, ValueError) as exc:
        return format_html('<p class="embed-missing">{}</p>', str(exc))
    if pin_id is None:
        html += '<p class="muted small">(preview: pinned when the post-mortem is saved)</p>'
    return html


def _code_ranges(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _CODE.finditer(text)]


def _inside(position: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in ranges)


def chart_div(figure_json: str, dom_id: str, css: str = "chart") -> SafeString:
    """A plotly figure the page script draws: the div plus its JSON in a script tag."""
    return format_html(
        '<div class="{}" id="{}" data-figure="{}-data"></div>{}',
        css,
        dom_id,
        dom_id,
        json_script(figure_json, f"{dom_id}-data"),
    )


def int_arg(args: dict[str, str], name: str) -> int:
    try:
        return int(args[name])
    except (KeyError, ValueError):
        raise EmbedError(f"this embed needs {name}=<number>") from None
