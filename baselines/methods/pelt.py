"""Optimal segmentation into constant levels: PELT with a weighted least-squares cost.

PELT (Killick, Fearnhead & Eckley 2012) finds the exact minimum of
``sum of segment costs + penalty x #changes`` in about linear time by discarding split
candidates that can never be optimal again. The cost is the weighted residual sum of squares
``sum w_i (y_i - weighted mean)^2`` with ``w_i = 1/sigma_i^2``, so points in a noisy (e.g.
bimodal) regime pull less, and the penalty is in noise units: ``penalty_factor x log(n)``
(BIC-like).

It is only the proposal step: it is tuned generous, and ``step_test`` decides which of its
change points are real. Unlike binary segmentation it does find a short dip inside a long
stable stretch, since both edges of the dip are placed jointly. On a long stretch without
changes PELT cannot prune and slows to quadratic time, so no segment may be longer than
``max_len``: a longer stable stretch gets an extra split there, which the step test then
rejects (10,000 points take about 0.1 s on an idle core).
"""

from __future__ import annotations

import math

import numpy as np


def segment(
    y: np.ndarray,
    weights: np.ndarray,
    *,
    penalty_factor: float = 2.0,
    min_size: int = 3,
    max_len: int = 200,
) -> list[int]:
    """Change-point indices (first index of each new segment), ascending."""
    n = y.size
    if n < 2 * min_size:
        return []
    beta = penalty_factor * math.log(n)
    # The cost is shift-invariant; centring keeps the cumulative sums well conditioned when
    # the noise is tiny next to the level (weights are 1/sigma^2).
    y = y - float(np.median(y))
    # Rows: cumulative sums of w, w*y, w*y^2 (one fancy-index fetches all three per step).
    sums = np.zeros((3, n + 1))
    np.cumsum(weights, out=sums[0, 1:])
    np.cumsum(weights * y, out=sums[1, 1:])
    np.cumsum(weights * y * y, out=sums[2, 1:])

    best = np.full(n + 1, np.inf)
    best[0] = -beta
    last = np.zeros(n + 1, dtype=np.int64)
    buffer = np.empty(n + 1, dtype=np.int64)  # candidates live in buffer[:count]
    count = 0
    for t in range(min_size, n + 1):
        new = t - min_size
        if new == 0 or new >= min_size:
            buffer[count] = new
            count += 1
        cands = buffer[:count]
        seg = sums[:, t : t + 1] - sums[:, cands]
        total = best[cands] + (seg[2] - seg[1] * seg[1] / seg[0])
        i = int(total.argmin())
        best[t] = total[i] + beta
        last[t] = cands[i]
        # A candidate whose cost so far already exceeds the optimum can never win later
        # (the least-squares cost is superadditive), so drop it; so is the oldest one once it
        # would make a segment longer than max_len.
        keep = total <= best[t]
        if t - cands[0] >= max_len:
            keep[0] = False
        kept = cands[keep]
        count = kept.size
        buffer[:count] = kept

    cps: list[int] = []
    t = n
    while t > 0:
        t = int(last[t])
        if t > 0:
            cps.append(t)
    return cps[::-1]
