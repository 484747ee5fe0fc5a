"""The limits model: what bounds an nccl-tests run's bus bandwidth, and how high. Pure.

``resolve_limits`` turns what a hardware profile says, its ``limits`` overrides, the GPU
name and the evidence of the run's hosts (``links.HostLinks``) into ``Limits``: one value per
input, each with its unit and its source. ``peak_for`` then picks the bound of a collective
on a topology (ranks, nodes, ranks per node):

* one node: every byte crosses the GPUs' scale-up links (NVLink, Infinity Fabric), or PCIe
  for GPUs without them;
* several nodes: the node's network (NICs x their negotiated rate, the slowest rail times
  the rails, since NCCL stripes channels evenly over them) - or PCIe between GPU and NIC
  when that is slower - and still the scale-up links inside the node.

Why per node and not per GPU: a ring (or tree) crosses each node boundary once per channel
and every channel carries the same bytes a rank sends, so the node's NICs together move
what one rank's busbw counts. All-to-all is the exception: each rank sends (n-g)/n of its
data off-node, so the node's network carries g x that. docs/efficiency.md has the
arithmetic and the sources.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hardware import datasheet as ds
from hardware.gpus import gpu_model as model_of
from hardware.links import HostLinks

NVLINK, NETWORK, PCIE = "nvlink", "network", "pcie"
BOTTLENECK_LABELS = {
    NVLINK: "intra-node NVLink / Infinity Fabric",
    NETWORK: "per-node network (NICs)",
    PCIE: "PCIe",
}
RING_LIKE = frozenset({"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"})
# Names of the overrides a profile's ``limits`` may hold (docs/efficiency.md).
OVERRIDES = (
    "nvlink_busbw_gbps", "nvlink_links", "nvlink_link_gbps", "nic_line_rate_gbit",
    "nics_per_node", "network_busbw_gbps", "pcie_gen", "pcie_width", "pcie_busbw_gbps",
    "gpus_per_node", "peak_busbw_gbps", "efficiency_threshold_pct", "nvlink_domain_gpus",
)  # fmt: skip


def override_errors(limits: Any) -> list[str]:
    """What is wrong with a profile's ``limits`` (empty when it is fine): known keys only,
    positive numbers, ``peak_busbw_gbps`` also as ``{collective: number}``."""
    if not isinstance(limits, Mapping):
        return ['limits must be a JSON object, e.g. {"nvlink_busbw_gbps": 450}']
    errors = []
    for key, value in limits.items():
        if key not in OVERRIDES:
            errors.append(f"unknown limit {key!r}; known: {', '.join(OVERRIDES)}")
        elif key == "peak_busbw_gbps" and isinstance(value, Mapping):
            errors += [f"peak_busbw_gbps.{k}: not a positive number" for k, v in value.items()
                       if _num(v) is None]  # fmt: skip
        elif _num(value) is None:
            errors.append(f"{key}: {value!r} is not a positive number")
    return errors


@dataclass(frozen=True)
class Value:
    value: Any
    unit: str
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "unit": self.unit, "source": self.source}


@dataclass(frozen=True)
class ProfileSpec:
    """What a HardwareProfile row says, as plain values (the reader copies them here)."""

    slug: str = ""
    gpu_model: str = ""
    gpus_per_node: int | None = None
    nvlink: str = ""
    nvswitch: bool = False
    nic_model: str = ""
    nic_speed_gbit: float | None = None
    nics_per_node: int | None = None
    limits: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Topology:
    nranks: int
    nnodes: int
    ranks_per_node: int
    hosts: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "ranks": self.nranks,
            "nodes": self.nnodes,
            "gpus_per_node_used": self.ranks_per_node,
        }


@dataclass(frozen=True)
class Limits:
    """Resolved inputs. ``None``: unknown (the model then says what it lacks)."""

    values: dict[str, Value]
    node_network: dict[str, Value]  # host -> GB/s its rails can carry (evidence or profile)
    notes: tuple[str, ...] = ()
    network_notes: tuple[str, ...] = ()  # degraded rails: said only of multi-node runs

    def get(self, name: str) -> Any:
        v = self.values.get(name)
        return None if v is None else v.value


def _num(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


@dataclass(frozen=True)
class NetworkFill:
    """A network for a profile that states none: what the run's NCCL log says it used, or a
    reference design assumed (``hardware.reference``). Fills only what the profile lacks;
    ``source`` says where it came from ("assumed: ...", "NCCL INFO NET/IB ...")."""

    nics_per_node: int | None
    nic_gbit: float | None
    source: str
    gpus_per_node: int | None = None
    nic_source: str = ""  # source of the count when it differs from the rate's


def resolve_limits(
    profile: ProfileSpec | None,
    *,
    gpu_name: str,
    hosts: Mapping[str, HostLinks] | None = None,
    network: NetworkFill | None = None,
) -> Limits:
    """Every input with its source: profile override > evidence > profile field > datasheet
    (> ``network``: the NCCL log's devices or an assumed reference design)."""
    profile = profile or ProfileSpec()
    where = f"hardware profile {profile.slug}" if profile.slug else "hardware profile"
    overrides = {k: v for k, v in (profile.limits or {}).items() if k in OVERRIDES}
    over = f"{where} limits override"
    values: dict[str, Value] = {}
    notes: list[str] = []
    network_notes: list[str] = []

    model = profile.gpu_model or model_of(gpu_name)
    if model:
        values["gpu_model"] = Value(model, "", where if profile.gpu_model else "GPU name")
    spec = ds.GPUS.get(model.upper()) if model else None
    gpus = _num(overrides.get("gpus_per_node")) or profile.gpus_per_node
    if gpus:
        source = over if "gpus_per_node" in overrides else where
        values["gpus_per_node"] = Value(int(gpus), "", source)
    elif network and network.gpus_per_node:
        values["gpus_per_node"] = Value(network.gpus_per_node, "", network.source)

    _scale_up(values, overrides, over, spec, gpu_name, profile, where, hosts, notes)
    _pcie(values, overrides, over, spec, hosts)
    _nics(values, overrides, over, profile, where)
    if network:
        _fill_network(values, network)
    node_network = _node_networks(values, overrides, over, hosts or {}, network_notes)
    if "peak_busbw_gbps" in overrides:
        values["peak_busbw_gbps"] = Value(overrides["peak_busbw_gbps"], "GB/s", over)
    if _num(overrides.get("efficiency_threshold_pct")):
        values["efficiency_threshold_pct"] = Value(
            float(overrides["efficiency_threshold_pct"]), "%", over
        )
    return Limits(
        values=values,
        node_network=node_network,
        notes=tuple(notes),
        network_notes=tuple(network_notes),
    )


def _scale_up(
    values: dict[str, Value],
    overrides: Mapping[str, Any],
    over: str,
    spec: ds.GpuLinks | None,
    gpu_name: str,
    profile: ProfileSpec,
    where: str,
    hosts: Mapping[str, HostLinks] | None,
    notes: list[str],
) -> None:
    """Per-GPU NVLink (Infinity Fabric) bandwidth per direction: links x per-link rate."""
    if (direct := _num(overrides.get("nvlink_busbw_gbps"))) is not None:
        values["nvlink_busbw_gbps"] = Value(direct, "GB/s", over)
        values["nvlink_switched"] = Value(True, "", over)
        if domain := _num(overrides.get("nvlink_domain_gpus")):
            values["nvlink_domain_gpus"] = Value(int(domain), "", over)
        return
    if spec is None or (ds.is_pcie_card(gpu_name) and not profile.nvswitch):
        return  # PCIe cards: no scale-up fabric unless the profile says otherwise
    links = _num(overrides.get("nvlink_links"))
    links_source = over if links else spec.source
    evidence_links = [h.nvlink_links_min for h in (hosts or {}).values() if h.nvlink_links_min]
    if not links and evidence_links and min(evidence_links) < spec.links:
        links = float(min(evidence_links))
        worst = min((h for h in (hosts or {}).values() if h.nvlink_links_min), key=_nvl)
        links_source = f"{worst.nvlink_source} (a GPU with {int(links)} active links)"
        notes.append(
            f"{worst.host}: a GPU has {int(links)} of {spec.links} NVLinks active; "
            "its ring position bounds every ring"
        )
    links = links or float(spec.links)
    per_link = _num(overrides.get("nvlink_link_gbps")) or spec.link_gbps
    values["nvlink_links"] = Value(int(links), "", links_source)
    values["nvlink_link_gbps"] = Value(
        per_link, "GB/s", over if "nvlink_link_gbps" in overrides else spec.source
    )
    values["nvlink_busbw_gbps"] = Value(
        round(links * per_link, 3), "GB/s", f"{int(links)} links x {per_link:g} GB/s"
    )
    values["nvlink_switched"] = Value(spec.switched, "", spec.source)
    domain = _num(overrides.get("nvlink_domain_gpus"))
    if domain or spec.domain:
        values["nvlink_domain_gpus"] = Value(
            int(domain or spec.domain), "", over if domain else spec.source
        )


def _nvl(h: HostLinks) -> int:
    return h.nvlink_links_min or 0


def _pcie(
    values: dict[str, Value],
    overrides: Mapping[str, Any],
    over: str,
    spec: ds.GpuLinks | None,
    hosts: Mapping[str, HostLinks] | None,
) -> None:
    """The GPU's PCIe link per direction: override, slowest link in evidence, datasheet."""
    if (direct := _num(overrides.get("pcie_busbw_gbps"))) is not None:
        values["pcie_busbw_gbps"] = Value(direct, "GB/s", over)
        return
    gen = _num(overrides.get("pcie_gen")) or (spec.pcie_gen if spec else None)
    width = _num(overrides.get("pcie_width")) or (spec.pcie_width if spec else None)
    source = over if {"pcie_gen", "pcie_width"} & set(overrides) else (spec.source if spec else "")
    seen = [h for h in (hosts or {}).values() if h.gpu_pcie_gbps]
    if seen and not {"pcie_gen", "pcie_width"} & set(overrides):
        worst = min(seen, key=lambda h: h.gpu_pcie_gbps or 0.0)
        values["pcie_busbw_gbps"] = Value(worst.gpu_pcie_gbps, "GB/s", worst.gpu_pcie_source)
        return
    if (bw := ds.pcie_gbps(int(gen) if gen else None, int(width) if width else None)) is None:
        return
    values["pcie_busbw_gbps"] = Value(
        bw, "GB/s", f"PCIe Gen{int(gen or 0)} x{int(width or 0)} ({source}; {ds.PCIE_SOURCE})"
    )


def _nics(
    values: dict[str, Value],
    overrides: Mapping[str, Any],
    over: str,
    profile: ProfileSpec,
    where: str,
) -> None:
    if rate := _num(overrides.get("nic_line_rate_gbit")):
        values["nic_line_rate_gbit"] = Value(rate, "Gb/s", over)
    elif profile.nic_speed_gbit:
        values["nic_line_rate_gbit"] = Value(float(profile.nic_speed_gbit), "Gb/s", where)
    elif nic := ds.nic_for(profile.nic_model):
        values["nic_line_rate_gbit"] = Value(nic.max_gbit, "Gb/s", nic.source)
    if count := _num(overrides.get("nics_per_node")):
        values["nics_per_node"] = Value(int(count), "", over)
    elif profile.nics_per_node:
        values["nics_per_node"] = Value(int(profile.nics_per_node), "", where)


def _fill_network(values: dict[str, Value], network: NetworkFill) -> None:
    if "nic_line_rate_gbit" not in values and network.nic_gbit:
        values["nic_line_rate_gbit"] = Value(float(network.nic_gbit), "Gb/s", network.source)
    if "nics_per_node" not in values and network.nics_per_node:
        values["nics_per_node"] = Value(
            int(network.nics_per_node), "", network.nic_source or network.source
        )


def _node_networks(
    values: dict[str, Value],
    overrides: Mapping[str, Any],
    over: str,
    hosts: Mapping[str, HostLinks],
    notes: list[str],
) -> dict[str, Value]:
    """GB/s each host's rails carry: rails x slowest rail (evidence), else the profile's."""
    if direct := _num(overrides.get("network_busbw_gbps")):
        values["network_busbw_gbps"] = Value(direct, "GB/s", over)
        return {}
    nics, rate = values.get("nics_per_node"), values.get("nic_line_rate_gbit")
    if nics and rate:
        total = nics.value * rate.value / 8
        values["network_busbw_gbps"] = Value(
            round(total, 3),
            "GB/s",
            f"{nics.value} NICs x {rate.value:g} Gb/s / 8 ({nics.source}; {rate.source})",
        )
    out: dict[str, Value] = {}
    expected = int(nics.value) if nics else None
    default_rate = float(rate.value) if rate else None
    for host, links in sorted(hosts.items()):
        node = links.node_network(expected_nics=expected, default_gbit=default_rate)
        if node is None:
            continue
        gbps, text, degraded = node
        out[host] = Value(round(gbps, 3), "GB/s", text)
        if degraded:
            notes.append(f"{host}: {degraded}")
    return out


# ------------------------------------------------------------------------------ the peak


@dataclass(frozen=True)
class Peak:
    peak_busbw_gbps: float
    bottleneck: str
    explanation: str
    bounds: dict[str, float]  # every bound considered, GB/s
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unknown:
    reason: str


def peak_for(collective: str, topology: Topology, limits: Limits) -> Peak | Unknown:
    """The busbw ceiling of ``collective`` on ``topology`` and the term that sets it."""
    if topology.nranks < 2:
        return Unknown("a single rank moves no data between GPUs: no bus bandwidth to bound")
    fixed = limits.get("peak_busbw_gbps")
    if fixed is not None:
        chosen = fixed.get(collective) if isinstance(fixed, Mapping) else fixed
        if _num(chosen):
            return Peak(float(chosen), "override", "the hardware profile's limits override", {})
    bounds: dict[str, float] = {}
    texts: dict[str, str] = {}
    notes = list(limits.notes)
    g = max(1, topology.ranks_per_node)
    scale_up = _num(limits.get("nvlink_busbw_gbps"))
    pcie = _num(limits.get("pcie_busbw_gbps"))
    if g > 1:
        if scale_up:
            bw = scale_up
            if collective == "sendrecv" and limits.get("nvlink_switched") is False:
                bw = _num(limits.get("nvlink_link_gbps")) or scale_up  # one peer, one link
                texts[NVLINK] = f"one direct link to the peer: {bw:g} GB/s"
            else:
                texts[NVLINK] = f"per-GPU scale-up links: {bw:g} GB/s per direction"
            bounds[NVLINK] = bw
        elif pcie and topology.nnodes == 1:
            bounds[PCIE] = pcie
            texts[PCIE] = f"GPUs without NVLink talk over PCIe: {pcie:g} GB/s per direction"
    domain = int(_num(limits.get("nvlink_domain_gpus")) or 0)
    net_topology, per_unit = topology, 1
    if domain and scale_up and topology.nnodes > 1:
        # NVL72-like racks: NVLink joins the hosts of a domain; its boundary, not a host's,
        # is where the network starts.
        if topology.nranks <= domain:
            notes.append(
                f"all {topology.nranks} ranks share one NVLink domain of {domain} GPUs: "
                "no network on their path"
            )
            net_topology = Topology(topology.nranks, 1, topology.nranks, topology.hosts)
        else:
            per_unit = max(1, domain // g)
            net_topology = Topology(
                topology.nranks, math.ceil(topology.nranks / domain), domain, topology.hosts
            )
    if net_topology.nnodes > 1:
        notes += [n for n in limits.network_notes if n.split(":")[0] in topology.hosts]
        net = _network_bound(collective, net_topology, limits, pcie, texts, notes, per_unit)
        if net is None:
            return Unknown(
                "the network of the run's nodes is unknown: set NICs per node and their "
                "rate on the hardware profile (or upload ibstat/mlxlink of the hosts)"
            )
        kind, value = net
        bounds[kind] = min(value, bounds.get(kind, math.inf))
    if not bounds:
        return Unknown(
            "the GPU's scale-up links are unknown: name the GPU model on the hardware profile "
            "or set limits.nvlink_busbw_gbps"
        )
    bottleneck = min(bounds, key=lambda k: bounds[k])
    if collective == "all_reduce" and bottleneck == NVLINK and limits.get("nvlink_switched"):
        notes.append(
            "NVLink SHARP (NVLS) reduces inside the NVSwitch: all_reduce can exceed this "
            "peak, since busbw's 2(n-1)/n assumes the GPUs do the reduction"
        )
    return Peak(
        peak_busbw_gbps=round(bounds[bottleneck], 3),
        bottleneck=bottleneck,
        explanation=texts.get(bottleneck, ""),
        bounds={k: round(v, 3) for k, v in bounds.items()},
        notes=tuple(notes),
    )


def _network_bound(
    collective: str,
    topology: Topology,
    limits: Limits,
    pcie: float | None,
    texts: dict[str, str],
    notes: list[str],
    per_unit: int = 1,
) -> tuple[str, float] | None:
    """(bottleneck, GB/s) of the inter-node part: the slowest node's rails (network, or
    PCIe between GPU and NIC when that is slower), shaped by the collective. ``per_unit``:
    hosts per NVLink domain, when the domain (not the host) is the unit the network joins."""
    g, n = max(1, topology.ranks_per_node), topology.nranks
    nics = limits.get("nics_per_node")
    gpus = limits.get("gpus_per_node")
    if per_unit > 1:
        nics = int(nics) * per_unit if nics else None
        gpus = int(gpus) * per_unit if gpus else None
    per_node = _num(limits.get("network_busbw_gbps"))
    node_values = [
        (host, v) for host, v in limits.node_network.items() if host in topology.hosts
    ] or list(limits.node_network.items())
    where = "profile"
    if node_values:
        host, slowest = min(node_values, key=lambda hv: hv[1].value)
        if per_node is None or slowest.value <= per_node:
            per_node, where = float(slowest.value), f"{host}: {slowest.source}"
    if not per_node:
        return None
    per_node *= per_unit
    # Rails the run's GPUs reach: a job on g of G GPUs uses the NICs next to those GPUs.
    rails = int(nics) if nics else None
    if rails and gpus and g < gpus:
        used = min(rails, max(1, math.ceil(g * rails / gpus)))
        if used < rails:
            notes.append(f"{g} of {gpus} GPUs per node reach {used} of {rails} NICs")
            per_node = per_node * used / rails
            rails = used
    kind, bound = NETWORK, per_node
    unit = f"per NVLink domain ({per_unit} hosts)" if per_unit > 1 else "per-node"
    texts[NETWORK] = f"{unit} network {per_node:g} GB/s ({where})"
    if pcie and rails:
        # GPUDirect RDMA: each rail's bytes cross the GPU's PCIe link (GPUs sharing a NIC
        # share it); the slowest link bounds every evenly striped rail.
        gpus_per_rail = max(1, g // rails)
        pcie_node = rails * pcie * gpus_per_rail
        if pcie_node < per_node:
            kind, bound = PCIE, pcie_node
            texts[PCIE] = (
                f"GPU-to-NIC PCIe: {rails} rails x {pcie:g} GB/s = {pcie_node:g} GB/s per node"
            )
    if collective == "alltoall":
        # each rank sends (n-g)/n of its data off-node; g ranks share the node's network
        factor = (n - 1) / (g * (n - g)) if n > g else 1.0
        bound *= factor
        texts[kind] += f"; all-to-all: x (n-1)/(g(n-g)) = {factor:.4f}"
    elif collective == "sendrecv":
        # one rank per node sends off-node, over the rail(s) next to its GPU
        per_rank = max(1, (rails or 1) // g)
        bound = bound / (rails or 1) * per_rank if rails else bound / g
        texts[kind] += f"; sendrecv: one rank per node crosses, over {per_rank} rail(s)"
    elif collective not in RING_LIKE:
        notes.append(f"{collective}: bounded like a ring collective (approximate)")
    return kind, bound
