"""Drift in the app: one drift alert per drifting stretch, with start, end and rate in its
details; drifts of one profile that overlap in time share one summary; the series chart
shades each drift as a sloped band."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from artifacts.models import Artifact, BenchmarkRun
from baselines.alerting import Collector, history_scan, summaries_refresh
from baselines.charts import series_chart
from baselines.models import (
    Alert,
    AlertSummary,
    HardwareProfile,
    Series,
    SeriesPoint,
    SoftwareStack,
)

pytestmark = pytest.mark.django_db

START = datetime(2026, 1, 1, 2, 0, tzinfo=UTC)


def _runs(n: int) -> list[BenchmarkRun]:
    artifact = Artifact.objects.create(sha256="d" * 64, size=1, original_name="nightly.log")
    return [
        BenchmarkRun.objects.create(
            artifact=artifact, index=k, measured_at=START + timedelta(days=k)
        )
        for k in range(n)
    ]


def _series(profile: HardwareProfile, size: int, values: np.ndarray, runs, stack) -> Series:
    series = Series.objects.create(
        profile=profile, collective="all_reduce", nranks=16, size_bytes=size
    )
    SeriesPoint.objects.bulk_create(
        SeriesPoint(series=series, run=r, stack=stack, measured_at=r.measured_at, value=float(v))
        for r, v in zip(runs, values, strict=True)
    )
    return series


def _drifting(seed: int, n: int, pct: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 180.0 * (1 + 0.01 * rng.normal(size=n)) * np.linspace(1, 1 + pct / 100, n)


@pytest.fixture
def setup():
    profile = HardwareProfile.objects.create(slug="h200-roce")
    stack = SoftwareStack.objects.create(nccl="2.21.5")
    runs = _runs(120)
    return profile, stack, runs


def test_a_degrading_series_raises_one_drift_alert_with_start_end_and_rate_per_day(setup):
    profile, stack, runs = setup
    series = _series(profile, 2**30, _drifting(1, 120, -9.0), runs, stack)
    collector = Collector()
    (alert,) = history_scan([series.pk], collector=collector)
    assert alert.kind == Alert.Kind.DRIFT and alert.source == Alert.Source.HISTORY
    details = alert.details
    assert details["kind"] == "drift" and details["rate_unit"] == "day"
    assert details["start_run_id"] == runs[details["index"]].pk
    assert details["end_run_id"] == runs[details["end_index"]].pk
    days = (datetime.fromisoformat(details["end"]) - datetime.fromisoformat(details["start"])).days
    assert days >= 100
    assert details["rate_pct"] == pytest.approx(alert.magnitude_pct / days, rel=1e-4)
    assert alert.magnitude_pct == pytest.approx(-9.0, abs=2.0)

    # Re-scanning (more runs arrive, nothing new) keeps one alert, and triage survives.
    alert.status = Alert.Status.INVESTIGATING
    alert.save()
    history_scan([series.pk], collector=collector)
    (again,) = Alert.objects.filter(series=series)
    assert again.pk == alert.pk and again.status == Alert.Status.INVESTIGATING


def test_drift_on_many_series_of_a_profile_groups_into_one_summary(setup):
    profile, stack, runs = setup
    ids = [_series(profile, 2**k, _drifting(k, 120, -8.0), runs, stack).pk for k in (26, 28, 30)]
    collector = Collector()
    alerts = history_scan(ids, collector=collector)
    assert len(alerts) == 3 and {a.kind for a in alerts} == {Alert.Kind.DRIFT}
    (summary,) = AlertSummary.objects.all()
    assert {a.summary_id for a in alerts} == {summary.pk}
    summaries_refresh(collector.touched_summary_ids)
    summary.refresh_from_db()
    assert "3 series drifted" in summary.title and "%/day" in summary.title
    assert summary.change_text == "gradual drift (no single change)"
    assert summary.confirmed


def test_a_flat_series_raises_no_drift(setup):
    profile, stack, runs = setup
    series = _series(profile, 2**20, _drifting(3, 120, 0.0), runs, stack)
    assert history_scan([series.pk], collector=Collector()) == []


def test_the_series_chart_shades_the_drift_as_a_sloped_band(setup):
    profile, stack, runs = setup
    series = _series(profile, 2**30, _drifting(4, 120, -9.0), runs, stack)
    (alert,) = history_scan([series.pk], collector=Collector())
    figure = json.loads(series_chart(series).figure_json)
    (band,) = [t for t in figure["data"] if t.get("fill") == "toself"]
    y = band["y"]
    assert len(band["x"]) == 5 and "drift" in band["text"]
    # Sloped: the band's start and end sit at the fitted levels, the end lower here.
    assert (y[0] + y[3]) / 2 == pytest.approx(alert.value_before)
    assert (y[1] + y[2]) / 2 == pytest.approx(alert.value_after)
    assert y[1] < y[0]


def test_the_alert_and_series_pages_show_the_drift(setup, viewer_client):
    profile, stack, runs = setup
    series = _series(profile, 2**30, _drifting(5, 120, -9.0), runs, stack)
    (alert,) = history_scan([series.pk], collector=Collector())
    page = viewer_client.get(alert.get_absolute_url())
    assert page.status_code == 200
    text = page.content.decode()
    assert "a gradual move, not a single change" in text and "% per day" in text
    assert f"#{alert.details['start_run_id']}" in text
    series_page = viewer_client.get(series.get_absolute_url())
    assert series_page.status_code == 200 and "shaded slope: drift" in series_page.content.decode()
