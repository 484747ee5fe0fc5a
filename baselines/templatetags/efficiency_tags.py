"""Template tags of the limits model (docs/efficiency.md): a profile's limits and the best
efficiency its runs reached, for the hardware-profile page."""

from __future__ import annotations

from typing import Any

from django import template

from baselines.limits.model import BOTTLENECK_LABELS, resolve_limits
from baselines.limits.reads import profile_best_efficiency, profile_spec, threshold_pct
from baselines.models import HardwareProfile

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
