"""Loaders for configuration-like fabric/host evidence: GID tables (show_gids), NIC QoS
(mlnx_qos), Fabric Manager logs, kernel settings (sysctl) and NCCL's topology dump.

They reuse the fact/event writers of loaders.py (same idempotent contract: clear the
artifact's earlier rows, then write) and are merged into LOADERS by artifacts/loaders.py. The fact
names they write are what artifacts/fabric/host_checks.py and the rules read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from artifacts.fabric.loaders import FactBuffer, _events, clear_fabric_rows, observed_at
from artifacts.fabric.parsers.ibnetdiscover import degraded_links
from artifacts.fabric.parsers.nccl_topology import nvlink_asymmetries
from artifacts.models import Artifact

MAX_GIDS_PER_PORT_FACT = 64  # the gid.table fact keeps this many entries in its extra


def load_show_gids(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    entries: dict[tuple[Any, str, int], list[Any]] = {}
    for g in result.gids:
        entries.setdefault((g.host, g.device, g.port), []).append(g)
    for p in result.ports:
        where = {"host": p.host, "device": p.device, "port": p.port}
        rows = entries.get((p.host, p.device, p.port), [])
        routable = sum(1 for g in rows if g.version == "v2" and g.scope != "link-local")
        facts.add("gid.netdev", p.netdev, **where)
        facts.add("gid.count", p.gids, **where)
        facts.add("gid.v1_count", p.v1, **where)
        facts.add("gid.v2_count", p.v2, **where)
        facts.add("gid.v2_routable", routable, **where)
        facts.add("gid.roce_v2_ipv4_index", p.v2_ipv4_index, **where, extra={"ipv4": p.v2_ipv4})
        facts.add(
            "gid.table",
            "; ".join(f"{g.index}: {g.version} {g.ipv4 or g.scope}" for g in rows[:32]),
            **where,
            extra={
                "netdev": p.netdev,
                "entries": [
                    {
                        "index": g.index,
                        "gid": g.gid,
                        "version": g.version,
                        "ipv4": g.ipv4,
                        "scope": g.scope,
                    }
                    for g in rows[:MAX_GIDS_PER_PORT_FACT]
                ],
            },
        )
    facts.save()


def load_mlnx_qos(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    device_hint = str((artifact.metadata or {}).get("device") or "")
    for index, p in enumerate(result.ports):
        # the output does not name the netdev: the prompt, the upload metadata, or its place
        device = p.interface or (device_hint if len(result.ports) == 1 else "") or f"port{index}"
        where = {"host": p.host, "device": device}
        facts.add("qos.dcbx_mode", p.dcbx_mode, **where)
        facts.add("qos.trust", p.trust, **where)
        if p.pfc_known:  # a paste without its PFC table says nothing about PFC
            facts.add(
                "qos.pfc_enabled",
                list(p.pfc_enabled) or "none",
                **where,
                extra={"priorities": list(p.pfc_enabled), "prio2buffer": list(p.prio2buffer)},
            )
        # a block the paste did not show is unknown, not empty: no fact for it
        if p.prio2buffer:
            facts.add("qos.prio2buffer", list(p.prio2buffer), **where)
        if p.buffer_sizes:
            facts.add(
                "qos.buffer_sizes", list(p.buffer_sizes), **where, extra={"total": p.buffer_total}
            )
        facts.add("qos.cable_len_m", p.cable_len_m, **where)
        facts.add("qos.default_priority", p.default_priority, **where)
        if p.dscp2prio:
            facts.add(
                "qos.dscp2prio",
                ",".join(f"{d}:{q}" for d, q in p.dscp2prio.items()),
                **where,
                extra={"map": dict(p.dscp2prio)},
            )
        for tc in p.tcs:
            share = f" {tc.bw_percent}%" if tc.bw_percent is not None else ""
            facts.add(
                f"qos.tc{tc.tc}",
                f"{tc.tsa}{share} prio {','.join(map(str, tc.priorities)) or '-'}",
                **where,
                extra={
                    "tsa": tc.tsa,
                    "bw_percent": tc.bw_percent,
                    "ratelimit": tc.ratelimit,
                    "priorities": list(tc.priorities),
                },
            )
    facts.save()


def load_fabric_manager(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact, result.last_time))
    mc = result.multicast
    facts.add("fm.version", result.version)
    facts.add("fm.entries", result.entries, extra={"levels": dict(result.levels)})
    facts.add("fm.errors", result.levels.get("ERROR", 0) + result.levels.get("CRITICAL", 0))
    facts.add("fm.first_time", result.first_time)
    facts.add("fm.last_time", result.last_time)
    facts.add("fm.multicast.setups", mc.setups_ok, extra={"requests": mc.setup_requests})
    facts.add("fm.multicast.releases", mc.releases_ok, extra={"requests": mc.release_requests})
    facts.add("fm.multicast.open_teams", max(mc.setups_ok - mc.releases_ok, 0))
    facts.add("fm.multicast.max_gpus_per_team", mc.max_gpus_per_team)
    latest: dict[int, Any] = {}
    for p in result.partitions:
        latest[p.partition] = p
    for number, p in sorted(latest.items()):
        facts.add("fm.partition.state", p.state, device=f"partition {number}",
                  extra={"time": p.time, "line": p.line})  # fmt: skip
    facts.save()
    _events(
        artifact,
        (
            {
                "kind": f"fm_{e.kind}" if not e.kind.startswith("fm_") else e.kind,
                "time": e.time,
                "line": e.line,
                "text": e.text,
                "extra": {**e.details, "level": e.level, "tid": e.tid},
            }
            for e in result.events
        ),
    )


def load_sysctl(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    host = result.host
    for s in result.notable:
        # a single integer is stored as a number, so rules and the fleet can compare it
        single = len(s.numbers) == 1 and s.value.strip() == str(s.numbers[0])
        value: Any = s.numbers[0] if single else s.value
        facts.add(f"sysctl.{s.key}", value, host=host, extra={"numbers": list(s.numbers)})
    facts.add("sysctl.keys_read", len(result.settings), host=host)
    facts.save()
    _events(
        artifact,
        ({"kind": "tool_error", "host": host, "text": e, "extra": {"tool": "sysctl"}}
         for e in result.errors[:200]),
    )  # fmt: skip


def load_nccl_topology(artifact: Artifact, result: Any) -> None:
    """GPUs, NICs, NVLinks and the PCIe tree NCCL saw, as facts of the upload's host (the dump
    names no host: only a hash)."""
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    facts.add("topo.version", result.version)
    facts.add("topo.host_hash", result.host_hash)
    facts.add("topo.gpus", len(result.gpus))
    facts.add("topo.nets", len(result.nets))
    facts.add("topo.numa_nodes", len({c.numa_id for c in result.cpus if c.numa_id is not None}))
    links: dict[str | None, list[Any]] = {}
    for link in result.nvlinks:
        links.setdefault(link.gpu_busid, []).append(link)
    for g in result.gpus:
        device = g.busid or f"GPU {g.dev}"
        extra = {"dev": g.dev, "rank": g.rank}
        facts.add("topo.gpu.dev", g.dev, device=device, extra=extra)
        facts.add("topo.gpu.rank", g.rank, device=device, extra=extra)
        facts.add("topo.gpu.sm", g.sm, device=device)
        facts.add("topo.gpu.gdr", g.gdr, device=device)
        facts.add("topo.gpu.numa_node", g.numa_id, device=device)
        facts.add("topo.gpu.pcie", _pcie(g.link_speed, g.link_width), device=device)
        own = links.get(g.busid, [])
        if own:
            facts.add(
                "topo.gpu.nvlinks",
                sum(link.count or 0 for link in own),
                device=device,
                extra={
                    "links": [
                        {"target": link.target, "kind": link.target_kind, "count": link.count}
                        for link in own
                    ]
                },
            )
    for n in result.nets:
        device = n.name or f"net {n.dev}"
        facts.add("topo.net.speed_gbps", _gbps(n.speed_mbps), device=device, port=n.port)
        facts.add("topo.net.gdr", n.gdr, device=device, port=n.port)
        facts.add("topo.net.busid", n.busid, device=device, port=n.port)
        facts.add("topo.net.numa_node", n.numa_id, device=device, port=n.port)
        facts.add("topo.net.maxconn", n.maxconn, device=device, port=n.port)
    for pci in result.pci:
        facts.add(
            "topo.pci",
            f"{pci.kind} {_pcie(pci.link_speed, pci.link_width) or ''}".strip(),
            device=pci.busid,
            extra={
                "parent": pci.parent_busid,
                "class": pci.class_code,
                "vendor": pci.vendor,
                "device_id": pci.device,
                "numa_node": pci.numa_id,
            },
        )
    for a, b, forward, backward in nvlink_asymmetries(result.nvlinks):
        facts.add(
            "topo.nvlink_asymmetry",
            f"{a} -> {b}: {forward} link(s), {b} -> {a}: {backward}",
            device=a if forward < backward else b,
            extra={"gpu_a": a, "gpu_b": b, "a_to_b": forward, "b_to_a": backward},
        )
    facts.save()


def _pcie(speed: str | None, width: int | None) -> str | None:
    if not speed and width is None:
        return None
    return f"{speed or '?'} x{width if width is not None else '?'}"


def _gbps(mbps: int | None) -> float | None:
    return mbps / 1000 if mbps is not None else None


def load_ibnetdiscover(artifact: Artifact, result: Any) -> None:
    """The fabric in a few facts, each cable at its width and speed from the CA's side
    (host = the first word of the CA's description, as the HCA names its host), and the
    cables trained below the fabric's usual rate."""
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    summary = result.summary()
    facts.add("ibnet.switches", summary["switches"], extra={"rates": summary["rates"]})
    facts.add("ibnet.cas", summary["cas"])
    facts.add("ibnet.links", summary["links"], extra={"common_rate": summary["common_rate"]})
    for port in result.ports:
        if port.node_type != "ca" or not port.node:
            continue
        host, _, device = port.node.partition(" ")
        if not re.match(r"^(?:mlx\d+_\d+|ib\w+|hfi\d+_\d+|[a-z]+\d*_\d+)$", device):
            # a default description ("MT4123 ConnectX6 Mellanox Technologies") names no host
            host, device = "", port.node
        facts.add(
            "ibnet.port.rate",
            f"{port.width}x{port.speed}" if port.speed else None,
            host=host,
            device=device or None,
            port=port.port,
            extra={"switch": port.peer, "switch_port": port.peer_port, "lid": port.lid,
                   "port_guid": port.port_guid, "rate_gbps": port.rate_gbps},
        )  # fmt: skip
    for link in degraded_links(result.links):
        facts.add(
            "ibnet.link_below_common_rate",
            f"{link.width}x{link.speed}",
            device=f"{link.a} port {link.a_port}"[:255],
            extra={"peer": link.b, "peer_port": link.b_port, "rate_gbps": link.rate_gbps},
        )
    facts.save()


CONFIG_LOADERS: dict[str, Callable[[Artifact, Any], None]] = {
    "show_gids": load_show_gids,
    "mlnx_qos": load_mlnx_qos,
    "fabric_manager": load_fabric_manager,
    "sysctl": load_sysctl,
    "nccl_topology": load_nccl_topology,
    "ibnetdiscover": load_ibnetdiscover,
}
