"""Alerts from comparisons and from change points, grouped into one summary per change.

Two sources find changes, and both end up in the same alert when they see the same change:

* **comparison**: a run's curve against its reference (``comparing``) changed at some sizes
  and either the reference is a pinned baseline or the run is the first on a new stack;
* **history**: ``baselines.detect`` found a change point in a series (steps, short dips,
  variance changes; single spikes are outliers and raise nothing), or a **drift**: a level
  that moved gradually, reported once per drifting stretch with its start, end and rate.

An alert's ``fingerprint`` is what makes re-evaluation idempotent: at a software change it is
(series, kind, stack before → stack after), whichever source saw it; elsewhere it is
(series, kind, time of the first changed point), and a change point that moves by a few
points as history grows finds its existing alert instead of raising a new one. A drift
keeps one alert while it goes on: a later scan whose drift overlaps it in time updates it
(its end and rate grow), and drifts on many series of one profile that overlap in time share
one summary. Triage (status, assignee, notes) is never overwritten by re-evaluation.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Q

from artifacts.models import BenchmarkRun
from baselines.comparing import Outcome, Reference
from baselines.curve_adapter import SizeChange
from baselines.detect import ChangePoint, detect
from baselines.facts import change_text
from baselines.models import (
    Alert,
    AlertSummary,
    Comparison,
    Series,
    SeriesPoint,
)
from baselines.replicates import collapse_replicates
from perfhub.units import human_bytes

HISTORY_POINTS = 500  # change points are looked for in the newest points of a series
NEAR_POINTS = 3  # a change point this close to an existing alert is that alert
CONFIRM_RUNS = 2  # a summary notifies once this many runs show its change (or history does)
EVIDENCE_KEPT = 20
MIN_SPREAD_PCT = 1.0  # a variance alert needs this much spread (% of the level) on one side


@dataclass
class Collector:
    """What one evaluation created, for notifications after commit."""

    new_summary_ids: set[int] = field(default_factory=set)
    touched_summary_ids: set[int] = field(default_factory=set)


# ------------------------------------------------------------------------------ fingerprints


def _stack_key(before: int | None, after: int | None) -> str:
    return f"{before or 0}>{after or 0}"


def summary_key(
    *,
    profile_id: int,
    stack_before: int | None,
    stack_after: int | None,
    baseline_id: int | None = None,
    when: datetime | None = None,
) -> str:
    if stack_before != stack_after:
        return f"p{profile_id}:{_stack_key(stack_before, stack_after)}"
    if baseline_id is not None:
        return f"p{profile_id}:baseline{baseline_id}:s{stack_after or 0}"
    day = when.date().isoformat() if when else "undated"
    return f"p{profile_id}:same-stack:{day}"


def _summary_for(
    collector: Collector,
    *,
    profile_id: int,
    stack_before: int | None,
    stack_after: int | None,
    run: BenchmarkRun,
    baseline_id: int | None = None,
) -> AlertSummary:
    key = summary_key(
        profile_id=profile_id,
        stack_before=stack_before,
        stack_after=stack_after,
        baseline_id=baseline_id,
        when=run.measured_at,
    )
    summary, created = AlertSummary.objects.get_or_create(
        key=key,
        defaults={
            "profile_id": profile_id,
            "stack_before_id": stack_before,
            "stack_after_id": stack_after,
            "first_run": run,
            "title": key,
        },
    )
    if created:
        collector.new_summary_ids.add(summary.pk)
    elif summary.first_run_id is None or (
        summary.first_run is not None and run.measured_at < summary.first_run.measured_at
    ):
        # the first run was re-parsed (new row) or an earlier run arrived late
        summary.first_run = run
        summary.save(update_fields=["first_run", "updated_at"])
    collector.touched_summary_ids.add(summary.pk)
    return summary


def _kind_of(direction: str, kind: str) -> str:
    if kind == "variance":
        return Alert.Kind.VARIANCE
    if kind == "drift":
        return Alert.Kind.DRIFT
    return Alert.Kind.REGRESSION if direction == "regression" else Alert.Kind.IMPROVEMENT


def _upsert(fingerprint: str, *, defaults: dict[str, object]) -> Alert:
    """Create the alert, or refresh its numbers - never its triage fields, and never the run
    that first showed it (later runs only add evidence)."""
    alert = Alert.objects.filter(fingerprint=fingerprint).first()
    if alert is None:
        return Alert.objects.create(fingerprint=fingerprint, **defaults)
    first_seen = {"run", "previous_run_id", "measured_at"}
    keep_first = alert.run_id is not None and alert.run_id != getattr(
        defaults.get("run"), "pk", None
    )
    for name, value in defaults.items():
        if keep_first and name in first_seen:
            continue
        setattr(alert, name, value)
    alert.save()
    return alert


def _evidence(alert_fingerprint: str, run_ids: list[int]) -> list[int]:
    """Distinct runs that showed this alert (bounded), including the ones seen before."""
    existing = Alert.objects.filter(fingerprint=alert_fingerprint).values_list("details", flat=True)
    seen = list((existing.first() or {}).get("evidence_run_ids", []))
    return list(dict.fromkeys([*seen, *run_ids]))[-EVIDENCE_KEPT:]


# -------------------------------------------------------------------------- from comparisons


def alerts_from_comparison(
    outcome: Outcome, *, run: BenchmarkRun, stack_id: int, collector: Collector
) -> list[Alert]:
    """Alerts for the sizes that changed, when the comparison is about a software change or a
    pinned baseline; alerts this run's comparison raised before and no longer supports go
    (unless someone triaged them)."""
    wanted: dict[str, Alert] = {}
    comparison, result, reference = outcome.comparison, outcome.result, outcome.reference
    is_software_change = reference is not None and reference.stack_id != stack_id
    is_baseline = reference is not None and reference.kind == Comparison.Reference.BASELINE
    if comparison and result and reference and (is_software_change or is_baseline):
        changed = [s for s in result.sizes if s.in_range]
        series_by_size = _series_by_size(run)
        baseline_id = reference.baseline.pk if reference.baseline else None
        for size in changed:
            series = series_by_size.get(size.size_bytes)
            if series is None:
                continue
            kind = Alert.Kind.REGRESSION if size.change == "regressed" else Alert.Kind.IMPROVEMENT
            pair = _stack_key(reference.stack_id, stack_id)
            fingerprint = (
                f"s{series.pk}:{kind}:{pair}"
                if is_software_change and not is_baseline
                else f"s{series.pk}:{kind}:baseline{baseline_id}:{pair}"
            )
            summary = _summary_for(
                collector,
                profile_id=comparison.profile_id,
                stack_before=reference.stack_id,
                stack_after=stack_id,
                run=run,
                baseline_id=baseline_id,
            )
            fields = _comparison_fields(series, summary, run, size, reference, stack_id)
            evidence = _evidence(fingerprint, list(outcome.candidates or (run.pk,)))
            fields["details"] = {**fields["details"], "evidence_run_ids": evidence}  # type: ignore[dict-item]
            wanted[fingerprint] = _upsert(fingerprint, defaults=fields)
    stale = Alert.objects.filter(run=run, source=Alert.Source.COMPARISON, status="untriaged")
    for alert in stale.exclude(fingerprint__in=list(wanted)).select_related("summary"):
        collector.touched_summary_ids.add(alert.summary_id)
        alert.delete()
    return list(wanted.values())


def _comparison_fields(
    series: Series,
    summary: AlertSummary,
    run: BenchmarkRun,
    size: SizeChange,
    reference: Reference,
    stack_id: int,
) -> dict[str, object]:
    ref_ids = list(reference.run_ids)
    return {
        "summary": summary,
        "series": series,
        "run": run,
        "previous_run_id": ref_ids[0] if ref_ids else None,
        "kind": Alert.Kind.REGRESSION if size.change == "regressed" else Alert.Kind.IMPROVEMENT,
        "source": Alert.Source.COMPARISON,
        "magnitude_pct": size.delta_pct,
        "value_before": size.reference_value,
        "value_after": size.value,
        "low_pct": size.low_pct,
        "high_pct": size.high_pct,
        "stack_before_id": reference.stack_id,
        "stack_after_id": stack_id,
        "measured_at": run.measured_at,
        "details": {"reference": reference.kind, "reference_run_ids": ref_ids},
    }


def _series_by_size(run: BenchmarkRun) -> dict[int, Series]:
    points = SeriesPoint.objects.filter(run=run).select_related("series")
    return {p.series.size_bytes: p.series for p in points}


# ------------------------------------------------------------------------------ from history


def history_scan(series_ids: Iterable[int], *, collector: Collector) -> list[Alert]:
    """Change points of each series (its newest ``HISTORY_POINTS``) as alerts."""
    ids = sorted(set(series_ids))
    found: list[Alert] = []
    for series in Series.objects.filter(pk__in=ids):
        raw = list(
            SeriesPoint.objects.filter(series=series)
            .order_by("-measured_at", "-run_id")
            .values("run_id", "stack_id", "value", "measured_at")[:HISTORY_POINTS]
        )[::-1]
        # One point per build and night: its replicates (retries, repeats) are one
        # observation, so a briefly noisy build is not a step up and down (replicates.py).
        points = collapse_replicates(raw)
        if len(points) < 6:
            continue
        values = [float(p["value"]) for p in points]  # type: ignore[arg-type]
        detection = detect(
            values,
            direction="lower" if series.direction == "lower" else "higher",
            resolution=max(0.0, float(series.resolution or 0.0)),
            times=[p["measured_at"] for p in points],  # drift rates in % per day
        )
        # The way back from a short regression is part of that alert, not an improvement.
        recoveries = {cp.end_index for cp in detection.change_points if cp.end_index is not None}
        for cp in detection.change_points:
            if cp.kind == "step" and cp.index in recoveries:
                continue
            if cp.kind == "variance" and not _spread_matters(cp, values):
                continue
            if cp.kind == "drift":
                found.append(_drift_alert(series, points, cp, collector))
                continue
            found.append(_history_alert(series, points, cp, collector))
    return found


def _spread_matters(cp: ChangePoint, values: list[float]) -> bool:
    """A variance change is worth triage when the noisier side spreads by at least
    ``MIN_SPREAD_PCT`` of the level and by more than the values' print resolution: busbw
    printed with two decimals (0.11 / 0.12 / 0.13 GB/s at small sizes) changes its spread by
    rounding alone."""
    near = values[max(0, cp.index - 60) : cp.index + 60]
    if not near:
        return False
    level = abs(statistics.median(near))
    distinct = sorted(set(near))
    steps = [b - a for a, b in itertools.pairwise(distinct) if b > a]
    resolution = min(steps) if steps else 0.0
    spread = max(cp.before, cp.after)
    return level > 0 and spread >= max(MIN_SPREAD_PCT / 100.0 * level, 2.0 * resolution)


def _history_alert(
    series: Series, points: list[dict[str, object]], cp: ChangePoint, collector: Collector
) -> Alert:
    at, before = points[cp.index], points[cp.index - 1]
    kind = _kind_of(cp.direction, cp.kind)
    stack_before, stack_after = before["stack_id"], at["stack_id"]
    measured_at = at["measured_at"]
    assert isinstance(measured_at, datetime)
    run = BenchmarkRun.objects.get(pk=at["run_id"])
    if stack_before != stack_after:
        fingerprint = f"s{series.pk}:{kind}:{_stack_key(stack_before, stack_after)}"  # type: ignore[arg-type]
        existing = Alert.objects.filter(fingerprint=fingerprint).first()
    else:
        fingerprint = f"s{series.pk}:{kind}:t{int(measured_at.timestamp())}"
        lo = points[max(cp.index - NEAR_POINTS, 0)]["measured_at"]
        hi = points[min(cp.index + NEAR_POINTS, len(points) - 1)]["measured_at"]
        existing = (
            Alert.objects.filter(series=series, kind=kind, measured_at__range=(lo, hi))
            .order_by("measured_at")
            .first()
        )
    if existing is not None and existing.source == Alert.Source.COMPARISON:
        # The comparison saw it first and has the uncertainty band: keep its numbers.
        existing.details = {**existing.details, "history": _cp_details(cp, points)}
        existing.save(update_fields=["details", "updated_at"])
        return existing
    summary = _summary_for(
        collector,
        profile_id=series.profile_id,
        stack_before=stack_before,  # type: ignore[arg-type]
        stack_after=stack_after,  # type: ignore[arg-type]
        run=run,
    )
    fields: dict[str, object] = {
        "summary": summary,
        "series": series,
        "run": run,
        "previous_run_id": before["run_id"],
        "kind": kind,
        "source": Alert.Source.HISTORY,
        "magnitude_pct": cp.magnitude_pct,
        "value_before": cp.before,
        "value_after": cp.after,
        "stack_before_id": stack_before,
        "stack_after_id": stack_after,
        "measured_at": measured_at,
        "details": _cp_details(cp, points),
    }
    return _upsert(existing.fingerprint if existing else fingerprint, defaults=fields)


def _drift_alert(
    series: Series, points: list[dict[str, object]], cp: ChangePoint, collector: Collector
) -> Alert:
    """One alert per drifting stretch: an existing drift alert of the series that overlaps
    this one in time is the same drift seen again (its start may move a little, its end and
    rate grow as runs arrive)."""
    assert cp.end_index is not None
    first, last = points[cp.index], points[cp.end_index]
    start, end = first["measured_at"], last["measured_at"]
    assert isinstance(start, datetime) and isinstance(end, datetime)
    existing = next(
        (
            a
            for a in Alert.objects.filter(series=series, kind=Alert.Kind.DRIFT).order_by("pk")
            if _overlaps(a.details, start, end)
        ),
        None,
    )
    run = BenchmarkRun.objects.get(pk=last["run_id"])
    summary = (
        existing.summary
        if existing is not None
        else _drift_summary_for(collector, series.profile_id, run, start, end)
    )
    collector.touched_summary_ids.add(summary.pk)
    details = {
        **_cp_details(cp, points),
        "start": start.isoformat(),
        "end": end.isoformat(),
        "start_run_id": first["run_id"],
        "end_run_id": last["run_id"],
    }
    fields: dict[str, object] = {
        "summary": summary,
        "series": series,
        "run": run,  # the newest run of the drift: the one that showed it so far
        "previous_run_id": first["run_id"],
        "kind": Alert.Kind.DRIFT,
        "source": Alert.Source.HISTORY,
        "magnitude_pct": cp.magnitude_pct,
        "value_before": cp.before,
        "value_after": cp.after,
        "stack_before_id": first["stack_id"],
        "stack_after_id": last["stack_id"],
        "measured_at": start,
        "details": details,
    }
    if existing is not None:
        for name, value in fields.items():
            setattr(existing, name, value)  # numbers only: triage fields are not in fields
        existing.save()
        return existing
    fingerprint = f"s{series.pk}:drift:t{int(start.timestamp())}"
    return _upsert(fingerprint, defaults=fields)


def _overlaps(details: dict[str, object], start: datetime, end: datetime) -> bool:
    try:
        lo = datetime.fromisoformat(str(details["start"]))
        hi = datetime.fromisoformat(str(details["end"]))
    except (KeyError, ValueError):
        return False
    return lo <= end and start <= hi


def _drift_summary_for(
    collector: Collector, profile_id: int, run: BenchmarkRun, start: datetime, end: datetime
) -> AlertSummary:
    """The profile's drift summary whose drifts overlap this one in time (a fabric that
    degrades drags many series at once), or a new one keyed by the drift's first day."""
    for summary in AlertSummary.objects.filter(
        profile_id=profile_id, key__startswith=f"p{profile_id}:drift:"
    ).order_by("-created_at"):
        alerts = summary.alerts.filter(kind=Alert.Kind.DRIFT).only("details")
        if any(_overlaps(a.details, start, end) for a in alerts):
            return summary
    key = f"p{profile_id}:drift:{start.date().isoformat()}"
    summary, created = AlertSummary.objects.get_or_create(
        key=key, defaults={"profile_id": profile_id, "first_run": run, "title": key}
    )
    if created:
        collector.new_summary_ids.add(summary.pk)
    return summary


