"""show_gids, mlnx_qos, Fabric Manager logs, sysctl and NCCL topology dumps: loaded into
facts and events (idempotently), and turned into the findings they should raise."""

from __future__ import annotations

import pytest

from artifacts.models import Finding, HostFact
from artifacts.parsing import artifact_parse
from tests.artifacts.fabric.conftest import evaluated, upload, upload_text
from tests.artifacts.fabric.parsers.test_mlnx_qos import LEGACY, LOSSLESS
from tests.artifacts.fabric.parsers.test_show_gids import TWO_RAILS
from tests.artifacts.fabric.parsers.test_sysctl import DUMP

pytestmark = pytest.mark.django_db


def facts(artifact, name: str) -> dict[tuple[str, str, int | None], str]:
    rows = HostFact.objects.filter(artifact=artifact, name=name)
    return {(f.host, f.device, f.port): f.value for f in rows}


def rules_of(artifact) -> list[tuple[str, str, str]]:
    return sorted(
        Finding.objects.filter(artifact=artifact).values_list("rule", "severity", "device")
    )


def test_fabric_manager_log_events_facts_and_findings() -> None:
    artifact = evaluated(upload("counters/gpud_nvidia_fabricmanager.log", host="hgx-3"))
    assert (artifact.kind, artifact.status) == ("fabric_manager", "parsed"), artifact.error
    [event] = artifact.log_events.all()
    assert (event.kind, event.host, event.line, event.extra["sxid"]) == (
        "fm_nvswitch_non_fatal", "hgx-3", 100, 12028
    )  # fmt: skip
    assert event.time.isoformat().startswith("2025-02-27T15:10:02")
    assert facts(artifact, "fm.multicast.setups") == {("hgx-3", "", None): "8"}
    assert facts(artifact, "fm.multicast.open_teams") == {("hgx-3", "", None): "1"}
    [finding] = Finding.objects.filter(artifact=artifact)
    assert finding.rule == "nvswitch_sxid" and finding.severity == "warning"
    assert finding.title == "NVSwitch error 12028 on hgx-3 (00000000:86:00.0)"
    assert finding.kb_slug == "nvlink-nvswitch-health"
    before = (artifact.host_facts.count(), artifact.log_events.count())
    artifact_parse(artifact_id=artifact.pk)
    assert (artifact.host_facts.count(), artifact.log_events.count()) == before


def test_show_gids_port_facts_and_the_rail_without_roce_v2() -> None:
    artifact = evaluated(upload_text("show_gids.txt", TWO_RAILS))
    assert artifact.kind == "show_gids"
    assert facts(artifact, "gid.roce_v2_ipv4_index") == {("gpu-node-07", "mlx5_0", 1): "3"}
    assert facts(artifact, "gid.v2_routable")[("gpu-node-07", "mlx5_0", 1)] == "1"
    assert rules_of(artifact) == [("roce_gid_v2_missing", "critical", "mlx5_1")]


def test_mlnx_qos_facts_and_findings() -> None:
    good = evaluated(upload_text("qos-good.txt", LOSSLESS))
    assert good.kind == "mlnx_qos"
    assert facts(good, "qos.trust") == {("gpu-node-07", "ens1f0np0", None): "dscp"}
    assert facts(good, "qos.pfc_enabled") == {("gpu-node-07", "ens1f0np0", None): "3"}
    assert facts(good, "qos.tc3") == {("gpu-node-07", "ens1f0np0", None): "ets 50% prio 3"}
    assert rules_of(good) == []
    bad = evaluated(upload_text("qos-legacy.txt", LEGACY, host="lab-1"))
    # eth2 trusts PCP with PFC off; the pasted second block (no prompt) is port1
    assert rules_of(bad) == [
        ("roce_pfc_off_on_roce_priority", "warning", "eth2"),
        ("roce_trust_pcp", "warning", "eth2"),
        ("roce_trust_pcp", "warning", "port1"),
    ]


def test_sysctl_notable_facts_and_findings() -> None:
    artifact = evaluated(upload_text("sysctl-a.txt", DUMP))
    assert artifact.kind == "sysctl"
    host_facts = {f.name: f for f in artifact.host_facts.all()}
    assert host_facts["sysctl.kernel.numa_balancing"].number == 1
    assert host_facts["sysctl.net.ipv4.tcp_rmem"].extra["numbers"] == [4096, 131072, 6291456]
    assert host_facts["sysctl.keys_read"].number == 23
    assert {f.host for f in host_facts.values()} == {"gpu-node-07"}
    assert sorted(r for r, _, _ in rules_of(artifact)) == [
        "sysctl_numa_balancing",
        "sysctl_rp_filter_strict",
        "sysctl_socket_buffers_small",
        "sysctl_swappiness",
        "sysctl_tcp_buffers_small",
    ]
    assert artifact.log_events.get(kind="tool_error").text.startswith("permission denied")


def test_nccl_topology_is_loaded_for_the_host_view_and_flags_the_asymmetry() -> None:
    artifact = evaluated(
        upload("nccl_debug/timez_NCCL_TOPO_DUMP_FILE_fault_nvlink_count1.xml", host="a100-2")
    )
    assert artifact.kind == "nccl_topology"
    assert facts(artifact, "topo.gpu.nvlinks") == {
        ("a100-2", "0000:17:00.0", None): "1", ("a100-2", "0000:65:00.0", None): "12"
    }  # fmt: skip
    assert facts(artifact, "topo.net.speed_gbps") == {
        ("a100-2", "mlx5_0", 1): "100", ("a100-2", "mlx5_1", 2): "100"
    }  # fmt: skip
    assert facts(artifact, "topo.gpu.pcie")[("a100-2", "0000:17:00.0", None)] == (
        "16.0 GT/s PCIe x16"
    )
    [finding] = Finding.objects.filter(artifact=artifact)
    assert (finding.rule, finding.device) == ("nvlink_topology_asymmetric", "0000:17:00.0")
    normal = evaluated(upload("nccl_debug/timez_NCCL_TOPO_DUMP_FILE_normal.xml", host="a100-3"))
    assert normal.host_facts.filter(name="topo.gpus").get().number == 2
    assert not Finding.objects.filter(artifact=normal).exists()


