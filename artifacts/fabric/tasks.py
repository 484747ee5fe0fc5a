"""Celery task of the fabric evidence: thin and idempotent.

artifacts/services.py imports ``enqueue_findings`` from here, so a worker that loads the
artifacts tasks also registers this one.
"""

from __future__ import annotations

from celery import shared_task
from django.db import transaction

from ..models import Artifact
from .services import FINDINGS_KINDS, fabric_refresh


@shared_task(name="artifacts.findings")
def evaluate_findings(artifact_id: int) -> int:
    """Pair snapshots into rates and evaluate the findings rules; returns the finding count."""
    return len(fabric_refresh(artifact_id=artifact_id))


def enqueue_findings(artifact: Artifact) -> None:
    """Queue the findings pass once the parse transaction has committed."""
    if artifact.kind not in FINDINGS_KINDS:
        return
    artifact_id = artifact.pk
    transaction.on_commit(lambda: evaluate_findings.delay(artifact_id))
