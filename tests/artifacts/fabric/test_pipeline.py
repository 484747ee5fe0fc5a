"""Loaders, pairing across uploads and the findings pass, against the real database."""

from __future__ import annotations

from datetime import timedelta

import pytest

from artifacts.fabric.loaders import cuda_version_text
from artifacts.fabric.services import enqueue_findings, fabric_refresh, finding_acknowledge
from artifacts.models import CounterRate, CounterSample, CounterSnapshot, Finding, HostFact
from artifacts.parsing import artifact_parse
from tests.artifacts.fabric.conftest import evaluated, upload, upload_text

pytestmark = pytest.mark.django_db

BYTEPS = "ethtool_rdma/byteps_issue179_mlx5_ethtool_S_grep_prio_before_after_EXCERPT.txt"
IBSTAT_DOWN = "counters/gpud_ibstat_h100_some_ports_down.txt"
SYSFS = "counters/gpud_sysfs_infiniband_h100_9hca_grep_dump.txt"
NCCL_ROCE = "nccl_debug/ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log"
NCCL_SOCKET = "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log"


def counts(artifact) -> tuple[int, ...]:
    return (
        CounterSnapshot.objects.filter(artifact=artifact).count(),
        CounterSample.objects.filter(snapshot__artifact=artifact).count(),
        HostFact.objects.filter(artifact=artifact).count(),
        artifact.log_events.count(),
    )


def test_ethtool_before_after_becomes_two_snapshots_and_deltas() -> None:
    artifact = upload(BYTEPS, host="worker-1", metadata={"snapshot_interval_s": 30})
    before, after = CounterSnapshot.objects.filter(artifact=artifact).order_by("index")
    assert (before.label, after.label) == ("Before benchmarking", "After")
    assert (before.host, before.device) == ("worker-1", "enp178s0f0")
    assert after.taken_at - before.taken_at == timedelta(seconds=30)
    assert before.time_source == CounterSnapshot.TimeSource.UPLOAD
    assert before.samples.count() == 32 and after.samples.count() == 19
    evaluated(artifact)
    row = CounterRate.objects.get(after=after, counter="rx_prio0_packets")
    assert row.delta == 420000128479 - 419873392068
    assert row.value == pytest.approx(row.delta / 30) and row.flag == ""


def test_reparse_replaces_fabric_rows_instead_of_adding_to_them() -> None:
    artifact = upload(SYSFS, host="h100-a")
    first = counts(artifact)
    assert first[0] == 9 and first[1] == 423 and first[2] > 0
    artifact_parse(artifact_id=artifact.pk)
    assert counts(artifact) == first
    evaluated(artifact)
    evaluated(artifact)
    assert Finding.objects.filter(artifact=artifact).count() == 0  # a healthy node


def test_file_time_wins_over_upload_metadata() -> None:
    artifact = upload(
        "counters/gpud_nvidia-smi_q_560.35.03.txt",
        host="gpu-a",
        metadata={"captured_at": "2020-01-01"},
    )
    snapshot = CounterSnapshot.objects.get(artifact=artifact)
    assert snapshot.time_source == "file" and snapshot.taken_at.isoformat().startswith("2024-10-18")
    assert HostFact.objects.get(artifact=artifact, name="gpu.pcie_gen_max").number == 3


def test_bare_hw_counters_list_is_named_by_the_upload_file_name() -> None:
    text = "".join(
        f"{name}:{value}\n"
        for name, value in [("out_of_sequence", 5), ("packet_seq_err", 1), ("np_cnp_sent", 9),
                            ("rp_cnp_handled", 4), ("local_ack_timeout_err", 0)]
    )  # fmt: skip
    artifact = upload_text("mlx5_4_port1_hw_counters.txt", text, host="n9")
    assert artifact.kind == "rdma_counters", artifact.error
    snapshot = CounterSnapshot.objects.get(artifact=artifact)
    assert (snapshot.device, snapshot.port) == ("mlx5_4", 1)


def test_ports_down_become_critical_findings_with_their_evidence() -> None:
    artifact = evaluated(upload(IBSTAT_DOWN, host="h100-b"))
    down = Finding.objects.filter(artifact=artifact, rule="port_down").order_by("device")
    assert [f.title for f in down] == [
        "Port mlx5_2/1 is DOWN", "Port mlx5_7/1 is DOWN", "Port mlx5_8/1 is DOWN"
    ]  # fmt: skip
    assert all(f.severity == "critical" and f.host == "h100-b" for f in down)
    assert down[0].evidence == {"state": "DOWN", "phys_state": "Disabled"}


