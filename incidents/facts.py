"""Incident facts proposed from the evidence: what the attached files already say.

An NCCL log of a failed job names its hosts, ranks, NCCL version, CUDA driver and HCAs; an
nvidia-bug-report names the GPUs, driver, kernel and firmware. ``propose`` reads what the
parsers stored (host facts, log events, runs, findings, upload metadata) and returns one
``FactProposal`` per incident field, each with the file it came from. The editor accepts
(or edits, then accepts) a proposal on the incident page; ``services.incident_accept_fact``
writes it and keeps a ``FactRecord`` of where it came from. Reads only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from artifacts.models import Artifact, BenchmarkRun, Finding, HostFact, LogEvent, RunRank
from incidents.suggestions import LOG_EVENT_KINDS
from knowledge.applicability import gpu_model

if TYPE_CHECKING:
    from incidents.models import Incident

# The software stack as the host facts name it: incident environment key -> fact names.
STACK_FACTS: dict[str, tuple[str, ...]] = {
    "nccl": ("nccl.version",),
    "cuda": ("gpu.cuda_version",),
    "driver": ("gpu.driver_version",),
    "kernel": ("kernel.version",),
    "firmware": ("nic.firmware", "hca.firmware", "link.firmware"),
}
HARDWARE_FACTS: dict[str, tuple[str, ...]] = {
    "gpus": ("gpu.name", "hardware.name"),
    "nics": ("hca.type", "nic.part", "nic.type", "nccl.ib_devices"),
}
# Upload metadata keys that name the cluster or the job (as people and launchers spell them).
CLUSTER_KEYS = ("cluster", "cluster_name", "k8s_cluster")
JOB_KEYS = ("job", "job_id", "jobid", "slurm_job_id", "SLURM_JOB_ID", "job_name")
_JOB_IN_NAME = re.compile(r"(?:job|slurm)[-_]?(\d{3,})", re.IGNORECASE)
MAX_VALUES = 12
FIELDS = (
    "affected_hosts", "hardware_generation", "hardware_profile", "cluster", "affected_jobs",
    "gpus", "nics", *STACK_FACTS, "impact_window",
)  # fmt: skip
LABELS = {
    "affected_hosts": "Affected hosts",
    "hardware_generation": "Hardware generation",
    "hardware_profile": "Hardware",
    "cluster": "Cluster",
    "affected_jobs": "Affected jobs",
    "gpus": "GPUs",
    "nics": "NICs / HCAs",
    "nccl": "NCCL",
    "cuda": "CUDA",
    "driver": "GPU driver",
    "kernel": "Kernel",
    "firmware": "NIC/HCA firmware",
    "impact_window": "Impact window (first to last symptom)",
}
# Fields kept in ``Incident.environment`` rather than in a column of their own.
ENVIRONMENT_FIELDS = ("gpus", "nics", *STACK_FACTS, "impact_window")
LIST_FIELDS = ("affected_hosts", "affected_jobs", "gpus", "nics")


@dataclass(frozen=True)
class FactProposal:
    field: str
    value: Any  # a list for LIST_FIELDS, a dict for impact_window, else text
    source: str  # "job-1234.log (NCCL log, 8 ranks)"
    artifact_id: int | None = None

    @property
    def label(self) -> str:
        return LABELS[self.field]

    @property
    def text(self) -> str:
        """The value as the edit box shows it (lists comma-separated)."""
        return value_text(self.field, self.value)


def value_text(field: str, value: Any) -> str:
    if field == "impact_window" and isinstance(value, dict):
        return f"{value.get('first', '')} to {value.get('last', '')}"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value or "")


def propose(incident: Incident) -> list[FactProposal]:
    """Proposals for the fields the evidence can fill and the incident does not yet say."""
    artifacts = [link.artifact for link in incident.evidence.select_related("artifact")]
    if not artifacts:
        return []
    found = [
        *_hosts(artifacts),
        *_hardware(artifacts),
        *_stack(artifacts),
        *_cluster_and_jobs(artifacts),
        *_impact_window(artifacts),
    ]
    return [p for p in found if not _already(incident, p)]


def environment_rows(incident: Incident) -> list[tuple[str, str]]:
    """(label, text) of the accepted environment facts, for the incident page."""
    env = incident.environment or {}
    return [(LABELS[f], value_text(f, env[f])) for f in ENVIRONMENT_FIELDS if env.get(f)]


def current_value(incident: Incident, field: str) -> Any:
    if field in ENVIRONMENT_FIELDS:
        return (incident.environment or {}).get(field)
    return getattr(incident, field)


def _already(incident: Incident, proposal: FactProposal) -> bool:
    have = current_value(incident, proposal.field)
    if proposal.field in LIST_FIELDS:
        return set(proposal.value) <= set(have or [])
    return bool(have) and value_text(proposal.field, have) == proposal.text


def _name(artifact: Artifact) -> str:
    return f"{artifact.original_name} (#{artifact.pk}, {artifact.kind})"


def _sources(counter: Counter[int], by_id: dict[int, Artifact]) -> tuple[str, int | None]:
    """ "a.log (#3, nccl_debug) and 2 more" and the first artifact's id."""
    ids = [i for i, _ in counter.most_common()]
    if not ids:
        return "", None
    text = _name(by_id[ids[0]]) + (f" and {len(ids) - 1} more" if len(ids) > 1 else "")
    return text, ids[0]