def _cp_details(cp: ChangePoint, points: list[dict[str, object]]) -> dict[str, object]:
    details: dict[str, object] = {"detector": "baselines.detect", **cp.to_json()}
    if cp.index < len(points) and int(points[cp.index].get("replicates") or 1) > 1:  # type: ignore[call-overload]
        at = points[cp.index]
        details["replicates"] = {"runs": at["run_ids"], "spread": at["spread"]}
    if cp.end_index is not None and cp.end_index < len(points):
        details["recovered_run_id"] = points[cp.end_index]["run_id"]
    return details


# --------------------------------------------------------------------------------- summaries


def summaries_refresh(summary_ids: Iterable[int]) -> None:
    """Counts and the one-line title of each summary, from its alerts; empty ones go."""
    for summary in AlertSummary.objects.filter(pk__in=set(summary_ids)).select_related(
        "profile", "stack_before", "stack_after"
    ):
        alerts = list(summary.alerts.exclude(status=Alert.Status.INVALID).select_related("series"))
        if not summary.alerts.exists():
            summary.delete()
            continue
        counts = summary.alerts.aggregate(
            regressions=Count("id", filter=Q(kind=Alert.Kind.REGRESSION)),
            improvements=Count("id", filter=Q(kind=Alert.Kind.IMPROVEMENT)),
            variance=Count("id", filter=Q(kind=Alert.Kind.VARIANCE)),
            open=Count("id", filter=Q(status__in=Alert.OPEN_STATUSES)),
        )
        summary.regressions = counts["regressions"]
        summary.improvements = counts["improvements"]
        summary.variance_changes = counts["variance"]
        summary.open_alerts = counts["open"]
        summary.change_text = summary_change_text(summary)[:300]
        summary.title = summary_title(summary, alerts)[:300]
        summary.confirmed = summary.confirmed or any(_confirmed(a) for a in alerts)
        summary.save()


