"""Variance-only and bimodal changes (NCCL algorithm/protocol switching) are their own kind."""

from __future__ import annotations

import pytest

from baselines.detect import detect
from tests.baselines.detect_series import LEVEL, bimodal, noise


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("gap", "p"), [(6.0, 0.5), (10.0, 0.3)])
def test_a_series_that_starts_flipping_between_two_levels_is_a_variance_change(seed, gap, p):
    y, first = bimodal(seed, 180, gap, p)
    found = detect(y).change_points
    assert [c.kind for c in found] == ["variance"], found
    (cp,) = found
    assert abs(cp.index - first) <= 10
    assert cp.direction == "regression"  # more scatter is worse
    assert cp.magnitude_pct > 50  # the spread more than grew by half
    assert cp.after > cp.before


@pytest.mark.parametrize("seed", range(3))
def test_flipping_points_are_not_reported_as_outliers(seed):
    y, first = bimodal(seed, 180, 10.0, 0.3)
    result = detect(y)
    assert not [i for i in result.outliers if i >= first]


@pytest.mark.parametrize("seed", range(3))
def test_noise_that_triples_is_a_variance_regression_and_calming_down_an_improvement(seed):
    y = noise(seed, 400)
    y[200:] = LEVEL + (y[200:] - LEVEL) * 3
    (up,) = detect(y).change_points
    assert up.kind == "variance" and up.direction == "regression"
    assert abs(up.index - 200) <= 10
    (down,) = detect(y[::-1].copy()).change_points
    assert down.kind == "variance" and down.direction == "improvement"
    assert down.magnitude_pct < -40


def test_variance_direction_does_not_depend_on_which_way_is_better():
    y, _ = bimodal(1, 180, 6.0, 0.5)
    assert detect(y, direction="lower").change_points[0].direction == "regression"


def test_a_real_step_together_with_more_noise_is_reported_as_both():
    y = noise(2, 400)
    y[200:] = LEVEL * 0.85 + (y[200:] - LEVEL) * 3  # -15 % and three times noisier
    kinds = sorted(c.kind for c in detect(y).change_points)
    assert kinds == ["step", "variance"]
