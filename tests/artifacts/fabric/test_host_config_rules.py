"""The rules over NIC QoS, GID tables, NVLink state, kernel settings and Fabric Manager
events: each fires on a constructed bad case and stays quiet on a healthy one (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from artifacts.fabric import rules
from artifacts.fabric.rules import CRITICAL, INFO, WARNING, EventRow, Evidence
from tests.artifacts.fabric.helpers import T0, fact

DSCP_DEFAULT = {str(d): d // 8 for d in range(64)}


def qos(trust: str = "dscp", pfc: tuple[int, ...] = (3,), mapping: dict[str, int] | None = None,
        device: str = "ens1f0np0") -> list[rules.FactRow]:  # fmt: skip
    where: dict[str, Any] = {"host": "gpu-node-7", "device": device}
    the_map = mapping or DSCP_DEFAULT
    return [
        fact("qos.trust", trust, **where),
        fact("qos.pfc_enabled", ", ".join(map(str, pfc)) or "none", **where,
             extra={"priorities": list(pfc)}),
        fact("qos.dscp2prio", ",".join(f"{d}:{p}" for d, p in the_map.items()), **where,
             extra={"map": the_map}),
    ]  # fmt: skip


def gids(v2: int, routable: int, netdev: str | None = "ens1f0np0") -> list[rules.FactRow]:
    where: dict[str, Any] = {"host": "gpu-node-7", "device": "mlx5_0", "port": 1}
    rows = [fact("gid.v2_count", v2, **where), fact("gid.v2_routable", routable, **where),
            fact("gid.table", "0: v1 link-local; 1: v2 link-local", **where)]  # fmt: skip
    if netdev:
        rows.append(fact("gid.netdev", netdev, **where))
    return rows


def gid_table(device: str = "mlx5_0", netdev: str | None = "ens1f0np0",
              artifact_id: int = 1) -> list[rules.FactRow]:  # fmt: skip
    entries = [
        {"index": 0, "version": "v1", "scope": "link-local"},
        {"index": 1, "version": "v2", "scope": "link-local"},
        {"index": 2, "version": "v1", "scope": "ipv4", "ipv4": "10.110.0.33"},
        {"index": 3, "version": "v2", "scope": "ipv4", "ipv4": "10.110.0.33"},
    ]
    extra = {"netdev": netdev, "entries": entries}
    return [fact("gid.table", "0: v1 link-local; ...", host="gpu-node-7", device=device, port=1,
                 extra=extra, artifact_id=artifact_id)]  # fmt: skip


def sysctl(**settings: Any) -> list[rules.FactRow]:
    out = []
    for key, value in settings.items():
        name = "sysctl." + key.replace("__", ".")
        numbers = [int(v) for v in str(value).split()] if str(value).split()[0].isdigit() else []
        number_or_text: Any = value if isinstance(value, int) else str(value)
        out.append(fact(name, number_or_text, host="gpu-node-7", device="",
                        extra={"numbers": numbers}))  # fmt: skip
    return out


def conf(**per_interface: int) -> dict[str, int]:
    """{'net__ipv4__conf__eth0__rp_filter': 1, ...} from eth0__rp_filter=1."""
    return {f"net__ipv4__conf__{k}": v for k, v in per_interface.items()}


HOST_FACT_CASES = {
    "roce_trust_pcp": (
        qos(trust="pcp"), qos(), WARNING, "ens1f0np0 classifies traffic by PCP, not DSCP",
    ),
    "roce_pfc_off_on_roce_priority": (
        qos(pfc=(4,)), qos(pfc=(3,)), CRITICAL, "PFC is not enabled on RoCE priority 3",
    ),
    "roce_dscp_not_on_roce_priority": (
        qos(mapping={**DSCP_DEFAULT, "26": 0}), qos(),
        WARNING, "DSCP 26 maps to priority 0 on ens1f0np0, not 3",
    ),
    "roce_gid_v2_missing": (
        gids(v2=0, routable=0), gids(v2=2, routable=1),
        CRITICAL, "mlx5_0/1 (ens1f0np0) has no RoCE v2 GID",
    ),
    "nccl_gid_index_wrong": (
        [*gid_table(), fact("nccl.env.NCCL_IB_GID_INDEX", "1", host="gpu-node-7", device=""),
         fact("nccl.ib_devices", "mlx5_0:1/RoCE", host="gpu-node-7", device="")],
        [*gid_table(), fact("nccl.env.NCCL_IB_GID_INDEX", "3", host="gpu-node-7", device="")],
        WARNING, "NCCL_IB_GID_INDEX=1 is a RoCE v2 link-local GID on mlx5_0/1",
    ),
    "nvlink_inactive": (
        [fact("nvlink.active", False, device="GPU 3", port=5)],
        [fact("nvlink.active", True, device="GPU 3", port=5)],
        WARNING, "NVLink 5 of GPU 3 is inactive",
    ),
    "gpu_nic_far": (
        [fact("gpu.nic_far", "mlx5_3 via SYS", device="GPU3",
              extra={"nic": "mlx5_3", "link": "SYS"})],
        [fact("gpu.nic_link", "PIX", device="GPU3")],
        WARNING, "GPU3's nearest NIC is mlx5_3 via SYS on",
    ),
    "nvlink_topology_asymmetric": (
        [fact("topo.nvlink_asymmetry", "0000:17:00.0 -> 0000:65:00.0: 1 link(s), "
              "0000:65:00.0 -> 0000:17:00.0: 12", device="0000:17:00.0")],
        [fact("topo.gpu.nvlinks", 12, device="0000:17:00.0")],
        WARNING, "NVLink count differs by direction on GPU 0000:17:00.0",
    ),
    "sysctl_numa_balancing": (
        sysctl(kernel__numa_balancing=1), sysctl(kernel__numa_balancing=0),
        WARNING, "Automatic NUMA balancing is on (gpu-node-7)",
    ),
    "sysctl_zone_reclaim": (
        sysctl(vm__zone_reclaim_mode=1), sysctl(vm__zone_reclaim_mode=0),
        WARNING, "vm.zone_reclaim_mode is on",
    ),
    "sysctl_swappiness": (
        sysctl(vm__swappiness=60), sysctl(vm__swappiness=1), INFO, "vm.swappiness is 60",
    ),
    "sysctl_socket_buffers_small": (
        sysctl(net__core__rmem_max=212992, net__core__wmem_max=268435456),
        sysctl(net__core__rmem_max=268435456, net__core__wmem_max=268435456),
        INFO, "Small socket buffer limits on gpu-node-7",
    ),
    "sysctl_tcp_buffers_small": (
        sysctl(net__ipv4__tcp_rmem="4096 131072 6291456"),
        sysctl(net__ipv4__tcp_rmem="4096 87380 268435456"),
        INFO, "Small TCP autotuning limits on gpu-node-7",
    ),
    "sysctl_rp_filter_strict": (
        sysctl(**conf(all__rp_filter=0, ens1f0np0__rp_filter=1, ens1f1np1__rp_filter=1,
                      lo__rp_filter=1)),
        sysctl(**conf(all__rp_filter=0, ens1f0np0__rp_filter=2, ens1f1np1__rp_filter=0,
                      lo__rp_filter=1)),
        WARNING, "Strict reverse-path filtering on 2 interface(s) of gpu-node-7",
    ),
    "sysctl_arp_flux": (
        sysctl(**conf(all__arp_ignore=0, all__arp_announce=0, eth2__arp_ignore=0,
                      eth3__arp_ignore=0, eth2__arp_announce=0, eth3__arp_announce=0)),
        sysctl(**conf(all__arp_ignore=1, all__arp_announce=2, eth2__arp_ignore=0,
                      eth3__arp_ignore=0, eth2__arp_announce=0, eth3__arp_announce=0)),
        INFO, "ARP flux possible between the rails of gpu-node-7",
    ),
}  # fmt: skip


def event(kind: str, **extra: object) -> EventRow:
    return EventRow(1, kind, "hgx-3", None, f"{kind} line", extra, T0, line=7)


HOST_EVENT_CASES = {
    "nvswitch_fatal_error": (
        [event("fm_nvswitch_fatal", sxid=20034, device="00000000:86:00.0")],
        [event("fm_nvswitch_non_fatal", sxid=12028, device="00000000:86:00.0")],
        CRITICAL, "NVSwitch fatal error 20034 on hgx-3 (00000000:86:00.0)",
    ),
    "nvswitch_sxid": (
        [event("fm_nvswitch_non_fatal", sxid=12028, device="00000000:86:00.0"),
         event("fm_nvswitch_non_fatal", sxid=12028, device="00000000:86:00.0")],
        [event("fm_nvswitch_fatal", sxid=20034, device="00000000:86:00.0")],
        WARNING, "NVSwitch error 12028 on hgx-3 (00000000:86:00.0)",
    ),
    "fabric_manager_nvlink_failure": (
        [event("fm_nvlink_failure"), event("fm_nvlink_failure")], [event("fm_error")],
        CRITICAL, "Fabric Manager reports NVLink failures on hgx-3",
    ),
    "fabric_manager_error": (
        [event("fm_error")], [event("fm_warning")],
        WARNING, "Fabric Manager logged 1 error(s) on hgx-3",
    ),
}  # fmt: skip


def hits_for(evidence: Evidence, rule_id: str) -> list[rules.Hit]:
    return rules.evaluate(evidence, [rules.RULES_BY_ID[rule_id]])


@pytest.mark.parametrize("rule_id", sorted(HOST_FACT_CASES))
def test_fact_rule_fires_on_bad_facts_and_not_on_healthy_ones(rule_id: str) -> None:
    bad, healthy, severity, title = HOST_FACT_CASES[rule_id]
    [hit] = hits_for(Evidence(facts=tuple(bad)), rule_id)
    assert hit.severity == severity
    assert title in hit.title, hit.title
    assert "{" not in hit.title + hit.explanation and "?" not in hit.explanation, hit.explanation
    assert hits_for(Evidence(facts=tuple(healthy)), rule_id) == []


@pytest.mark.parametrize("rule_id", sorted(HOST_EVENT_CASES))
def test_event_rule_fires_on_bad_events_and_not_on_others(rule_id: str) -> None:
    bad, healthy, severity, title = HOST_EVENT_CASES[rule_id]
    [hit] = hits_for(Evidence(events=tuple(bad)), rule_id)
    assert hit.severity == severity and title in hit.title, hit.title
    assert hit.evidence["events"] == len(bad)
    assert hits_for(Evidence(events=tuple(healthy)), rule_id) == []


def test_pfc_off_everywhere_is_a_warning_and_the_roce_priority_comes_from_metadata() -> None:
    [hit] = hits_for(Evidence(facts=tuple(qos(pfc=()))), "roce_pfc_off_on_roce_priority")
    assert hit.severity == WARNING and "no priority" in hit.explanation
    # RoCE on priority 4 by the upload's own account: PFC on 4 is right, on 3 it is not
    ev = Evidence(facts=tuple(qos(pfc=(4,))), context={"roce_priority": "4"})
    assert hits_for(ev, "roce_pfc_off_on_roce_priority") == []
    ev = Evidence(facts=tuple(qos(pfc=(3,))), context={"roce_priority": 4})
    assert hits_for(ev, "roce_pfc_off_on_roce_priority")[0].severity == CRITICAL


def test_dscp_map_is_not_judged_in_pcp_trust_and_follows_metadata() -> None:
    assert hits_for(Evidence(facts=tuple(qos(trust="pcp", mapping={"26": 0}))),
                    "roce_dscp_not_on_roce_priority") == []  # fmt: skip
    ev = Evidence(facts=tuple(qos()), context={"roce_dscp": 34, "roce_priority": 3})
    [hit] = hits_for(ev, "roce_dscp_not_on_roce_priority")  # DSCP 34 -> 4 by default
    assert hit.evidence == {"dscp": 34, "mapped_priority": 4, "roce_priority": 3}


def test_link_local_only_v2_is_a_warning_and_ib_ports_are_not_judged() -> None:
    [hit] = hits_for(Evidence(facts=tuple(gids(v2=1, routable=0))), "roce_gid_v2_missing")
    assert hit.severity == WARNING and "link-local" in hit.title
    assert hits_for(Evidence(facts=tuple(gids(v2=0, routable=0, netdev=None))),
                    "roce_gid_v2_missing") == []  # fmt: skip


def test_rp_filter_all_overrides_a_loose_interface_value() -> None:
    facts = sysctl(**conf(all__rp_filter=1, eth2__rp_filter=0, eth3__rp_filter=2))
    [hit] = hits_for(Evidence(facts=tuple(facts)), "sysctl_rp_filter_strict")
    assert hit.evidence["rp_filter"] == {"eth2": 1, "eth3": 2} and "eth2" in hit.explanation
    # a single rail cannot receive on "the other" rail
    one = sysctl(**conf(all__rp_filter=1, eth2__rp_filter=1))
    assert hits_for(Evidence(facts=tuple(one)), "sysctl_rp_filter_strict") == []


def test_gid_index_check_reads_the_other_upload_and_names_the_v2_index() -> None:
    # the NCCL log is this upload; the GID table came earlier (a peer fact)
    mine = (fact("nccl.env.NCCL_IB_GID_INDEX", "2", host="gpu-node-7", device="", artifact_id=9),)
    ev = Evidence(facts=mine, peer_facts=tuple(gid_table(artifact_id=4)))
    [hit] = hits_for(ev, "nccl_gid_index_wrong")
    assert hit.severity == CRITICAL and "RoCE v1" in hit.title and hit.artifact_ids == (4, 9)
    assert "is index 3" in hit.explanation
    missing = (fact("nccl.env.NCCL_IB_GID_INDEX", "7", host="gpu-node-7", device=""),)
    [hit] = hits_for(Evidence(facts=(*missing, *gid_table())), "nccl_gid_index_wrong")
    assert "does not exist" in hit.title and hit.severity == CRITICAL
    # two older uploads alone: their own evaluation already said it
    old_env = fact("nccl.env.NCCL_IB_GID_INDEX", "2", host="gpu-node-7", device="", artifact_id=2)
    old_table = gid_table(artifact_id=3)
    ev = Evidence(facts=(fact("port.state", "ACTIVE"),), peer_facts=(old_env, *old_table))
    assert hits_for(ev, "nccl_gid_index_wrong") == []


def test_gid_index_check_skips_hcas_nccl_did_not_use_and_infiniband_ports() -> None:
    env = fact("nccl.env.NCCL_IB_GID_INDEX", "1", host="gpu-node-7", device="")
    other_hca = fact("nccl.ib_devices", "mlx5_4:1/RoCE", host="gpu-node-7", device="")
    assert hits_for(Evidence(facts=(env, other_hca, *gid_table())), "nccl_gid_index_wrong") == []
    ib_only = fact("nccl.ib_devices", "mlx5_0:1/IB", host="gpu-node-7", device="")
    assert hits_for(Evidence(facts=(env, ib_only, *gid_table())), "nccl_gid_index_wrong") == []
    ib_port = gid_table(netdev=None)
    assert hits_for(Evidence(facts=(env, *ib_port)), "nccl_gid_index_wrong") == []
