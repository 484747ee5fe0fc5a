"""Which runs a run is compared with, and storing what ``baselines.curve_compare`` says.

The reference of a run is, in order:

1. its **pinned baseline**: the newest active ``Baseline`` of the same profile, benchmark,
   collective, rank count (and dtype, when the baseline names one), without the run itself;
2. otherwise the **recent runs**: up to ``RECENT_RUNS`` usable runs of the same identity
   measured before it *on the stack of the run just before it*. When the stack did not
   change this is a rolling reference; when this run is the first on a new stack it is the
   last runs on the old stack, i.e. exactly "what did the upgrade do".

The statistics (per-size Δ% with an uncertainty band, the curve verdict, the changed size
ranges) are ``curve_compare``'s; this module only gathers inputs and stores outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from django.db.models import Q, QuerySet

from artifacts.models import BenchmarkRun
from baselines import curve_adapter
from baselines.models import Baseline, Comparison, RunContext, SeriesPoint, SoftwareStack

RECENT_RUNS = 5
DEFAULT_TOLERANCE_PCT = 3.0


@dataclass(frozen=True)
class Reference:
    kind: str  # Comparison.Reference value
    run_ids: tuple[int, ...]
    stack_id: int | None  # the stack all reference runs share, else None
    tolerance_pct: float
    baseline: Baseline | None = None


def identity_runs(run: BenchmarkRun, profile_id: int) -> QuerySet[BenchmarkRun]:
    """Usable runs of the same benchmark identity on the same profile (the run included)."""
    return BenchmarkRun.objects.filter(
        context__profile_id=profile_id,
        benchmark=run.benchmark,
        collective=run.collective,
        dtype=run.dtype,
        nranks=run.nranks,
        errors=[],
    )


def baseline_for(run: BenchmarkRun, profile_id: int) -> Baseline | None:
    return baseline_for_identity(
        profile_id, run.benchmark or "nccl-tests", run.collective, run.nranks or 0, run.dtype
    )


def baseline_for_identity(
    profile_id: int, benchmark: str, collective: str, nranks: int, dtype: str
) -> Baseline | None:
    """The newest active baseline of a benchmark identity (dtype: the baseline's, if set)."""
    return (
        Baseline.objects.filter(
            profile_id=profile_id,
            active=True,
            benchmark=benchmark,
            collective=collective,
            nranks=nranks,
        )
        .filter(Q(dtype="") | Q(dtype=dtype))
        .order_by("-created_at", "-id")
        .first()
    )


def earlier_runs(run: BenchmarkRun, profile_id: int) -> QuerySet[BenchmarkRun]:
    """Runs of the identity before ``run`` (time, then id for runs of the same instant)."""
    return (
        identity_runs(run, profile_id)
        # measured_at__lte repeats what the OR implies so the database can start the index
        # scan at the run (the OR alone is no index bound: 0.5 s per query at 333,000 runs)
        .filter(measured_at__lte=run.measured_at)
        .filter(Q(measured_at__lt=run.measured_at) | Q(measured_at=run.measured_at, pk__lt=run.pk))
        .order_by("-measured_at", "-id")
    )


def reference_for(run: BenchmarkRun, context: RunContext) -> Reference | None:
    baseline = baseline_for(run, context.profile_id)
    if baseline is not None:
        ids = tuple(baseline.runs.filter(errors=[]).exclude(pk=run.pk).values_list("pk", flat=True))
        if ids:
            return Reference(
                kind=Comparison.Reference.BASELINE,
                run_ids=ids,
                stack_id=_shared_stack(ids),
                tolerance_pct=baseline.tolerance_pct,
                baseline=baseline,
            )
    earlier = earlier_runs(run, context.profile_id)
    previous = earlier.select_related("context").first()
    if previous is None:
        return None
    stack_id = previous.context.stack_id
    ids = tuple(
        earlier.filter(context__stack_id=stack_id).values_list("pk", flat=True)[:RECENT_RUNS]
    )
    return Reference(
        kind=Comparison.Reference.RECENT,
        run_ids=ids,
        stack_id=stack_id,
        tolerance_pct=DEFAULT_TOLERANCE_PCT,
    )


def _shared_stack(run_ids: tuple[int, ...]) -> int | None:
    stacks = set(RunContext.objects.filter(run_id__in=run_ids).values_list("stack_id", flat=True))
    return stacks.pop() if len(stacks) == 1 else None


def curve_frame(run_ids: tuple[int, ...] | list[int]) -> pd.DataFrame:
    """run_id, size_bytes, value: the curve points of these runs (busbw for nccl-tests; the
    one metric an evidence run carries - perftest bandwidth, tokens/s - otherwise)."""
    rows = SeriesPoint.objects.filter(run_id__in=list(run_ids)).values_list(
        "run_id", "series__size_bytes", "value"
    )
    return pd.DataFrame(list(rows), columns=["run_id", "size_bytes", "value"])


@dataclass(frozen=True)
class CurveTraits:
    direction: str  # "higher" | "lower": which way is better
    resolution: dict[int, float]  # size -> print step of the values


def curve_traits(run_ids: tuple[int, ...] | list[int]) -> CurveTraits:
    """Direction and print resolution of the series these runs' points belong to."""
    rows = (
        SeriesPoint.objects.filter(run_id__in=list(run_ids))
        .values_list("series__size_bytes", "series__direction", "series__resolution")
        .distinct()
    )
    resolution: dict[int, float] = {}
    directions = set()
    for size, direction, step in rows:
        resolution[int(size)] = max(resolution.get(int(size), 0.0), float(step or 0.0))
        directions.add(direction)
    return CurveTraits("lower" if directions == {"lower"} else "higher", resolution)


def compare_runs(
    reference_ids: tuple[int, ...] | list[int],
    candidate_ids: tuple[int, ...] | list[int],
    *,
    tolerance_pct: float,
) -> curve_adapter.CurveResult | None:
    """``curve_compare`` on these runs' points, with their series' direction and resolution."""
    traits = curve_traits(candidate_ids)
    return curve_adapter.compare(
        curve_frame(reference_ids),
        curve_frame(candidate_ids),
        tolerance_pct=tolerance_pct,
        direction=traits.direction,
        resolution=traits.resolution,
    )


@dataclass(frozen=True)
class Outcome:
    comparison: Comparison | None
    result: curve_adapter.CurveResult | None
    reference: Reference | None
    candidates: tuple[int, ...] = ()


def candidate_ids(run: BenchmarkRun, context: RunContext, reference: Reference) -> tuple[int, ...]:
    """The run itself; and when it is the first run on a new stack (its recent reference ran
    on another one), the runs after it on that stack too, up to ``RECENT_RUNS`` in all: the
    evidence about a software change grows as its runs arrive, so one bad night cannot make
    (or hide) a regression on its own."""
    if reference.kind != Comparison.Reference.RECENT or reference.stack_id == context.stack_id:
        return (run.pk,)
    later = (
        identity_runs(run, context.profile_id)
        .filter(context__stack_id=context.stack_id)
        .filter(measured_at__gte=run.measured_at)  # an index bound (see earlier_runs)
        .filter(Q(measured_at__gt=run.measured_at) | Q(measured_at=run.measured_at, pk__gt=run.pk))
        .order_by("measured_at", "id")
        .values_list("pk", flat=True)[: RECENT_RUNS - 1]
    )
    return (run.pk, *later)


def comparison_refresh(*, run: BenchmarkRun, context: RunContext) -> Outcome:
    """(Re)compute and store the run's comparison; removes a stale one when there is no
    reference any more (e.g. the only earlier run was deleted)."""
    reference = reference_for(run, context) if not run.errors else None
    if reference is None:
        Comparison.objects.filter(run=run).delete()
        return Outcome(None, None, None)
    candidates = candidate_ids(run, context, reference)
    result = compare_runs(reference.run_ids, candidates, tolerance_pct=reference.tolerance_pct)
    if result is None:
        Comparison.objects.filter(run=run).delete()
        return Outcome(None, None, reference)
    comparison, _ = Comparison.objects.update_or_create(
        run=run,
        defaults={
            "profile_id": context.profile_id,
            "reference": reference.kind,
            "baseline": reference.baseline,
            "reference_run_ids": list(reference.run_ids),
            "candidate_run_ids": list(candidates),
            "reference_stack_id": reference.stack_id,
            "stack_id": context.stack_id,
            "verdict": result.verdict,
            "regressed_ranges": result.ranges_of("regressed"),
            "improved_ranges": result.ranges_of("improved"),
            "worst_delta_pct": result.worst_delta_pct(),
            "tolerance_pct": reference.tolerance_pct,
            "result": result.json,
        },
    )
    return Outcome(comparison, result, reference, candidates)


def comparison_preview(run: BenchmarkRun) -> dict[str, Any] | None:
    """The comparison as it would be computed now, without storing it (read-only paths)."""
    context = RunContext.objects.filter(run=run).first()
    if context is None or run.errors:
        return None
    reference = reference_for(run, context)
    if reference is None:
        return None
    candidates = candidate_ids(run, context, reference)
    result = compare_runs(reference.run_ids, candidates, tolerance_pct=reference.tolerance_pct)
    if result is None:
        return None
    return {"reference": reference, "result": result, "candidate_ids": candidates}


def stack_of(stack_id: int | None) -> SoftwareStack | None:
    return SoftwareStack.objects.filter(pk=stack_id).first() if stack_id else None


# ------------------------------------------------------------------- version matrix cells

VERSION_RUNS = 10


@dataclass(frozen=True)
class VersionComparison:
    reference_label: str
    reference_run_ids: tuple[int, ...]
    candidate_run_ids: tuple[int, ...]
    result: curve_adapter.CurveResult | None
    reference_stack_id: int | None
    candidate_stack_id: int | None


def version_comparison(
    *, profile_id: int, component: str, version: str, collective: str, nranks: int
) -> VersionComparison:
    """The newest runs on one version of a component against the benchmark's baseline (or,
    without one, the newest runs on the lowest version that has any)."""
    runs = BenchmarkRun.objects.filter(
        context__profile_id=profile_id, collective=collective, nranks=nranks, errors=[]
    )
    candidates = tuple(
        runs.filter(**{f"context__stack__{component}": version})
        .order_by("-measured_at", "-id")
        .values_list("pk", flat=True)[:VERSION_RUNS]
    )
    sample = runs.filter(pk__in=candidates[:1]).first()
    baseline = (
        baseline_for_identity(profile_id, sample.benchmark, collective, nranks, sample.dtype)
        if sample
        else None
    )
    if baseline is not None:
        ref_ids = tuple(baseline.runs.filter(errors=[]).values_list("pk", flat=True))
        label = f"baseline {baseline.name}"
    else:
        first = (
            runs.exclude(**{f"context__stack__{component}": ""})
            .order_by(f"context__stack__{component}_key")
            .values_list(f"context__stack__{component}", flat=True)
            .first()
        )
        ref_ids = tuple(
            runs.filter(**{f"context__stack__{component}": first})
            .order_by("-measured_at", "-id")
            .values_list("pk", flat=True)[:VERSION_RUNS]
        )
        label = f"first version ({first})"
    result = None
    if candidates and ref_ids and set(candidates) != set(ref_ids):
        result = compare_runs(
            ref_ids,
            candidates,
            tolerance_pct=baseline.tolerance_pct if baseline else DEFAULT_TOLERANCE_PCT,
        )
    return VersionComparison(
        reference_label=label,
        reference_run_ids=ref_ids,
        candidate_run_ids=candidates,
        result=result,
        reference_stack_id=_shared_stack(ref_ids) if ref_ids else None,
        candidate_stack_id=_shared_stack(candidates) if candidates else None,
    )
