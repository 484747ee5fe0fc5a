"""A link that came up below its rate, in ibstat or mlxlink of a host, lowers that host's
runs' network peak; the pure model's other bounds (PCIe, GPUs per node, NVLink links)."""

from __future__ import annotations

import io

import pytest

from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from baselines.limits.reads import Unavailable, run_efficiency
from baselines.services import artifact_evaluate
from hardware.links import LinkFact, host_links
from hardware.model import ProfileSpec, Topology, Unknown, peak_for, resolve_limits
from tests.baselines.limits.test_golden_efficiency import eight_rail_profile, load

HOST = "cnode3-005"


def ibstat(rates: list[int], *, down: int | None = None) -> bytes:
    """ibstat of eight ConnectX-7 rails with these rates, and a 100G management port."""
    blocks = []
    for i, rate in enumerate(rates):
        state = "Down" if i == down else "Active"
        blocks.append(
            f"CA 'mlx5_{i}'\n\tCA type: MT4129\n\tNumber of ports: 1\n"
            f"\tFirmware version: 28.39.1002\n\tPort 1:\n\t\tState: {state}\n"
            f"\t\tPhysical state: LinkUp\n\t\tRate: {rate}\n\t\tLink layer: InfiniBand\n"
        )
    blocks.append(
        "CA 'mlx5_8'\n\tCA type: MT4125\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n"
        "\t\tPhysical state: LinkUp\n\t\tRate: 100\n\t\tLink layer: Ethernet\n"
    )
    return "".join(blocks).encode()


MLXLINK_HALF_WIDTH = b"""root@cnode3-005:~# mlxlink -d /dev/mst/mt4129_pciconf3

Operational Info
----------------
State                           : Active
Physical state                  : LinkUp
Speed                           : IB-NDR
Width                           : 2x
FEC                             : Standard_RS-FEC - (544,514)

Troubleshooting Info
--------------------
Status Opcode                   : 0
Recommendation                  : No issue was observed.
"""


def upload(content: bytes, name: str) -> None:
    outcome = artifact_ingest(
        stream=io.BytesIO(content), name=name, label="golden", host=HOST, enqueue=False
    )
    artifact = artifact_parse(artifact_id=outcome.artifact.pk)
    assert artifact.status == "parsed", artifact.error
    artifact_evaluate(artifact_id=artifact.pk, notify=False)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "name"),
    [
        (ibstat([400, 400, 400, 200, 400, 400, 400, 400]), "ibstat.txt"),
        (MLXLINK_HALF_WIDTH, "mlxlink.txt"),
    ],
)
def test_a_half_rate_link_lowers_the_network_peak_of_that_hosts_runs(content, name):  # type: ignore[no-untyped-def]
    eight_rail_profile()
    artifact = load(
        "nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log",
        metadata={"profile": "h100-ib-8x400"},
    )
    run = artifact.runs.get(collective="all_reduce")
    before = run_efficiency(run)
    assert not isinstance(before, Unavailable) and before.peak.peak_busbw_gbps == 400.0
    upload(content, name)
    after = run_efficiency(run)
    assert not isinstance(after, Unavailable)
    # One rail at 200 Gb/s (ibstat Rate 200; mlxlink NDR at 2x width = 2 x 100 Gb/s): NCCL
    # stripes channels evenly, so all 8 rails wait for it: 8 x 200 Gb/s / 8 = 200 GB/s.
    assert (after.peak.bottleneck, after.peak.peak_busbw_gbps) == ("network", 200.0)
    network = after.to_json()["model"][f"node_network_gbps.{HOST}"]
    assert network["value"] == 200.0 and "artifact #" in network["source"]
    assert any(HOST in note and "200" in note for note in after.peak.notes)


def test_a_down_rail_is_a_missing_rail():
    hosts = host_links(
        LinkFact("h1", f"mlx5_{i}", 1, name, value, number, "ib_status artifact #1")
        for i in range(8)
        for name, value, number in (
            ("port.rate_gbps", "400", 400.0),
            ("port.state", "DOWN" if i == 2 else "ACTIVE", None),
        )
    )
    limits = resolve_limits(
        ProfileSpec(slug="p", gpu_model="H100", nics_per_node=8, nic_speed_gbit=400),
        gpu_name="H100",
        hosts=hosts,
    )
    # 7 live rails x 400 Gb/s / 8 = 350 GB/s
    assert limits.node_network["h1"].value == 350.0
    peak = peak_for("all_gather", Topology(16, 2, 8, ("h1", "h2")), limits)
    assert not isinstance(peak, Unknown) and peak.peak_busbw_gbps == 350.0