def _confirmed(alert: Alert) -> bool:
    if alert.source == Alert.Source.HISTORY or "history" in alert.details:
        return True
    return len(alert.details.get("evidence_run_ids", [])) >= CONFIRM_RUNS


def summary_change_text(summary: AlertSummary) -> str:
    before, after = summary.stack_before, summary.stack_after
    if before is not None and after is not None and before.pk != after.pk:
        return change_text(before.diff(after))
    if ":drift:" in summary.key:
        return "gradual drift (no single change)"
    if "baseline" in summary.key:
        return "against its pinned baseline (same software)"
    return "no software change"


def summary_title(summary: AlertSummary, alerts: list[Alert]) -> str:
    """ "NCCL 2.21.5 → 2.23.4 on h200-roce-2x8: 7 series regressed, all_reduce 256 MiB-8 GiB
    -8%": per kind, how many series, which benchmarks, the size span and the median Δ."""
    where = f"{summary.change_text} on {summary.profile.slug}"
    parts = []
    for kind, verb in (
        (Alert.Kind.REGRESSION, "regressed"),
        (Alert.Kind.IMPROVEMENT, "improved"),
        (Alert.Kind.VARIANCE, "changed spread"),
        (Alert.Kind.DRIFT, "drifted"),
    ):
        of_kind = [a for a in alerts if a.kind == kind]
        if of_kind:
            parts.append(f"{len(of_kind)} series {verb}{_headline(of_kind, kind)}")
    return f"{where}: " + ("; ".join(parts) if parts else "all alerts marked invalid")


