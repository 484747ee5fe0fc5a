"""Repeating patterns (nightly runs with a weekly rhythm): found, measured and taken out.

A weekly pattern (a shared cluster busier on weekdays, a weekend maintenance job) makes a
nightly series move by the same amount on the same weekday, week after week. Left in, each
busy stretch looks like a short regression and each quiet one like a recovery.

Test: on the first differences d (a trend turns into a constant there), d[t] - d[t - p]
cancels a period-p pattern and other lags keep it; without a pattern every lag of 2 or more
gives the same spread, and AR(1) noise makes the short lags the larger ones. So only a real
pattern makes one lag's spread markedly smaller than the median lag's: at most ``max_ratio``
of it (the spread is an RMS clipped at four robust sigmas: a pattern that moves two points
in seven counts, where a MAD would ignore a minority that large, and a rare spike or step
does not). The smallest such period wins (7 before 14 and 21).

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


def _spread(d: np.ndarray, clip: float) -> float:
    """RMS of differences clipped at ``clip``: a pattern that moves two points in seven
    counts (a MAD would ignore a minority that large), a rare spike or step does not."""
    return float(np.sqrt(np.mean(np.minimum(d * d, clip * clip))))


def find_period(
    x: np.ndarray, *, max_period: int = 24, max_ratio: float = 0.8, min_cycles: int = 4
) -> tuple[int, float] | None:
    """(period, ratio) of the clearest repeating pattern, or None.

    Works on the first differences d (a trend becomes a constant, gone once differenced
    again): d[t] - d[t - p] cancels a period-p pattern, other lags keep it, and without a
    pattern every lag of 2 or more gives the same spread. The ratio is the lag-p spread over
    the median one across lags. Without a pattern it is 1 give or take about 1/sqrt(n), so the
    threshold is also held four of those below 1: a short series must show a clearer pattern
    than a long one.
    """
    n = x.size
    d = np.diff(x)
    top = min(max_period, n // min_cycles)
    if top < 2:
        return None
    clip = 4.0 * mad_sigma(d[1:] - d[:-1])
    if clip == 0.0:
        return None
    spreads = {p: _spread(d[p:] - d[:-p], clip) for p in range(2, top + 1)}
    typical = float(np.median(list(spreads.values())))
    if typical == 0.0:
        return None
    ratios = {p: v / typical for p, v in spreads.items()}
    best = min(ratios.values())
    if best > min(max_ratio, 1.0 - 4.0 / np.sqrt(n)):
        return None
    # The fundamental period, not a multiple of it: the smallest one about as good as the best.
    period = min(p for p, r in ratios.items() if r <= best * 1.1 + 0.02)
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
