"""Nsight loaders: parse results become rows, once per parse, whatever was there before."""

from __future__ import annotations

import math

import pytest

from artifacts.models import (
    Artifact,
    NcuKernel,
    NsightApiStat,
    NsightKernelStat,
    NsightMemStat,
    NsightRange,
    NsightReport,
)
from artifacts.nsight.loaders import load_ncu, load_nsys
from artifacts.nsight.parsers.ncu.common import NcuKernel as ParsedKernel
from artifacts.nsight.parsers.ncu.common import NcuMetric
from artifacts.nsight.parsers.ncu.csv import NcuCsvResult
from artifacts.parsing import artifact_parse
from tests.artifacts.nsight.helpers import (
    NCU_TEXT,
    NCU_TORCH,
    NO_CUDA,
    REP,
    RTX3060,
    STATS_TORCH,
    parsed,
    parsed_path,
)
from tests.artifacts.nsight.parsers import nsys_synthetic

pytestmark = pytest.mark.django_db


def test_sqlite_export_becomes_a_report_and_summary_rows():
    artifact = parsed(RTX3060)
    assert artifact.status == Artifact.Status.PARSED and artifact.kind == "nsys_sqlite"
    report = NsightReport.objects.get(artifact=artifact)
    assert report.pk == artifact.pk
    assert (report.nsys_version, report.driver_version, report.cuda_driver_version) == (
        "2025.5.2.266",
        "591.44",
        "13.1",
    )
    assert report.gpus[0]["name"] == "NVIDIA GeForce RTX 3060"
    assert (report.kernel_count, report.kernel_time_ns, report.nccl_time_ns) == (1, 38912, 0)
    assert report.utilisation[0]["busy_ns"] == 3083648
    [kernel] = NsightKernelStat.objects.filter(artifact=artifact)
    assert (kernel.count, kernel.total_ns, kernel.launch_api, kernel.avg_launch_ns) == (
        1,
        38912,
        "cudaLaunchKernel",
        2159276,
    )
    assert kernel.source_kind == "nsys_sqlite"
    assert NsightMemStat.objects.filter(artifact=artifact).count() == 2
    cuda = NsightApiStat.objects.filter(artifact=artifact, api="cuda")
    assert sum(cuda.values_list("count", flat=True)) == 15
    osrt = NsightApiStat.objects.filter(artifact=artifact, api="osrt")
    assert sum(osrt.values_list("count", flat=True)) == 446
    assert artifact.summary["kernels"] == 1


def test_reparse_replaces_the_rows_and_keeps_the_report_id():
    artifact = parsed(RTX3060)
    before = (
        NsightApiStat.objects.filter(artifact=artifact).count(),
        NsightKernelStat.objects.count(),
    )
    artifact_parse(artifact_id=artifact.pk)
    after = (
        NsightApiStat.objects.filter(artifact=artifact).count(),
        NsightKernelStat.objects.count(),
    )
    assert before == after
    assert list(NsightReport.objects.values_list("pk", flat=True)) == [artifact.pk]


def test_export_without_cuda_is_parsed_with_its_warning():
    artifact = parsed(NO_CUDA)
    assert artifact.status == Artifact.Status.PARSED
    assert any("no CUDA activity" in w for w in artifact.warnings)
    report = artifact.nsight
    assert report.kernel_count == 0 and report.gpus == [] and report.utilisation == []
    assert report.driver_version == "591.91"
    assert (
        sum(NsightApiStat.objects.filter(artifact=artifact).values_list("count", flat=True)) == 491
    )


def test_synthetic_export_flags_nccl_kernels_and_keeps_ranges(tmp_path):
    artifact = parsed_path(nsys_synthetic.build(tmp_path / "job.sqlite"))
    nccl = NsightKernelStat.objects.get(artifact=artifact, is_nccl=True)
    assert nccl.name.startswith("ncclDevKernel_AllReduce") and nccl.avg_launch_ns == 500
    assert artifact.nsight.nccl_time_ns == 1700 and artifact.nsight.nccl_pct == pytest.approx(
        100 * 1700 / 3300
    )
    assert {(r.name, r.style) for r in NsightRange.objects.filter(artifact=artifact)} == {
        ("step", "PushPop"),
        ("epoch", "StartEnd"),
    }
    assert [u["device_id"] for u in artifact.nsight.utilisation] == [0, 1]
    memset = NsightMemStat.objects.get(artifact=artifact, name="[CUDA memset]")
    assert memset.total_bytes == 4096 and memset.throughput_gbps == pytest.approx(4096 / 50)


def test_stats_output_rows_and_skipped_reports():
    artifact = parsed(STATS_TORCH)
    assert artifact.kind == "nsys_stats"
    report = artifact.nsight
    assert report.kernel_count == 19 and report.gpus == []
    assert report.skipped_reports[0]["report"] == "nvtx_sum"
    assert report.other_reports == []  # every table of the file has a typed summary
    h2d = NsightMemStat.objects.get(artifact=artifact, name="[CUDA memcpy Host-to-Device]")
    assert (h2d.count, h2d.total_ns, h2d.total_bytes) == (97, 138432, pytest.approx(846000))
    assert NsightKernelStat.objects.filter(artifact=artifact).first().total_ns == 44287


def test_nsys_rep_is_kept_with_the_export_message():
    artifact = parsed(REP)
    assert artifact.status == Artifact.Status.PARSED and artifact.kind == "nsys_rep"
    assert "nsys export --type sqlite --lazy=false" in artifact.warnings[0]
    assert artifact.nsight.source_kind == "nsys_rep"
    assert artifact.nsight.nsys_version == "2025.5.2.266"


@pytest.mark.parametrize("relative", [NCU_TORCH, NCU_TEXT])
def test_ncu_kernels_become_rows_with_metrics_and_key_columns(relative):
    artifact = parsed(relative)
    kernels = NcuKernel.objects.filter(artifact=artifact)
    assert kernels.count() == 14
    first = kernels.first()
    assert first.grid == "117" and first.block == "128" and first.registers_per_thread == 34
    assert len(first.metrics) == 10 and first.metrics[0][0] == "Command line profiler metrics"
    pid = "2211167" if relative == NCU_TORCH else "2072460"
    assert first.process == f"python3.8 [{pid}]"
    assert [i for i in kernels.values_list("index", flat=True)] == list(range(14))


def test_loading_one_kind_clears_the_other_kinds_rows():
    artifact = parsed(NCU_TORCH)
    assert NcuKernel.objects.filter(artifact=artifact).exists()
    from artifacts.nsight.parsers.nsys.stats import NsysStatsResult

    load_nsys(artifact, NsysStatsResult())
    assert not NcuKernel.objects.filter(artifact=artifact).exists()
    assert NsightReport.objects.filter(artifact=artifact).exists()
    load_ncu(artifact, NcuCsvResult(page="details"))
    assert not NsightReport.objects.filter(artifact=artifact).exists()


def test_text_and_numbers_the_databases_refuse_are_cleaned():
    artifact = parsed(NCU_TORCH)
    kernel = ParsedKernel(
        id=0,
        name="bad\x00name",
        duration_ns=math.inf,
        sm_throughput_pct=math.nan,
        metrics=(NcuMetric("S\x00", "m", "%", math.inf),),
    )
    load_ncu(artifact, NcuCsvResult(page="details", kernels=(kernel,)))
    row = NcuKernel.objects.get(artifact=artifact)
    assert row.name == "badname" and row.duration_ns is None and row.sm_throughput_pct is None
    assert row.metrics == [["S", "m", "%", None]]
