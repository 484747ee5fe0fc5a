"""Drift: a sustained slope beyond the noise, reported once per stretch, not as a staircase.

A fabric that degrades over weeks or throttling that creeps in moves the level a little every
run. A level model can only describe that as many small steps; here segments carry a slope.

1. **Segmentation into lines** (PELT, Killick et al. 2012, with a least-squares *line* cost per
   segment): minimises ``sum of segment RSS + beta x #segments``, with
   ``beta = penalty x log(n) x sigma_lr^2``: a BIC-like price per segment (three parameters:
   level, slope, position) in units of the long-run noise variance, so the same default holds
   for any level, spread or length. Steps found before are taken out of the series first, so
   what is left is levels and slopes.
2. **Which lines drift**: a segment's slope counts when its t statistic (slope over its
   standard error, with the long-run noise, so AR(1) wander is not a trend) reaches ``min_z``
   *and* the level moves at least ``min_pct`` percent over the segment, over at least
   ``min_len`` points.
3. **One drift per stretch**: neighbouring drifting segments with the same sign are one drift
   (a slope that changes pace is still the same drift), from the first point of the first
   segment to the last point of the last.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Drift:
    start: int  # first point of the drift
    end: int  # last point of the drift (inclusive)
    start_value: float  # fitted level at start
    end_value: float  # fitted level at end
    z: float  # slope t statistic (the weakest segment of the drift)


def _line_cost_sums(y: np.ndarray) -> np.ndarray:
    n = y.size
    t = np.arange(n, dtype=float) - (n - 1) / 2.0  # centred: keeps the sums small
    sums = np.zeros((6, n + 1))
    for row, values in enumerate((np.ones(n), t, t * t, y, t * y, y * y)):
        np.cumsum(values, out=sums[row, 1:])
    return sums


def _rss(seg: np.ndarray) -> np.ndarray:
    """Residual sum of squares of the least-squares line, per column of segment sums."""
    m, st, stt, sy, sty, syy = seg
    sxx = np.maximum(stt - st * st / m, 1e-300)
    sxy = sty - st * sy / m
    return np.maximum(syy - sy * sy / m - sxy * sxy / sxx, 0.0)


def segment_lines(
    y: np.ndarray, beta: float, *, min_size: int = 5, max_len: int = 300
) -> list[int]:
    """Boundaries (first index of each new segment) of the optimal piecewise-linear fit."""
    n = y.size
    if n < 2 * min_size:
        return []
    y = y - float(np.median(y))
    sums = _line_cost_sums(y)
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
        total = best[cands] + _rss(seg)
        i = int(total.argmin())
        best[t] = total[i] + beta
        last[t] = cands[i]
        keep = total <= best[t]  # PELT pruning: the line RSS is superadditive too
        if t - cands[0] >= max_len:
            keep[0] = False  # bounded segments keep a long quiet stretch linear in time
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


def _segment_long(y: np.ndarray, beta: float, min_size: int, most: int = 1000) -> list[int]:
    """``segment_lines`` on at most ``most`` points: a longer stretch is segmented on means of
    blocks of b points (a line's block means are a line, their noise variance and so the
    penalty b times smaller) and the boundaries mapped back, to within b points, which is
    plenty for where a drift starts. Keeps 10,000 points as fast as 1,000."""
    n = y.size
    b = -(-n // most)
    if b <= 1:
        return segment_lines(y, beta, min_size=min_size)
    blocks = y[: n - n % b].reshape(-1, b).mean(axis=1)
    found = segment_lines(blocks, beta / b, min_size=max(3, -(-min_size // b)))
    return [k * b for k in found if min_size <= k * b <= n - min_size]


def _fit(y: np.ndarray, lo: int, hi: int) -> tuple[float, float, float, float, float]:
    """(slope per point, fitted value at lo, fitted value at hi - 1, sqrt(sum (t - mean)^2),
    standard deviation of the residuals)."""
    t = np.arange(lo, hi, dtype=float)
    tc = t - t.mean()
    sxx = float(tc @ tc)
    part = y[lo:hi]
    mid = float(part.mean())
    slope = float(tc @ (part - mid)) / sxx if sxx > 0 else 0.0
    resid = part - mid - slope * tc
    spread = float(np.sqrt(resid @ resid / max(1, resid.size - 2)))
    return slope, mid + slope * (lo - t.mean()), mid + slope * (hi - 1 - t.mean()), sxx**0.5, spread


def find(
    y: np.ndarray,
    sigma_lr: float,
    level: float,
    *,
    kappa: float = 1.0,
    penalty: float = 3.0,
    min_z: float = 5.0,
    min_pct: float = 3.0,
    min_len: int = 8,
    min_size: int = 5,
    breaks: tuple[int, ...] = (),
) -> list[Drift]:
    """Drifts of ``y`` (steps already removed), given the long-run noise sigma, its long-run
    factor ``kappa`` and the level that percentages refer to when a drift starts near zero.
    ``breaks`` are known changes (steps, variance changes): no line spans one, so a level
    shift left in the series (the mean move of a variance change) cannot pass for a slope."""
    n = y.size
    if n < 2 * min_size or sigma_lr <= 0 or level == 0:
        return []
    beta = penalty * math.log(n) * sigma_lr * sigma_lr
    fixed = [0, *sorted({b for b in breaks if min_size <= b <= n - min_size}), n]
    bounds = [0]
    for lo, hi in itertools.pairwise(fixed):
        bounds += [lo + b for b in _segment_long(y[lo:hi], beta, min_size)] + [hi]
    # (lo, hi, sign of a significant slope or 0, fitted start, fitted end, z)
    pieces: list[tuple[int, int, float, float, float, float]] = []
    for lo, hi in itertools.pairwise(bounds):
        slope, v0, v1, root_sxx, spread = _fit(y, lo, hi)
        # The slope's standard error uses the larger of the series' long-run noise and the
        # segment's own scatter (heavy tails, a noisier or bimodal regime), so a noisy
        # stretch cannot pass for a trend.
        se = max(sigma_lr, spread * kappa) / max(root_sxx, 1e-300)
        z = slope / se
        sign = math.copysign(1.0, slope) if abs(z) >= min_z else 0.0
        pieces.append((lo, hi, sign, v0, v1, z))

    drifts: list[Drift] = []
    k = 0
    while k < len(pieces):
        lo, _, sign, v0, v1, z = pieces[k]
        if sign == 0.0:
            k += 1
            continue
        j, weakest, end_value = k, abs(z), v1
        while j + 1 < len(pieces) and pieces[j + 1][2] == sign:
            j += 1
            weakest = min(weakest, abs(pieces[j][5]))
            end_value = pieces[j][4]
        end = pieces[j][1] - 1
        ref = abs(v0) if abs(v0) > 0.05 * abs(level) else abs(level)
        total = (end_value - v0) / ref * 100.0
        if abs(total) >= min_pct and end - lo + 1 >= min_len:
            drifts.append(Drift(lo, end, v0, end_value, math.copysign(weakest, sign)))
        k = j + 1
    return drifts
