"""Template helpers of the baselines pages, and the panel the run page includes."""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

from django import template
from django.template.defaultfilters import date as date_format
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from artifacts.models import BenchmarkRun
from baselines.charts import comparison_figure
from baselines.facts import COMPONENT_LABELS
from baselines.formatting import delta_style, pct
from baselines.forms import PromoteForm
from baselines.models import Alert, FactDetachment, RunContext
from baselines.provenance.entries import disagreements
from baselines.querysets import baselines_for_identity, run_comparison, run_context
from perfhub.roles import can_edit
from perfhub.units import human_bytes

register = template.Library()

_VERDICT_CLASSES = {
    "regressed": "status-failed",
    "improved": "status-parsed",
    "mixed": "status-pending",
    "unchanged": "",
}
_STATUS_CLASSES = {
    "untriaged": "status-failed",
    "acknowledged": "status-pending",
    "investigating": "status-pending",
    "fixed": "status-parsed",
    "wontfix": "status-stored",
    "invalid": "",
}
_KIND_CLASSES = {"regression": "status-failed", "improvement": "status-parsed"}


@register.filter
def verdict_class(verdict: str) -> str:
    return _VERDICT_CLASSES.get(verdict, "")


@register.filter
def alert_status_class(status: str) -> str:
    return _STATUS_CLASSES.get(status, "")


@register.filter
def kind_class(kind: str) -> str:
    return _KIND_CLASSES.get(kind, "status-pending")


register.filter("pct", pct)
register.filter("delta_style", delta_style)


@register.filter
def size(value: Any) -> str:
    return human_bytes(value) if value else ""


# In JSON, <, > and & only occur inside strings, where their \u escapes mean the same.
_SCRIPT_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"))


@register.filter
def figure_script(figure_json: str, element_id: str) -> SafeString:
    """A figure's JSON in ``<script type="application/json">`` as it is, for charts.js.

    ``json_script`` would encode the JSON text once more as a string and escape it character
    by character: ~20 ms for the version matrix's 190 KiB. Here the three characters that
    could end the script element are escaped with ``str.replace``, and the browser parses
    the figure once."""
    text = figure_json
    for char, escaped in _SCRIPT_ESCAPES:
        text = text.replace(char, escaped)
    return format_html(
        '<script id="{}" type="application/json">{}</script>', element_id, mark_safe(text)
    )


@register.filter
def matrix_cells(cells: Iterable[tuple[Any, str, str, str]]) -> SafeString:
    """A version matrix row's ``<td>`` cells from its (cell, url, style, text) tuples, in one
    piece: the matrix has hundreds of cells, and the template's loop spent a tenth of a
    millisecond on each (unpacking, five lookups, escaping, number formatting).
    ``html.escape`` is what Django's ``escape`` calls, without its lazy-string wrapper."""
    out = []
    for cell, url, style, text in cells:
        if cell is None:
            out.append('<td class="muted num">·</td>')
            continue
        out.append(
            f'<td class="num" style="{html.escape(style)}" title="{cell.sizes} size(s), up to '
            f'{cell.runs} run(s)"><a href="{html.escape(url)}" style="color: inherit">'
            f"{html.escape(text)}</a></td>"
        )
    return mark_safe("".join(out))


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    return mapping.get(key) if hasattr(mapping, "get") else None


_KIND_LABELS = dict(Alert.Kind.choices)
_STATUS_LABELS = dict(Alert.Status.choices)


