"""Welch's t-test for two small samples with unequal spreads, without SciPy. Pure.

A sweep compares a handful of replicates per setting value (often 3-5), and two values of
NCCL_PROTO need not be equally noisy: Welch's test makes neither assumption of equal size nor
of equal variance. The p-value comes from Student's t distribution through the regularised
incomplete beta function (continued fraction, modified Lentz), accurate to ~1e-10 here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Welch:
    t: float
    df: float
    p_two_sided: float


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def sample_sd(values: Sequence[float]) -> float | None:
    """Sample standard deviation (n - 1); None for fewer than two values."""
    if len(values) < 2:
        return None
    m = mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def welch(a: Sequence[float], b: Sequence[float], *, sd_floor: float = 0.0) -> Welch | None:
    """Welch's test of mean(a) != mean(b); None when a side has fewer than two values.

    ``sd_floor``: the least spread a side may claim. Replicates printed with two decimals can
    be identical, and a spread of zero would make any difference "significant"; the rounding
    noise of the print step (step / sqrt(12)) is the floor the detectors use too.
    """
    if len(a) < 2 or len(b) < 2:
        return None
    va = max(sample_sd(a) or 0.0, sd_floor) ** 2 / len(a)
    vb = max(sample_sd(b) or 0.0, sd_floor) ** 2 / len(b)
    diff = mean(a) - mean(b)
    if va + vb == 0.0:
        return Welch(math.copysign(math.inf, diff) if diff else 0.0, math.inf, 0.0 if diff else 1.0)
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return Welch(t, df, student_two_sided_p(t, df))


def student_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    x = df / (df + t * t)
    return min(1.0, max(0.0, incomplete_beta(df / 2.0, 0.5, x)))


def incomplete_beta(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry
    # I_x(a, b) = 1 - I_{1-x}(b, a) on the other side.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-12:
            break
    return result
