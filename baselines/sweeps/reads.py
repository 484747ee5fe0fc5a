"""Database reads of sweeps: their runs, each run's settings and busbw points, the analysis.

A run's settings are what filing put into its software stack's NCCL_* environment (the run's
own output, then upload metadata, then NCCL_DEBUG logs of the same hosts; docs/baselines.md)
plus any other setting the upload states under ``settings`` (``{"settings": {"pfc": "on"}}``
in the metadata): the sweep compares like with like whatever the source was.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from artifacts.models import BenchmarkRun, Measurement
from baselines.models import HardwareProfile, Sweep
from baselines.sweeps.winners import (
    SweepAnalysis,
    SweepRun,
    analyse,
    value_label,
    varied_settings,
)

MAX_RUNS = 500  # a sweep page reads every point of its runs; bound what one page costs
OTHER_SETTINGS_KEY = "settings"


@dataclass(frozen=True)
class SweepView:
    sweep: Sweep
    profile: HardwareProfile | None
    runs: tuple[BenchmarkRun, ...]  # the usable runs analysed, oldest first
    analysis: SweepAnalysis
    left_out: tuple[str, ...]  # runs not analysed, and why


def sweep_run_queryset(sweep: Sweep) -> QuerySet[BenchmarkRun]:
    picked = Q(pk__in=[])
    for artifact_id, index in (sweep.run_keys or [])[:MAX_RUNS]:
        picked |= Q(artifact_id=artifact_id, index=index)
    return (
        BenchmarkRun.objects.filter(picked | Q(artifact__sweeps=sweep))
        .distinct()
        .select_related("artifact", "context__stack", "context__profile")
        .order_by("measured_at", "id")
    )


def run_settings(run: BenchmarkRun) -> dict[str, str]:
    """Every setting the evidence gives for the run: NCCL_* of its stack, other upload ones."""
    context = getattr(run, "context", None)
    found: dict[str, str] = {}
    other = (run.artifact.metadata or {}).get(OTHER_SETTINGS_KEY)
    if isinstance(other, Mapping):
        found.update(
            (str(k)[:80], str(v)[:200]) for k, v in other.items() if not isinstance(v, dict | list)
        )
    if context is not None:
        found.update(context.stack.nccl_env or {})
    return found


def sweep_view(sweep: Sweep) -> SweepView:
    """The sweep's runs and analysis; kept on the instance for the rest of the request (the
    page and the knowledge panel it shows both read it)."""
    cached: SweepView | None = getattr(sweep, "_sweep_view", None)
    if cached is None:
        cached = _sweep_view(sweep)
        sweep._sweep_view = cached  # type: ignore[attr-defined]
    return cached


def _sweep_view(sweep: Sweep) -> SweepView:
    runs = list(sweep_run_queryset(sweep)[: MAX_RUNS + 1])
    left_out: list[str] = []
    if len(runs) > MAX_RUNS:
        runs = runs[:MAX_RUNS]
        left_out.append(f"only the first {MAX_RUNS} runs are analysed")
    profile = sweep.profile or _most_common_profile(runs)
    usable = []
    for run in runs:
        context = getattr(run, "context", None)
        if run.errors:
            left_out.append(f"run {run.pk}: failed ({run.errors[0][:80]})")
        elif context is None:
            left_out.append(f"run {run.pk}: not filed yet (parse pending?)")
        elif profile is not None and context.profile_id != profile.pk:
            left_out.append(f"run {run.pk}: on profile {context.profile.slug}, not {profile.slug}")
        else:
            usable.append(run)
    points = _points([r.pk for r in usable])
    analysis = analyse(
        SweepRun(
            run_id=r.pk,
            settings=run_settings(r),
            collective=r.collective or r.benchmark,
            nranks=r.nranks or 0,
            points=points.get(r.pk, {}),
        )
        for r in usable
    )
    return SweepView(sweep, profile, tuple(usable), analysis, tuple(left_out))


def _most_common_profile(runs: Iterable[BenchmarkRun]) -> HardwareProfile | None:
    profiles = Counter(
        run.context.profile for run in runs if getattr(run, "context", None) is not None
    )
    return profiles.most_common(1)[0][0] if profiles else None


def _points(run_ids: list[int]) -> dict[int, dict[int, float]]:
    """busbw per size as series points take it: out-of-place, else in-place."""
    out: dict[int, dict[int, float]] = defaultdict(dict)
    rows = Measurement.objects.filter(run_id__in=run_ids).values_list(
        "run_id", "size_bytes", "oop_busbw_gbps", "ip_busbw_gbps"
    )
    for run_id, size, oop, ip in rows:
        value = oop if oop is not None else ip
        if value is not None:
            out[run_id][int(size)] = float(value)
    return out


def sweep_rows(view: SweepView) -> list[dict[str, Any]]:
    """One row per benchmark, size and value: the table, the CSV and the API read these."""
    rows = []
    for bench in view.analysis.benchmarks:
        for size in bench.sizes:
            for stats in size.values:
                rows.append(
                    {
                        "collective": bench.collective,
                        "nranks": bench.nranks,
                        "size_bytes": size.size_bytes,
                        "value": stats.value,
                        "runs": stats.n,
                        "mean_busbw_gbps": round(stats.mean, 4),
                        "sd_gbps": None if stats.sd is None else round(stats.sd, 4),
                        "low_gbps": stats.low,
                        "high_gbps": stats.high,
                        "best": size.best == stats.value,
                        "winner": size.winner == stats.value,
                    }
                )
    return rows


def runs_by_id(run_ids: list[int]) -> QuerySet[BenchmarkRun]:
    return (
        BenchmarkRun.objects.filter(pk__in=run_ids)
        .select_related("artifact", "context__stack", "context__profile")
        .order_by("measured_at", "id")
    )


@dataclass(frozen=True)
class Preview:
    profiles: tuple[str, ...]
    settings: tuple[str, ...]  # the settings that differ
    labels: dict[int, str]  # run id -> its value of them


def preview(runs: list[BenchmarkRun]) -> Preview:
    """What a sweep of these runs would compare (before it is made)."""
    items = [SweepRun(r.pk, run_settings(r), r.collective, r.nranks or 0, {}) for r in runs]
    names = varied_settings(items)
    profiles = sorted(
        {r.context.profile.slug for r in runs if getattr(r, "context", None) is not None}
    )
    return Preview(
        tuple(profiles), names, {i.run_id: value_label(i.settings, names) for i in items}
    )
