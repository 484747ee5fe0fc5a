"""The app's single door to ``baselines.curve_compare`` (the statistics live there).

It turns database rows into the frames ``curve_compare`` takes and its result into the
plain values the app stores and renders, so that models, alerts and pages never depend on
the shape of the statistics code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from baselines import curve_compare


@dataclass(frozen=True)
class SizeChange:
    size_bytes: int
    delta_pct: float
    low_pct: float | None
    high_pct: float | None
    change: str  # "regressed" | "improved" | "unchanged"
    reference_value: float | None
    value: float | None
    in_range: bool  # part of a changed size range (isolated single sizes do not alert)


@dataclass(frozen=True)
class CurveResult:
    verdict: str
    sizes: tuple[SizeChange, ...]
    ranges: tuple[tuple[int, int, str], ...]  # (low_bytes, high_bytes, "regressed"|"improved")
    method: str
    json: dict[str, Any]

    def ranges_of(self, direction: str) -> list[list[int]]:
        return [[low, high] for low, high, d in self.ranges if d == direction]

    def worst_delta_pct(self) -> float | None:
        changed = [s.delta_pct for s in self.sizes if s.change == "regressed" and s.in_range]
        deltas = changed or [s.delta_pct for s in self.sizes if math.isfinite(s.delta_pct)]
        return min(deltas) if deltas else None


def compare(
    reference: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    tolerance_pct: float,
    direction: str = "higher",
    resolution: float | dict[int, float] = 0.0,
) -> CurveResult | None:
    """Frames with run_id, size_bytes, value. None when there is nothing to compare.
    ``resolution``: the values' print step (per size), see ``curve_compare``."""
    if reference.empty or candidate.empty:
        return None
    result = curve_compare.compare_curves(
        reference,
        candidate,
        tolerance_pct=tolerance_pct,
        direction="lower" if direction == "lower" else "higher",
        resolution=resolution,
    )
    if not result.sizes:
        return None  # no size in common
    return _convert(result)


def _convert(result: curve_compare.CurveComparison) -> CurveResult:
    ranges = tuple((int(r.low_bytes), int(r.high_bytes), str(r.direction)) for r in result.ranges)

    def in_range(size: int, change: str) -> bool:
        return any(lo <= size <= hi and d == change for lo, hi, d in ranges)

    sizes = tuple(
        SizeChange(
            size_bytes=int(row.size_bytes),
            delta_pct=_float(row.delta_pct),
            low_pct=_maybe(row.low_pct),
            high_pct=_maybe(row.high_pct),
            change=str(row.change),
            reference_value=_maybe(row.reference),
            value=_maybe(row.candidate),
            in_range=in_range(int(row.size_bytes), str(row.change)),
        )
        for row in result.sizes
    )
    return CurveResult(
        verdict=str(result.verdict),
        sizes=sizes,
        ranges=ranges,
        method=result.method,
        json=result.to_json(),
    )


def _float(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number


def _maybe(value: Any) -> float | None:
    number = _float(value)
    return number if math.isfinite(number) else None
