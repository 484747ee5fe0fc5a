"""Median/MAD outliers name the slow node and stay quiet on a healthy fleet."""

from __future__ import annotations

import math

import pytest

from artifacts.fabric.outliers import mad_outliers

HEALTHY = {f"node{i:02d}": v for i, v in enumerate([47.8, 47.5, 48.1, 47.9, 47.6, 48.0, 47.7])}


def test_one_slow_node_among_healthy_ones_is_named() -> None:
    result = mad_outliers({**HEALTHY, "node99": 28.3}, direction="low")
    assert result.names == ["node99"]
    assert result.median == pytest.approx(47.8, abs=0.05)
    slow = next(s for s in result.scores if s.name == "node99")
    assert slow.z is not None and slow.z < -3.5


def test_healthy_fleet_has_no_outlier() -> None:
    assert mad_outliers(HEALTHY).names == []


def test_direction_decides_which_side_counts() -> None:
    values = {**HEALTHY, "fast": 90.0}
    assert mad_outliers(values, direction="low").names == []
    assert mad_outliers(values, direction="high").names == ["fast"]
    assert mad_outliers(values, direction="both").names == ["fast"]


def test_mostly_identical_values_fall_back_to_mean_absolute_deviation() -> None:
    # PFC pause rates: most hosts see none at all, one pauses like mad
    values = {f"h{i}": 0.0 for i in range(9)} | {"storm": 5000.0}
    result = mad_outliers(values, direction="high")
    assert result.mad == 0 and result.scale == "meanad"
    assert result.names == ["storm"]


def test_all_equal_means_no_outlier_and_no_score() -> None:
    result = mad_outliers({"a": 1.0, "b": 1.0, "c": 1.0})
    assert result.names == [] and result.scale == "none"
    assert all(s.z is None for s in result.scores)


def test_too_few_hosts_never_name_an_outlier() -> None:
    assert mad_outliers({"a": 1.0, "b": 100.0}).names == []


def test_nan_and_infinite_values_are_left_out() -> None:
    result = mad_outliers({**HEALTHY, "broken": math.nan, "inf": math.inf})
    assert {s.name for s in result.scores} == set(HEALTHY)


def test_empty_and_bad_direction() -> None:
    assert mad_outliers({}).median is None
    with pytest.raises(ValueError, match="direction"):
        mad_outliers(HEALTHY, direction="sideways")
