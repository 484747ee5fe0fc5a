"""Template helpers of the baselines pages, and the panel the run page includes."""

from __future__ import annotations

from typing import Any

from django import template

from artifacts.models import BenchmarkRun
from perfhub.roles import can_edit
from reports.units import human_bytes

from ..charts import comparison_figure
from ..forms import PromoteForm
from ..models import Alert
from ..querysets import baselines_for_identity, run_comparison, run_context

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


@register.filter
def pct(value: Any, digits: int = 1) -> str:
    """+3.2% / -8.0% with a real minus sign (U+2212), as in the summaries; "" for None."""
    if value is None:
        return ""
    number = round(float(value), int(digits))  # -0.04 shows as 0.0%, not as -0.0%
    text = f"{abs(number):.{int(digits)}f}%"
    return ("+" if number > 0 else "\u2212" if number < 0 else "") + text


@register.filter
def delta_style(value: Any, limit: float = 10.0) -> str:
    """Inline background for a Δ% cell: red (slower) - white - green (faster), capped."""
    if value is None:
        return ""
    share = max(-1.0, min(1.0, float(value) / float(limit)))
    alpha = round(abs(share) * 0.75, 3)
    colour = "21, 128, 61" if share > 0 else "185, 28, 28"
    ink = "#fff" if alpha > 0.45 else "inherit"
    return f"background: rgba({colour}, {alpha}); color: {ink};"


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
