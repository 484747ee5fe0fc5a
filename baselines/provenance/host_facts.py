"""The facts other evidence states that describe a run, each with why it applies.

A run's own output rarely states everything: nccl-tests prints the NCCL version but not the
driver, a metrics upload may name neither. Other artifacts (``nvidia-smi -q``, ``ibstat``,
``NCCL_DEBUG=INFO`` logs, ``mlxlink``/``mlxconfig``, Kineto traces) fill the gaps, but only
where they describe the run (``artifacts.jobs.scopes``):

* facts of the run's own file;
* **job facts** (``NCCL_*`` environment, the NCCL version and CUDA runtime of the process,
  the NICs and GPUs NCCL used) of artifacts in the run's job;
* **host facts** (driver, kernel, firmware, GPU and NIC model, port rate, link layer) of the
  run's hosts within ``FACTS_WINDOW`` of it, from any artifact.

Nothing travels by upload label. Facts come nearest scope first (file, job, host), then
nearest in time; a person's detachment (``FactDetachment``) removes a source for a key. The
run's own output and upload metadata still win over all of them (``facts.merge_stacks``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q

from artifacts.jobs.scopes import ENV_PREFIX, HOST, fact_scope
from artifacts.models import HostFact, JobMember, TraceSummary
from artifacts.parsers.textutil import cuda_version_text
from baselines.facts import FACT_COMPONENTS, Fact, fact_keys

FACTS_WINDOW = timedelta(hours=12)
# Kinds whose artifacts state facts that runs of the same hosts pick up (re-file on upload).
FACT_KINDS = frozenset(
    {
        "nvidia_smi", "nccl_debug", "ib_status", "rdma_counters", "mlxlink", "mlxconfig",
        "ethtool_stats", "dmesg", "torch_trace",
    }
)  # fmt: skip
_NAMES = (
    *(name for names in FACT_COMPONENTS.values() for name in names),
    "gpu.name", "hca.type", "nic.part", "nic.type", "port.rate_gbps", "link.speed_gbps",
    "port.link_layer", "nccl.ib_devices", "nvlink.active",
    # The GPUs (bus ids) NCCL logs show a job using, and how many per host: they pick
    # nvidia-smi's GPUs of the job out and count GPUs/node when nothing else does.
    "nccl.gpu", "nccl.gpu_count",
)  # fmt: skip
_HOST_NAMES = tuple(n for n in _NAMES if fact_scope(n) == HOST)
MAX_FACTS = 5000
# Scope ranks: the run's own file, then its job, then its hosts.
FILE, JOB_RANK, HOST_RANK = 0, 1, 2


@dataclass(frozen=True)
class RunScope:
    """What a run is, for the facts that may describe it."""

    artifact_id: int
    job_id: int | None
    hosts: tuple[str, ...]
    at: datetime


def _wanted() -> Q:
    return Q(name__in=_NAMES) | Q(name__startswith=ENV_PREFIX)


def run_facts(scope: RunScope, *, detached: Iterable[tuple[int, str]] = ()) -> list[Fact]:
    """Facts that describe the run: own file, job, hosts (see the module docstring), nearest
    scope first, then nearest in time. ``detached``: (source artifact id, key) pairs a
    person took away from this run's artifact (``*`` = every key)."""
    hosts = sorted({h for h in scope.hosts if h})
    on_host = {h.lower() for h in hosts}
    window = (scope.at - FACTS_WINDOW, scope.at + FACTS_WINDOW)
    in_job = Q(artifact_id=scope.artifact_id)
    if scope.job_id is not None:
        in_job |= Q(artifact__job_membership__job_id=scope.job_id)
    near = Q(host__in=hosts, observed_at__range=window, name__in=_HOST_NAMES) if hosts else None
    where = in_job | near if near is not None else in_job
    rows = (
        HostFact.objects.filter(where)
        .filter(_wanted())
        .values_list(
            "name", "value", "number", "host", "device", "observed_at", "artifact_id",
            "artifact__kind", "artifact__job_membership__job_id", "extra",
        )[:MAX_FACTS]
    )  # fmt: skip
    found: list[tuple[int, float, int, Fact]] = []
    for name, value, number, host, device, when, artifact_id, kind, job_id, extra in rows:
        rank, why = _why(scope, artifact_id, job_id, name, host, on_host)
        if rank is None:
            continue
        line = (extra or {}).get("line") if isinstance(extra, dict) else None
        fact = Fact(
            name, value, number, host, device, f"{kind} artifact #{artifact_id}",
            artifact_id=artifact_id, why=why, line=line if isinstance(line, int) else None,
        )  # fmt: skip
        found.append((rank, abs((when - scope.at).total_seconds()), -artifact_id, fact))
    found += _trace_facts(scope, hosts, on_host)
    gone = set(detached)
    kept = [
        t
        for t in found
        if (t[3].artifact_id, "*") not in gone
        and not any((t[3].artifact_id, k) in gone for k in fact_keys(t[3].name))
    ]
    kept.sort(key=lambda t: t[:3])
    return [t[3] for t in kept]


