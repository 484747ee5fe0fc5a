"""Baseline alerts of one alert summary fold into one suggestion, across runs and files."""

from __future__ import annotations

import pytest

from artifacts.models import Artifact
from baselines.models import Alert, AlertSummary
from incidents.grouping import grouped_for
from incidents.services import incident_attach_artifacts, suggestion_accept
from tests.baselines.test_pages import h200  # noqa: F401  (the demo-history fixture)

pytestmark = pytest.mark.django_db


def test_one_summary_is_one_suggestion_linked_to_every_run(incident, editor, h200):  # noqa: F811
    from artifacts.models import BenchmarkRun

    summary = AlertSummary.objects.get()
    first = Alert.objects.filter(summary=summary, kind=Alert.Kind.REGRESSION).first()
    # The change stays on the later runs of the new stack (as a detector re-run files them).
    for index, later in enumerate(
        BenchmarkRun.objects.filter(nccl_version="2.23.4").exclude(pk=first.run_id)[:2]
    ):
        Alert.objects.create(
            fingerprint=f"later{index}", summary=summary, series=first.series, run=later,
            kind=first.kind, source=first.source, magnitude_pct=first.magnitude_pct - index,
            measured_at=later.measured_at, value_before=first.value_before,
            value_after=first.value_after,
        )  # fmt: skip
    regressed = Alert.objects.filter(summary=summary, kind=Alert.Kind.REGRESSION)
    artifacts = Artifact.objects.filter(runs__alerts__in=regressed).distinct()
    runs = set(regressed.values_list("run_id", flat=True))
    assert len(runs) > 1
    incident_attach_artifacts(
        incident=incident, artifact_ids=list(artifacts.values_list("pk", flat=True)), by=editor
    )
    groups = [s for s in grouped_for(incident) if s.source == "baseline_alert" and s.is_group]
    (group,) = [g for g in groups if g.kind == "alert"]
    assert group.count == len(runs) and summary.change_text in group.text
    event = suggestion_accept(incident=incident, key=group.key, by=editor)
    assert {s["run_id"] for s in event.sources} == runs
    assert all(s["ref_kind"] == "alert" for s in event.sources)
