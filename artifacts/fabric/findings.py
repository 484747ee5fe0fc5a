"""Evaluate the rules for one artifact and store the findings (reads rows, calls rules.py).

Findings are derived rows with one human addition, the acknowledgement. Re-evaluation
therefore updates a finding in place when the same rule fires on the same subject again
(same fingerprint), keeps its acknowledgement, and deletes findings that no longer fire.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Count, Max, Q

from artifacts.fabric import rules
from artifacts.fabric.failure_checks import ERROR_EVENT_KINDS
from artifacts.fabric.failure_checks import RUNS as NCCL_TESTS_RUNS
from artifacts.models import (
    Artifact,
    CounterRate,
    CounterSample,
    CounterSnapshot,
    Finding,
    HostFact,
)

MAX_RATE_ROWS = 200_000  # bound on what one evaluation reads
# Facts that rules compare across two uploads of the same host (an NCCL log's
# NCCL_IB_GID_INDEX against the show_gids table): older uploads' values come as peer facts.
HOST_PEER_FACTS = ("nccl.env.NCCL_IB_GID_INDEX", "nccl.ib_devices", "gid.table")


def evidence_for(artifact: Artifact) -> rules.Evidence:
    rates = tuple(
        rules.RateRow(
            artifact_id=artifact.pk,
            before_artifact_id=r["before__artifact_id"],
            host=r["host"],
            device=r["device"],
            port=r["port"],
            counter=r["counter"],
            derived=r["derived"],
            delta=r["delta"],
            dt_seconds=r["dt_seconds"],
            value=r["value"],
            unit=r["unit"],
            flag=r["flag"],
            at=r["at"],
        )
        for r in CounterRate.objects.filter(after__artifact=artifact)
        .order_by()
        .values(
            "before__artifact_id", "host", "device", "port", "counter", "derived", "delta",
            "dt_seconds", "value", "unit", "flag", "at",
        )[:MAX_RATE_ROWS]
    )  # fmt: skip
    facts = tuple(_fact_row(f) for f in artifact.host_facts.order_by("id").values())
    # the event rules' kinds, and the error lines whose text the failure checks classify
    kinds = {k for r in rules.EVENT_RULES for k in r.kinds} | ERROR_EVENT_KINDS
    events = tuple(
        rules.EventRow(
            artifact_id=artifact.pk,
            kind=e["kind"],
            host=e["host"],
            rank=e["rank"],
            text=e["text"],
            extra=e["extra"],
            at=e["time"],
            line=e["line"],
        )
        for e in artifact.log_events.filter(kind__in=kinds).order_by("line", "id").values()
    )
    context: dict[str, Any] = dict(artifact.metadata or {})
    context["rdma_hosts"] = _rdma_hosts({f.host for f in facts if f.name == "nccl.transports"})
    context[NCCL_TESTS_RUNS] = _run_rows(artifact)
    return rules.Evidence(
        rates=rates,
        samples=_single_reading_samples(artifact),
        facts=facts,
        events=events,
        peer_facts=_peer_facts(artifact) + _host_peer_facts(artifact, facts),
        context=context,
        default_at=artifact.captured_at or artifact.uploaded_at,
    )


def _run_rows(artifact: Artifact) -> list[dict[str, Any]]:
    """The artifact's nccl-tests runs as plain rows for the failure checks: errors, whether
    the footer came, validation results (failure_checks.py)."""
    # validation failures come from the footer's "Out of bounds values : N FAILED" only:
    # old nccl-tests print the maximum error (5e-07) where new ones print #wrong
    runs = (
        artifact.runs.filter(benchmark="nccl-tests")
        .annotate(n_rows=Count("measurements"), last_size=Max("measurements__size_bytes"))
        .order_by("index")
    )
    return [
        {
            "run_id": r.pk,
            "artifact_id": artifact.pk,
            "index": r.index,
            "collective": r.collective,
            "nranks": r.nranks,
            "errors": list(r.errors or []),
            "complete": r.complete,
            "out_of_bounds": r.out_of_bounds,
            "rows": r.n_rows,
            "last_size": r.last_size,
            "at": r.measured_at,
        }
        for r in runs[:500]
    ]


def _fact_row(f: dict[str, Any]) -> rules.FactRow:
    return rules.FactRow(
        artifact_id=f["artifact_id"],
        host=f["host"],
        device=f["device"],
        port=f["port"],
        name=f["name"],
        value=f["value"],
        number=f["number"],
        extra=f["extra"],
        at=f["observed_at"],
    )


def _single_reading_samples(artifact: Artifact) -> tuple[rules.SampleRow, ...]:
    """Counters of readings that pair with nothing: ``total`` rules are all we can say."""
    patterns = [r.counters for r in rules.COUNTER_RULES if r.measure == "total"]
    if not patterns:
        return ()
    paired = CounterRate.objects.filter(after__artifact=artifact).values("after_id")
    paired_before = CounterRate.objects.filter(before__artifact=artifact).values("before_id")
    lonely = (
        CounterSnapshot.objects.filter(artifact=artifact)
        .exclude(id__in=paired)
        .exclude(id__in=paired_before)
    )
    rows = CounterSample.objects.filter(
        snapshot__in=lonely, counter__regex="^(" + "|".join(patterns) + ")$"
    ).values("counter", "value", "unit", "snapshot__host", "snapshot__device",
             "snapshot__port", "snapshot__taken_at")  # fmt: skip
    return tuple(
        rules.SampleRow(
            artifact_id=artifact.pk,
            host=r["snapshot__host"],
            device=r["snapshot__device"],
            port=r["snapshot__port"],
            counter=r["counter"],
            value=r["value"],
            unit=r["unit"],
            at=r["snapshot__taken_at"],
        )
        for r in rows
    )


def _peer_facts(artifact: Artifact) -> tuple[rules.FactRow, ...]:
    """NCCL versions of older uploads with the same label (one job, several files).

    Only older ones: the finding then lives with the newest evidence and is not repeated
    on every file of the job.
    """
    if not artifact.label:
        return ()
    older = Q(artifact__uploaded_at__lt=artifact.uploaded_at) | Q(
        artifact__uploaded_at=artifact.uploaded_at, artifact_id__lt=artifact.pk
    )
    peers = (
        HostFact.objects.filter(older, artifact__label=artifact.label, name="nccl.version")
        .exclude(host="")
        .order_by("artifact__uploaded_at", "id")
        .values()
    )
    return tuple(_fact_row(f) for f in peers[:5000])


def _host_peer_facts(
    artifact: Artifact, facts: tuple[rules.FactRow, ...]
) -> tuple[rules.FactRow, ...]:
    """HOST_PEER_FACTS of older uploads of the hosts this one states them for (the newest
    upload of the pair carries the finding, as with version mismatches)."""
    hosts = {f.host for f in facts if f.name in HOST_PEER_FACTS and f.host}
    if not hosts:
        return ()
    older = Q(artifact__uploaded_at__lt=artifact.uploaded_at) | Q(
        artifact__uploaded_at=artifact.uploaded_at, artifact_id__lt=artifact.pk
    )
    peers = (
        HostFact.objects.filter(older, host__in=hosts, name__in=HOST_PEER_FACTS)
        .order_by("artifact__uploaded_at", "id")
        .values()
    )
    return tuple(_fact_row(f) for f in peers[:5000])


def _rdma_hosts(hosts: set[str]) -> list[str]:
    if not hosts:
        return []
    active = HostFact.objects.filter(host__in=hosts, name="port.state", value__iexact="ACTIVE")
    return sorted(set(active.values_list("host", flat=True)))


# Rules whose findings another pass writes (baselines' below-peak findings after filing; an
# app above registers its own, like the knowledge base's recipe check in
# knowledge/tuning/fleet.py): a rules refresh of the artifact leaves them alone.
KEPT_RULES: set[str] = set(rules.STORED_ELSEWHERE)


@transaction.atomic
def store_findings(artifact: Artifact, hits: list[rules.Hit]) -> list[Finding]:
    existing = {
        f.fingerprint: f
        for f in artifact.findings.exclude(rule__in=sorted(KEPT_RULES)).select_for_update()
    }
    kept: list[Finding] = []
    seen: set[str] = set()
    for hit in hits:
        if hit.fingerprint in seen:
            continue  # two checks naming the same subject: the first (table order) wins
        seen.add(hit.fingerprint)
        finding = existing.get(hit.fingerprint) or Finding(
            artifact=artifact, fingerprint=hit.fingerprint
        )
        finding.rule = hit.rule
        finding.severity = hit.severity
        finding.severity_rank = rules.SEVERITY_RANK[hit.severity]
        finding.title = hit.title
        finding.explanation = hit.explanation
        finding.evidence = hit.evidence
        finding.host = hit.host[:255]
        finding.device = hit.device[:255]
        finding.port = hit.port
        finding.kb_slug = hit.kb_slug
        finding.observed_at = hit.at or artifact.captured_at or artifact.uploaded_at
        finding.save()
        others = [i for i in hit.artifact_ids if i != artifact.pk]
        finding.related_artifacts.set(others)
        kept.append(finding)
    stale = [f.pk for fp, f in existing.items() if fp not in seen]
    Finding.objects.filter(pk__in=stale).delete()
    return kept


def evaluate_artifact(artifact: Artifact) -> list[Finding]:
    return store_findings(artifact, rules.evaluate(evidence_for(artifact)))
