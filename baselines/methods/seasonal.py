"""Repeating patterns (nightly runs with a weekly rhythm): found, measured and taken out.

A weekly pattern (a shared cluster busier on weekdays, a weekend maintenance job) makes a
nightly series move by the same amount on the same weekday, week after week. Left in, each
busy stretch looks like a short regression and each quiet one like a recovery.

Test: for a period p, the differences at lag p cancel the pattern, those at lag 1 do not.
With no pattern both have the same spread (white noise), and trend or AR(1) noise make the
lag-p ones *larger* (they span more drift, correlation fades with distance), so only a real
pattern makes them markedly smaller: the robust spread of lag-p differences must be at most
``max_ratio`` of the lag-1 one. The smallest such period wins (7 before 14 and 21).

Removal: a centred moving average over exactly one period (the classical decomposition,
2 x p for even p) cancels the pattern and keeps the level; the median residual at each phase
is the pattern's value there (a step or an outlier moves one phase's median little), centred
to sum to zero, and is subtracted. Levels, steps and drift stay where they were.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from baselines.methods.robust import mad_sigma


@dataclass(frozen=True)
class Season:
    period: int
    ratio: float  # spread of lag-period differences / lag-1 differences (< 1: a pattern)
    pattern: np.ndarray  # value per phase (index % period), centred on zero


def find_period(
    x: np.ndarray, *, max_period: int = 24, max_ratio: float = 0.6, min_cycles: int = 4
) -> tuple[int, float] | None:
    """(period, ratio) of the clearest repeating pattern, or None."""
    n = x.size
    s1 = mad_sigma(np.diff(x))
    if s1 == 0.0:
        return None
    ratios: dict[int, float] = {}
    for p in range(2, min(max_period, n // min_cycles) + 1):
        ratios[p] = mad_sigma(x[p:] - x[:-p]) / s1
    if not ratios:
        return None
    best = min(ratios.values())
    if best > max_ratio:
        return None
    # The fundamental period, not a multiple of it: the smallest one about as good as the best.
    period = min(p for p, r in ratios.items() if r <= best * 1.15 + 0.02)
    return period, ratios[period]


def estimate(x: np.ndarray, period: int, ratio: float) -> Season:
    """The pattern of ``x`` at ``period`` (values per phase, summing to zero)."""
    if period % 2:
        weights = np.full(period, 1.0 / period)
    else:
        weights = np.r_[0.5, np.ones(period - 1), 0.5] / period
    half = weights.size // 2
    trend = np.convolve(x, weights, mode="valid")  # trend[k] is centred on x[k + half]
    resid = x[half : half + trend.size] - trend
    phases = (np.arange(resid.size) + half) % period
    pattern = np.array(
        [
            float(np.median(resid[phases == k])) if np.any(phases == k) else 0.0
            for k in range(period)
        ]
    )
    return Season(period, ratio, pattern - pattern.mean())


def remove(x: np.ndarray, **options: float) -> tuple[np.ndarray, Season | None]:
    """(x without its repeating pattern, the pattern) or (x, None) when there is none."""
    found = find_period(x, **options)  # type: ignore[arg-type]
    if found is None:
        return x, None
    season = estimate(x, *found)
    return x - season.pattern[np.arange(x.size) % season.period], season
