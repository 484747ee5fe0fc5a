"""Celery task of the fabric evidence: thin and idempotent (queued by ``enqueue_findings``)."""

from __future__ import annotations

from celery import shared_task

from artifacts.fabric.services import fabric_refresh


@shared_task(name="artifacts.findings")
def evaluate_findings(artifact_id: int) -> int:
    """Pair snapshots into rates and evaluate the findings rules; returns the finding count."""
    return len(fabric_refresh(artifact_id=artifact_id))
