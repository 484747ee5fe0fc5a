"""A report, one of its charts or one of its tables, embedded by reference in Markdown pages.

Shortcodes (post-mortems, knowledge-base pages)::

    {{report id=12}}                        verdict lines and the first chart
    {{report id=12 chart=curves-all_reduce}}  one chart (names are listed on the report page)
    {{report id=12 table=deltas}}           one table

A report id names one immutable version, so an embed is pinned by construction: re-building
the report makes a new id and leaves the embed showing the version it cites. ``pin`` also
copies what is drawn into the snapshot, so even a deleted report still renders.

``ReportEmbed`` follows the ``documents.embeds.EmbedKind`` protocol and is registered there as
"report" (``ReportsConfig.ready``); ``render_report_embed`` is the
same rendering as a plain function for any other page.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from documents.embeds import EmbedError, Pinned, chart_div
from documents.embeds import register as register_embed
from reports.models import Report

_DOM_ID = re.compile(r"[^A-Za-z0-9_-]")


class ReportEmbedError(ValueError):
    """The shortcode names no report, chart or table that can be shown; says which exist."""


@dataclass(frozen=True)
class ReportPin:
    pinned: dict[str, Any]  # which report version
    snapshot: dict[str, Any]  # what is drawn


def pin_report(args: dict[str, str]) -> ReportPin:
    """Freeze what ``{{report id=.. [chart=..|table=..]}}`` shows."""
    try:
        report_id = int(args["id"])
    except (KeyError, ValueError):
        raise ReportEmbedError("a report embed needs id=<report number>") from None
    report = Report.objects.filter(pk=report_id).first()
    if report is None:
        raise ReportEmbedError(f"no report #{report_id}")
    if not report.is_ready:
        raise ReportEmbedError(f"report #{report_id} is {report.status}, not built yet")
    pinned = {
        "report_id": report.pk,
        "version": report.version,
        "lineage": str(report.lineage),
        "title": report.title,
    }
    snapshot: dict[str, Any] = {"summary": list(report.summary)}
    if table_name := args.get("table"):
        table = report.table(table_name)
        if table is None:
            names = ", ".join(t["name"] for t in report.tables)
            raise ReportEmbedError(f"report #{report_id} has no table {table_name!r} ({names})")
        snapshot["table"] = table
    else:
        # reports.exports brings pandas and plotly: imported when an embed is pinned or
        # drawn, not when the registry is loaded at start-up (command line, workers)
        from reports import exports

        charts = exports.report_charts(report)
        chart_name = args.get("chart")
        chosen = next((c for c in charts if c.name == chart_name), None) if chart_name else None
        if chart_name and chosen is None:
            names = ", ".join(c.name for c in charts) or "none"
            raise ReportEmbedError(f"report #{report_id} has no chart {chart_name!r} ({names})")
        chosen = chosen or (charts[0] if charts else None)
        if chosen is not None:
            snapshot["chart"] = {
                "name": chosen.name,
                "title": chosen.title,
                "figure": json.loads(chosen.figure.to_json()),
            }
        snapshot["whole"] = chart_name is None
    return ReportPin(pinned=pinned, snapshot=snapshot)


def render_pinned(pin: ReportPin, *, interactive: bool, dom_id: str) -> SafeString:
    """HTML for a pinned embed. Interactive: a plotly chart the host page draws (it loads
    plotly.js and ``js/charts.js``); static: an inline SVG (kaleido) or, without images, the
    verdict lines and a note. Everything user-written is escaped."""
    pinned, snap = pin.pinned, pin.snapshot
    dom_id = _DOM_ID.sub("-", dom_id)
    parts: list[str] = []
    if snap.get("whole") and snap.get("summary"):
        parts.append(
            format_html(
                '<ul class="verdicts">{}</ul>',
                format_html_join("", "<li>{}</li>", ((line,) for line in snap["summary"])),
            )
        )
    if chart := snap.get("chart"):
        parts.append(_chart_html(chart, interactive=interactive, dom_id=dom_id))
    if table := snap.get("table"):
        from reports import exports  # pandas/plotly: only when drawn (see pin_report)

        parts.append(
            render_to_string("reports/_table.html", {"table": exports.table_context(table)})
        )
    title, number, version = (pinned.get(k) for k in ("title", "report_id", "version"))
    label = f"{title or 'report'} · report #{number} v{version}"
    if snap.get("chart"):
        label += f" · {snap['chart']['title']}"
    elif snap.get("table"):
        label += f" · {snap['table']['title']}"
    caption = format_html("{}", label)
    if interactive and pinned.get("report_id"):
        caption = format_html(
            '<a href="{}">{}</a>', reverse("report-detail", args=[pinned["report_id"]]), label
        )
    return format_html(
        '<figure class="embed report-embed" data-report="{}">{}'
        "<figcaption>{}</figcaption></figure>",
        pinned.get("report_id", ""),
        mark_safe("".join(parts)),  # each part is escaped above
        caption,
    )


def _chart_html(chart: dict[str, Any], *, interactive: bool, dom_id: str) -> str:
    if interactive:
        return chart_div(json.dumps(chart["figure"]), dom_id, css="chart report-chart")
    from reports import exports  # pandas/plotly/kaleido: only when drawn (see pin_report)

    if reason := exports.images_unavailable():
        return format_html('<p class="muted small">Chart not drawn here: {}</p>', reason)
    try:
        svg = exports.render_image(chart["figure"], "svg").decode()
    except exports.ExportError as exc:
        return format_html('<p class="muted small">Chart not drawn here: {}</p>', str(exc))
    # kaleido's SVG of our own figure (no user HTML in it: titles are SVG-escaped text)
    return mark_safe(f'<div class="report-chart-static">{svg}</div>')


def render_report_embed(
    report_id: int,
    *,
    chart: str | None = None,
    table: str | None = None,
    interactive: bool = True,
    dom_id: str = "",
) -> SafeString:
    """Render ``{{report id=.. chart=.. table=..}}`` in one call (pins in memory)."""
    args = {"id": str(report_id)}
    if chart:
        args["chart"] = chart
    if table:
        args["table"] = table
    pin = pin_report(args)
    return render_pinned(pin, interactive=interactive, dom_id=dom_id or f"report-{report_id}")


class ReportEmbed:
    """``documents.embeds.EmbedKind`` for reports: ``{{report id=ID [chart=NAME|table=NAME]}}``."""

    name = "report"
    example = "{{report id=12 chart=curves-all_reduce}}"

    def pin(self, args: dict[str, str]) -> Pinned:
        try:
            pin = pin_report(args)
        except ReportEmbedError as exc:
            raise EmbedError(f"{{{{report}}}}: {exc}") from None
        return Pinned(pinned=pin.pinned, snapshot=pin.snapshot)

    def render(self, pinned: Any, *, interactive: bool, dom_id: str) -> str:
        pin = ReportPin(pinned=pinned.pinned, snapshot=pinned.snapshot)
        return str(render_pinned(pin, interactive=interactive, dom_id=dom_id))


def register() -> None:
    """Add "report" to the documents embed registry (``ReportsConfig.ready``)."""
    register_embed(ReportEmbed())
