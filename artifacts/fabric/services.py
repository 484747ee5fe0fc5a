"""Writes of the fabric evidence: derive rates and findings, acknowledge findings."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from artifacts.fabric.findings import evaluate_artifact
from artifacts.models import Artifact, Finding
from perfhub import dispatch

# Kinds whose rows feed rates or rules; other kinds need no findings pass.
FINDINGS_KINDS = frozenset(
    {
        "ethtool_stats", "rdma_counters", "ib_status", "mlxlink", "nvidia_smi", "nccl_debug",
        "dcgm", "dmesg", "proc_interrupts", "mlnx_qos",
        "show_gids", "fabric_manager", "sysctl", "nccl_topology",
        "prometheus_text", "prometheus_range",
        "nccl_tests",  # failed, truncated and out-of-bounds runs are findings too
    }
)  # fmt: skip


class FindingError(Exception):
    """A write on a finding was refused (bad input)."""


def fabric_refresh(*, artifact_id: int) -> list[Finding]:
    """Pair the artifact's snapshots into rates, then evaluate the rules on it and on every
    other artifact whose rates changed (the next upload of the same device). Idempotent."""
    # pairing is pandas work: loaded by the first refresh, not by every worker at start
    # (artifacts.parsing imports this module) nor by the web process
    from artifacts.fabric.pairing import refresh_rates

    try:
        artifact = Artifact.objects.get(pk=artifact_id)
    except Artifact.DoesNotExist:
        return []
    with transaction.atomic():
        touched = refresh_rates(artifact)
    findings = evaluate_artifact(artifact)
    for other in Artifact.objects.filter(pk__in=touched - {artifact.pk}):
        evaluate_artifact(other)
    return findings


def finding_acknowledge(*, finding: Finding, user: Any, note: str = "") -> Finding:
    if len(note) > 500:
        raise FindingError("the note is longer than 500 characters")
    finding.acknowledged_by = user if getattr(user, "pk", None) else None
    finding.acknowledged_at = timezone.now()
    finding.acknowledgement_note = note.strip()
    finding.save(update_fields=["acknowledged_by", "acknowledged_at", "acknowledgement_note"])
    return finding


def finding_unacknowledge(*, finding: Finding) -> Finding:
    finding.acknowledged_by = None
    finding.acknowledged_at = None
    finding.acknowledgement_note = ""
    finding.save(update_fields=["acknowledged_by", "acknowledged_at", "acknowledgement_note"])
    return finding


def enqueue_findings(artifact: Artifact) -> None:
    """Queue the findings pass once the parse transaction has committed."""
    if artifact.kind in FINDINGS_KINDS:
        dispatch.enqueue("artifacts.findings", artifact.pk)
