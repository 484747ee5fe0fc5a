"""What other uploads of a run's hosts say about its links, read into per-host numbers. Pure.

The negotiated state of each link, not the datasheet's: ``ibstat``/``ibstatus``/sysfs ports
(``port.rate_gbps``, ``port.state``), ``mlxlink`` (``link.speed``, ``link.width``,
``link.state``), ``ethtool <dev>`` (``ethtool.speed_gbps``, ``ethtool.link_detected``),
NCCL's topology dump (``topo.net.speed_gbps``), ``nvidia-smi`` and bug-report ``lspci``
PCIe links (``gpu.pcie_*``, ``pcie.link_*``) and ``nvidia-smi nvlink --status``
(``nvlink.active``). A port that trained to half its rate halves its rail; since NCCL
stripes channels evenly over the rails, the slowest rail sets the pace of all of them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from hardware import datasheet as ds

LINK_FACTS = (
    "port.rate_gbps", "port.state", "port.link_layer", "hca.type",
    "link.speed", "link.speed_gbps", "link.width", "link.state",
    "ethtool.speed_gbps", "ethtool.link_detected",
    "topo.net.speed_gbps",
    "gpu.pcie_gen_max", "gpu.pcie_width_current", "gpu.pcie_width_max", "gpu.pcie_gen_current",
    "pcie.link_gen_max", "pcie.link_gen_current", "pcie.link_width_current",
    "pcie.link_width_max",
    "nvlink.active", "nccl.ib_devices", "nccl.gdr", "nccl.ofi_nics",
)  # fmt: skip


@dataclass(frozen=True)
class LinkFact:
    """A HostFact row as plain values."""

    host: str
    device: str
    port: int | None
    name: str
    value: str
    number: float | None
    source: str  # "ib_status artifact #12"
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Port:
    device: str
    port: int | None
    gbit: float | None  # negotiated data rate, Gb/s; None when not stated
    active: bool
    source: str
    width: int | None = None


@dataclass
class HostLinks:
    host: str
    # ports per evidence family: "ports" (ibstat/sysfs), "mlxlink", "ethtool", "topology"
    families: dict[str, list[Port]] = field(default_factory=dict)
    nvlink_links_min: int | None = None
    nvlink_source: str = ""
    gpu_pcie_gbps: float | None = None
    gpu_pcie_source: str = ""
    nccl_devices: tuple[str, ...] = ()
    nccl_gdr: str = ""
    # the NICs NCCL used (its NET/IB device list, or the OFI plugin's "found N nics"), the
    # speeds it printed for them (Gb/s; newer NCCL only) and the artifact it came from
    nccl_nic_count: int | None = None
    nccl_speeds_gbit: tuple[float, ...] = ()
    nccl_source: str = ""

    def node_network(
        self, *, expected_nics: int | None, default_gbit: float | None
    ) -> tuple[float, str, str] | None:
        """(GB/s, how, what is degraded) the host's rails carry, the slowest evidence
        family winning; None when no family says enough."""
        best: tuple[float, str, str] | None = None
        for family, ports in self.families.items():
            got = _family_network(family, ports, expected_nics, default_gbit)
            if got is not None and (best is None or got[0] < best[0]):
                best = got
        return best


# Families whose output lists every adapter of the host (a missing port is missing), and
# mlxlink and ethtool, run per device (ports not in the file are simply not described).
_COMPLETE = {"ports": True, "topology": True, "mlxlink": False, "ethtool": False}


def _family_network(
    family: str, ports: list[Port], expected: int | None, default_gbit: float | None
) -> tuple[float, str, str] | None:
    rates = [p.gbit for p in ports if p.gbit]
    if not rates:
        return None
    fastest = max(rates)
    # The fabric rails: ports within half of the fastest rate (a port that trained to half
    # its rate is still a rail; a 100G management NIC among 400G rails is not) and ports not
    # up at all (a down rail is a missing rail).
    fabric = [p for p in ports if (p.gbit and p.gbit >= fastest / 2) or not p.active]
    fabric.sort(key=lambda p: (not p.active, -(p.gbit or 0)))
    rails = expected or len([p for p in fabric if p.active]) or len(fabric)
    chosen = fabric[:rails]
    speeds = [p.gbit if p.active and p.gbit else 0.0 for p in chosen]
    if len(chosen) < rails:
        if _COMPLETE.get(family, True):
            speeds += [0.0] * (rails - len(chosen))  # the host lacks them
        elif default_gbit:
            speeds += [default_gbit] * (rails - len(chosen))  # not described: as profiled
        else:
            return None
    live = [s for s in speeds if s > 0]
    if not live:
        return None
    slowest = min(live)
    total = len(live) * slowest / 8
    sources = sorted({p.source for p in chosen})
    text = f"{len(live)} rails x {slowest:g} Gb/s / 8 ({', '.join(sources)})"
    degraded = []
    if len(live) < rails:
        degraded.append(f"{rails - len(live)} of {rails} rails down or missing")
    slow = [p for p in chosen if p.active and p.gbit and p.gbit < fastest]
    if slow or (default_gbit and slowest < default_gbit):
        names = ", ".join(f"{p.device}{'' if p.port is None else f'/{p.port}'}" for p in slow)
        degraded.append(
            f"{names or 'a rail'} negotiated {slowest:g} Gb/s "
            f"(fastest {max(fastest, default_gbit or 0):g}): every rail waits for it"
        )
    return total, text, "; ".join(degraded)


_LANES = re.compile(r"(\d+)\s*x", re.IGNORECASE)


def mlxlink_gbit(speed_text: str, speed_gbps: float | None, width: int | None) -> float | None:
    """mlxlink's ``Speed`` as Gb/s: a total ("400G", "25GbE") as printed, an InfiniBand
    name (``IB-NDR``) as lane rate x the ``Width`` lanes."""
    if speed_gbps:
        return speed_gbps
    text = (speed_text or "").upper()
    for name, lane in sorted(ds.IB_LANE_GBIT.items(), key=lambda kv: -len(kv[0])):
        if text.endswith(name):
            return lane * (width or 4)
    return None


def host_links(facts: Iterable[LinkFact]) -> dict[str, HostLinks]:
    """Per host: its ports per evidence family, slowest GPU PCIe link, fewest NVLinks."""
    by_host: dict[str, list[LinkFact]] = defaultdict(list)
    for f in facts:
        if f.host:
            by_host[f.host].append(f)
    return {host: _host(host, rows) for host, rows in by_host.items()}


def _host(host: str, rows: list[LinkFact]) -> HostLinks:
    out = HostLinks(host=host)
    grouped: dict[tuple[str, str, str, int | None], dict[str, LinkFact]] = defaultdict(dict)
    for f in rows:
        # one artifact's facts per device: the nearest artifact was given first, keep it
        grouped[(f.source, f.name.split(".")[0], f.device, f.port)].setdefault(f.name, f)
    families: dict[str, dict[tuple[str, int | None], Port]] = defaultdict(dict)
    gpu_pcie: list[tuple[float, str]] = []
    nvlinks: dict[tuple[str, str], int] = defaultdict(int)
    for (source, prefix, device, port), named in grouped.items():
        if prefix == "port" and "port.rate_gbps" in named:
            state = named.get("port.state")
            families["ports"].setdefault(
                (device, port),
                Port(device, port, named["port.rate_gbps"].number, _active(state), source),
            )
        elif prefix == "link" and ("link.speed" in named or "link.speed_gbps" in named):
            width_fact = named.get("link.width")
            width = int(width_fact.number) if width_fact and width_fact.number else None
            speed = named.get("link.speed_gbps")
            gbit = mlxlink_gbit(
                named["link.speed"].value if "link.speed" in named else "",
                speed.number if speed else None,
                width,
            )
            if "NVLINK" in (named.get("link.speed").value if "link.speed" in named else "").upper():
                continue  # a GPU's NVLink port (B200 bug reports), not a NIC
            families["mlxlink"].setdefault(
                (device, port),
                Port(device, port, gbit, _active(named.get("link.state")), source, width),
            )
        elif prefix == "ethtool" and (
            "ethtool.speed_gbps" in named or "ethtool.link_detected" in named
        ):
            detected = named.get("ethtool.link_detected")
            speed = named.get("ethtool.speed_gbps")
            families["ethtool"].setdefault(
                (device, port),
                Port(
                    device,
                    port,
                    speed.number if speed else None,
                    detected is None or detected.value == "true",
                    source,
                ),
            )
        elif prefix == "topo" and "topo.net.speed_gbps" in named:
            families["topology"].setdefault(
                (device, port),
                Port(device, port, named["topo.net.speed_gbps"].number, True, source),
            )
        elif prefix == "gpu" and "gpu.pcie_width_current" in named:
            if got := _pcie_link(named, "gpu.pcie_gen_max", "gpu.pcie_width_current"):
                gpu_pcie.append((got, f"{source}: {device} PCIe"))
        elif prefix == "pcie" and "pcie.link_width_current" in named:
            described = str(next(iter(named.values())).extra.get("description", ""))
            got = _pcie_link(named, "pcie.link_gen_max", "pcie.link_width_current")
            if got and _is_gpu(described):
                gpu_pcie.append((got, f"{source}: lspci {device}"))
        elif prefix == "nvlink" and "nvlink.active" in named:
            if named["nvlink.active"].value == "true":
                nvlinks[(source, device)] += 1
            else:
                nvlinks.setdefault((source, device), 0)
    out.families = {k: list(v.values()) for k, v in families.items()}
    if gpu_pcie:
        out.gpu_pcie_gbps, out.gpu_pcie_source = min(gpu_pcie)
    if nvlinks:
        (source, _device), count = min(nvlinks.items(), key=lambda kv: kv[1])
        out.nvlink_links_min, out.nvlink_source = count, source
    for f in rows:
        if f.name == "nccl.ib_devices" and not out.nccl_devices:
            out.nccl_devices = tuple(d.strip() for d in f.value.split(",") if d.strip())
            out.nccl_nic_count = len(out.nccl_devices) or None
            out.nccl_source = f.source
            speeds = f.extra.get("speeds_mbps") if isinstance(f.extra, dict) else None
            if isinstance(speeds, dict):
                out.nccl_speeds_gbit = tuple(
                    float(v) / 1000 for v in speeds.values() if isinstance(v, int | float) and v
                )
        if f.name == "nccl.ofi_nics" and f.number and not out.nccl_nic_count:
            out.nccl_nic_count, out.nccl_source = int(f.number), f.source
        if f.name == "nccl.gdr" and not out.nccl_gdr:
            out.nccl_gdr = f.value
    return out


def _is_gpu(description: str) -> bool:
    """An lspci line of a GPU (not of the NVIDIA NVSwitch or bridge, nor a NIC)."""
    return bool(re.search(r"NVIDIA|3D controller", description, re.IGNORECASE)) and not re.search(
        r"bridge|switch|Mellanox|ConnectX", description, re.IGNORECASE
    )


def _active(state: LinkFact | None) -> bool:
    return state is None or state.value.strip().upper() == "ACTIVE"


def _pcie_link(named: dict[str, LinkFact], gen_name: str, width_name: str) -> float | None:
    """PCIe GB/s from the link's maximum generation and its current width: GPUs drop their
    link generation when idle (power saving), so a low current generation in a snapshot is
    no fault; a narrower link than the slot is (it does not widen under load)."""
    gen, width = named.get(gen_name), named.get(width_name)
    if gen is None or width is None or gen.number is None or width.number is None:
        return None
    return ds.pcie_gbps(int(gen.number), int(width.number))