def _series_name(series: Series) -> str:
    """all_reduce for nccl-tests; "megatron-gpt3 step_time", "perftest ib_write_bw" else."""
    if series.benchmark != "nccl-tests" and series.collective:
        return f"{series.benchmark} {series.collective}"
    return series.collective or series.benchmark


def _headline(alerts: list[Alert], kind: str) -> str:
    names = sorted({_series_name(a.series) for a in alerts})
    benchmarks = ", ".join(names[:3]) + (f" +{len(names) - 3} more" if len(names) > 3 else "")
    sizes = sorted(a.series.size_bytes for a in alerts if a.series.size_bytes)
    span = ""
    if sizes:
        low, high = human_bytes(sizes[0]), human_bytes(sizes[-1])
        span = f" {low}" if low == high else f" {low}-{high}"
    if kind == Alert.Kind.VARIANCE:
        return f", {benchmarks}{span}"
    median = round(statistics.median(a.magnitude_pct for a in alerts))
    sign = "+" if median > 0 else "\u2212" if median < 0 else ""  # a real minus, as in print
    text = f", {benchmarks}{span} {sign}{abs(median)}%"
    if kind == Alert.Kind.DRIFT:
        rates = [a.details.get("rate_pct") for a in alerts if a.details.get("rate_pct") is not None]
        units = {a.details.get("rate_unit") for a in alerts} - {None}
        if rates and len(units) == 1:
            rate = statistics.median(rates)
            text += f" ({'+' if rate > 0 else chr(0x2212)}{abs(rate):.2g}%/{units.pop()})"
    return text
