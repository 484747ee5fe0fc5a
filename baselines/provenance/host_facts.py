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


MAX_JOB_FILES = 500  # a job of more files than this is a fleet, not one world


def _job_of(scope: RunScope) -> dict[int, int | None]:
    """The run's file and the files of its job -> their job id."""
    if scope.job_id is None:
        return {scope.artifact_id: None}
    members = JobMember.objects.filter(job_id=scope.job_id).values_list("artifact_id", flat=True)
    found: dict[int, int | None] = dict.fromkeys(members[:MAX_JOB_FILES], scope.job_id)
    found.setdefault(scope.artifact_id, scope.job_id)
    return found


def _wanted() -> Q:
    return Q(name__in=_NAMES) | Q(name__startswith=ENV_PREFIX)


def run_facts(scope: RunScope, *, detached: Iterable[tuple[int, str]] = ()) -> list[Fact]:
    """Facts that describe the run: own file, job, hosts (see the module docstring), nearest
    scope first, then nearest in time. ``detached``: (source artifact id, key) pairs a
    person took away from this run's artifact (``*`` = every key)."""
    hosts = sorted({h for h in scope.hosts if h})
    on_host = {h.lower() for h in hosts}
    window = (scope.at - FACTS_WINDOW, scope.at + FACTS_WINDOW)
    jobs = _job_of(scope)
    ids = sorted(jobs)
    columns = (
        "name", "value", "number", "host", "device", "observed_at", "artifact_id",
        "artifact__kind", "extra",
    )  # fmt: skip
    # Two index-friendly reads (an OR across the job join would scan the table): the facts
    # of the run's file and job, then the host facts of its hosts around its time.
    rows = list(
        HostFact.objects.filter(artifact_id__in=ids)
        .filter(_wanted())
        .values_list(*columns)[:MAX_FACTS]
    )
    if hosts:
        rows += (
            HostFact.objects.filter(host__in=hosts, observed_at__range=window, name__in=_HOST_NAMES)
            .exclude(artifact_id__in=ids)
            .values_list(*columns)[:MAX_FACTS]
        )
    rows = [(*r[:8], jobs.get(r[6]), r[8]) for r in rows]
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
    fields = ("artifact_id", "host", "nccl_version", "devices", "recorded_at", "extra")
    in_job = _job_of(scope)
    traces = list(TraceSummary.objects.filter(artifact_id__in=sorted(in_job)).only(*fields)[:50])
    if hosts:
        window = (scope.at - FACTS_WINDOW, scope.at + FACTS_WINDOW)
        traces += (
            TraceSummary.objects.filter(host__in=hosts, recorded_at__range=window)
            .exclude(artifact_id__in=sorted(in_job))
            .only(*fields)[:50]
        )
    jobs = {t.artifact_id: in_job.get(t.artifact_id) for t in traces}
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
