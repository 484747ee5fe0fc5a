"""Template tags of the limits model (docs/efficiency.md): a profile's limits and the best
efficiency its runs reached (profile page); a run and its reference runs against their
peaks (comparison page)."""

from __future__ import annotations

from typing import Any

from django import template

from artifacts.models import BenchmarkRun
from baselines.limits.reads import (
    RunEfficiency,
    profile_best_efficiency,
    profile_spec,
    run_efficiency,
    threshold_pct,
)
from baselines.models import HardwareProfile
from hardware.model import BOTTLENECK_LABELS, resolve_limits

register = template.Library()


@register.inclusion_tag("baselines/_profile_efficiency.html")
def profile_efficiency(profile: HardwareProfile) -> dict[str, Any]:
    limits = resolve_limits(profile_spec(profile), gpu_name=profile.gpu_model)
    return {
        "profile": profile,
        "limits": limits,
        "best": profile_best_efficiency(profile),
        "labels": BOTTLENECK_LABELS,
        "threshold": threshold_pct(limits),
    }


@register.inclusion_tag("baselines/_runs_against_peak.html")
def runs_against_peak(run: BenchmarkRun, references: Any = ()) -> dict[str, Any]:
    """The run and its reference runs, each as % of its own hardware's peak: a change that
    leaves both near the peak matters less than one that leaves the run far from it."""
    rows = []
    for item, role in [(run, "this run"), *((r, "reference") for r in list(references)[:20])]:
        result = run_efficiency(item)
        known = result if isinstance(result, RunEfficiency) else None
        rows.append(
            {
                "run": item,
                "role": role,
                "efficiency": known,
                "large": known.large if known else None,
                "reason": "" if known else getattr(result, "reason", ""),
            }
        )
    return {"rows": rows}
