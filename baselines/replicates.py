"""Replicates are one observation. Pure: no Django imports.

Several runs of one build (software stack) on one profile in one night - retries, repeated
iterations of a CI job - are replicates of one measurement, not a time series of their own:
four high runs of one build are a noisy build, not a step up and a step down. Detection and
alerts therefore see one point per build and night: the median of its replicates, with
their count and spread kept for the alert's details.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

# Runs of one stack within this time of the group's first run are one night's replicates.
REPLICATE_WINDOW = timedelta(hours=12)


def collapse_replicates(points: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Points oldest first (``run_id``, ``stack_id``, ``value``, ``measured_at``) -> one per
    run of consecutive points of one stack within ``REPLICATE_WINDOW``: the group's first
    run and time (where the build's result begins), the median value, and ``replicates``,
    ``spread`` (max - min) and ``run_ids``."""
    groups: list[list[dict[str, Any]]] = []
    for point in points:
        group = groups[-1] if groups else None
        if (
            group is not None
            and group[0]["stack_id"] == point["stack_id"]
            and point["measured_at"] - group[0]["measured_at"] <= REPLICATE_WINDOW
        ):
            group.append(point)
        else:
            groups.append([point])
    out = []
    for group in groups:
        values = [float(p["value"]) for p in group]
        out.append(
            {
                **group[0],
                "value": statistics.median(values),
                "replicates": len(group),
                "spread": max(values) - min(values),
                "run_ids": [p["run_id"] for p in group],
            }
        )
    return out