def _hosts(artifacts: list[Artifact]) -> Iterable[FactProposal]:
    """Hosts that showed a symptom (timeline-worthy log events, findings); when none did,
    the hosts the evidence names (ranks of runs, the artifacts' own host)."""
    by_id = {a.pk: a for a in artifacts}
    seen: dict[str, Counter[int]] = {}
    symptom_rows = [
        *LogEvent.objects.filter(artifact__in=artifacts, kind__in=LOG_EVENT_KINDS)
        .exclude(host="")
        .values_list("host", "artifact_id")
        .distinct(),
        *Finding.objects.filter(artifact__in=artifacts)
        .exclude(host="")
        .values_list("host", "artifact_id")
        .distinct(),
    ]
    rows = symptom_rows or [
        *RunRank.objects.filter(run__artifact__in=artifacts)
        .exclude(host="")
        .values_list("host", "run__artifact_id")
        .distinct(),
        *((a.host, a.pk) for a in artifacts if a.host),
    ]
    for host, artifact_id in rows:
        seen.setdefault(host, Counter())[artifact_id] += 1
    if not seen:
        return
    hosts = sorted(seen)[: MAX_VALUES * 8]
    source, first = _sources(sum(seen.values(), Counter()), by_id)
    why = "hosts with a symptom in " if symptom_rows else "hosts named in "
    yield FactProposal("affected_hosts", hosts, why + source, first)


def _facts(artifacts: list[Artifact], names: Iterable[str]) -> list[tuple[str, str, int]]:
    return list(
        HostFact.objects.filter(artifact__in=artifacts, name__in=list(names))
        .exclude(value="")
        .values_list("name", "value", "artifact_id")
        .distinct()
    )


def _hardware(artifacts: list[Artifact]) -> Iterable[FactProposal]:
    by_id = {a.pk: a for a in artifacts}
    runs = BenchmarkRun.objects.filter(artifact__in=artifacts).exclude(gpu="")
    gpu_rows = [(v, a) for _, v, a in _facts(artifacts, HARDWARE_FACTS["gpus"])]
    gpu_rows += list(runs.values_list("gpu", "artifact_id").distinct())
    if gpu_rows:
        gpus = sorted({v for v, _ in gpu_rows})[:MAX_VALUES]
        source, first = _sources(Counter(a for _, a in gpu_rows), by_id)
        yield FactProposal("gpus", gpus, source, first)
        models = Counter(m for v, _ in gpu_rows if (m := gpu_model(v)))
        if models:
            generation = models.most_common(1)[0][0]
            yield FactProposal("hardware_generation", generation, source, first)
            profile = _profile(generation)
            if profile:
                yield FactProposal(
                    "hardware_profile", profile, f"{source}; matching profile", first
                )
    elif nccl_gpus := _facts_with_host(artifacts, "nccl.gpu"):
        # An NCCL log names no GPU model, but which GPUs (bus ids) each host's ranks used.
        per_host: dict[str, set[str]] = {}
        for host, value, _ in nccl_gpus:
            per_host.setdefault(host or "?", set()).add(value)
        gpus = [f"{host}: {len(buses)} GPUs" for host, buses in sorted(per_host.items())]
        source, first = _sources(Counter(a for *_, a in nccl_gpus), by_id)
        yield FactProposal("gpus", gpus[:MAX_VALUES], f"GPUs NCCL used, {source}", first)
    nic_rows = _facts(artifacts, HARDWARE_FACTS["nics"])
    if nic_rows:
        values: set[str] = set()
        for _, value, _ in nic_rows:
            # nccl.ib_devices is a list "mlx5_0:1/IB" per host: the HCA names are the point
            values.update(v.strip() for v in value.strip("[]").replace("'", "").split(",") if v)
        source, first = _sources(Counter(a for *_, a in nic_rows), by_id)
        yield FactProposal("nics", sorted(values)[:MAX_VALUES], source, first)


