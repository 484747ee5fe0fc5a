"""Robust outliers across hosts: median and MAD (Iglewicz & Hoaglin's modified z-score). Pure.

A slow node hides in a fleet of healthy ones: the mean and the standard deviation are
dragged by the very value we look for, the median and the median absolute deviation are
not. The modified z-score ``0.6745 * (x - median) / MAD`` is comparable to a z-score for
normal data; above 3.5 in magnitude is the usual outlier cut.

When more than half the hosts share one value the MAD is 0; then the mean absolute deviation
(scaled by 1.2533 to match a standard deviation) stands in, and if that is 0 too every host
is alike and none is an outlier.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np

THRESHOLD = 3.5
MIN_HOSTS = 3  # two values cannot say which one is odd


@dataclasses.dataclass(frozen=True)
class Score:
    name: str
    value: float
    z: float | None  # modified z-score; None when the spread is 0
    outlier: bool


@dataclasses.dataclass(frozen=True)
class Outliers:
    median: float | None
    mad: float | None
    scale: str  # "mad" | "meanad" | "none"
    scores: tuple[Score, ...]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.scores if s.outlier]


def mad_outliers(
    values: Mapping[str, float],
    *,
    threshold: float = THRESHOLD,
    direction: str = "both",
    min_count: int = MIN_HOSTS,
) -> Outliers:
    """Score each named value; ``direction`` 'low' (bandwidth: slow is bad), 'high' (pause
    rates: many is bad) or 'both'. NaN/inf values are left out."""
    if direction not in ("both", "low", "high"):
        raise ValueError(f"direction must be 'both', 'low' or 'high', not {direction!r}")
    clean = {k: float(v) for k, v in values.items() if v is not None and math.isfinite(v)}
    if not clean:
        return Outliers(None, None, "none", ())
    data = np.array(list(clean.values()), dtype=float)
    median = float(np.median(data))
    mad = float(np.median(np.abs(data - median)))
    scale, spread = "mad", mad / 0.6745
    if mad == 0:
        mean_ad = float(np.mean(np.abs(data - median)))
        scale, spread = ("meanad", mean_ad * 1.2533) if mean_ad > 0 else ("none", 0.0)
    scores = []
    for name, value in sorted(clean.items(), key=lambda kv: kv[1]):
        z = (value - median) / spread if spread > 0 else None
        is_out = (
            len(clean) >= min_count
            and z is not None
            and (
                (direction == "both" and abs(z) > threshold)
                or (direction == "low" and z < -threshold)
                or (direction == "high" and z > threshold)
            )
        )
        scores.append(Score(name, value, None if z is None else round(z, 3), bool(is_out)))
    return Outliers(median, mad, scale, tuple(scores))
