"""Isolated spikes: a Hampel filter whose flagged runs must be short to count as outliers.

A point far from the median of its neighbourhood (more than ``k`` local sigmas) is suspicious.
Whether it is an outlier or part of a real change depends on its neighbours: consecutive
flagged points on the same side form a run, and only runs of at most ``max_run`` points are
outliers (one or two bad runs, not a five-run dip). Outliers must also be isolated: when
``crowd`` or more other points on the same side are flagged within a half-window, the
far-out points are a pattern (a deep dip with a point that fell short of the threshold, or a
series flipping between two levels whose minority level recurs every few points), which the
step test and the variance scan must still see.
The local sigma never drops below the caller's noise estimate, so a quiet stretch cannot
turn ordinary noise into outliers.
"""

from __future__ import annotations

import numpy as np

from baselines.methods.robust import MAD_TO_SIGMA


def rolling_median_mad(y: np.ndarray, half_window: int) -> tuple[np.ndarray, np.ndarray]:
    """Centred rolling median and MAD-sigma; windows shrink at the ends of the series."""
    n = y.size
    width = 2 * half_window + 1
    padded = np.concatenate((np.full(half_window, np.nan), y, np.full(half_window, np.nan)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, width)
    if n > 2 * half_window:
        # The interior has no NaN: plain median is much faster than nanmedian.
        med = np.empty(n)
        mad = np.empty(n)
        inner = windows[half_window : n - half_window]
        med[half_window : n - half_window] = np.median(inner, axis=1)
        dev = np.abs(inner - med[half_window : n - half_window, None])
        mad[half_window : n - half_window] = np.median(dev, axis=1)
        edge = np.r_[0:half_window, n - half_window : n]
    else:
        med = np.empty(n)
        mad = np.empty(n)
        edge = np.arange(n)
    if edge.size:
        ew = windows[edge]
        med[edge] = np.nanmedian(ew, axis=1)
        mad[edge] = np.nanmedian(np.abs(ew - med[edge, None]), axis=1)
    return med, MAD_TO_SIGMA * mad


def hampel(
    y: np.ndarray,
    sigma: np.ndarray,
    *,
    half_window: int = 5,
    k: float = 4.0,
    max_run: int = 2,
    crowd: int = 2,
) -> tuple[np.ndarray, np.ndarray]:
    """(outlier positions, series with outliers replaced by their local median).

    ``sigma`` is the per-point noise floor (the series' robust sigma, per variance regime).
    A run of flagged points is an outlier only if at most ``max_run`` long and fewer than
    ``crowd`` other points on the same side are flagged within a half-window of it.
    """
    n = y.size
    if n < 3:
        return np.zeros(0, dtype=np.int64), y.copy()
    med, local = rolling_median_mad(y, half_window)
    scale = np.maximum(local, sigma)
    dev = y - med
    flagged = np.abs(dev) > k * scale
    if not flagged.any():
        return np.zeros(0, dtype=np.int64), y.copy()
    side = np.sign(dev)

    outliers: list[int] = []
    i = 0
    for f in np.flatnonzero(flagged):
        if f < i:
            continue  # inside a run handled already
        hi = f
        while hi + 1 < n and flagged[hi + 1] and side[hi + 1] == side[f]:
            hi += 1
        i = hi + 1
        near = np.r_[max(0, f - half_window) : f, hi + 1 : min(n, hi + 1 + half_window)]
        crowded = int(np.count_nonzero(flagged[near] & (side[near] == side[f]))) >= crowd
        if hi - f + 1 <= max_run and not crowded:
            outliers.extend(range(f, hi + 1))
    idx = np.asarray(outliers, dtype=np.int64)
    cleaned = y.copy()
    cleaned[idx] = med[idx]
    return idx, cleaned