def test_nccl_log_facts_events_and_socket_fallback() -> None:
    artifact = evaluated(upload(NCCL_SOCKET))
    assert HostFact.objects.get(artifact=artifact, name="nccl.transports").value == "Socket"
    # "cudaDriverVersion 12020": the CUDA version the driver supports, as nvidia-smi says it
    cuda = HostFact.objects.get(artifact=artifact, name="gpu.cuda_version")
    assert (cuda.host, cuda.value) == ("ljm", "12.2")
    [finding] = Finding.objects.filter(artifact=artifact, rule="nccl_socket_fallback")
    assert finding.host == "ljm" and finding.severity == "info"


def test_nccl_roce_log_loads_versions_env_and_events() -> None:
    artifact = evaluated(upload(NCCL_ROCE, kind="nccl_debug"))
    facts = HostFact.objects.filter(artifact=artifact, name="nccl.version")
    versions = set(facts.values_list("value", flat=True))
    assert versions == {"2.26.6"}
    assert HostFact.objects.filter(artifact=artifact, name__startswith="nccl.env.").exists()
    gdr = Finding.objects.filter(artifact=artifact, rule="nccl_gdr_disabled").order_by("host")
    assert [f.title for f in gdr] == [
        "GPUDirect RDMA disabled on gdr114", "GPUDirect RDMA disabled on gdr116"
    ]  # fmt: skip
    assert not Finding.objects.filter(artifact=artifact, rule="nccl_version_mismatch").exists()


def test_two_uploads_of_one_nic_pair_into_rates_and_a_pause_storm(pause_storm_pair) -> None:
    first, second = pause_storm_pair
    assert not CounterRate.objects.filter(after__artifact=first).exists()
    rate = CounterRate.objects.get(after__artifact=second, counter="rx_prio3_pause")
    assert (rate.delta, rate.dt_seconds, rate.value) == (1_200_000, 60, 20_000)
    share = CounterRate.objects.get(counter="rx_prio3_pause_duration_pct")
    assert share.derived and share.value == pytest.approx(20.0)
    storm = Finding.objects.get(artifact=second, rule="pfc_pause_storm")
    assert storm.title == "PFC pause storm on eth3 priority 3"
    assert storm.severity == "critical" and storm.host == "gpu-node-07"
    assert list(storm.related_artifacts.all()) == [first]
    assert storm.evidence["value"] == 20_000 and storm.kb_slug
    assert not Finding.objects.filter(rule="buffer_drops").exists()  # drops did not move


def test_an_upload_landing_between_two_others_repairs_the_later_pair(pause_storm_pair) -> None:
    first, second = pause_storm_pair
    middle = upload_text(
        "eth3-middle.txt",
        "root@gpu-node-07:~# ethtool -S eth3\n     rx_prio3_pause: 1001000\n"
        "     rx_discards_phy: 5\n",
        metadata={"captured_at": "2025-03-01T10:00:50Z"},
    )
    evaluated(middle)
    late = CounterRate.objects.get(after__artifact=second, counter="rx_prio3_pause")
    assert late.before.artifact_id == middle.pk and late.value == 20_000  # 200000 in 10 s
    early = CounterRate.objects.get(after__artifact=middle, counter="rx_prio3_pause")
    assert early.before.artifact_id == first.pk and early.dt_seconds == 50


def test_reevaluation_keeps_the_acknowledgement(pause_storm_pair, editor) -> None:
    _, second = pause_storm_pair
    storm = Finding.objects.get(artifact=second, rule="pfc_pause_storm")
    finding_acknowledge(finding=storm, user=editor, note="known: switch maintenance")
    fabric_refresh(artifact_id=second.pk)
    again = Finding.objects.get(artifact=second, rule="pfc_pause_storm")
    assert again.pk == storm.pk and again.acknowledged_by == editor
    assert again.acknowledgement_note == "known: switch maintenance"


def test_a_finding_that_no_longer_fires_is_removed(pause_storm_pair) -> None:
    _, second = pause_storm_pair
    CounterRate.objects.filter(after__artifact=second).update(value=1.0)
    from artifacts.fabric.findings import evaluate_artifact

    evaluate_artifact(second)
    assert not Finding.objects.filter(artifact=second, rule="pfc_pause_storm").exists()


def test_version_mismatch_across_uploads_of_one_job(db) -> None:
    def log(host: str, version: str) -> str:
        return f"{host}:100:100 [0] NCCL INFO NCCL version {version}+cuda12.4\n"

    for host, version in [("n1", "2.21.5"), ("n2", "2.21.5"), ("n3", "2.19.3")]:
        last = evaluated(upload_text(f"{host}.log", log(host, version), label="job-42"))
    finding = Finding.objects.get(rule="nccl_version_mismatch")
    assert finding.artifact_id == last.pk and finding.host == "n3"
    assert finding.related_artifacts.count() == 2