def test_host_page_shows_topology_and_log_events(viewer_client) -> None:
    evaluated(upload("nccl_debug/timez_NCCL_TOPO_DUMP_FILE_fault_nvlink_count1.xml", host="h7"))
    evaluated(upload("counters/gpud_nvidia_fabricmanager.log", host="h7"))
    page = viewer_client.get("/fabric/hosts/h7/").content.decode()
    topology = page.split('id="host-topology"')[1].split("</section>")[0]
    assert "0000:17:00.0" in topology and "mlx5_1" in topology and "16.0 GT/s PCIe x16" in topology
    events = page.split('id="host-events"')[1].split("</section>")[0]
    assert "Log events (1)" in events and "fm_nvswitch_non_fatal" in events
    assert "2025-02-27 15:10:02" in events
    assert "NVSwitch error 12028 on h7" in page and "NVLink count differs by direction" in page


NCCL_GID1 = (
    "gpu-node-07:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    "gpu-node-07:1234:1234 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 1.\n"
    "gpu-node-07:1234:1234 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; "
    "OOB ens1f0np0:10.110.0.33<0>\n"
)


def test_nccl_gid_index_is_checked_against_an_earlier_show_gids_upload() -> None:
    gids = evaluated(upload_text("show_gids.txt", TWO_RAILS))
    log = evaluated(upload_text("nccl.log", NCCL_GID1))
    assert log.kind == "nccl_debug"
    [finding] = Finding.objects.filter(artifact=log, rule="nccl_gid_index_wrong")
    assert finding.title == "NCCL_IB_GID_INDEX=1 is a RoCE v2 link-local GID on mlx5_0/1"
    assert (finding.severity, finding.host) == ("warning", "gpu-node-07")
    assert list(finding.related_artifacts.values_list("id", flat=True)) == [gids.pk]
    assert not Finding.objects.filter(artifact=gids, rule="nccl_gid_index_wrong").exists()


def test_ibnetdiscover_port_rates_per_host_and_the_cable_below_the_fabric_rate() -> None:
    from tests.artifacts.fabric.parsers.test_ibnetdiscover import DOWNTRAINED

    artifact = upload_text("fabric.topo", DOWNTRAINED)
    assert (artifact.kind, artifact.status) == ("ibnetdiscover", "parsed"), artifact.error
    assert facts(artifact, "ibnet.links") == {("", "", None): "3"}
    [(where, value)] = facts(artifact, "ibnet.link_below_common_rate").items()
    assert (where, value) == (("", "leaf-1 port 2", None), "2xNDR")
    before = artifact.host_facts.count()
    artifact_parse(artifact_id=artifact.pk)
    assert artifact.host_facts.count() == before


def test_nvidia_smi_p2p_facts_name_the_pairs_that_are_not_ok() -> None:
    text = (
        "$ nvidia-smi topo -p2p w\n\tGPU0\tGPU1\tGPU2\n"
        " GPU0\tX\tNS\tOK\n GPU1\tNS\tX\tOK\n GPU2\tOK\tOK\tX\n"
    )
    artifact = upload_text("p2p.txt", text)
    assert (artifact.kind, artifact.status) == ("nvidia_smi", "parsed"), artifact.error
    assert facts(artifact, "gpu.p2p_write") == {
        ("", "GPU0", None): "GPU1:NS",
        ("", "GPU1", None): "GPU0:NS",
        ("", "GPU2", None): "all OK",
    }


def test_superbench_monitor_readings_become_timed_snapshots_and_no_rates() -> None:
    from artifacts.models import CounterRate, CounterSnapshot
    from tests.samples import more_sample

    text = more_sample("counters/superbench_gpu_monitor.jsonl").read_text()
    artifact = evaluated(upload_text("monitor.jsonl", text, host="sb-node-1"))
    assert (artifact.kind, artifact.status) == ("superbench_monitor", "parsed"), artifact.error
    gpu0 = CounterSnapshot.objects.filter(artifact=artifact, device="GPU 0").order_by("taken_at")
    assert gpu0.count() == 5  # one per line, at the line's own time
    first, second = gpu0[0], gpu0[1]
    assert (first.host, first.time_source) == ("sb-node-1", CounterSnapshot.TimeSource.FILE)
    assert (second.taken_at - first.taken_at).total_seconds() == 11
    # levels (%, C, W, MiB, bytes/s) do not pair into rates; ECC totals may
    rated = set(CounterRate.objects.filter(after__artifact=artifact).values_list("unit", flat=True))
    assert rated <= {"count", "count/s"}


def test_ibdev2netdev_stores_each_ports_netdev() -> None:
    text = (
        "root@gpu-3:~# ibdev2netdev\n"
        "mlx5_0 port 1 ==> ibp12s0 (Up)\nmlx5_1 port 1 ==> ibp75s0 (Down)\n"
    )
    artifact = upload_text("ibdev2netdev.txt", text)
    assert (artifact.kind, artifact.status) == ("ib_status", "parsed"), artifact.error
    assert facts(artifact, "port.netdev") == {
        ("gpu-3", "mlx5_0", 1): "ibp12s0",
        ("gpu-3", "mlx5_1", 1): "ibp75s0",
    }
    assert facts(artifact, "port.state")[("gpu-3", "mlx5_1", 1)] == "DOWN"
