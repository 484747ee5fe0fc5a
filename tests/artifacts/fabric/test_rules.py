"""Every rule fires on a constructed bad case and stays quiet on a healthy one.

Counter rules get real before/after readings run through rates.py, so the thresholds are
tested on the numbers the pipeline produces, not on hand-made rates.
"""

from __future__ import annotations

import pytest

from artifacts.fabric import rules
from artifacts.fabric.rules import CRITICAL, INFO, WARNING, EventRow, Evidence, SampleRow
from tests.artifacts.fabric.helpers import T0, fact, pair_rates, rate_rows

# rule id: (bad before, bad after, healthy before, healthy after, severity, title contains)
COUNTER_CASES = {
    "pfc_pause_storm": (
        {"rx_prio3_pause": 0}, {"rx_prio3_pause": 300_000},
        {"rx_prio3_pause": 0}, {"rx_prio3_pause": 20},
        CRITICAL, "PFC pause storm on mlx5_3 priority 3",
    ),
    "pfc_pause_duration": (
        {"rx_prio3_pause_duration": 0}, {"rx_prio3_pause_duration": 500_000},
        {"rx_prio3_pause_duration": 0}, {"rx_prio3_pause_duration": 1_000},
        WARNING, "mlx5_3 priority 3 paused 5.0% of the time",
    ),
    "pfc_storm_warning_events": (
        {"tx_pause_storm_warning_events": 2}, {"tx_pause_storm_warning_events": 5},
        {"tx_pause_storm_warning_events": 2}, {"tx_pause_storm_warning_events": 2},
        WARNING, "PFC storm warning on mlx5_3",
    ),
    "pfc_storm_error_events": (
        {"tx_pause_storm_error_events": 0}, {"tx_pause_storm_error_events": 1},
        {"tx_pause_storm_error_events": 0}, {"tx_pause_storm_error_events": 0},
        CRITICAL, "storm prevention",
    ),
    "ecn_marked_share": (
        {"np_ecn_marked_roce_packets": 0, "port_rcv_packets": 0},
        {"np_ecn_marked_roce_packets": 300_000, "port_rcv_packets": 1_000_000},
        {"np_ecn_marked_roce_packets": 0, "port_rcv_packets": 0},
        {"np_ecn_marked_roce_packets": 1_000, "port_rcv_packets": 1_000_000},
        CRITICAL, "30.0% of RoCE packets ECN-marked on mlx5_3",
    ),
    "cnp_rate": (
        {"np_cnp_sent": 0}, {"np_cnp_sent": 200_000},
        {"np_cnp_sent": 0}, {"np_cnp_sent": 50},
        WARNING, "20,000 CNPs per second on mlx5_3",
    ),
    "buffer_drops": (
        {"rx_discards_phy": 10}, {"rx_discards_phy": 5_010},
        {"rx_discards_phy": 10}, {"rx_discards_phy": 10},
        WARNING, "Packets dropped for lack of buffer on mlx5_3",
    ),
    "transport_retries": (
        {"local_ack_timeout_err": 0}, {"local_ack_timeout_err": 12},
        {"local_ack_timeout_err": 0}, {"local_ack_timeout_err": 0},
        WARNING, "RDMA transport retries on mlx5_3",
    ),
    "out_of_sequence_share": (
        {"out_of_sequence": 0, "port_rcv_packets": 0},
        {"out_of_sequence": 5_000, "port_rcv_packets": 1_000_000},
        {"out_of_sequence": 0, "port_rcv_packets": 0},
        {"out_of_sequence": 1, "port_rcv_packets": 1_000_000},
        CRITICAL, "5,000 out-of-sequence packets per million on mlx5_3",
    ),
    "link_flap": (
        {"link_downed": 3}, {"link_downed": 4},
        {"link_downed": 3}, {"link_downed": 3},
        CRITICAL, "Link flapped on mlx5_3",
    ),
    "symbol_errors": (
        {"symbol_error": 0}, {"symbol_error": 40},
        {"symbol_error": 7}, {"symbol_error": 7},
        WARNING, "Symbol errors rising on mlx5_3",
    ),
    "gpu_pcie_replays": (
        {"pcie.replay_counter": 0}, {"pcie.replay_counter": 9},
        {"pcie.replay_counter": 4}, {"pcie.replay_counter": 4},
        WARNING, "PCIe replays rising",
    ),
    "gpu_ecc_rising": (
        {"ecc.errors.uncorrected.volatile.total": 0}, {"ecc.errors.uncorrected.volatile.total": 2},
        {"ecc.errors.uncorrected.volatile.total": 0}, {"ecc.errors.uncorrected.volatile.total": 0},
        CRITICAL, "Uncorrectable ECC errors rising",
    ),
}  # fmt: skip