def _why(
    scope: RunScope,
    artifact_id: int,
    job_id: int | None,
    name: str,
    host: str,
    on_host: set[str],
) -> tuple[int | None, str]:
    """How a fact applies to the run (rank, reason), or (None, "") when it does not.

    A host fact must be about one of the run's hosts (a file that names no host vouches for
    its own runs); a job fact must come from the run's file or its job."""
    own = artifact_id == scope.artifact_id
    same_job = own or (scope.job_id is not None and job_id == scope.job_id)
    if fact_scope(name) == HOST:
        if host.lower() in on_host:
            if own:
                return FILE, f"this file, host {host}"
            if same_job:
                return JOB_RANK, f"same job #{scope.job_id}, host {host}"
            return HOST_RANK, f"same host {host}"
        if not host and same_job:
            return (FILE, "this file") if own else (JOB_RANK, f"same job #{scope.job_id}")
        return None, ""
    if own:
        return FILE, "this file"
    if same_job:
        return JOB_RANK, f"same job #{scope.job_id}"
    return None, ""


def _trace_facts(
    scope: RunScope, hosts: list[str], on_host: set[str]
) -> list[tuple[int, float, int, Fact]]:
    """A Kineto trace states the NCCL version (distributedInfo), the CUDA runtime (job facts:
    the process's) and its GPUs (deviceProperties, host facts) - in the TraceSummary row."""
    where = Q(artifact_id=scope.artifact_id)
    if scope.job_id is not None:
        where |= Q(artifact__job_membership__job_id=scope.job_id)
    if hosts:
        window = (scope.at - FACTS_WINDOW, scope.at + FACTS_WINDOW)
        where |= Q(host__in=hosts, recorded_at__range=window)
    traces = list(
        TraceSummary.objects.filter(where).only(
            "artifact_id", "host", "nccl_version", "devices", "recorded_at", "extra"
        )[:50]
    )
    jobs = dict(
        JobMember.objects.filter(artifact_id__in=[t.artifact_id for t in traces]).values_list(
            "artifact_id", "job_id"
        )
    )
    out: list[tuple[int, float, int, Fact]] = []
    for t in traces:
        job_id = jobs.get(t.artifact_id)
        source = f"torch_trace artifact #{t.artifact_id}"
        distance = abs((t.recorded_at - scope.at).total_seconds())
        stated: list[tuple[str, str, str]] = []
        if t.nccl_version:
            stated.append(("nccl.version", t.nccl_version, ""))
        runtime = _cuda_text((t.extra or {}).get("cuda_runtime_version"))
        if runtime:
            stated.append(("cuda.runtime_version", runtime, ""))
        for device in t.devices or []:
            if isinstance(device, dict) and device.get("name"):
                stated.append(("gpu.name", str(device["name"]), f"trace:{device.get('id', '')}"))
        for name, value, device in stated:
            rank, why = _why(scope, t.artifact_id, job_id, name, t.host, on_host)
            if rank is None:
                continue
            fact = Fact(
                name, value, host=t.host, device=device, source=source,
                artifact_id=t.artifact_id, why=why,
            )  # fmt: skip
            out.append((rank, distance, -t.artifact_id, fact))
    return out


def _cuda_text(value: object) -> str:
    """CUDA's integer version (12010) as people write it (12.1)."""
    try:
        number = int(str(value))
    except (TypeError, ValueError):
        return ""
    return cuda_version_text(number) or ""