def _facts_with_host(artifacts: list[Artifact], name: str) -> list[tuple[str, str, int]]:
    return list(
        HostFact.objects.filter(artifact__in=artifacts, name=name)
        .exclude(value="")
        .values_list("host", "value", "artifact_id")
        .distinct()
    )


def _profile(generation: str) -> str:
    """The slug of the one hardware profile of this GPU model, if exactly one exists."""
    from baselines.models import HardwareProfile

    slugs = list(
        HardwareProfile.objects.filter(gpu_model__iexact=generation).values_list("slug", flat=True)[
            :2
        ]
    )
    return slugs[0] if len(slugs) == 1 else ""


def _stack(artifacts: list[Artifact]) -> Iterable[FactProposal]:
    by_id = {a.pk: a for a in artifacts}
    rows = _facts(artifacts, [n for names in STACK_FACTS.values() for n in names])
    runs = BenchmarkRun.objects.filter(artifact__in=artifacts).exclude(nccl_version="")
    rows += [("nccl.version", v, a) for v, a in runs.values_list("nccl_version", "artifact_id")]
    for key, names in STACK_FACTS.items():
        chosen = [(v, a) for n, v, a in rows if n in names]
        if not chosen:
            continue
        values = sorted({v for v, _ in chosen})[:MAX_VALUES]
        source, first = _sources(Counter(a for _, a in chosen), by_id)
        yield FactProposal(key, ", ".join(values), source, first)


def _cluster_and_jobs(artifacts: list[Artifact]) -> Iterable[FactProposal]:
    clusters: Counter[str] = Counter()
    jobs: dict[str, int] = {}
    first_cluster: dict[str, int] = {}
    for artifact in artifacts:
        metadata = artifact.metadata or {}
        for key in CLUSTER_KEYS:
            if value := str(metadata.get(key) or "").strip():
                clusters[value] += 1
                first_cluster.setdefault(value, artifact.pk)
        for key in JOB_KEYS:
            if value := str(metadata.get(key) or "").strip():
                jobs.setdefault(value, artifact.pk)
        if match := _JOB_IN_NAME.search(artifact.original_name):
            jobs.setdefault(match.group(1), artifact.pk)
    by_id = {a.pk: a for a in artifacts}
    if clusters:
        cluster = clusters.most_common(1)[0][0]
        artifact_id = first_cluster[cluster]
        source = f"upload metadata of {_name(by_id[artifact_id])}"
        yield FactProposal("cluster", cluster, source, artifact_id)
    if jobs:
        first = next(iter(jobs.values()))
        source = f"upload metadata or file name of {_name(by_id[first])}"
        yield FactProposal("affected_jobs", sorted(jobs)[:MAX_VALUES], source, first)


def _impact_window(artifacts: list[Artifact]) -> Iterable[FactProposal]:
    """First and last symptom: timeline-worthy log lines with a time of their own, findings
    and baseline alerts are what the evidence says about when things went wrong."""
    times: list[tuple[datetime, int]] = list(
        LogEvent.objects.filter(artifact__in=artifacts, kind__in=LOG_EVENT_KINDS)
        .exclude(time=None)
        .values_list("time", "artifact_id")
    )
    times += list(
        Finding.objects.filter(artifact__in=artifacts)
        .exclude(severity=Finding.Severity.INFO)
        .values_list("observed_at", "artifact_id")
    )
    if not times:
        return
    times.sort()
    (first, artifact_id), (last, _) = times[0], times[-1]
    by_id = {a.pk: a for a in artifacts}
    value = {"first": first.isoformat(), "last": last.isoformat()}
    source = f"first symptom in {_name(by_id[artifact_id])}; {len(times)} symptoms with a time"
    yield FactProposal("impact_window", value, source, artifact_id)