def hits_for(evidence: Evidence, rule_id: str) -> list[rules.Hit]:
    return rules.evaluate(evidence, [rules.RULES_BY_ID[rule_id]])


@pytest.mark.parametrize("rule_id", sorted(COUNTER_CASES))
def test_counter_rule_fires_on_the_bad_pair_and_not_on_the_healthy_one(rule_id: str) -> None:
    bad_before, bad_after, ok_before, ok_after, severity, title = COUNTER_CASES[rule_id]
    [hit] = hits_for(Evidence(rates=rate_rows(pair_rates(bad_before, bad_after))), rule_id)
    assert hit.severity == severity
    assert title in hit.title, hit.title
    assert hit.host == "node1" and hit.device == "mlx5_3"
    assert hit.evidence["value"] > hit.evidence["threshold"]
    assert hit.evidence["readings"] and hit.explanation and hit.kb_slug
    assert "{" not in hit.title + hit.explanation  # every template field was filled
    assert hits_for(Evidence(rates=rate_rows(pair_rates(ok_before, ok_after))), rule_id) == []


def test_a_reset_counter_never_fires_a_rule() -> None:
    ev = Evidence(rates=rate_rows(pair_rates({"link_downed": 9}, {"link_downed": 0})))
    assert rules.evaluate(ev) == []


def test_pause_rules_name_the_priority_and_keep_priorities_apart() -> None:
    frame = pair_rates(
        {"rx_prio3_pause": 0, "rx_prio4_pause": 0, "tx_prio3_pause": 0},
        {"rx_prio3_pause": 50_000, "rx_prio4_pause": 20_000, "tx_prio3_pause": 0},
    )
    hits = hits_for(Evidence(rates=rate_rows(frame)), "pfc_pause_storm")
    assert sorted(h.title for h in hits) == [
        "PFC pause storm on mlx5_3 priority 3",
        "PFC pause storm on mlx5_3 priority 4",
    ]
    assert len({h.fingerprint for h in hits}) == 2


def test_storm_total_rule_reads_a_single_reading() -> None:
    sample = SampleRow(1, "node1", "eth2", None, "tx_pause_storm_error_events", 3, "count", T0)
    [hit] = hits_for(Evidence(samples=(sample,)), "pfc_storm_events_total")
    assert hit.severity == INFO and "eth2" in hit.title
    quiet = SampleRow(1, "node1", "eth2", None, "tx_pause_storm_error_events", 0, "count", T0)
    assert hits_for(Evidence(samples=(quiet,)), "pfc_storm_events_total") == []


def port(device: str, state: str, rate: float, *, phys: str = "LinkUp") -> list[rules.FactRow]:
    where = {"device": device, "port": 1}
    return [
        fact("port.state", state, **where),
        fact("port.phys_state", phys, **where),
        fact("port.rate_gbps", rate, **where),
        fact("port.link_layer", "InfiniBand", **where),
    ]


def gpu(**facts: object) -> list[rules.FactRow]:
    return [fact(f"gpu.{k}", v, device="00000000:18:00.0") for k, v in facts.items()]


