"""The one Markdown renderer: Markdown to HTML, then through an allow-list sanitizer (nh3).

Everything users write (post-mortems, timeline notes, knowledge pages) goes through
``render_markdown``. Raw HTML in the source is allowed only as far as the allow-list below
permits: no script/style/iframe, no ``on*`` attributes, no ``javascript:``/``data:`` URLs.
Links get ``rel="noopener noreferrer"``. The result is marked safe for templates.
"""

from __future__ import annotations

import nh3
from django.utils.safestring import SafeString, mark_safe

ALLOWED_TAGS = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl",
        "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
        "mark", "ol", "p", "pre", "s", "span", "strong", "sub", "summary", "sup", "table",
        "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "abbr": {"title"},
    "th": {"align", "colspan", "rowspan"},
    "td": {"align", "colspan", "rowspan"},
    "ol": {"start"},
    # ids (from raw HTML) are prefixed below so they cannot clash with the page's own ids
    "*": {"id"},
}
# Relative URLs (links to other PerfHub pages) stay allowed; these are the absolute schemes.
URL_SCHEMES = frozenset({"http", "https", "mailto"})
# Tags removed together with their content (nh3 strips the others and keeps their text).
DROPPED_WITH_CONTENT = frozenset({"script", "style", "iframe", "object", "embed", "noscript"})
ID_PREFIX = "md-"

_EXTENSIONS = ["fenced_code", "tables", "sane_lists"]


def markdown_to_unsafe_html(text: str) -> str:
    """Markdown to HTML *before* sanitizing; only for callers that sanitize it themselves."""
    # Imported here: it costs ~40 ms, and app start-up (command line, workers) imports this
    # module through the embed registries without rendering anything.
    import markdown

    return markdown.markdown(text or "", extensions=_EXTENSIONS, output_format="html")


def sanitize_html(html: str) -> str:
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes={tag: set(attrs) for tag, attrs in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer",
        id_prefix=ID_PREFIX,
        strip_comments=True,
    )


def render_markdown(text: str) -> SafeString:
    """Sanitized HTML for ``text`` (Markdown), safe to put in a template as is."""
    return mark_safe(sanitize_html(markdown_to_unsafe_html(text)))  # sanitized just above
