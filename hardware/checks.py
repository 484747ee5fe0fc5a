"""Checks of the efficiency and link-rate findings rules (``artifacts/fabric/rules.py``). Pure.

Same contract as ``artifacts.fabric.checks``: each reads the evidence and yields hit fields.
``BelowPeak`` reads ``context["run_efficiency"]``, which only ``baselines.limits.findings``
puts there (one dict per large-message run below its threshold); the fabric pipeline's
evidence never has it, so the rule is silent there.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from hardware import datasheet as ds
from hardware.evidence import CRITICAL, WARNING, Evidence, FactRow
from hardware.links import mlxlink_gbit

RUN_EFFICIENCY = "run_efficiency"

# What to check per suspected bottleneck: the causes seen most, cheapest to rule out first.
CHECKS: dict[str, tuple[str, ...]] = {
    "network": (
        "links trained down: ibstat Rate and mlxlink Speed/Width of every rail",
        "NICs NCCL used (NCCL_DEBUG=INFO 'NET/IB : Using ...') against the node's rails; "
        "NCCL_IB_HCA lists them all",
        "GPUDirect RDMA on ('GPU Direct RDMA Enabled' in the NCCL log, nvidia-peermem loaded)",
        "PCIe width and generation of GPUs and NICs (nvidia-smi -q, lspci LnkSta)",
        "PFC pause and ECN/CNP counters on the rails (lossless class congested)",
    ),
    "nvlink": (
        "every NVLink active (nvidia-smi nvlink --status) and Fabric Manager running",
        "NCCL_ALGO / NCCL_PROTO / NCCL_NVLS_ENABLE not forcing a slow path",
        "GPU clocks and throttling (nvidia-smi -q Clocks Event Reasons)",
    ),
    "pcie": (
        "PCIe link width and generation of GPUs and NICs (nvidia-smi -q, lspci LnkSta)",
        "ACS / IOMMU forcing peer traffic through the root complex",
        "GPU and NIC on the same PCIe switch (nvidia-smi topo -m: PIX/PXB, not SYS)",
    ),
}
KB_BY_BOTTLENECK = {
    "network": "infiniband-link-health",
    "nvlink": "nvlink-nvswitch-health",
    "pcie": "pcie-link-width-and-gen-checks",
}
KB_LINK_HEALTH = "infiniband-link-health"


_EVIDENCE_KEYS = (
    "run_id", "collective", "pct_of_peak", "busbw_gbps", "size_bytes", "peak_busbw_gbps",
    "bottleneck", "threshold_pct", "observations",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class BelowPeak:
    """A large-message run below its share of the hardware's peak (prepared by the caller)."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for item in ev.context.get(RUN_EFFICIENCY) or ():
            pct, threshold = float(item["pct_of_peak"]), float(item["threshold_pct"])
            checks = [*item.get("observations", ()), *CHECKS.get(item["bottleneck"], ())]
            yield {
                "host": item.get("host", ""),
                "device": f"run {item['index']}",
                "port": None,
                "severity": CRITICAL if pct < threshold / 2 else WARNING,
                **item,
                "checks": "; ".join(checks),
                "evidence": {k: item.get(k) for k in _EVIDENCE_KEYS},
                "at": item.get("at"),
            }


def _by_device(facts: tuple[FactRow, ...]) -> dict[tuple[str, str, int | None], dict[str, FactRow]]:
    out: dict[tuple[str, str, int | None], dict[str, FactRow]] = defaultdict(dict)
    for f in facts:
        out[(f.host, f.device, f.port)][f.name] = f
    return out


def _mlxlinks(ev: Evidence) -> list[tuple[str, str, int | None, float | None, int | None, FactRow]]:
    """(host, device, port, Gb/s, width, a fact) of each ACTIVE NIC link in mlxlink facts."""
    out = []
    for (host, device, port), facts in _by_device(ev.facts).items():
        speed = facts.get("link.speed")
        state = facts.get("link.state")
        if speed is None or (state is not None and state.value.upper() != "ACTIVE"):
            continue
        if "NVLINK" in speed.value.upper():
            continue  # a GPU's NVLink port: its widths and speeds are not a NIC's
        width_fact = facts.get("link.width")
        width = int(width_fact.number) if width_fact and width_fact.number else None
        total = facts.get("link.speed_gbps")
        gbit = mlxlink_gbit(speed.value, total.number if total else None, width)
        out.append((host, device, port, gbit, width, speed))
    return out


