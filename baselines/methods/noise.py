"""How much a window mean or a fitted slope can move by chance: the noise model of a series.

Nightly benchmark runs are rarely independent: a warm cache, a busy fabric or a thermal state
carries over from one run to the next, which makes the noise AR(1)-like (each point leans on
the one before with weight phi). Every statistic here is built from first differences, so
steps and drift barely move it (a step is one large difference, drift shifts them all by the
same amount), and the raw variance, which a trend or a step inflates, is never used.

For AR(1) noise with coefficient phi the first differences have lag-1 autocorrelation
-(1 - phi) / 2 (-0.5 for white noise), so phi = 1 + 2 rho. The lag-1 correlation is measured
robustly (Gnanadesikan-Kettenring: MAD scales of the sums and differences of neighbouring
differences), and only the part of phi that stands out from its sampling error is kept: white
noise must not look autocorrelated by chance, which would cost power on every series.

The long-run factor kappa = sqrt((1 + phi) / (1 - phi)) is how much more a mean of m
correlated points varies than a mean of m independent ones with the same per-point spread;
``baselines.detect`` multiplies the standard error of windowed means and fitted slopes by it.
"""

from __future__ import annotations

import math

import numpy as np

from baselines.methods.robust import mad_sigma

MAX_PHI = 0.9  # beyond this the series is a random walk: slopes, not levels, describe it


def ar1_phi(x: np.ndarray) -> float:
    """The AR(1) coefficient of the noise of ``x`` (0 for white noise), from the lag-1
    correlation of its first differences, shrunk by one standard error and clipped to
    [0, MAX_PHI]."""
    d = np.diff(x)
    if d.size < 20:
        return 0.0
    # A trend whose slope changes slowly (growth that speeds up or slows down) also makes
    # neighbouring differences alike; that is the level's shape, not the noise's memory.
    # Taking out the local median difference keeps only what changes from run to run.
    half = 4
    padded = np.pad(d, half, mode="edge")
    local = np.median(np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1), axis=1)
    d = d - local
    u, v = d[1:], d[:-1]
    plus, minus = mad_sigma(u + v), mad_sigma(u - v)
    top = max(plus, minus)
    if top == 0.0:
        return 0.0
    plus, minus = plus / top, minus / top  # squares of tiny scales must not underflow
    rho = (plus * plus - minus * minus) / (plus * plus + minus * minus)
    # Bartlett: the lag-1 correlation of white-noise differences (an MA(1) with rho -0.5) has
    # variance about 0.5 / n; the robust (MAD) version about 1.7x that. phi = 1 + 2 rho.
    se_phi = 2.0 * math.sqrt(0.85 / d.size)
    phi = 1.0 + 2.0 * rho - se_phi
    return min(MAX_PHI, max(0.0, phi))


def long_run_factor(phi: float) -> float:
    """sqrt((1 + phi) / (1 - phi)): the standard error of a mean of correlated points over
    that of independent ones (1 for white noise)."""
    phi = min(MAX_PHI, max(0.0, phi))
    return math.sqrt((1.0 + phi) / (1.0 - phi))


def marginal_from_diff_sigma(diff_sigma: float, phi: float) -> float:
    """Per-point noise sigma from the differences' sigma (MAD(d) / sqrt 2): for AR(1) noise
    the differences see only sqrt(1 - phi) of it."""
    return diff_sigma / math.sqrt(max(1e-6, 1.0 - min(MAX_PHI, max(0.0, phi))))
