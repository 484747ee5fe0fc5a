"""Reports that lean on the baselines app: a run against its baseline, and NPI profile pairs.

The demo generator (artifacts/runs/demo.py) is the sample here: its numbers come
from a stated model, so the expected values are derived from that model below.
"""

from __future__ import annotations

import pytest

from artifacts.models import BenchmarkRun
from artifacts.runs.demo import demo_files
from reports.kinds import ReportInputError
from reports.services import report_create
from reports.tables import records
from tests.reports.conftest import ingest_bytes

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024
GiB = 1024 * MiB


def ingest_demo(predicate) -> list:
    """Parse the chosen demo files and file them under their profiles (the baselines app's
    after-parse step, called directly: on-commit hooks do not fire inside a test)."""
    from baselines.services import artifact_evaluate

    artifacts = []
    for f in demo_files(days=6):
        if predicate(f):
            artifact = ingest_bytes(f.name, f.content, label=f.label, metadata=f.metadata)
            artifact_evaluate(artifact_id=artifact.pk, notify=False)
            artifacts.append(artifact)
    return artifacts


def test_a_run_against_its_baseline_finds_the_nccl_upgrade_regression(editor):
    from baselines.services import baseline_create

    ingest_demo(lambda f: "h200-roce-2x8_all_reduce" in f.name and f.label == "nightly")
    runs = list(BenchmarkRun.objects.order_by("measured_at"))
    old = [r for r in runs if r.nccl_version == "2.21.5"]
    assert len(old) == 3 and runs[-1].nccl_version == "2.23.4"
    baseline = baseline_create(name="h200 ar 2.21.5", runs=old, tolerance_pct=3.0)
    report = report_create(
        kind="runs",
        title="last night vs baseline",
        run_ids=[runs[-1].pk],
        with_baseline=True,
        created_by=editor,
    )
    assert report.status == "ready", report.error
    verdict = records(report.table("verdicts"))[0]
    assert (verdict["reference"], verdict["candidate"]) == (
        "baseline h200 ar 2.21.5",
        f"run #{runs[-1].pk}",
    )
    assert verdict["verdict"] == "regressed"
    deltas = {r["size_bytes"]: r for r in records(report.table("deltas"))}
    # the model takes ~8 % from 256 MB on (half of it at 128 MB) and nothing below 16 MB
    for size in (256 * MiB, 1 * GiB, 8 * GiB):
        assert deltas[size]["change"] == "regressed" and -10 < deltas[size]["delta_pct"] < -6
        assert deltas[size]["n_reference"] == 3 and deltas[size]["band"] == "pooled repeats"
    for size in (64 * 1024, 1 * MiB):
        assert deltas[size]["change"] == "unchanged"
    spans = report.table("verdicts")["spans"][0]["regressed"]
    assert spans and spans[0][0] <= 256 * MiB and spans[-1][1] == 8 * GiB
    pins = report.inputs["baselines"][0]
    assert pins["baseline_id"] == baseline.pk and sorted(pins["run_ids"]) == sorted(
        r.pk for r in old
    )
    assert pins["tolerance_pct"] == 3.0


def test_with_baseline_and_no_reference_at_all_is_a_clear_error(editor):
    ingest_demo(lambda f: f.name == "2025-11-03_h200-roce-2x8_all_reduce.log")
    run = BenchmarkRun.objects.get()
    with pytest.raises(ReportInputError, match="none of the selected runs has a matching baseline"):
        report_create(kind="runs", title="x", run_ids=[run.pk], with_baseline=True)


def test_npi_profile_pair_ratios_per_benchmark_and_size_range(editor):
    from baselines.models import HardwareProfile

    ingest_demo(lambda f: f.name.startswith("2025-11-03_h") and f.label in ("nightly", "sweep"))
    h100 = HardwareProfile.objects.get(slug="h100-nvs-1x8")
    h200 = HardwareProfile.objects.get(slug="h200-roce-2x8")
    report = report_create(
        kind="profiles",
        title="H200 RoCE vs H100 NVSwitch",
        profile_ids=[h100.pk, h200.pk],
        created_by=editor,
    )
    assert report.status == "ready", report.error
    per_size = records(report.table("ratios"))
    # both have all_gather, all_reduce, alltoall, reduce_scatter, sendrecv (broadcast: H100 only)
    assert sorted({r["collective"] for r in per_size}) == [
        "all_gather",
        "all_reduce",
        "alltoall",
        "reduce_scatter",
        "sendrecv",
    ]
    assert {(r["nranks_a"], r["nranks_b"]) for r in per_size} == {(8, 16)}  # largest of each
    at = {(r["collective"], r["size_bytes"]): r for r in per_size}
    # plateau busbw of the model: alltoall 84 vs 342 GB/s, knee 8 vs 4 MiB: at 8 GiB
    # 84/342 x (1 + (4/8192)^0.6) / (1 + (8/8192)^0.6) = 0.244; sendrecv 45.5/368 = 0.124
    assert at[("alltoall", 8 * GiB)]["ratio"] == pytest.approx(0.244, abs=0.006)
    assert at[("sendrecv", 8 * GiB)]["ratio"] == pytest.approx(0.1236, abs=0.004)
    summary = records(report.table("summary"))
    a2a = [r for r in summary if r["collective"] == "alltoall"]
    assert [r["size_range"] for r in a2a] == [
        "small (< 64 KiB)",
        "medium (64 KiB - 16 MiB)",
        "large (>= 16 MiB)",
    ]
    assert a2a[-1]["to_size"] == "8 GiB" and 0.2 < a2a[-1]["ratio_geomean"] < 0.25
    assert any(line.startswith("alltoall float (8 vs 16 ranks): ") for line in report.summary)
    assert [p["profile_id"] for p in report.inputs["profiles"]] == [h100.pk, h200.pk]


def test_npi_needs_two_known_profiles(editor):
    with pytest.raises(ReportInputError, match="needs profile_ids"):
        report_create(kind="profiles", title="x", profile_ids=[1])
    with pytest.raises(ReportInputError, match="no such hardware profile: 77"):
        report_create(kind="profiles", title="x", profile_ids=[77, 78])
