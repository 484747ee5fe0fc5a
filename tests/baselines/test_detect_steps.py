"""Steps, short regressions and spikes: what baselines.detect reports for each (no Django)."""

from __future__ import annotations

import pytest

from baselines.detect import ChangePoint, detect
from tests.baselines.detect_series import dip, noise, step

SEEDS = range(5)


def _steps(cps: tuple[ChangePoint, ...]) -> list[ChangePoint]:
    return [c for c in cps if c.kind == "step"]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("pct", [-3.0, 3.0, -10.0, 10.0])
def test_a_step_of_3_percent_or_more_at_1_percent_noise_is_found_and_placed(seed, pct):
    found = detect(step(seed, 150, pct)).change_points
    assert len(found) == 1, found
    cp = found[0]
    assert cp.kind == "step"
    assert abs(cp.index - 150) <= 2
    assert cp.direction == ("improvement" if pct > 0 else "regression")
    assert cp.magnitude_pct == pytest.approx(pct, abs=1.0)
    assert cp.before == pytest.approx(100, abs=1) and cp.after == pytest.approx(100 + pct, abs=1)


@pytest.mark.parametrize("seed", SEEDS)
def test_lower_is_better_flips_the_direction_not_the_magnitude(seed):
    y = step(seed, 120, 5.0)  # latency went up by 5 %
    higher = detect(y).change_points[0]
    lower = detect(y, direction="lower").change_points[0]
    assert higher.direction == "improvement"
    assert lower.direction == "regression"
    assert lower.index == higher.index and lower.magnitude_pct == higher.magnitude_pct


def test_several_steps_are_each_found():
    y = noise(3, 500)
    for at, pct in ((100, -4.0), (220, 6.0), (380, -5.0)):
        y[at:] *= 1 + pct / 100
    found = _steps(detect(y).change_points)
    assert [c.direction for c in found] == ["regression", "improvement", "regression"]
    assert [abs(c.index - at) <= 2 for c, at in zip(found, (100, 220, 380), strict=True)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("length", [5, 8])
def test_a_short_regression_is_reported_at_its_start_and_its_recovery(seed, length):
    found = detect(dip(seed, 140, length, 5.0)).change_points
    assert len(found) == 2, found
    start, end = found
    assert abs(start.index - 140) <= 2 and start.direction == "regression"
    assert abs(end.index - (140 + length)) <= 2 and end.direction == "improvement"
    assert start.end_index == end.index  # the start knows where the level came back
    assert end.end_index is None


def test_a_step_that_stays_has_no_end_index():
    (cp,) = detect(step(1, 100, -5.0)).change_points
    assert cp.end_index is None


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("width", [1, 2])
@pytest.mark.parametrize("pct", [-30.0, -10.0, 15.0])
def test_one_or_two_spiked_points_are_outliers_not_changes(seed, width, pct):
    y = noise(seed)
    y[150 : 150 + width] *= 1 + pct / 100
    result = detect(y)
    assert result.change_points == ()
    assert set(range(150, 150 + width)) <= set(result.outliers)


def test_spikes_at_the_ends_are_outliers():
    y = noise(4)
    y[0] *= 0.7
    y[-1] *= 0.7
    result = detect(y)
    assert result.change_points == ()
    assert {0, len(y) - 1} <= set(result.outliers)


def test_a_dip_of_five_points_is_not_mistaken_for_outliers():
    result = detect(dip(2, 150, 5, 20.0))
    assert not set(range(150, 155)) & set(result.outliers)
    starts = [c.index for c in result.change_points]
    assert len(starts) == 2 and abs(starts[0] - 150) <= 1 and abs(starts[1] - 155) <= 1


def test_a_step_below_the_magnitude_floor_is_not_an_alert_unless_asked():
    y = noise(5, 400, pct=0.1)
    y[200:] *= 1.01  # 1 %: ten noise sigmas, but under the default 1.5 % floor
    assert detect(y).change_points == ()
    (cp,) = detect(y, min_magnitude_pct=0.5).change_points
    assert abs(cp.index - 200) <= 1
