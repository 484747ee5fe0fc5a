"""The after-parse pipeline on the demo history: comparisons, alerts, one summary per change.

The demo generator upgrades NCCL 2.21.5 -> 2.23.4 half-way and, on h200-roce-2x8 only, the new
version loses ~8 % all_reduce busbw from 256 MiB on. Loading it through the real ingest and
parse path must raise exactly that, and nothing on the other profiles.
"""

import random

import pytest

from artifacts.models import Artifact, BenchmarkRun
from artifacts.parsing import artifact_parse
from artifacts.runs.demo import demo_files
from baselines.models import Alert, AlertSummary, Comparison, RunContext
from baselines.services import alert_update, artifact_evaluate
from tests.baselines.baseline_fixtures import ingest_and_parse, load_demo

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024


def test_the_hook_queues_baselines_after_the_parse_commits(
    eager_tasks, django_capture_on_commit_callbacks
):
    demo = demo_files()[0]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        ingest_and_parse(demo)
    assert callbacks, "artifact_parse registered nothing to run on commit"
    assert not RunContext.objects.exists()  # nothing happened inside the parse transaction
    for callback in callbacks:
        callback()
    assert RunContext.objects.get().profile.slug == demo.metadata["profile"]


def test_loading_the_demo_raises_the_h200_all_reduce_regression_as_one_summary(
    eager_tasks, django_capture_on_commit_callbacks
):
    load_demo(django_capture_on_commit_callbacks, collectives=None)
    summary = AlertSummary.objects.get()
    assert summary.profile.slug == "h200-roce-2x8"
    assert (summary.stack_before.nccl, summary.stack_after.nccl) == ("2.21.5", "2.23.4")
    assert summary.title.startswith("NCCL 2.21.5 → 2.23.4, CUDA 12.4 → 12.6 on h200-roce-2x8:")
    assert "series regressed, all_reduce" in summary.title and "8 GiB" in summary.title
    alerts = list(summary.alerts.select_related("series"))
    assert {a.kind for a in alerts} == {"regression"}
    assert {a.series.collective for a in alerts} == {"all_reduce"}
    sizes = sorted(a.series.size_bytes for a in alerts)
    # every size from 256 MiB up lost ~8 %; 128 MiB (half-way up the logistic) may join
    assert set(range(28, 34)) <= {s.bit_length() - 1 for s in sizes} <= set(range(27, 34))
    big = [a for a in alerts if a.series.size_bytes >= 256 * MiB]
    assert all(-9.5 < a.magnitude_pct < -6.5 for a in big)
    assert all(a.high_pct < 0 for a in big)  # the band excludes "no change"
    assert summary.regressions == len(alerts) and summary.open_alerts == len(alerts)
    assert summary.confirmed  # the two runs after the upgrade agree with the first


def test_the_first_run_on_the_new_nccl_is_compared_with_the_old_stack(
    eager_tasks, django_capture_on_commit_callbacks
):
    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"])
    first_new = (
        BenchmarkRun.objects.filter(nccl_version="2.23.4", context__isnull=False)
        .order_by("measured_at")
        .first()
    )
    comparison = Comparison.objects.select_related("reference_stack", "stack").get(run=first_new)
    assert comparison.reference == "recent"
    assert (comparison.reference_stack.nccl, comparison.stack.nccl) == ("2.21.5", "2.23.4")
    assert comparison.verdict == "regressed"
    assert len(comparison.reference_run_ids) == 3  # the three nights on 2.21.5
    assert len(comparison.candidate_run_ids) == 3  # and the three on 2.23.4 since
    assert comparison.regressed_ranges[0][0] in (128 * MiB, 256 * MiB)
    assert comparison.regressed_ranges[0][1] == 8 * 1024 * MiB
    assert "regressed: " in comparison.result["summary"]
    later = Comparison.objects.filter(run__nccl_version="2.23.4").exclude(run=first_new)
    assert {c.verdict for c in later} == {"unchanged"}  # compared with the new stack's runs


def test_other_profiles_upgrade_without_alerts(eager_tasks, django_capture_on_commit_callbacks):
    load_demo(django_capture_on_commit_callbacks, profiles=["h100-nvs-1x8", "ib-h100-16x8"])
    assert not Alert.objects.exists()
    upgrades = Comparison.objects.filter(run__nccl_version="2.23.4", reference_stack__nccl="2.21.5")
    assert upgrades.count() == 2 and {c.verdict for c in upgrades} == {"unchanged"}


def test_the_result_does_not_depend_on_the_order_workers_file_runs(
    eager_tasks, django_capture_on_commit_callbacks
):
    def shuffled(files):
        random.Random(3).shuffle(files)
        return files

    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"], order=shuffled)
    summary = AlertSummary.objects.get()
    assert summary.regressions >= 6 and summary.stack_after.nccl == "2.23.4"
    first_new = BenchmarkRun.objects.filter(nccl_version="2.23.4").order_by("measured_at")[0]
    assert set(summary.alerts.values_list("run_id", flat=True)) == {first_new.pk}


def test_re_evaluating_changes_nothing_and_triage_survives_a_reparse(
    eager_tasks, django_capture_on_commit_callbacks, editor
):
    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"])
    before = sorted(Alert.objects.values_list("fingerprint", "magnitude_pct"))
    for artifact in Artifact.objects.all():
        artifact_evaluate(artifact_id=artifact.pk)
    assert sorted(Alert.objects.values_list("fingerprint", "magnitude_pct")) == before
    alert = Alert.objects.order_by("magnitude_pct").first()
    alert_update(alert=alert, status="investigating", assignee=editor, notes="tuner picks 8 ch")
    with django_capture_on_commit_callbacks(execute=True):
        artifact_parse(artifact_id=alert.run.artifact_id)  # new run rows, same numbers
    alert.refresh_from_db()
    assert (alert.status, alert.assignee, alert.notes) == (
        "investigating",
        editor,
        "tuner picks 8 ch",
    )
    assert alert.run is not None and alert.run.artifact_id == alert.summary.first_run.artifact_id
    assert Alert.objects.count() == len(before)


def test_a_pinned_baseline_is_the_reference_and_its_tolerance_applies(
    eager_tasks, django_capture_on_commit_callbacks, editor
):
    from baselines.services import baseline_create

    files = [
        f
        for f in demo_files(days=6)
        if f.metadata["profile"] == "h200-roce-2x8" and f.metadata["collective"] == "all_reduce"
    ]
    old = [ingest_and_parse(f) for f in files[:3]]
    for artifact in old:
        artifact_evaluate(artifact_id=artifact.pk)
    baseline = baseline_create(
        name="h200 2.21.5", runs=[a.runs.get() for a in old], tolerance_pct=10, created_by=editor
    )
    assert baseline.stack.nccl == "2.21.5" and baseline.collective == "all_reduce"
    new = ingest_and_parse(files[3])
    artifact_evaluate(artifact_id=new.pk)
    comparison = Comparison.objects.get(run=new.runs.get())
    assert comparison.reference == "baseline" and comparison.baseline == baseline
    assert comparison.verdict == "unchanged"  # an 8 % loss is inside a 10 % tolerance
    assert not Alert.objects.exists()
    baseline.tolerance_pct = 3
    baseline.save()
    artifact_evaluate(artifact_id=new.pk)
    comparison.refresh_from_db()
    assert comparison.verdict == "regressed"
    alerts = Alert.objects.all()
    assert alerts and all(f"baseline{baseline.pk}" in a.fingerprint for a in alerts)
