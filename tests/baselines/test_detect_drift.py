"""Trends, drift, weekly patterns and correlated noise: what baselines.detect reports (no
Django)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from baselines.detect import ChangePoint, detect, main, read_series
from baselines.methods import noise, seasonal
from tests.baselines.detect_series import noise as white


def _kinds(cps: tuple[ChangePoint, ...], kind: str) -> list[ChangePoint]:
    return [c for c in cps if c.kind == kind]


def _weekly(n: int, pct: float = 5.0) -> np.ndarray:
    """Nightly runs whose two weekend points in seven are pct % higher."""
    return 1.0 + pct / 100.0 * ((np.arange(n) % 7) >= 5)


def _ar1(seed: int, n: int, phi: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.normal(size=n) * np.sqrt(1 - phi * phi)
    z = np.empty(n)
    z[0] = rng.normal()
    for t in range(1, n):
        z[t] = phi * z[t - 1] + e[t]
    return 100.0 * (1 + 0.01 * z)


@pytest.mark.parametrize("seed", range(3))
def test_a_linear_drift_is_one_drift_with_start_end_and_rate_not_a_staircase(seed):
    y = white(seed, 300) * np.linspace(1, 0.92, 300)  # -8 % over 300 runs
    cps = detect(y).change_points
    assert _kinds(cps, "step") == []
    (d,) = _kinds(cps, "drift")
    assert d.index <= 10 and d.end_index is not None and d.end_index >= 289
    assert d.direction == "regression"  # busbw going down
    assert d.magnitude_pct == pytest.approx(-8.0, abs=1.5)
    assert d.rate_unit == "run"
    assert d.rate_pct == pytest.approx(d.magnitude_pct / (d.end_index - d.index))
    assert d.before == pytest.approx(100, abs=1.5) and d.after == pytest.approx(92, abs=1.5)


def test_lower_is_better_makes_a_rising_drift_a_regression():
    y = white(4, 300) * np.linspace(1, 1.08, 300)  # step time creeping up
    (d,) = _kinds(detect(y, direction="lower").change_points, "drift")
    assert d.direction == "regression" and d.magnitude_pct > 0


def test_a_drift_that_stops_ends_where_the_level_settles():
    y = white(5, 400) * np.r_[np.linspace(1, 0.93, 200), np.full(200, 0.93)]
    (d,) = _kinds(detect(y).change_points, "drift")
    assert d.index <= 10 and abs(d.end_index - 199) <= 15


def test_a_step_on_top_of_a_trend_is_a_step_and_the_trend_one_drift():
    y = white(6, 400) * np.linspace(1, 0.93, 400)
    y[260:] *= 0.95
    cps = detect(y).change_points
    (s,) = _kinds(cps, "step")
    assert abs(s.index - 260) <= 2 and s.magnitude_pct == pytest.approx(-5, abs=1.5)
    (d,) = _kinds(cps, "drift")
    assert d.index <= 10 and d.end_index >= 389


def test_smooth_growth_with_tiny_noise_is_one_drift_not_dozens_of_steps():
    # A steadily growing series (a dataset that grows, population-like): its pace changes,
    # its noise is a hundredth of a percent, yet nothing in it jumps.
    t = np.arange(500)
    rng = np.random.default_rng(1)
    y = 1000 * np.exp(0.002 * t + 0.0000015 * t * t) * (1 + 1e-4 * rng.normal(size=500))
    cps = detect(y).change_points
    assert [c.kind for c in cps] == ["drift"]
    assert cps[0].index == 0 and cps[0].end_index == 499


def test_drift_rate_is_per_day_when_the_points_have_times():
    y = white(7, 120) * np.linspace(1, 0.9, 120)
    start = datetime(2026, 1, 1)
    times = [start + timedelta(hours=12 * k) for k in range(120)]  # two runs a day
    (d,) = _kinds(detect(y, times=times).change_points, "drift")
    days = (times[d.end_index] - times[d.index]).total_seconds() / 86400
    assert d.rate_unit == "day" and d.rate_pct == pytest.approx(d.magnitude_pct / days)
    with pytest.raises(ValueError, match="times"):
        detect(y, times=times[:-1])


def test_drift_json_carries_end_and_rate_and_steps_do_not():
    y = white(8, 300) * np.linspace(1, 0.9, 300)
    y[150:] *= 0.9
    data = detect(y).to_json()["change_points"]
    drift = next(c for c in data if c["kind"] == "drift")
    step = next(c for c in data if c["kind"] == "step")
    assert {"index", "end_index", "rate_pct", "rate_unit", "magnitude_pct"} <= set(drift)
    assert "rate_pct" not in step and "rate_unit" not in step


def test_the_cli_reads_dates_in_x_as_times(tmp_path, capsys):
    y = white(9, 100) * np.linspace(1, 0.9, 100)
    day = datetime(2026, 3, 1)
    rows = [f"{(day + timedelta(days=k)).date().isoformat()},{v:.4f}" for k, v in enumerate(y)]
    path = tmp_path / "s.csv"
    path.write_text("x,value\n" + "\n".join(rows) + "\n")
    assert main([str(path)]) == 0
    (drift,) = [c for c in json.loads(capsys.readouterr().out)["change_points"]]
    assert drift["kind"] == "drift" and drift["rate_unit"] == "day"
    assert drift["x"] <= "2026-03-11"


@pytest.mark.parametrize("seed", range(4))
def test_stationary_noise_has_no_drift(seed):
    assert _kinds(detect(white(seed, 1000)).change_points, "drift") == []


@pytest.mark.parametrize("seed", range(3))
def test_a_weekly_pattern_raises_nothing_and_a_step_through_it_is_still_found(seed):
    y = white(seed, 280) * _weekly(280)
    assert detect(y).change_points == ()
    y[150:] *= 0.95
    (s,) = detect(y).change_points
    assert s.kind == "step" and abs(s.index - 150) <= 2


def test_the_weekly_period_is_found_and_none_in_plain_noise_or_a_trend():
    assert seasonal.find_period(white(1, 280) * _weekly(280))[0] == 7  # type: ignore[index]
    assert seasonal.find_period(white(2, 280)) is None
    assert seasonal.find_period(white(3, 280) * np.linspace(1, 1.2, 280)) is None


def test_ar1_noise_is_recognised_and_white_noise_is_not():
    assert noise.ar1_phi(_ar1(1, 1000, 0.6)) == pytest.approx(0.6, abs=0.15)
    assert noise.ar1_phi(white(1, 1000)) < 0.15
    assert noise.long_run_factor(0.0) == 1.0
    assert noise.long_run_factor(0.6) == pytest.approx(2.0)


@pytest.mark.parametrize("seed", range(3))
def test_ar1_noise_does_not_alert_and_a_step_in_it_is_found(seed):
    y = _ar1(seed, 400, 0.6)
    assert detect(y).change_points == ()
    y[200:] *= 0.94
    (s,) = detect(y).change_points
    assert s.kind == "step" and abs(s.index - 200) <= 3


@pytest.mark.parametrize("seed", range(3))
def test_low_integer_counts_need_a_real_change(seed):
    rng = np.random.default_rng(seed)
    counts = rng.poisson(3.0, 300).astype(float)  # e.g. retries per run
    assert [c for c in detect(counts).change_points if c.kind != "variance"] == []
    counts[150:] = rng.poisson(9.0, 150)
    steps = _kinds(detect(counts).change_points, "step")
    assert len(steps) == 1 and abs(steps[0].index - 150) <= 3


def test_a_series_near_zero_drifts_like_any_other():
    y = 1e-6 * white(3, 300) * np.linspace(1, 0.9, 300)
    (d,) = detect(y).change_points
    assert d.kind == "drift" and d.magnitude_pct == pytest.approx(-10, abs=1.5)


def _real(name: str) -> list[float]:
    path = Path(__file__).resolve().parents[1] / "fixtures" / "detection_real" / f"{name}.csv"
    _, values = read_series(path.read_text().splitlines())
    return values


def test_real_steady_growth_is_one_drift_not_a_staircase():
    # US population, monthly 1952-2019 (TCPD): annotators marked no change or one census
    # revision; the detector before drift reported 35 steps here.
    cps = detect(_real("us_population")).change_points
    assert [c.kind for c in cps] == ["drift"]
    assert cps[0].index == 0 and cps[0].end_index == 815 and cps[0].magnitude_pct > 100


def test_real_nile_step_is_still_the_one_step():
    # Nile volume at Aswan (TCPD): the Aswan dam, 1899, index 28, marked by the annotators.
    (cp,) = detect(_real("nile")).change_points
    assert cp.kind == "step" and cp.index == 28 and cp.direction == "regression"
