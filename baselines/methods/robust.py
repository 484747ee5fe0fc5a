"""Robust location and scale estimates shared by the detection methods.

Benchmark series have outliers (a node that lost its NIC for one run), steps (a version
change) and drift (thermal, fabric load), so every scale estimate here is built from first
differences or medians: a step moves one difference, a spike two, drift almost none.
"""

from __future__ import annotations

import math

import numpy as np

# Converts a median absolute deviation to the standard deviation of a Gaussian.
MAD_TO_SIGMA = 1.482602218505602
# 90th percentile of |N(0, 1)|: converts a 90th-percentile absolute deviation to a sigma.
Q90_ABS_NORMAL = 1.6448536269514722


def mad_sigma(x: np.ndarray) -> float:
    """Sigma from the median absolute deviation around the median (0.0 for empty input)."""
    if x.size == 0:
        return 0.0
    return MAD_TO_SIGMA * float(np.median(np.abs(x - np.median(x))))


def diff_sigma(x: np.ndarray) -> float:
    """Noise sigma of a series from the MAD of its first differences.

    Immune to level shifts and slow drift (they barely change the differences). Falls back to
    the mean absolute difference when most differences are zero (quantised values).
    """
    if x.size < 3:
        return mad_sigma(x)
    d = np.diff(x)
    sigma = mad_sigma(d) / math.sqrt(2.0)
    if sigma == 0.0:
        # E|N(0, 2sigma^2)| = 2sigma/√π.
        sigma = float(np.mean(np.abs(d))) * math.sqrt(math.pi) / 2.0
    return sigma


def diff_sigma_q90(d: np.ndarray) -> float:
    """Sigma from the 90th percentile of |first differences|.

    Unlike the MAD it sees a series that flips between two levels (a third or more of the
    differences are a whole gap wide), yet ignores a few spikes and steps (under 10 %).
    """
    if d.size == 0:
        return 0.0
    return float(np.quantile(np.abs(d), 0.9)) / (Q90_ABS_NORMAL * math.sqrt(2.0))


def sigma_floor(sigma: float, level: float) -> float:
    """A strictly positive sigma: constant series get a tiny one so tests stay finite."""
    return max(sigma, 1e-9 * abs(level), 1e-12)


def winsorised_mean(x: np.ndarray, sigma: float, c: float = 2.5) -> float:
    """Mean after clipping at median ± c·sigma: one wild value cannot drag a window."""
    med = float(np.median(x))
    return float(np.mean(np.clip(x, med - c * sigma, med + c * sigma)))


def relative_change_pct(before: float, after: float, scale: float) -> float:
    """(after - before) / |before| in percent; ``scale`` stands in when before is ~0."""
    denom = abs(before) if abs(before) > 1e-12 else abs(scale)
    if denom <= 1e-12:
        return 0.0
    return (after - before) / denom * 100.0
