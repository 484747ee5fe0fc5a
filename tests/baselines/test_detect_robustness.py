"""No alerts where nothing changed, and any input handled (no Django needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baselines.detect import Detection, Tuning, detect
from tests.baselines.detect_series import LEVEL, noise


@pytest.mark.parametrize("seed", range(8))
def test_stationary_gaussian_noise_raises_no_alert(seed):
    assert detect(noise(seed, 2000)).change_points == ()


@pytest.mark.parametrize("seed", range(8))
def test_heavy_tailed_noise_with_rare_large_spikes_raises_no_alert(seed):
    rng = np.random.default_rng(100 + seed)
    y = noise(seed, 2000)
    hits = rng.random(y.size) < 0.01
    y[hits] *= 1 + rng.choice((-1, 1), hits.sum()) * rng.uniform(0.05, 0.3, hits.sum())
    result = detect(y)
    assert result.change_points == ()
    assert len(set(np.flatnonzero(hits)) & set(result.outliers)) >= 0.8 * hits.sum()


@pytest.mark.parametrize("seed", range(4))
def test_student_t_noise_raises_no_alert(seed):
    rng = np.random.default_rng(200 + seed)
    y = LEVEL * (1 + 0.01 * rng.standard_t(3, 2000) / 1.13)
    assert detect(y).change_points == ()


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("total_pct", [5.0, 10.0])
def test_slow_linear_drift_raises_no_step_alert(seed, total_pct):
    y = noise(seed, 400) * np.linspace(1, 1 - total_pct / 100, 400)
    assert [c for c in detect(y).change_points if c.kind == "step"] == []


def test_a_step_on_top_of_drift_is_still_found():
    y = noise(6, 400) * np.linspace(1, 0.95, 400)
    y[250:] *= 0.95
    (cp,) = [c for c in detect(y).change_points if c.kind == "step"]
    assert abs(cp.index - 250) <= 2 and cp.direction == "regression"


def test_empty_short_and_constant_input():
    assert detect([]) == Detection(change_points=(), outliers=())
    assert detect([1.0]).change_points == ()
    assert detect([5.0] * 100).change_points == ()
    assert detect([0.0] * 50).change_points == ()


def test_a_step_in_an_otherwise_constant_series_is_found():
    (cp,) = detect([10.0] * 50 + [12.0] * 50).change_points
    assert cp.index == 50 and cp.magnitude_pct == pytest.approx(20.0)


def test_a_spike_in_a_constant_series_is_an_outlier():
    values = [10.0] * 100
    values[40] = 50.0
    assert detect(values) == Detection(change_points=(), outliers=(40,))


def test_non_finite_values_are_outliers_and_indices_stay_those_of_the_input():
    y = list(noise(1, 300))
    y[150:] = [v * 0.95 for v in y[150:]]
    y[10], y[20], y[30] = math.nan, math.inf, -math.inf
    result = detect(y)
    assert {10, 20, 30} <= set(result.outliers)
    (cp,) = result.change_points
    assert abs(cp.index - 150) <= 2


def test_scale_does_not_matter():
    y = noise(2, 300)
    y[150:] *= 0.95
    for factor in (1e-300, 1e-6, 1.0, 1e300):
        (cp,) = detect(y * factor).change_points
        assert abs(cp.index - 150) <= 2
        assert cp.magnitude_pct == pytest.approx(-5.0, abs=1.0)


def test_to_json_is_plain_and_finite():
    y = noise(3, 300)
    y[100:105] *= 0.9
    data = detect(y).to_json()
    assert set(data) == {"change_points", "outliers"}
    first = data["change_points"][0]
    assert {"index", "direction", "magnitude_pct", "kind"} <= set(first)
    assert first["end_index"] == data["change_points"][1]["index"]
    assert all(isinstance(v, int | float | str) for v in first.values())


def test_bad_tuning_and_direction_are_refused_with_a_clear_message():
    with pytest.raises(TypeError, match="unknown tuning option"):
        detect([1.0, 2.0], windw=3)
    with pytest.raises(ValueError, match="min_segment"):
        Tuning(min_segment=1)
    with pytest.raises(ValueError, match="direction"):
        detect([1.0, 2.0], direction="up")  # type: ignore[arg-type]


finite = st.floats(allow_nan=False, allow_infinity=False)
anything = st.floats(allow_nan=True, allow_infinity=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, max_size=300))
def test_detect_never_raises_on_finite_floats(values):
    result = detect(values)
    data = result.to_json()
    for cp in result.change_points:
        assert 0 <= cp.index < len(values)
        assert math.isfinite(cp.magnitude_pct)
    assert all(0 <= i < len(values) for i in data["outliers"])
    assert list(data["outliers"]) == sorted(set(data["outliers"]))


@settings(max_examples=100, deadline=None)
@given(st.lists(anything, max_size=200), st.sampled_from(["higher", "lower"]))
def test_detect_never_raises_with_nan_and_inf(values, direction):
    result = detect(values, direction=direction)
    bad = {i for i, v in enumerate(values) if not math.isfinite(v)}
    assert bad <= set(result.outliers)
    assert not bad & {cp.index for cp in result.change_points}


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=3), min_size=10, max_size=200),
    st.floats(min_value=1e-3, max_value=1e6),
)
def test_quantised_series_never_raise(levels, unit):
    detect([level * unit for level in levels])
