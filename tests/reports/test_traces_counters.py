"""Report kinds "traces" and "counters" on shared samples."""

from __future__ import annotations

import pytest

from artifacts.models import CounterRate, TraceSummary
from reports.kinds import ReportInputError
from reports.services import report_create
from reports.tables import records
from tests.reports.conftest import ingest_bytes
from tests.samples import sample

pytestmark = pytest.mark.django_db

TRACE_A = "torch_profiler/hta_alexnet_cuda_sync.json.gz"
TRACE_B = "torch_profiler/hta_gpu_user_annotation_step_based.json.gz"
BYTEPS = "ethtool_rdma/byteps_issue179_mlx5_ethtool_S_grep_prio_before_after_EXCERPT.txt"


def test_two_traces_side_by_side_breakdown_kernels_steps(parsed, editor):
    a = parsed(TRACE_A, metadata={"captured_at": "2025-01-01T00:00:00Z"})
    b = parsed(TRACE_B, metadata={"captured_at": "2025-01-02T00:00:00Z"})
    ta, tb = TraceSummary.objects.get(pk=a.pk), TraceSummary.objects.get(pk=b.pk)
    report = report_create(kind="traces", title="alexnet vs annotated", artifact_ids=[b.pk, a.pk])
    assert report.status == "ready", report.error
    first = ta if ta.recorded_at <= tb.recorded_at else tb
    second = tb if first is ta else ta
    sides = records(report.table("sides"))
    assert [s["side"] for s in sides] == ["A", "B"] and f"#{first.pk}" in sides[0]["title"]
    breakdown = {
        r["key"] if "key" in r else r["metric"]: r for r in records(report.table("breakdown"))
    }
    if not sides[0]["per_step"]:
        # whole-trace numbers, as the trace pages show them (rounded to 2 decimals here)
        assert breakdown["span_us"]["a"] == round(first.span_us, 2)
        assert breakdown["span_us"]["b"] == round(second.span_us, 2)
    kernels = records(report.table("kernels"))
    assert kernels and {"slower", "faster", "new", "gone", "same"} >= {k["change"] for k in kernels}
    deltas = [abs(k["delta_us"]) for k in kernels]
    assert deltas == sorted(deltas, reverse=True)  # largest change first
    assert report.summary[0].startswith("B = ")
    assert {p["side"] for p in report.inputs["artifacts"]} == {"A", "B"}


def test_traces_report_needs_two_sides_of_traces(parsed, pair):
    a = parsed(TRACE_A)
    with pytest.raises(ReportInputError, match="compares two sides"):
        report_create(kind="traces", title="x", artifact_ids=[a.pk])
    with pytest.raises(ReportInputError, match="not a parsed trace"):
        report_create(kind="traces", title="x", artifact_ids=[a.pk, pair[0].pk])


def test_counter_rates_side_by_side(db, editor):
    text = sample(BYTEPS).read_bytes()
    a = ingest_bytes(
        "before-after.txt", text, host="worker-1", metadata={"snapshot_interval_s": 30}
    )
    # the same counters read over twice the interval on another host: every rate halves
    b = ingest_bytes(
        "before-after-slow.txt", text + b"\n", host="worker-2", metadata={"snapshot_interval_s": 60}
    )
    from artifacts.fabric.services import fabric_refresh

    for artifact in (a, b):
        fabric_refresh(artifact_id=artifact.pk)
    assert CounterRate.objects.filter(after__artifact=a).exists()
    report = report_create(kind="counters", title="30 s vs 60 s", artifact_ids=[a.pk, b.pk])
    assert report.status == "ready", report.error
    ports = {(r["host"], r["counter"]): r for r in records(report.table("ports"))}
    delta = 420000128479 - 419873392068  # read off the two snapshots in the file
    on_a, on_b = ports[("worker-1", "rx_prio0_packets")], ports[("worker-2", "rx_prio0_packets")]
    assert (on_a["rate_a"], on_a["rate_b"]) == (round(delta / 30, 3), None)  # ports match by host
    assert (on_b["rate_a"], on_b["rate_b"]) == (None, round(delta / 60, 3))
    counters = {r["counter"]: r for r in records(report.table("counters"))}
    packets = counters["rx_prio0_packets"]
    assert (packets["ports_a"], packets["ports_b"], packets["delta_pct"]) == (1, 1, -50.0)
    assert ("worker-1", "rx_prio1_bytes") not in ports  # zero on both sides
    assert any(line.startswith("rx_prio0_") and "(-50.0 %)" in line for line in report.summary)


def test_counters_report_refuses_files_without_rates(pair):
    with pytest.raises(ReportInputError, match="have no counter rates"):
        report_create(kind="counters", title="x", artifact_ids=[a.pk for a in pair])
