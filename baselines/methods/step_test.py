"""Which proposed change points are real steps: a windowed robust z-test and its guards.

For a candidate at index i, the windows are the points before and after it, up to ``window``
each side and never reaching past the neighbouring candidates (so a dip's start is judged
against the dip only, not the recovery after it). A candidate is a step when

1. **significant**: the difference of winsorised window means, over its standard error from
   the per-point noise sigma (inflated where the neighbourhood scatters more than that
   around a fitted line + step), is at least ``min_z``, or ``min_z x (1 + short_boost / n)``
   when the shorter side has only n = 3 or 4 points: a mean of three heavy-tailed points is
   far less reliable than the Gaussian standard error says (runs of five or more, the
   short regressions that must be caught, keep the plain threshold);
2. **large enough to matter**: at least ``min_pct`` percent of the level before;
3. **abrupt**: fitting line + step around i (over ``trend_window`` points each side, so the
   trend is well pinned down), the step coefficient is itself significant (``min_abrupt_z``
   standard errors) and explains at least half the difference.
   Drift makes neighbouring windows differ too, but a line absorbs it and leaves no step, so
   drift does not become a staircase of step alerts;
4. **a jump, not a bend**: with the slope also free to change at i (line + step + kink), the
   jump that is left must still be at least ``min_pct`` percent of the level. A smooth trend
   that bends (growth that slows, a curve) is fitted by the kink alone and leaves no jump, so
   it is reported as drift (``drift.py``), never as a step.

The standard error of window means is multiplied by ``kappa``, the long-run factor of the
noise (``noise.py``): under AR(1) noise a window mean wanders more than independent points
would let it.

A side shorter than ``short`` points must also *be* a level: all its points (all but one
from five points on) nearer the new level than the old. Two spikes next to a normal point
are not a three-point regression.

Candidates that fail are removed one at a time, weakest first, and their neighbours are
judged again with the wider windows this frees: the segmentation is generous, this is strict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from baselines.methods.robust import MAD_TO_SIGMA, relative_change_pct, winsorised_mean


@dataclass(frozen=True)
class StepStat:
    index: int
    lo: int  # first point of the window before
    hi: int  # end (exclusive) of the window after
    before: float  # robust level before (winsorised mean)
    after: float
    z: float
    pct: float
    abrupt: float  # line+step estimate of the step / difference of means
    abrupt_z: float  # that estimate over its standard error
    passes: bool
    jump: float = 0.0  # the step left when the slope may also change at i (line + step + kink)


@dataclass(frozen=True)
class StepRules:
    window: int = 40
    trend_window: int = 80
    min_size: int = 3
    min_z: float = 5.0
    min_pct: float = 1.0
    min_abrupt_z: float = 4.0
    short: int = 10
    short_boost: float = 1.0
    kappa: float = 1.0  # long-run noise factor: sqrt((1 + phi) / (1 - phi)) for AR(1) noise


def _step_in_line(t: np.ndarray, v: np.ndarray, i: int) -> tuple[float, float, float]:
    """Fit v ~ a + b·t + c·[t ≥ i]: (c, its standard error per unit sigma, MAD-sigma of the
    residuals)."""
    tc = (t - t.mean()) / max(1.0, float(t.std()))
    design = np.column_stack((np.ones_like(tc), tc, (t >= i).astype(float)))
    gram = design.T @ design
    coef = np.linalg.solve(gram, design.T @ v)
    resid = v - design @ coef
    spread = MAD_TO_SIGMA * float(np.median(np.abs(resid - np.median(resid))))
    return float(coef[2]), math.sqrt(float(np.linalg.inv(gram)[2, 2])), spread


def _clip_around_line(v: np.ndarray, sigma: float, c: float = 2.5) -> np.ndarray:
    """v with each point pulled to within c·sigma of the side's own least-squares line: a
    stray point cannot drag the fit, yet a side that trends keeps its slope (clipping around
    the median would flatten a ramp into a level and fake a step where it bends)."""
    if v.size < 3:
        return np.clip(v, np.median(v) - c * sigma, np.median(v) + c * sigma)
    t = np.arange(v.size, dtype=float)
    slope, intercept = np.polyfit(t, v, 1)
    fit = intercept + slope * t
    return fit + np.clip(v - fit, -c * sigma, c * sigma)


def _jump_with_kink(t: np.ndarray, v: np.ndarray, i: int) -> float:
    """The step coefficient of v ~ a + b·t + c·[t ≥ i] + d·(t - i)·[t ≥ i]: the jump at i once
    the slope may change there too (0 when either side is too short to have a slope)."""
    after = t >= i
    if int(np.count_nonzero(after)) < 3 or int(np.count_nonzero(~after)) < 3:
        return float("nan")
    scale = max(1.0, float(t.std()))
    tc = (t - t.mean()) / scale
    kink = np.where(after, (t - i) / scale, 0.0)
    design = np.column_stack((np.ones_like(tc), tc, after.astype(float), kink))
    coef, *_ = np.linalg.lstsq(design, v, rcond=None)
    return float(coef[2])


def _required_z(shorter: int, rules: StepRules) -> float:
    return rules.min_z * (1.0 + rules.short_boost / shorter) if shorter < 5 else rules.min_z


def _is_level(side: np.ndarray, other: float, own: float, short: int) -> bool:
    """Whether a short side sits at its own level: at most one point (none under five)
    is nearer the level on the other side of the change."""
    if side.size >= short:
        return True
    wrong = int(np.count_nonzero(np.abs(side - own) > np.abs(side - other)))
    return wrong <= (0 if side.size < 5 else 1)


def evaluate(
    y: np.ndarray,
    sigma: np.ndarray,
    i: int,
    prev: int,
    nxt: int,
    rules: StepRules,
    scale: float,
) -> StepStat:
    """Statistics of a step at i, given the neighbouring change points (or the ends)."""
    lo, hi = max(prev, i - rules.window), min(nxt, i + rules.window)
    left, right = y[lo:i], y[i:hi]
    n_l, n_r = left.size, right.size
    if n_l < rules.min_size or n_r < rules.min_size:
        return StepStat(i, lo, hi, math.nan, math.nan, 0.0, 0.0, 0.0, 0.0, False)
    sig_l = float(np.sqrt(np.mean(sigma[lo:i] ** 2)))
    sig_r = float(np.sqrt(np.mean(sigma[i:hi] ** 2)))
    before = winsorised_mean(left, sig_l)
    after = winsorised_mean(right, sig_r)
    model = math.sqrt((sig_l**2 * n_l + sig_r**2 * n_r) / (n_l + n_r))

    tlo, thi = max(prev, i - rules.trend_window), min(nxt, i + rules.trend_window)
    wide_l, wide_r = y[tlo:i], y[i:thi]
    clipped = np.concatenate((_clip_around_line(wide_l, sig_l), _clip_around_line(wide_r, sig_r)))
    gamma, unit_se, misfit = _step_in_line(np.arange(tlo, thi, dtype=float), clipped, i)
    inflate = 1.0
    if thi - tlo >= 12:
        # Where the neighbourhood is not "level, then level" plus the regime's noise (it
        # wanders, or the regime sigma is optimistic), the scatter around the fitted
        # line + step is larger than that sigma, and the evidence is worth that much less.
        inflate = max(1.0, misfit / model)
    se = math.sqrt(sig_l**2 / n_l + sig_r**2 / n_r) * inflate * rules.kappa
    delta = after - before
    z = delta / se
    pct = relative_change_pct(before, after, scale)
    abrupt = gamma / delta if delta else 0.0
    abrupt_z = abs(gamma) / (unit_se * model * inflate * rules.kappa)
    jump = _jump_with_kink(np.arange(tlo, thi, dtype=float), clipped, i)
    if not math.isfinite(jump):
        jump = gamma
    jump_pct = relative_change_pct(before, before + jump, scale)
    passes = (
        _is_level(left, after, before, rules.short)
        and _is_level(right, before, after, rules.short)
        and abs(z) >= _required_z(min(n_l, n_r), rules)
        and abs(pct) >= rules.min_pct
        and abrupt >= 0.5
        and abrupt_z >= rules.min_abrupt_z
        and abs(jump_pct) >= rules.min_pct
        and jump * delta > 0
    )
    return StepStat(i, lo, hi, before, after, z, pct, abrupt, abrupt_z, passes, jump)


def confirm(
    y: np.ndarray, sigma: np.ndarray, candidates: list[int], rules: StepRules, scale: float
) -> list[StepStat]:
    """The candidates that survive, with their statistics, in index order."""
    n = y.size
    cps = sorted({c for c in candidates if 0 < c < n})
    cache: dict[tuple[int, int, int], StepStat] = {}
    reach = max(rules.window, rules.trend_window)

    def stat_at(k: int, index: int | None = None) -> StepStat:
        i = cps[k] if index is None else index
        # Neighbours beyond the widest window do not change the result: clamp them so the
        # cache hits when a far-away candidate goes.
        prev = max(cps[k - 1] if k > 0 else 0, i - reach)
        nxt = min(cps[k + 1] if k + 1 < len(cps) else n, i + reach)
        key = (i, prev, nxt)
        if key not in cache:
            cache[key] = evaluate(y, sigma, i, prev, nxt, rules, scale)
        return cache[key]

    while cps:
        stats = [stat_at(k) for k in range(len(cps))]
        failing = [k for k, s in enumerate(stats) if not s.passes]
        if not failing:
            break
        weakest = min(failing, key=lambda k: abs(stats[k].z))
        del cps[weakest]

    # Segmentation placed each edge with all candidates present; with the spurious ones gone
    # the least-squares split may sit a point or two away. (Least squares on a fixed span, not
    # the largest z: z grows when a short segment swallows a few neighbours, which biases.)
    final: list[StepStat] = []
    for k, i in enumerate(cps):
        prev = cps[k - 1] if k > 0 else 0
        nxt = cps[k + 1] if k + 1 < len(cps) else n
        best = stat_at(k)
        j = _least_squares_split(
            y, max(prev, i - rules.window), min(nxt, i + rules.window), i, rules.min_size
        )
        if j != i:
            moved = stat_at(k, j)
            if moved.passes:
                best = moved
        cps[k] = best.index
        final.append(best)
    return final


def _least_squares_split(y: np.ndarray, lo: int, hi: int, near: int, min_size: int) -> int:
    """Best single split of y[lo:hi] within 3 points of ``near`` (ties keep ``near``)."""
    seg = y[lo:hi]
    cs = np.cumsum(seg)
    total, n = float(cs[-1]), seg.size
    best, best_gain = near, -1.0
    for j in range(max(lo + min_size, near - 3), min(hi - min_size, near + 3) + 1):
        n_l = j - lo
        left = float(cs[n_l - 1]) / n_l
        right = (total - float(cs[n_l - 1])) / (n - n_l)
        gain = (left - right) ** 2 * n_l * (n - n_l) / n
        if gain > best_gain + 1e-12 * abs(gain) or (j == near and gain >= best_gain):
            best, best_gain = j, gain
    return best
