"""The one place reports talk to the baselines app: its curve comparison and its baselines.

Reports never compute their own statistics: the per-size Δ% with its uncertainty band and the
curve verdict come from ``baselines.curve_compare``; "the baseline of this run" comes from
the baselines app's matching. This module only adapts their shapes to the report's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from artifacts.models import BenchmarkRun
from reports.comparisons import PER_SIZE_COLUMNS, Comparer, PairComparison, SizeRange

UNASSESSED = "unassessed"


@dataclass(frozen=True)
class BaselineRef:
    """What a run is compared with, as a report side: a pinned baseline, or (when its
    profile has none for this benchmark) the recent runs the baselines app falls back to."""

    id: int | None  # the Baseline row, None for "recent runs"
    name: str
    runs: tuple[BenchmarkRun, ...]
    tolerance_pct: float

    @property
    def side_label(self) -> str:
        return (f"baseline {self.name}" if self.id else self.name)[:60]

    def pin(self) -> dict[str, Any]:
        return {
            "baseline_id": self.id,
            "name": self.name,
            "side": self.side_label,
            "run_ids": [r.pk for r in self.runs],
            "tolerance_pct": self.tolerance_pct,
        }


def curve_comparer() -> Comparer:
    """``baselines.curve_compare.compare_curves`` in the report's shape (the statistics)."""
    try:
        from baselines import curve_compare
    except ImportError:
        return _unassessed
    return _adapt(curve_compare)


def _adapt(module: Any) -> Comparer:
    def compare(
        reference: pd.DataFrame, candidate: pd.DataFrame, tolerance_pct: float | None
    ) -> PairComparison:
        options = {} if tolerance_pct is None else {"tolerance_pct": tolerance_pct}
        result = module.compare_curves(reference, candidate, **options)
        per_size = pd.DataFrame(
            [
                {
                    "size_bytes": s.size_bytes,
                    "reference": s.reference,
                    "candidate": s.candidate,
                    "delta_pct": s.delta_pct,
                    "low_pct": s.low_pct,
                    "high_pct": s.high_pct,
                    "change": s.change,
                    "n_reference": s.n_reference,
                    "n_candidate": s.n_candidate,
                    "band": s.method,
                }
                for s in result.sizes
            ],
            columns=PER_SIZE_COLUMNS,
        )
        return PairComparison(
            per_size=per_size,
            verdict=result.verdict,
            ranges=tuple(
                SizeRange(int(r.low_bytes), int(r.high_bytes), str(r.direction), r.label)
                for r in result.ranges
            ),
            method=result.method,
            summary=result.summary(),
        )

    return compare


def _unassessed(
    reference: pd.DataFrame, candidate: pd.DataFrame, tolerance_pct: float | None
) -> PairComparison:
    """Without the baselines method: Δ% of the means only, no band, no verdict."""
    ref = reference.groupby("size_bytes")["value"].agg(["mean", "count"])
    cand = candidate.groupby("size_bytes")["value"].agg(["mean", "count"])
    both = ref.join(cand, how="inner", lsuffix="_ref", rsuffix="_cand").reset_index()
    per_size = pd.DataFrame(
        {
            "size_bytes": both["size_bytes"],
            "reference": both["mean_ref"],
            "candidate": both["mean_cand"],
            "delta_pct": np.where(
                both["mean_ref"] > 0, 100 * (both["mean_cand"] / both["mean_ref"] - 1), np.nan
            ),
            "low_pct": np.nan,
            "high_pct": np.nan,
            "change": UNASSESSED,
            "n_reference": both["count_ref"],
            "n_candidate": both["count_cand"],
            "band": "none",
        },
        columns=PER_SIZE_COLUMNS,
    )
    return PairComparison(
        per_size=per_size,
        verdict=UNASSESSED,
        method="none (baselines.curve_compare is not installed)",
    )


def matching_baseline(run: BenchmarkRun) -> BaselineRef | None:
    """The reference the baselines app compares ``run`` with (the same one its run page and
    alerts use): the newest active pinned baseline of its benchmark on its hardware profile,
    else its recent earlier runs. None when the run is not filed or has nothing before it."""
    try:
        from baselines.comparing import reference_for
        from baselines.querysets import run_context
    except ImportError:
        return None
    context = run_context(run)
    if context is None:
        return None
    reference = reference_for(run, context)
    if reference is None or not reference.run_ids:
        return None
    runs = tuple(
        BenchmarkRun.objects.select_related("artifact")
        .filter(pk__in=reference.run_ids)
        .exclude(pk=run.pk)
        .order_by("measured_at", "pk")
    )
    if not runs:
        return None
    if reference.baseline is not None:
        return BaselineRef(
            id=reference.baseline.pk,
            name=str(reference.baseline),
            runs=runs,
            tolerance_pct=reference.tolerance_pct,
        )
    return BaselineRef(
        id=None,
        name=f"{len(runs)} earlier run(s) of run #{run.pk}",
        runs=runs,
        tolerance_pct=reference.tolerance_pct,
    )


@dataclass(frozen=True)
class ProfileRef:
    id: int
    name: str
    runs: tuple[BenchmarkRun, ...]

    def pin(self) -> dict[str, Any]:
        return {"profile_id": self.id, "name": self.name, "run_ids": [r.pk for r in self.runs]}


def profiles_unavailable() -> str | None:
    try:
        from baselines.models import HardwareProfile  # noqa: F401
    except ImportError:
        return "hardware profiles arrive with the baselines app (baselines.models.HardwareProfile)"
    return None


def hardware_profile(profile_id: int) -> ProfileRef | None:
    """A hardware profile and its usable runs (complete, not failed), or None if unknown."""
    from baselines.models import HardwareProfile
    from baselines.querysets import runs_of_profile

    profile = HardwareProfile.objects.filter(pk=profile_id).first()
    if profile is None:
        return None
    runs = runs_of_profile(profile).select_related("artifact").filter(complete=True, errors=[])
    return ProfileRef(id=profile.pk, name=str(profile), runs=tuple(runs))


def profile_choices() -> list[tuple[int, str]]:
    if profiles_unavailable():
        return []
    from baselines.models import HardwareProfile

    return [(p.pk, str(p)) for p in HardwareProfile.objects.all()]
