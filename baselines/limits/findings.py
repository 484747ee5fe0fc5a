"""Findings of runs below their share of the hardware's peak, stored on the run's artifact.

Called by ``baselines.services.runs_evaluate`` after filing (so a run is looked at again
when an ``ibstat`` or NCCL log of its hosts arrives later and re-files it). Only the
``run_below_peak`` findings of the runs evaluated are touched: acknowledgements survive a
re-evaluation (same fingerprint), findings that no longer hold are deleted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from artifacts.fabric import rules
from artifacts.models import Artifact, BenchmarkRun, Finding
from baselines.limits.reads import RunEfficiency, run_efficiency
from hardware.checks import KB_BY_BOTTLENECK, RUN_EFFICIENCY

RULE = "run_below_peak"


def efficiency_findings_refresh(*, runs: Iterable[BenchmarkRun]) -> int:
    """(Re)write the below-peak findings of these runs; returns how many hold."""
    by_artifact: dict[int, list[BenchmarkRun]] = defaultdict(list)
    for run in runs:
        if run.benchmark == "nccl-tests":
            by_artifact[run.artifact_id].append(run)
    total = 0
    for artifact_id, group in by_artifact.items():
        items = []
        for run in group:
            result = None if run.errors else run_efficiency(run)
            if isinstance(result, RunEfficiency) and result.below_threshold:
                items.append(_item(run, result))
        evidence = rules.Evidence(context={RUN_EFFICIENCY: items})
        hits = rules.evaluate(evidence, rules=[rules.RULES_BY_ID[RULE]])
        devices = {f"run {r.index}" for r in group}
        total += _store(artifact_id, hits, devices, {i["index"]: i for i in items})
    return total


def _item(run: BenchmarkRun, result: RunEfficiency) -> dict[str, Any]:
    large = result.large
    assert large is not None and large.pct_of_peak is not None
    topology = result.topology
    return {
        "run_id": run.pk,
        "index": run.index,
        "host": topology.hosts[0] if len(topology.hosts) == 1 else "",
        "collective": run.collective or "unknown collective",
        "ranks": topology.nranks,
        "nodes": topology.nnodes,
        "pct_of_peak": large.pct_of_peak,
        "busbw_gbps": large.busbw_gbps,
        "size_bytes": large.size_bytes,
        "peak_busbw_gbps": result.peak.peak_busbw_gbps,
        "bottleneck": result.peak.bottleneck,
        "bottleneck_label": result.bottleneck_label,
        "explanation": result.peak.explanation,
        "threshold_pct": result.threshold_pct,
        "observations": observations(result),
        "at": run.measured_at,
    }


def observations(result: RunEfficiency) -> list[str]:
    """What the evidence of the run's hosts already shows (before the generic checks)."""
    found = [n for n in result.peak.notes if "NVLS" not in n]
    rails = result.limits.get("nics_per_node")
    for host, links in sorted(result.hosts.items()):
        if links.nccl_devices and rails and len(links.nccl_devices) < int(rails):
            found.append(
                f"NCCL's log on {host} uses {len(links.nccl_devices)} of the node's {rails} "
                f"NICs ({', '.join(links.nccl_devices)}): check NCCL_IB_HCA"
            )
        if links.nccl_gdr.lower() in ("false", "0", "disabled"):
            found.append(f"GPUDirect RDMA is off in the NCCL log on {host}")
    return found


def _store(
    artifact_id: int, hits: list[rules.Hit], devices: set[str], items: dict[int, dict[str, Any]]
) -> int:
    artifact = Artifact.objects.filter(pk=artifact_id).first()
    if artifact is None:
        return 0
    existing = {f.fingerprint: f for f in artifact.findings.filter(rule=RULE, device__in=devices)}
    seen = set()
    for hit in hits:
        seen.add(hit.fingerprint)
        finding = existing.get(hit.fingerprint) or Finding(
            artifact=artifact, fingerprint=hit.fingerprint
        )
        index = int(hit.device.removeprefix("run "))
        finding.rule = hit.rule
        finding.severity = hit.severity
        finding.severity_rank = rules.SEVERITY_RANK[hit.severity]
        finding.title = hit.title
        finding.explanation = hit.explanation
        finding.evidence = hit.evidence
        finding.host = hit.host[:255]
        finding.device = hit.device
        finding.port = None
        # the knowledge page of the suspected bottleneck, not one page for every case
        finding.kb_slug = KB_BY_BOTTLENECK.get(items[index]["bottleneck"], hit.kb_slug)
        finding.observed_at = hit.at or artifact.captured_at or artifact.uploaded_at
        finding.save()
    stale = [f.pk for fp, f in existing.items() if fp not in seen]
    Finding.objects.filter(pk__in=stale).delete()
    return len(seen)