@register.inclusion_tag("baselines/_alert_rows.html")
def alert_table(alerts: Iterable[Alert]) -> dict[str, Any]:
    """The alert table (alert list, summary, series page): rows of finished strings.

    Walking ``a.series.profile.get_absolute_url`` and the like in the template cost ~0.5 ms a
    row (each lookup first fails as a dict key, then calls; a URL reverse per link; choice
    labels; filters): a summary of 80 alerts spent more on its table than on its charts.
    Profiles and summaries repeat from row to row, so their cells are made once."""
    profiles: dict[int, tuple[str, str]] = {}
    summaries: dict[int | None, tuple[str, str]] = {None: ("", "")}
    rows = []
    for a in alerts:
        series = a.series
        if series.profile_id not in profiles:
            profiles[series.profile_id] = (series.profile.get_absolute_url(), series.profile.slug)
        if a.summary_id not in summaries:
            summary = a.summary
            summaries[a.summary_id] = (
                summary.get_absolute_url(),
                Truncator(summary.change_text).chars(60),
            )
        profile_url, profile = profiles[series.profile_id]
        summary_url, change = summaries[a.summary_id]
        rows.append(
            {"pk": a.pk, "url": a.get_absolute_url(), "kind_class": kind_class(a.kind),
             "kind": _KIND_LABELS.get(a.kind, a.kind), "magnitude": pct(a.magnitude_pct),
             "band": f"{pct(a.low_pct)} … {pct(a.high_pct)}" if a.low_pct is not None else "",
             "profile": profile, "profile_url": profile_url, "series": series.identity_text(),
             "series_url": series.get_absolute_url(), "change": change,
             "summary_url": summary_url, "source": a.source,
             "status_class": alert_status_class(a.status),
             "status": _STATUS_LABELS.get(a.status, a.status),
             "assignee": a.assignee.username if a.assignee else "",
             "measured_iso": date_format(a.measured_at, "c"),
             "measured_day": date_format(a.measured_at, "Y-m-d")}
        )  # fmt: skip
    return {"rows": rows}


@register.inclusion_tag("baselines/_run_panel_body.html", takes_context=True)
def run_panel(context: dict[str, Any], run: BenchmarkRun) -> dict[str, Any]:
    """Profile, stack, comparison with the baseline and the promote form (five queries)."""
    request = context.get("request")
    filed = run_context(run)
    comparison = run_comparison(run) if filed else None
    changes = []
    if comparison and comparison.reference_stack and filed:
        changes = comparison.reference_stack.diff(filed.stack)
    baselines = baselines_for_identity(run, filed.profile) if filed else None
    return {
        "run": run,
        "filed": filed,
        "comparison": comparison,
        "figure": comparison_figure(comparison.result) if comparison else None,
        "changes": changes,
        "alerts": list(Alert.objects.filter(run=run).select_related("series")[:20]),
        "promote_form": PromoteForm(baselines=baselines) if filed else None,
        "can_edit": can_edit(getattr(request, "user", None)),
        "request": request,
        "provenance": provenance_rows(filed) if filed else [],
        "detachments": list(
            FactDetachment.objects.filter(artifact_id=run.artifact_id).select_related("by")
        )
        if filed
        else [],
    }


@register.inclusion_tag("baselines/_provenance.html", takes_context=True)
def fact_provenance(context: dict[str, Any], run: BenchmarkRun) -> dict[str, Any]:
    """The "where the facts came from" table of a run, for pages other than the run page."""
    request = context.get("request")
    filed = run_context(run)
    return {
        "run": run,
        "can_edit": can_edit(getattr(request, "user", None)),
        "provenance": provenance_rows(filed) if filed else [],
        "detachments": list(
            FactDetachment.objects.filter(artifact_id=run.artifact_id).select_related("by")
        ),
        "request": request,
    }


def provenance_rows(filed: RunContext) -> list[dict[str, Any]]:
    """The run's provenance entries for the page: disagreeing keys flagged; runs filed in
    bulk (no entries) list where their versions came from (``stack_sources``)."""
    entries = [dict(e) for e in filed.provenance or []]
    if not entries:
        entries = [
            {"kind": "stack", "key": k, "label": COMPONENT_LABELS.get(k, k), "value":
             getattr(filed.stack, k, ""), "source": v, "artifact": None, "line": None,
             "why": "", "used": True}
            for k, v in (filed.stack_sources or {}).items()
        ]  # fmt: skip
    split = disagreements(entries)
    for e in entries:
        e["disagree"] = e["key"] in split
    return entries
