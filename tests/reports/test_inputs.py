"""What the report kinds share: input pins, measurement points, the two-sided checks, and the
builder turning a bad form into one readable message."""

from __future__ import annotations

import pytest

from artifacts.models import Artifact, BenchmarkRun
from reports.kinds import ReportInputError, ReportSpec
from reports.kinds.inputs import artifact_pins, measurement_points, two_sided_ids
from reports.models import Report


def _artifact(pk: int, label: str = "") -> Artifact:
    return Artifact(pk=pk, sha256=f"{pk:x}" * 64, original_name=f"f{pk}.log", label=label)


def test_artifact_pins_are_distinct_in_id_order_with_the_kinds_extras() -> None:
    a3, a1 = _artifact(3, "after"), _artifact(1, "before")
    pins = artifact_pins([a3, a1, _artifact(3, "after")], lambda a: {"side": f"s{a.pk}"})
    assert pins == [
        {"artifact_id": 1, "sha256": "1" * 64, "name": "f1.log", "label": "before", "side": "s1"},
        {"artifact_id": 3, "sha256": "3" * 64, "name": "f3.log", "label": "after", "side": "s3"},
    ]
    assert list(artifact_pins([a1])[0]) == ["artifact_id", "sha256", "name", "label"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (ReportSpec(kind="traces", title="t", run_ids=(1,)), "a traces report takes artifact_ids"),
        (
            ReportSpec(kind="traces", title="t", artifact_ids=(1, 2), group_by="rack"),
            "traces are grouped by artifact or job, not 'rack'",
        ),
    ],
)
def test_two_sided_ids_refuse_runs_and_unknown_groupings(spec: ReportSpec, message: str) -> None:
    with pytest.raises(ReportInputError, match=message):
        two_sided_ids(spec, kind="traces", what="trace", groupings=("artifact", "job"))


def test_two_sided_ids_drop_repeats_and_keep_the_order() -> None:
    spec = ReportSpec(kind="counters", title="c", artifact_ids=(5, 2, 5, 9))
    ids = two_sided_ids(spec, kind="counters", what="counter", groupings=("artifact",))
    assert ids == (5, 2, 9)


@pytest.mark.django_db
def test_measurement_points_are_the_out_of_place_numbers(pair) -> None:
    run = BenchmarkRun.objects.filter(collective="sendrecv").order_by("pk").first()
    points = measurement_points({run.pk})
    first = run.measurements.order_by("size_bytes").first()
    row = points.sort_values("size_bytes").iloc[0]
    assert len(points) == run.measurements.count() and set(points["run_id"]) == {run.pk}
    assert (row["size_bytes"], row["busbw_gbps"]) == (first.size_bytes, first.oop_busbw_gbps)


@pytest.mark.django_db
def test_builder_lists_every_form_complaint_and_saves_nothing(editor_client) -> None:
    response = editor_client.post(
        "/reports/new/", {"kind": "traces", "title": "", "artifact": ["x"]}, follow=True
    )
    page = response.content.decode()
    assert "title: This field is required." in page and "artifact:" in page
    assert not Report.objects.exists()
