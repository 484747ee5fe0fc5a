"""Named checks over NIC QoS (mlnx_qos), GID tables (show_gids) and kernel settings (sysctl).

Same contract as checks.py: each check reads the evidence and yields hit-field dicts
(``host``, ``device``, ``port``, ``evidence``, ``artifact_ids``, ``at``, template fields, and
``severity`` when it differs from the rule's). The facts they read are written by
fabric_loaders.load_mlnx_qos / load_show_gids / load_sysctl. Pure: no Django.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from hardware.evidence import CRITICAL, INFO, WARNING, Evidence, FactRow

# NVIDIA's RoCE recipe (knowledge page roce-v2-lossless-connectx-7): data on DSCP 26 ->
# priority 3, lossless. Upload metadata roce_priority / roce_dscp override both.
DEFAULT_ROCE_PRIORITY = 3
DEFAULT_ROCE_DSCP = 26

# Interfaces that are never RDMA rails (for the multi-rail sysctl checks).
_NOT_A_RAIL = re.compile(
    r"^(?:all|default|lo|docker\d*|veth\w*|virbr\w*|br-\w+|cni\w*|flannel\S*"
    r"|cali\w*|tun\d*|tap\w*|kube\S*|vxlan\S*|wg\d*|tailscale\d*)$"
)


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def roce_priority(ev: Evidence) -> int:
    return _int(ev.context.get("roce_priority"), DEFAULT_ROCE_PRIORITY)


def _by_device(ev: Evidence, prefix: str) -> dict[tuple[str, str, int | None], dict[str, FactRow]]:
    out: dict[tuple[str, str, int | None], dict[str, FactRow]] = defaultdict(dict)
    for f in ev.facts:
        if f.name.startswith(prefix):
            out[(f.host, f.device, f.port)][f.name] = f
    return out


def _where(host: str, device: str, port: int | None, fact: FactRow) -> dict[str, Any]:
    return {
        "host": host,
        "device": device,
        "port": port,
        "artifact_ids": (fact.artifact_id,),
        "at": fact.at,
    }


# --- mlnx_qos -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class QosTrustPcp:
    """A port that classifies by VLAN PCP: untagged RoCE v2 traffic then lands on priority 0."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for (host, device, port), facts in _by_device(ev, "qos.").items():
            trust = facts.get("qos.trust")
            if trust is None or trust.value.lower() != "pcp":
                continue
            pfc = facts.get("qos.pfc_enabled")
            yield {
                **_where(host, device, port, trust),
                "trust": trust.value,
                "pfc": pfc.value if pfc else "not stated",
                "evidence": {"trust": trust.value, "pfc_enabled": pfc.value if pfc else None},
            }


@dataclasses.dataclass(frozen=True)
class QosPfcOffOnRoce:
    """PFC not enabled on the RoCE priority: critical when it is on for another priority (the
    lossless class is on the wrong queue), a warning when it is off everywhere (lossy RoCE,
    which only works with a fabric designed for it)."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        wanted = roce_priority(ev)
        for (host, device, port), facts in _by_device(ev, "qos.").items():
            pfc = facts.get("qos.pfc_enabled")
            if pfc is None:
                continue
            enabled = [int(p) for p in pfc.extra.get("priorities") or ()]
            if wanted in enabled:
                continue
            yield {
                **_where(host, device, port, pfc),
                "severity": CRITICAL if enabled else WARNING,
                "prio": wanted,
                "enabled": ", ".join(map(str, enabled)) or "no priority",
                "evidence": {"pfc_enabled": enabled, "roce_priority": wanted},
            }


@dataclasses.dataclass(frozen=True)
class QosDscpNotOnRocePriority:
    """With DSCP trust, the RoCE DSCP must map to the lossless priority."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        wanted = roce_priority(ev)
        dscp = _int(ev.context.get("roce_dscp"), DEFAULT_ROCE_DSCP)
        for (host, device, port), facts in _by_device(ev, "qos.").items():
            trust, mapping = facts.get("qos.trust"), facts.get("qos.dscp2prio")
            if trust is None or trust.value.lower() != "dscp" or mapping is None:
                continue
            mapped = (mapping.extra.get("map") or {}).get(str(dscp))
            if mapped is None or int(mapped) == wanted:
                continue
            yield {
                **_where(host, device, port, mapping),
                "dscp": dscp,
                "mapped": mapped,
                "prio": wanted,
                "evidence": {"dscp": dscp, "mapped_priority": mapped, "roce_priority": wanted},
            }