def test_a_gpu_link_trained_to_x8_makes_pcie_the_bottleneck():
    # nvidia-smi: a GPU at Gen5 x8 = 8 x 3.938 = 31.504 GB/s < its 50 GB/s rail:
    # 8 rails x 31.504 = 252.032 GB/s per node.
    facts = [
        LinkFact("h1", "0000:1b:00.0", None, "gpu.pcie_gen_max", "5", 5.0, "nvidia_smi #2"),
        LinkFact("h1", "0000:1b:00.0", None, "gpu.pcie_width_current", "8", 8.0, "nvidia_smi #2"),
    ]
    limits = resolve_limits(
        ProfileSpec(slug="p", gpu_model="H100", nics_per_node=8, nic_speed_gbit=400),
        gpu_name="H100",
        hosts=host_links(facts),
    )
    peak = peak_for("all_reduce", Topology(16, 2, 8, ("h1", "h2")), limits)
    assert not isinstance(peak, Unknown)
    assert (peak.bottleneck, peak.peak_busbw_gbps) == ("pcie", 252.032)


def test_a_job_on_half_the_gpus_reaches_half_the_rails_and_gpus_without_nvlink_use_pcie():
    spec = ProfileSpec(
        slug="p", gpu_model="H100", gpus_per_node=8, nics_per_node=8, nic_speed_gbit=400
    )
    limits = resolve_limits(spec, gpu_name="NVIDIA H100 80GB HBM3")
    peak = peak_for("all_reduce", Topology(8, 2, 4, ("a", "b")), limits)
    # 4 GPUs per node reach 4 of 8 NICs: 4 x 400 / 8 = 200 GB/s
    assert not isinstance(peak, Unknown) and peak.peak_busbw_gbps == 200.0
    pcie = resolve_limits(ProfileSpec(slug="q"), gpu_name="NVIDIA H100 PCIe")
    peak = peak_for("all_reduce", Topology(2, 1, 2), pcie)
    # H100 PCIe card: Gen5 x16 = 16 x 3.938 = 63.008 GB/s
    assert not isinstance(peak, Unknown)
    assert (peak.bottleneck, peak.peak_busbw_gbps) == ("pcie", 63.008)
    assert isinstance(peak_for("all_reduce", Topology(1, 1, 1), limits), Unknown)


def test_fewer_active_nvlinks_lower_the_scale_up_peak():
    facts = [
        LinkFact("h1", "GPU 3", link, "nvlink.active", str(link < 12).lower(), None, "smi #5")
        for link in range(18)
    ]
    limits = resolve_limits(ProfileSpec(slug="p"), gpu_name="H100", hosts=host_links(facts))
    peak = peak_for("all_gather", Topology(8, 1, 8, ("h1",)), limits)
    # 12 active links x 25 GB/s = 300 GB/s
    assert not isinstance(peak, Unknown) and peak.peak_busbw_gbps == 300.0


def test_ethtool_link_speed_is_a_rail_and_a_slow_one_paces_the_others():
    # `ethtool ethN` of 8 RoCE rails, one negotiated at 200 Gb/s, plus the 25 Gb/s
    # management port (not a rail: under half the fastest) and a port without link
    rows = [("ethtool.speed_gbps", "400", 400.0), ("ethtool.link_detected", "true", None)]
    facts = [
        LinkFact("h1", f"eth{i}", None, name, value, number, "ethtool_stats artifact #4")
        for i in range(8)
        for name, value, number in rows
    ]
    facts = [f for f in facts if not (f.device == "eth5" and f.name == "ethtool.speed_gbps")]
    source = "ethtool_stats artifact #4"
    facts.append(LinkFact("h1", "eth5", None, "ethtool.speed_gbps", "200", 200.0, source))
    facts.append(LinkFact("h1", "eno1", None, "ethtool.speed_gbps", "25", 25.0, source))
    hosts = host_links(facts)
    assert {p.device for p in hosts["h1"].families["ethtool"]} >= {"eth0", "eth5", "eno1"}
    limits = resolve_limits(
        ProfileSpec(slug="p", gpu_model="H100", nics_per_node=8, nic_speed_gbit=400),
        gpu_name="H100",
        hosts=hosts,
    )
    # 8 rails x 200 Gb/s / 8 = 200 GB/s; eno1 is not counted
    assert limits.node_network["h1"].value == 200.0


def test_a_port_without_link_in_ethtool_is_not_a_live_rail():
    facts = [
        LinkFact("h1", "eth0", None, "ethtool.speed_gbps", "400", 400.0, "ethtool #1"),
        LinkFact("h1", "eth0", None, "ethtool.link_detected", "true", None, "ethtool #1"),
        LinkFact("h1", "eth1", None, "ethtool.link_detected", "false", None, "ethtool #1"),
    ]
    ports = {p.device: p for p in host_links(facts)["h1"].families["ethtool"]}
    assert ports["eth0"].active and ports["eth0"].gbit == 400.0
    assert not ports["eth1"].active and ports["eth1"].gbit is None
