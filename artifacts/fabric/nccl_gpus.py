"""The GPUs an NCCL_DEBUG log shows each host using, as host facts.

NCCL names a rank's GPU by PCI bus id (``cudaDev 0 nvmlDev 0 busId 1b000``), the same
address nvidia-smi keys its GPUs by (``00000000:1B:00.0``), so these facts let the
baselines app match nvidia-smi's GPU facts to the GPUs a job ran on, and count a host's
GPUs when no run output or nvidia-smi says how many it has. Pure: no Django imports.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from artifacts.fabric.parsers.nccl_debug.model import CommRank


@dataclass(frozen=True)
class GpuFact:
    """Keyword arguments of one ``FactBuffer.add`` call."""

    name: str
    value: Any
    host: str
    device: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def nccl_gpu_facts(ranks: Iterable[CommRank]) -> list[GpuFact]:
    """``nccl.gpu`` per (host, GPU) and ``nccl.gpu_count`` per host.

    A log with several communicators (a world comm, then sub-comms per node or per
    pipeline stage) names the same GPU many times: GPUs are counted by distinct bus id, and
    the ranks listed are those of the widest communicator (the job's world). NCCL versions
    that print no busId still print ``localRanks``: the count then comes from that.
    """
    ranks = list(ranks)
    widest = max((r.nranks for r in ranks), default=0)
    gpus: dict[tuple[str, str], dict[str, Any]] = {}
    local_ranks: dict[str, int] = {}
    for r in ranks:
        if r.local_ranks:
            local_ranks[r.host] = max(local_ranks.get(r.host, 0), r.local_ranks)
        if not r.pci_address:
            continue
        gpu = gpus.setdefault(
            (r.host, r.pci_address),
            {"bus_id": r.bus_id, "cuda_dev": r.cuda_dev, "nvml_dev": r.nvml_dev, "ranks": set()},
        )
        if r.nranks == widest:
            gpu["ranks"].add(r.rank)
    out: list[GpuFact] = []
    per_host: dict[str, int] = {}
    for (host, address), gpu in sorted(gpus.items()):
        per_host[host] = per_host.get(host, 0) + 1
        extra = {**gpu, "ranks": sorted(gpu["ranks"])}
        out.append(GpuFact("nccl.gpu", gpu["bus_id"], host=host, device=address, extra=extra))
    for host in sorted(set(per_host) | set(local_ranks)):
        if host in per_host:
            out.append(
                GpuFact("nccl.gpu_count", per_host[host], host=host, extra={"from": "busId"})
            )
        else:
            extra = {"from": "localRanks"}
            out.append(GpuFact("nccl.gpu_count", local_ranks[host], host=host, extra=extra))
    return out