@dataclasses.dataclass(frozen=True)
class LinkBelowHost:
    """An mlxlink link narrower (``measure="width"``) or slower (``"speed"``) than the
    widest/fastest NIC link of the same host, or than upload metadata ``expected_width`` /
    ``expected_rate_gbps``."""

    measure: str

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        links = _mlxlinks(ev)
        index = 4 if self.measure == "width" else 3
        meta = ev.context.get("expected_width" if self.measure == "width" else "expected_rate_gbps")
        expected_meta = _number(meta)
        # compared within a host and a link family (InfiniBand names vs Ethernet speeds): a
        # DPU's 200G Ethernet port beside 400G InfiniBand rails is no trained-down link
        best: dict[tuple[str, bool], float] = {}
        for link in links:
            value = link[index]
            if value:
                key = (link[0], _is_ib(link[5].value))
                best[key] = max(best.get(key, 0.0), float(value))
        for host, device, port, gbit, width, fact in links:
            value = width if self.measure == "width" else gbit
            expected = expected_meta or best.get((host, _is_ib(fact.value)))
            if not value or not expected or value >= expected:
                continue
            yield {
                "host": host,
                "device": device,
                "port": port,
                "value": f"{value:g}",
                "expected": f"{expected:g}",
                "speed": fact.value,
                "basis": "upload metadata" if expected_meta else "the best link on the host",
                "evidence": {self.measure: value, "expected": expected, "speed": fact.value},
                "artifact_ids": (fact.artifact_id,),
                "at": fact.at,
            }


@dataclasses.dataclass(frozen=True)
class PortBelowAdapterMax:
    """An ACTIVE ibstat port below its adapter's maximum (``CA type`` in the NIC table) while
    another port of the same adapter model on the host runs faster: this one trained down.
    When every port of the model runs alike (a 200G fabric of 400G adapters, a DPU's bond
    port) nothing is said: that is how the host was built, and the limits model already
    measures its runs against the rate the ports negotiated."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        facts = _by_device(ev.facts)
        models = {
            (host, device): ds.nic_for(f["hca.type"].value)
            for (host, device, _port), f in facts.items()
            if "hca.type" in f
        }
        ports = []
        for (host, device, port), f in facts.items():
            rate, state = f.get("port.rate_gbps"), f.get("port.state")
            nic = models.get((host, device))
            if rate is None or rate.number is None or nic is None:
                continue
            if state is None or state.value.upper() != "ACTIVE":
                continue
            ports.append((host, device, port, rate, nic))
        fastest: dict[tuple[str, str], float] = {}
        for host, _device, _port, rate, nic in ports:
            key = (host, nic.model)
            fastest[key] = max(fastest.get(key, 0.0), rate.number or 0.0)
        for host, device, port, rate, nic in ports:
            if (rate.number or 0.0) >= nic.max_gbit:
                continue
            if (rate.number or 0.0) >= fastest[(host, nic.model)]:
                continue
            yield {
                "host": host,
                "device": device,
                "port": port,
                "rate_gbps": rate.number,
                "max_gbps": nic.max_gbit,
                "adapter": nic.model,
                "evidence": {
                    "rate_gbps": rate.number,
                    "adapter_max_gbps": nic.max_gbit,
                    "adapter": nic.model,
                    "source": nic.source,
                },
                "artifact_ids": (rate.artifact_id,),
                "at": rate.at,
            }


def _is_ib(speed: str) -> bool:
    text = speed.strip().upper()
    return text.startswith("IB") or any(text.endswith(name) for name in ds.IB_LANE_GBIT)


def _number(value: Any) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None