# rule id: (bad facts, healthy facts, severity, title contains)
FACT_CASES = {
    "port_down": (
        port("mlx5_0", "ACTIVE", 400) + port("mlx5_7", "DOWN", 10, phys="Disabled"),
        port("mlx5_0", "ACTIVE", 400),
        CRITICAL, "Port mlx5_7/1 is DOWN",
    ),
    "link_down": (
        [fact("link.state", "POLLING", device="/dev/mst/mt4129_pciconf0")],
        [fact("link.state", "ACTIVE", device="/dev/mst/mt4129_pciconf0")],
        CRITICAL, "is POLLING",
    ),
    "port_below_expected_rate": (
        port("mlx5_0", "ACTIVE", 400) + port("mlx5_1", "ACTIVE", 200),
        port("mlx5_0", "ACTIVE", 400) + port("mlx5_1", "ACTIVE", 400),
        WARNING, "Port mlx5_1/1 runs at 200 Gb/s, expected 400",
    ),
    "link_status_issue": (
        [fact("link.status_opcode", 1024, device="sw1"),
         fact("link.recommendation", "Check cable", device="sw1")],
        [fact("link.status_opcode", 0, device="sw1")],
        WARNING, "mlxlink reports an issue on sw1",
    ),
    "gpu_pcie_width_downtrained": (
        gpu(pcie_width_current=8, pcie_width_max=16),
        gpu(pcie_width_current=16, pcie_width_max=16),
        WARNING, "PCIe link at x8, capable of x16",
    ),
    "gpu_pcie_gen_downtrained": (
        gpu(pcie_gen_current=3, pcie_gen_max=5, utilization_gpu_percent=97),
        gpu(pcie_gen_current=5, pcie_gen_max=5, utilization_gpu_percent=97),
        WARNING, "at Gen3, capable of Gen5",
    ),
    "gpu_throttling": (
        [fact("gpu.clock_event_reasons", "hw_thermal_slowdown", device="GPU-0",
              extra={"reasons": ["hw_thermal_slowdown"]})],
        [fact("gpu.clock_event_reasons", "idle", device="GPU-0", extra={"reasons": ["idle"]})],
        CRITICAL, "throttled: hw_thermal_slowdown",
    ),
    "gpu_ecc_uncorrectable": (
        gpu(ecc_uncorrected_volatile=3), gpu(ecc_uncorrected_volatile=0),
        CRITICAL, "has 3 uncorrectable ECC errors",
    ),
    "gpu_row_remap_pending": (
        gpu(remapped_rows_pending="Yes"), gpu(remapped_rows_pending="No"),
        CRITICAL, "row remappings pending",
    ),
    "gpu_row_remap_failure": (
        gpu(remapped_rows_failure="Yes"), gpu(remapped_rows_failure="No"),
        CRITICAL, "ran out of spare rows",
    ),
    "nccl_version_mismatch": (
        [fact("nccl.version", "2.26.2", host="a", device=""),
         fact("nccl.version", "2.26.2", host="b", device=""),
         fact("nccl.version", "2.26.5", host="c", device="")],
        [fact("nccl.version", "2.26.2", host=h, device="") for h in "abc"],
        CRITICAL, "NCCL version mismatch across hosts",
    ),
    "nccl_socket_fallback": (
        [fact("nccl.transports", "Socket", host="n1", device=""),
         fact("nccl.env.NCCL_IB_HCA", "mlx5_0,mlx5_1", host="n1", device="")],
        [fact("nccl.transports", "IB", host="n1", device="")],
        CRITICAL, "NCCL fell back to sockets on n1",
    ),
    "nccl_gdr_disabled": (
        [fact("nccl.transports", "IB", host="n1", device=""),
         fact("nccl.gdr", False, host="n1", device="")],
        [fact("nccl.transports", "IB", host="n1", device=""),
         fact("nccl.gdr", True, host="n1", device="")],
        WARNING, "GPUDirect RDMA disabled on n1",
    ),
    "nic_irqs_on_one_cpu": (
        [fact("irq.top_cpu_pct", 100, device="0000:01:00.1"),
         fact("irq.top_cpu", 11, device="0000:01:00.1"),
         fact("irq.count", 2, device="0000:01:00.1"),
         fact("irq.driver", "mlx5", device="0000:01:00.1")],
        [fact("irq.top_cpu_pct", 36.9, device="0000:01:00.0")],
        WARNING, "100% of 0000:01:00.1 interrupts land on CPU 11",
    ),
    "dcgm_diag_failure": (
        [fact("dcgm.diag.failed", "GPU Memory", device="GPU 0")],
        [fact("dcgm.diag.passed", "GPU Memory", device="GPU 0")],
        CRITICAL, "DCGM diagnostic GPU Memory failed",
    ),
}  # fmt: skip


@pytest.mark.parametrize("rule_id", sorted(FACT_CASES))
def test_fact_rule_fires_on_bad_facts_and_not_on_healthy_ones(rule_id: str) -> None:
    bad, healthy, severity, title = FACT_CASES[rule_id]
    [hit] = hits_for(Evidence(facts=tuple(bad)), rule_id)
    assert hit.severity == severity
    assert title in hit.title, hit.title
    assert "{" not in hit.title + hit.explanation and hit.explanation
    assert hits_for(Evidence(facts=tuple(healthy)), rule_id) == []


def test_pcie_gen_drop_of_an_idle_gpu_is_only_informational() -> None:
    facts = gpu(pcie_gen_current=1, pcie_gen_max=4, utilization_gpu_percent=0)
    [hit] = hits_for(Evidence(facts=tuple(facts)), "gpu_pcie_gen_downtrained")
    assert hit.severity == INFO