# --- show_gids ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class GidV2Missing:
    """A RoCE port (it has a netdev) with no RoCE v2 GID (critical: NCCL and RDMA-CM over
    routed RoCE v2 have nothing to use), or with RoCE v2 only on its link-local address."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for (host, device, port), facts in _by_device(ev, "gid.").items():
            netdev, v2 = facts.get("gid.netdev"), facts.get("gid.v2_count")
            if netdev is None or v2 is None or v2.number is None:
                continue
            routable = facts.get("gid.v2_routable")
            if v2.number > 0 and routable is not None and (routable.number or 0) > 0:
                continue
            table = facts.get("gid.table")
            yield {
                **_where(host, device, port, v2),
                "severity": CRITICAL if v2.number == 0 else WARNING,
                "netdev": netdev.value,
                "what": "no RoCE v2 GID" if v2.number == 0 else "RoCE v2 only on link-local",
                "evidence": {
                    "netdev": netdev.value,
                    "v2_gids": v2.number,
                    "v2_routable": routable.number if routable else None,
                    "gids": table.value if table else None,
                },
            }


# --- sysctl ---------------------------------------------------------------------------------


def _sysctl(ev: Evidence) -> dict[str, dict[str, FactRow]]:
    """host -> key -> fact, for the ``sysctl.<key>`` facts."""
    out: dict[str, dict[str, FactRow]] = defaultdict(dict)
    for f in ev.facts:
        if f.name.startswith("sysctl."):
            out[f.host][f.name.removeprefix("sysctl.")] = f
    return out


def _numbers(fact: FactRow) -> list[int]:
    numbers = fact.extra.get("numbers")
    if numbers:
        return [int(n) for n in numbers]
    return [int(fact.number)] if fact.number is not None else []


@dataclasses.dataclass(frozen=True)
class SysctlCompare:
    """One setting outside its recommended range; ``position`` picks a field of a multi-value
    setting (``-1``: the max of ``tcp_rmem``'s min/default/max triplet)."""

    keys: tuple[str, ...]
    above: int | None = None  # fires when the value is above this
    below: int | None = None  # fires when the value is below this
    position: int = 0
    recommended: str = ""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for host, settings in sorted(_sysctl(ev).items()):
            bad = {}
            first: FactRow | None = None
            for key in self.keys:
                fact = settings.get(key)
                numbers = _numbers(fact) if fact else []
                if fact is None or len(numbers) <= max(self.position, -self.position - 1):
                    continue
                value = numbers[self.position]
                if (self.above is not None and value > self.above) or (
                    self.below is not None and value < self.below
                ):
                    bad[key] = value
                    first = first or fact
            if first is None:
                continue
            yield {
                **_where(host, "", None, first),
                "settings": ", ".join(f"{k} = {v}" for k, v in bad.items()),
                "recommended": self.recommended,
                "value": next(iter(bad.values())),
                "evidence": {**bad, "recommended": self.recommended},
            }


def _interface_values(settings: dict[str, FactRow], leaf: str) -> dict[str, int]:
    """net.ipv4.conf.<if>.<leaf> per rail-like interface, combined with ``all`` the way the
    kernel does for rp_filter/arp_ignore/arp_announce: the larger of the two wins."""
    pattern = re.compile(rf"net\.ipv4\.conf\.(?P<if>[^.]+)\.{leaf}")
    every = settings.get(f"net.ipv4.conf.all.{leaf}")
    base = every.number if every and every.number is not None else 0
    out = {}
    for key, fact in settings.items():
        m = pattern.fullmatch(key)
        if m is None or _NOT_A_RAIL.match(m["if"]) or fact.number is None:
            continue
        out[m["if"]] = int(max(base, fact.number))
    return out


@dataclasses.dataclass(frozen=True)
class RpFilterStrict:
    """Strict reverse-path filtering (1) on a host with several rails: replies that arrive on
    another rail than the route back would use are dropped (RDMA-CM, ARP, TCP bootstrap)."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for host, settings in sorted(_sysctl(ev).items()):
            effective = _interface_values(settings, "rp_filter")
            strict = sorted(i for i, v in effective.items() if v == 1)
            if len(effective) < 2 or not strict:
                continue
            fact = settings.get(f"net.ipv4.conf.{strict[0]}.rp_filter")
            assert fact is not None
            yield {
                **_where(host, "", None, fact),
                "interfaces": ", ".join(strict),
                "count": len(strict),
                "evidence": {"rp_filter": effective},
            }


@dataclasses.dataclass(frozen=True)
class ArpFlux:
    """arp_ignore 0 and arp_announce 0 with several rails: any NIC answers ARP for any of the
    host's addresses, so peers may send one rail's RoCE traffic to another rail's MAC."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for host, settings in sorted(_sysctl(ev).items()):
            ignore = _interface_values(settings, "arp_ignore")
            announce = _interface_values(settings, "arp_announce")
            every = settings.get("net.ipv4.conf.all.arp_ignore")
            rails = sorted(set(ignore) | set(announce))
            if every is None or len(rails) < 2:
                continue
            loose = [i for i in rails if ignore.get(i, 0) == 0 and announce.get(i, 0) == 0]
            if not loose:
                continue
            yield {
                **_where(host, "", None, every),
                "severity": INFO,
                "interfaces": ", ".join(loose),
                "evidence": {"arp_ignore": ignore, "arp_announce": announce},
            }


_NCCL_DEVICE = re.compile(r"^\s*(?P<dev>[\w.\-]+):(?P<port>\d+)(?:/(?P<layer>\w+))?\s*$")


@dataclasses.dataclass(frozen=True)
class GidIndexMismatch:
    """``NCCL_IB_GID_INDEX`` (from an NCCL log) against the host's GID table (show_gids): the
    index must hold the RoCE v2 GID of an IPv4 address on every RoCE HCA NCCL uses. Facts
    of the other upload come in ``peer_facts`` (older uploads of the same host)."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        every = (*ev.peer_facts, *ev.facts)  # this upload's facts win over the peers'
        index_fact: dict[str, FactRow] = {}
        used: dict[str, set[tuple[str, int]]] = defaultdict(set)
        tables: dict[tuple[str, str, int | None], FactRow] = {}
        for f in every:
            if f.name == "nccl.env.NCCL_IB_GID_INDEX":
                index_fact[f.host] = f
            elif f.name == "nccl.ib_devices":
                used[f.host] = _nccl_roce_devices(f.value)
            elif f.name == "gid.table" and f.port is not None:
                tables[(f.host, f.device, f.port)] = f
        own = {f.artifact_id for f in ev.facts}
        for host, env in sorted(index_fact.items()):
            wanted = _int(env.value, -1)
            for (t_host, device, port), table in sorted(tables.items()):
                if t_host != host or port is None:
                    continue
                if host in used and (device, port) not in used[host]:
                    continue  # NCCL did not use this HCA (or used it over InfiniBand)
                if not table.extra.get("netdev"):
                    continue  # an InfiniBand port: NCCL_IB_GID_INDEX does not apply
                if not (own & {env.artifact_id, table.artifact_id}):
                    continue  # neither fact is this upload's: its own evaluation says it
                entries = {int(e["index"]): e for e in table.extra.get("entries") or ()}
                entry = entries.get(wanted)
                best = next(
                    (i for i, e in sorted(entries.items())
                     if e.get("version") == "v2" and e.get("scope") == "ipv4"),
                    None,
                )  # fmt: skip
                if (
                    entry is not None
                    and entry.get("version") == "v2"
                    and (entry.get("scope") != "link-local")
                ):
                    continue
                what = (
                    "does not exist" if entry is None
                    else f"is a RoCE {entry.get('version')} {entry.get('scope')} GID"
                )  # fmt: skip
                yield {
                    "host": host,
                    "device": device,
                    "port": port,
                    "severity": CRITICAL if entry is None or entry.get("version") != "v2"
                    else WARNING,
                    "index": wanted,
                    "what": what,
                    "best": best if best is not None else "none",
                    "evidence": {"NCCL_IB_GID_INDEX": env.value, "entry": entry,
                                 "roce_v2_ipv4_index": best},
                    "artifact_ids": tuple(sorted({env.artifact_id, table.artifact_id})),
                    "at": max(env.at, table.at) if env.at and table.at else env.at,
                }  # fmt: skip


def _nccl_roce_devices(text: str) -> set[tuple[str, int]]:
    """'mlx5_0:1/RoCE, mlx5_1:1/RoCE' -> {('mlx5_0', 1), ('mlx5_1', 1)} (RoCE ports only)."""
    out = set()
    for part in text.split(","):
        m = _NCCL_DEVICE.match(part)
        if m and (m["layer"] or "RoCE").lower() == "roce":
            out.add((m["dev"], int(m["port"])))
    return out
