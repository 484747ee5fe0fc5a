"""Replicates are one observation: several runs of one build on one profile in one night
reach detection and alerts as one point (their median, with count and spread)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from artifacts.models import Artifact, BenchmarkRun
from baselines.alerting import Collector, history_scan
from baselines.models import Alert, HardwareProfile, Series, SeriesPoint, SoftwareStack
from baselines.replicates import collapse_replicates

START = datetime(2026, 1, 1, 2, 0, tzinfo=UTC)


def _point(run_id: int, stack: int, value: float, hours: float) -> dict[str, object]:
    return {"run_id": run_id, "stack_id": stack, "value": value,
            "measured_at": START + timedelta(hours=hours)}  # fmt: skip


def test_one_builds_runs_of_one_night_become_one_point_with_its_spread() -> None:
    points = [
        _point(1, 1, 100.0, 0),
        _point(2, 1, 108.0, 24), _point(3, 1, 107.0, 24.2), _point(4, 1, 109.0, 25),
        _point(5, 2, 100.0, 25.5),  # another build the same night: its own observation
        _point(6, 2, 100.5, 48),  # the next night: another observation of build 2
    ]  # fmt: skip
    collapsed = collapse_replicates(points)
    assert [p["run_id"] for p in collapsed] == [1, 2, 5, 6]
    assert collapsed[1]["value"] == 108.0 and collapsed[1]["replicates"] == 3
    assert collapsed[1]["spread"] == 2.0 and collapsed[1]["run_ids"] == [2, 3, 4]


@pytest.mark.django_db
def test_four_high_replicates_of_one_build_raise_no_alert() -> None:
    profile = HardwareProfile.objects.create(slug="h200-roce")
    stack = SoftwareStack.objects.create(nccl="2.21.5")
    artifact = Artifact.objects.create(sha256="r" * 64, size=1, original_name="nightly.log")
    series = Series.objects.create(
        profile=profile, collective="all_reduce", nranks=16, size_bytes=1 << 30
    )
    rng = random.Random(3)
    times = [START + timedelta(days=k) for k in range(20)]
    values = [100 + rng.gauss(0, 0.4) for _ in times]
    # night 10: the build was retried three times; all four runs read high
    times[10:11] = [times[10] + timedelta(minutes=20 * k) for k in range(4)]
    values[10:11] = [108 + rng.gauss(0, 0.4) for _ in range(4)]
    runs = [BenchmarkRun.objects.create(artifact=artifact, index=k, measured_at=t)
            for k, t in enumerate(times)]  # fmt: skip
    SeriesPoint.objects.bulk_create(
        SeriesPoint(series=series, run=r, stack=stack, measured_at=r.measured_at, value=v)
        for r, v in zip(runs, values, strict=True)
    )
    history_scan([series.pk], collector=Collector())
    assert not Alert.objects.exists(), "a noisy build is one point, an outlier: no step"