def test_expected_rate_can_come_from_upload_metadata() -> None:
    ev = Evidence(facts=tuple(port("mlx5_0", "ACTIVE", 200)), context={"expected_rate_gbps": 400})
    [hit] = hits_for(ev, "port_below_expected_rate")
    assert hit.evidence == {"rate_gbps": 200.0, "expected_gbps": 400.0}


def test_socket_use_without_any_sign_of_rdma_is_only_informational() -> None:
    ev = Evidence(facts=(fact("nccl.transports", "Socket", host="n1", device=""),))
    [hit] = hits_for(ev, "nccl_socket_fallback")
    assert hit.severity == INFO
    # the host has active RDMA ports (known from another upload): now it is a fault
    ev = Evidence(facts=ev.facts, context={"rdma_hosts": ["n1"]})
    assert hits_for(ev, "nccl_socket_fallback")[0].severity == CRITICAL


def test_socket_fallback_is_quiet_when_ib_was_disabled_on_purpose() -> None:
    ev = Evidence(
        facts=(
            fact("nccl.transports", "Socket", host="n1", device=""),
            fact("nccl.env.NCCL_IB_DISABLE", "1", host="n1", device=""),
        ),
        context={"expected_transport": "roce"},
    )
    assert hits_for(ev, "nccl_socket_fallback") == []


def test_version_mismatch_uses_peer_uploads_and_names_the_odd_host() -> None:
    mine = (fact("nccl.version", "2.21.5", host="c", device="", artifact_id=3),)
    peers = tuple(fact("nccl.version", "2.23.4", host=h, device="", artifact_id=2) for h in "ab")
    [hit] = hits_for(Evidence(facts=mine, peer_facts=peers), "nccl_version_mismatch")
    assert hit.host == "c" and "c" in hit.explanation and hit.artifact_ids == (2, 3)


def event(kind: str, **extra: object) -> EventRow:
    return EventRow(1, kind, "gpu-node-7", None, f"{kind} line", extra, T0, line=12)


EVENT_CASES = {
    "gpu_xid": (
        [event("xid", xid=79, device="0000:3b:00.0"), event("xid", xid=79, device="0000:3b:00.0")],
        [event("nccl_warn")],
        CRITICAL, "Xid 79 on gpu-node-7 GPU 0000:3b:00.0",
    ),
    "nccl_watchdog_timeout": (
        [event("watchdog_timeout", collective="ALLREDUCE", seq=1234, timeout_ms=600000)],
        [event("comm_init")],
        CRITICAL, "NCCL watchdog timeout in ALLREDUCE (seq 1234) on gpu-node-7",
    ),
}  # fmt: skip


@pytest.mark.parametrize("rule_id", sorted(EVENT_CASES))
def test_event_rule_fires_on_bad_events_and_not_on_others(rule_id: str) -> None:
    bad, healthy, severity, title = EVENT_CASES[rule_id]
    [hit] = hits_for(Evidence(events=tuple(bad)), rule_id)
    assert hit.severity == severity and title in hit.title, hit.title
    assert hit.evidence["events"] == len(bad)
    assert hits_for(Evidence(events=tuple(healthy)), rule_id) == []


def test_application_xids_are_informational() -> None:
    [hit] = hits_for(Evidence(events=(event("xid", xid=13, device="0"),)), "gpu_xid")
    assert hit.severity == INFO


def test_every_rule_is_covered_by_a_case_here() -> None:
    from tests.artifacts.fabric.test_host_config_rules import HOST_EVENT_CASES, HOST_FACT_CASES

    covered = set(COUNTER_CASES) | set(FACT_CASES) | set(EVENT_CASES) | {"pfc_storm_events_total"}
    covered |= set(HOST_FACT_CASES) | set(HOST_EVENT_CASES)
    from tests.baselines.limits.test_findings import LIMITS_RULE_IDS  # docs/efficiency.md

    covered |= LIMITS_RULE_IDS
    from tests.artifacts.fabric.test_failure_findings import FAILURE_RULES  # real + generated

    covered |= FAILURE_RULES
    assert covered == set(rules.RULES_BY_ID)


def test_rule_ids_are_unique_and_every_rule_links_a_topic() -> None:
    assert len(rules.RULES) == len(rules.RULES_BY_ID)
    assert all(r.kb and r.severity in rules.SEVERITY_RANK for r in rules.RULES)


def test_every_rule_is_in_the_docs_table() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "docs" / "fabric.md").read_text()
    missing = [r.id for r in rules.RULES if f"| `{r.id}` |" not in text]
    assert not missing, f"docs/fabric.md rules table lacks: {missing}"