def test_parse_enqueues_the_findings_task(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr("artifacts.parsing.enqueue_findings", lambda a: calls.append(a.pk))
    artifact = upload(IBSTAT_DOWN)
    assert calls == [artifact.pk]


def test_enqueue_runs_the_task_on_commit(eager_tasks, django_capture_on_commit_callbacks) -> None:
    artifact = upload(IBSTAT_DOWN, host="h")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        enqueue_findings(artifact)
    assert len(callbacks) == 1
    assert Finding.objects.filter(artifact=artifact, rule="port_down").count() == 3


def test_kinds_without_fabric_evidence_enqueue_nothing(django_capture_on_commit_callbacks) -> None:
    artifact = upload_text("notes.txt", "just some notes\n")
    assert artifact.kind == "other"
    with django_capture_on_commit_callbacks() as callbacks:
        enqueue_findings(artifact)
    assert callbacks == []


def test_nccl_tests_runs_get_a_findings_pass(django_capture_on_commit_callbacks) -> None:
    """Failed, truncated and out-of-bounds runs are findings (failure_checks.py)."""
    artifact = upload("nccl_tests/xxrjun_pair_N2_G1_ok.log")
    with django_capture_on_commit_callbacks() as callbacks:
        enqueue_findings(artifact)
    assert len(callbacks) == 1


BARE_ETHTOOL = "NIC statistics:\n     rx_prio3_pause: {n}\n     rx_discards_phy: 0\n"


def test_a_bare_paste_takes_its_device_from_the_file_name_or_the_metadata() -> None:
    named = upload_text("gpu07-ens1f0np0-before.txt", BARE_ETHTOOL.format(n=1), host="gpu07")
    told = upload_text("paste.txt", BARE_ETHTOOL.format(n=2), metadata={"device": "eth3"})
    plain = upload_text("paste-2.txt", BARE_ETHTOOL.format(n=3))
    device = {a.pk: CounterSnapshot.objects.get(artifact=a).device for a in (named, told, plain)}
    assert device == {named.pk: "ens1f0np0", told.pk: "eth3", plain.pk: ""}


@pytest.mark.parametrize(
    ("encoded", "text"), [(12040, "12.4"), (12020, "12.2"), (13000, "13.0"), (11080, "11.8")]
)
def test_cuda_integer_versions_read_as_people_write_them(encoded, text) -> None:
    assert cuda_version_text(encoded) == text


def test_no_or_nonsense_cuda_version_is_no_fact() -> None:
    assert cuda_version_text(None) is None and cuda_version_text(0) is None


def test_ethtool_link_settings_become_link_facts_of_the_host() -> None:
    text = (
        "root@gpu-node-07:~# ethtool eth3\nSettings for eth3:\n\tSpeed: 200000Mb/s\n"
        "\tDuplex: Full\n\tPHYAD: 0\n\tLink detected: yes\n"
    )
    artifact = upload_text("eth3-settings.txt", text)
    assert artifact.kind == "ethtool_stats" and artifact.status == "parsed"
    facts = {
        f.name: (f.host, f.device, f.value, f.number)
        for f in HostFact.objects.filter(artifact=artifact, name__startswith="ethtool.")
    }
    assert facts["ethtool.speed_gbps"] == ("gpu-node-07", "eth3", "200", 200.0)
    assert facts["ethtool.link_detected"][2] == "true"
    assert facts["ethtool.duplex"][2] == "Full"


TOPO = "counters/nvidia-smi_topo_m_8gpu_NV18_8nic_sglang_env.txt"


def test_topo_matrix_gives_each_gpu_its_nearest_nic_and_flags_a_far_one() -> None:
    from tests.samples import sample

    healthy = evaluated(upload(TOPO, host="hgx-1"))
    nearest = dict(
        HostFact.objects.filter(artifact=healthy, name="gpu.nearest_nic").values_list(
            "device", "value"
        )
    )
    assert nearest == {f"GPU{i}": f"mlx5_{i}" for i in range(8)}
    assert not Finding.objects.filter(artifact=healthy, rule="gpu_nic_far").exists()
    # the same board with GPU3's NIC moved to the other socket's root complex
    lines = sample(TOPO).read_text().splitlines()
    lines[4] = lines[4].replace("PIX", "SYS", 1)  # GPU3's row
    far = evaluated(upload_text("topo-moved.txt", "\n".join(lines) + "\n", host="hgx-2"))
    [finding] = Finding.objects.filter(artifact=far, rule="gpu_nic_far")
    assert (finding.device, finding.host) == ("GPU3", "hgx-2")
    assert finding.title == "GPU3's nearest NIC is mlx5_0 via NODE on hgx-2"
