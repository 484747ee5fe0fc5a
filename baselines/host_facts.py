"""What other artifacts of the same hosts say about a run's hardware and software.

A run's own output rarely states everything: nccl-tests prints the NCCL version but not the
driver, a metrics upload may name neither. The team uploads ``nvidia-smi -q``, ``ibstat``,
``NCCL_DEBUG=INFO`` logs, ``mlxlink``/``mlxconfig`` and Kineto traces of the same machines,
and those state the driver, CUDA, NIC firmware, the NCCL_* environment, the GPU model, the
NIC and its rate; NCCL logs also name the GPUs (PCI bus ids) each host's ranks ran on.
Facts of an artifact count for a run when they describe one of the run's hosts (or carry
the run's upload label) and were observed within ``FACTS_WINDOW`` of it; facts about the
run's own hosts come first, then the nearest in time wins. They only fill gaps: the run's
own output and its upload metadata always win (``facts.merge_stacks``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db.models import Q

from artifacts.models import HostFact, TraceSummary
from baselines.facts import ENV_PREFIX, FACT_COMPONENTS, Fact

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
MAX_FACTS = 5000


def nearby_facts(
    *, hosts: Iterable[str], label: str, at: datetime, exclude_artifact_id: int | None
) -> list[Fact]:
    """Facts about these hosts (or this label) within the window, nearest in time first."""
    hosts = sorted({h for h in hosts if h})
    where = Q(host__in=hosts) if hosts else Q(pk__in=[])
    if label:
        where |= Q(artifact__label=label)
    rows = (
        HostFact.objects.filter(where, observed_at__range=(at - FACTS_WINDOW, at + FACTS_WINDOW))
        .filter(Q(name__in=_NAMES) | Q(name__startswith=ENV_PREFIX))
        .exclude(artifact_id=exclude_artifact_id)
        .values_list(
            "name", "value", "number", "host", "device", "observed_at", "artifact_id",
            "artifact__kind",
        )[:MAX_FACTS]
    )  # fmt: skip
    found: list[tuple[float, int, Fact]] = []
    for name, value, number, host, device, when, artifact_id, kind in rows:
        fact = Fact(name, value, number, host, device, f"{kind} artifact #{artifact_id}")
        found.append((abs((when - at).total_seconds()), -artifact_id, fact))
    found += _trace_facts(hosts, label, at, exclude_artifact_id)
    # Facts about the run's own hosts first; facts that only share its label fill the gaps
    # (a label may be as broad as "nightly").
    on_host = set(hosts)
    found.sort(key=lambda t: (t[2].host not in on_host, t[0], t[1]))
    return [fact for _, _, fact in found]


def _trace_facts(
    hosts: list[str], label: str, at: datetime, exclude_artifact_id: int | None
) -> list[tuple[float, int, Fact]]:
    """A Kineto trace states the NCCL version (distributedInfo), the CUDA runtime and its
    GPUs (deviceProperties) - in the TraceSummary row, not as HostFacts."""
    where = Q(host__in=hosts) if hosts else Q(pk__in=[])
    if label:
        where |= Q(job_label=label)
    traces = (
        TraceSummary.objects.filter(
            where, recorded_at__range=(at - FACTS_WINDOW, at + FACTS_WINDOW)
        )
        .exclude(artifact_id=exclude_artifact_id)
        .only("artifact_id", "host", "nccl_version", "devices", "recorded_at", "extra")[:50]
    )
    out: list[tuple[float, int, Fact]] = []
    for t in traces:
        source = f"torch_trace artifact #{t.artifact_id}"
        distance = abs((t.recorded_at - at).total_seconds())
        facts = []
        if t.nccl_version:
            facts.append(Fact("nccl.version", t.nccl_version, host=t.host, source=source))
        runtime = _cuda_text((t.extra or {}).get("cuda_runtime_version"))
        if runtime:
            facts.append(Fact("cuda.runtime_version", runtime, host=t.host, source=source))
        for device in t.devices or []:
            if isinstance(device, dict) and device.get("name"):
                facts.append(
                    Fact(
                        "gpu.name",
                        str(device["name"]),
                        host=t.host,
                        device=f"trace:{device.get('id', '')}",
                        source=source,
                    )
                )
        out += [(distance, -t.artifact_id, f) for f in facts]
    return out


def _cuda_text(value: object) -> str:
    """CUDA's integer version (12010) as people write it (12.1)."""
    try:
        number = int(str(value))
    except (TypeError, ValueError):
        return ""
    if number <= 0:
        return ""
    return f"{number // 1000}.{number % 1000 // 10}"
