"""The host-side kinds (kernel log, DCGM, perftest, mlxconfig, NUMA, IRQs, perf, eBPF):
loaded idempotently and turned into the findings they should raise."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifacts.models import CounterSample, Finding, HostFact
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from tests.artifacts.fabric.conftest import evaluated, upload

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

SAMPLES = {
    "dmesg": "counters/gpud_dmesg_with_NVRM_Xid_119.log",
    "dcgm": "dcgm/mlengineering_dcgmi_diag_r2_gpu_memory_thermal_fail_FRAGMENT.txt",
    "mlxconfig": "mlxconfig/mailinglist_cx5ex_mcx516a_cda_mlxconfig_q_DEQUOTED.txt",
    "numa": "numa/ik_llama_pr278_dual_xeon6980p_numastat_m_p_llama_server_EXCERPT.txt",
    "proc_interrupts": (
        "interrupts/jordan_100gbe_lab_ryzen9900x_cx5_proc_interrupts_grep_mlx_EXCERPT.txt"
    ),
    "perf_stat": "counters/perf_stat_system_wide_per_socket_2S_224cpu.txt",
    "ebpf_hist": "ebpf/bpftrace_runqlat_example.txt",
}


def rows(artifact) -> tuple[int, int, int]:
    return (
        HostFact.objects.filter(artifact=artifact).count(),
        CounterSample.objects.filter(snapshot__artifact=artifact).count(),
        artifact.log_events.count(),
    )


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_kind_loads_and_reloads_the_same_rows(kind: str) -> None:
    artifact = upload(SAMPLES[kind], host="node-x")
    assert (artifact.kind, artifact.status) == (kind, "parsed"), artifact.error
    first = rows(artifact)
    assert sum(first) > 0
    artifact_parse(artifact_id=artifact.pk)
    assert rows(artifact) == first


def test_xid_lines_become_one_critical_finding_per_gpu_and_code() -> None:
    artifact = evaluated(upload(SAMPLES["dmesg"], host="xe9680-04"))
    assert artifact.log_events.filter(kind="xid").count() == 5
    [finding] = Finding.objects.filter(artifact=artifact, rule="gpu_xid")
    assert finding.title == "Xid 119 on xe9680-04 GPU 0000:9b:00"
    assert finding.severity == "critical" and finding.evidence["events"] == 5
    assert "5 time(s)" in finding.explanation
    assert finding.observed_at.isoformat().startswith("2025-02-23T16:24:18")


def test_dcgm_failure_becomes_a_finding_on_the_gpu() -> None:
    artifact = evaluated(upload(SAMPLES["dcgm"], host="gpu-7"))
    [finding] = Finding.objects.filter(artifact=artifact, rule="dcgm_diag_failure")
    assert (finding.device, finding.severity) == ("GPU 0", "critical")
    assert finding.title == "DCGM diagnostic GPU Memory failed"
    assert artifact.log_events.get(kind="dcgm_warning").text.startswith("GPU 0 Thermal")


def test_nic_interrupts_on_one_cpu_are_a_finding() -> None:
    artifact = evaluated(upload(SAMPLES["proc_interrupts"]))
    [finding] = Finding.objects.filter(artifact=artifact, rule="nic_irqs_on_one_cpu")
    assert finding.title == "100% of 0000:01:00.1 interrupts land on CPU 11"
    assert finding.host == "crow"


def test_perftest_best_bandwidth_is_a_host_fact() -> None:
    path = FIXTURES / "perftest" / "ib_write_bw_roce_4qp_report_gbits.txt"
    with path.open("rb") as stream:
        artifact = artifact_ingest(stream=stream, name=path.name, enqueue=False).artifact
    artifact = artifact_parse(artifact_id=artifact.pk)
    fact = HostFact.objects.get(artifact=artifact, name="perftest.ib_write_bw.bw_avg_gbps")
    assert (fact.host, fact.device, fact.number) == ("gpu-node-03", "mlx5_3", 391.92)
    assert fact.extra["bytes"] == 8388608


def test_mlxconfig_settings_are_facts_of_the_nic() -> None:
    artifact = upload(SAMPLES["mlxconfig"])
    fact = HostFact.objects.get(artifact=artifact, name="mlxconfig.ROCE_CC_ALGORITHM_P1")
    assert (fact.host, fact.device, fact.value) == (
        "daytona3",
        "/dev/mst/mt4121_pciconf0",
        "ECN(0)",
    )
