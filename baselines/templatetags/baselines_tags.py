"""Template helpers of the baselines pages, and the panel the run page includes."""

from __future__ import annotations

from typing import Any

from django import template

from artifacts.models import BenchmarkRun
from baselines.charts import comparison_figure
from baselines.formatting import delta_style, pct
from baselines.forms import PromoteForm
from baselines.models import Alert
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


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    return mapping.get(key) if hasattr(mapping, "get") else None


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
    }
