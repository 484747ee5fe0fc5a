"""Findings: a large-message run below its share of the peak; links below their best."""

from __future__ import annotations

import pytest

from artifacts.fabric import rules
from artifacts.models import Finding
from baselines.limits.findings import efficiency_findings_refresh
from baselines.models import HardwareProfile
from tests.baselines.limits.test_golden_efficiency import eight_rail_profile, load

# The rules of docs/efficiency.md, each with a case below (tests/artifacts/fabric/test_rules.py
# checks that every rule has one somewhere).
LIMITS_RULE_IDS = frozenset(
    {"run_below_peak", "link_width_below_host", "link_speed_below_host", "port_below_adapter_max"}
)


@pytest.mark.django_db
def test_a_run_below_the_threshold_is_a_finding_with_its_bottleneck_and_checks():
    eight_rail_profile()
    artifact = load(
        "nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log",
        metadata={"profile": "h100-ib-8x400"},
    )
    found = Finding.objects.filter(artifact=artifact, rule="run_below_peak")
    # all_reduce 80.1 %, all_gather 81.1 %, reduce_scatter 80.8 %, alltoall 91.8 %: above 70 %.
    # sendrecv: best large size (512 MiB-8 GiB) 15.23 / 50 = 30.46 -> 30.5 %: below 70 %,
    # and below half of it (35 %): critical.
    assert [f.device for f in found] == ["run 4"]
    finding = found.get()
    assert finding.severity == "critical"
    assert finding.title == "sendrecv at 30.5% of its 50 GB/s peak (network)"
    assert "NCCL_IB_HCA" in finding.explanation and "links trained down" in finding.explanation
    assert finding.kb_slug == "infiniband-link-health"
    assert finding.evidence["peak_busbw_gbps"] == 50.0

    # A stricter profile threshold adds the others; re-evaluating keeps the acknowledgement.
    finding.acknowledgement_note = "known: one QP per peer"
    finding.save()
    profile = HardwareProfile.objects.get(slug="h100-ib-8x400")
    # best large sizes: all_reduce 344.87 at 1 GiB = 86.2 %, the others as above: all < 95 %
    profile.limits = {"efficiency_threshold_pct": 95}
    profile.save()
    efficiency_findings_refresh(runs=artifact.runs.all())
    devices = sorted(found.values_list("device", flat=True))
    assert devices == ["run 0", "run 1", "run 2", "run 3", "run 4"]
    assert found.get(device="run 4").acknowledgement_note == "known: one QP per peer"

    # Back to the default: the findings that no longer hold are gone.
    profile.limits = {}
    profile.save()
    efficiency_findings_refresh(runs=artifact.runs.all())
    assert list(found.values_list("device", flat=True)) == ["run 4"]


def fact(host, device, port, name, value, number=None):  # type: ignore[no-untyped-def]
    return rules.FactRow(1, host, device, port, name, str(value), number, {}, None)


def test_mlxlink_links_narrower_or_slower_than_the_hosts_best_are_flagged():
    facts = []
    for i, (speed, width) in enumerate([("IB-NDR", 4), ("IB-NDR", 2), ("IB-HDR", 4)]):
        dev = f"/dev/mst/mt4129_pciconf{i}"
        facts += [
            fact("h1", dev, 1, "link.state", "ACTIVE"),
            fact("h1", dev, 1, "link.speed", speed),
            fact("h1", dev, 1, "link.width", width, float(width)),
        ]
    # A B200 GPU's NVLink port at 2x is not a NIC link.
    facts += [
        fact("h1", "gpu7", 1, "link.speed", "NVLink-XDR"),
        fact("h1", "gpu7", 1, "link.width", 2, 2.0),
    ]
    hits = rules.evaluate(rules.Evidence(facts=tuple(facts)))
    width = [h for h in hits if h.rule == "link_width_below_host"]
    speed = [h for h in hits if h.rule == "link_speed_below_host"]
    assert [h.device for h in width] == ["/dev/mst/mt4129_pciconf1"]
    assert width[0].title == "Link /dev/mst/mt4129_pciconf1 runs 2x wide, expected 4x"
    # NDR 2x = 200 Gb/s and HDR 4x = 200 Gb/s, against NDR 4x = 400 Gb/s
    assert sorted(h.device for h in speed) == [
        "/dev/mst/mt4129_pciconf1",
        "/dev/mst/mt4129_pciconf2",
    ]


def test_ibstat_ports_below_their_adapters_maximum_are_flagged():
    facts = [
        fact("h1", "mlx5_0", None, "hca.type", "MT4129"),
        fact("h1", "mlx5_0", 1, "port.state", "ACTIVE"),
        fact("h1", "mlx5_0", 1, "port.rate_gbps", 400, 400.0),
        fact("h1", "mlx5_1", None, "hca.type", "MT4129"),
        fact("h1", "mlx5_1", 1, "port.state", "ACTIVE"),
        fact("h1", "mlx5_1", 1, "port.rate_gbps", 200, 200.0),
        fact("h2", "mlx5_0", None, "hca.type", "MT4129"),
        fact("h2", "mlx5_0", 1, "port.state", "ACTIVE"),
        fact("h2", "mlx5_0", 1, "port.rate_gbps", 200, 200.0),
    ]
    hits = [
        h for h in rules.evaluate(rules.Evidence(facts=tuple(facts)))
        if h.rule == "port_below_adapter_max"
    ]  # fmt: skip
    # h1: a ConnectX-7 port at 200 beside one at 400 trained down; h2's only port at 200 is
    # how that host was built (no finding). ConnectX-7 product brief: 400 Gb/s.
    assert [(h.host, h.device, h.severity) for h in hits] == [("h1", "mlx5_1", "warning")]
    assert hits[0].title == "Port mlx5_1/1 at 200 Gb/s, its ConnectX-7 can do 400"


NCCL_LOG = b"""cnode3-002:123:456 [0] NCCL INFO NCCL version 2.29.2+cuda12.4
cnode3-002:123:456 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB \
[3]mlx5_3:1/IB ; OOB eth0:10.0.0.2<0>
cnode3-002:123:456 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'
"""


@pytest.mark.django_db
def test_the_finding_says_what_the_nccl_log_already_shows():
    from tests.baselines.limits.test_link_evidence import upload

    eight_rail_profile()
    artifact = load(
        "nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log",
        metadata={"profile": "h100-ib-8x400"},
    )
    upload(NCCL_LOG, "nccl_debug.log")  # re-files the runs of its host, findings included
    finding = Finding.objects.get(artifact=artifact, rule="run_below_peak")
    assert "NCCL's log on cnode3-002 uses 4 of the node's 8 NICs" in finding.explanation
    assert "GPUDirect RDMA is off in the NCCL log on cnode3-002" in finding.explanation
