"""Template helpers of the fabric panel on the artifact page (a fixed, small number of queries)."""

from __future__ import annotations

from typing import Any

from django import template

from artifacts.models import Artifact, Finding

register = template.Library()

PANEL_ROWS = 20


@register.simple_tag
def fabric_evidence(artifact: Artifact) -> dict[str, Any]:
    findings = Finding.objects.filter(artifact=artifact).order_by(
        "-severity_rank", "-observed_at", "-id"
    )
    events = artifact.log_events.order_by("line", "id")
    return {
        "findings": list(findings[:PANEL_ROWS]),
        "findings_count": findings.count(),
        "events": list(events[:PANEL_ROWS]),
        "events_count": events.count(),
        "snapshots_count": artifact.counter_snapshots.count(),
        "facts_count": artifact.host_facts.count(),
    }
