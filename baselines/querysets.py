"""Named reads for the baselines pages, the API and the other apps (reports, incidents).

Every list read here costs a fixed number of queries whatever the number of rows (the pages'
tests assert it): related rows come with ``select_related``, counts with one grouped query.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import connection
from django.db.models import Count, Q, QuerySet

from artifacts.models import BenchmarkRun
from baselines.comparing import baseline_for
from baselines.models import (
    VERSION_FIELDS,
    Alert,
    AlertSummary,
    Baseline,
    Comparison,
    HardwareProfile,
    RunContext,
    Series,
    SeriesPoint,
    SoftwareStack,
    Subscription,
)
from perfhub.params import date_param as _date
from perfhub.params import int_param as _int

Params = Mapping[str, Any]


# ---------------------------------------------------------------------- for the other apps


def baseline_for_run(run: BenchmarkRun) -> Baseline | None:
    """The pinned baseline a run is compared with (None: it is compared with recent runs)."""
    context = RunContext.objects.filter(run=run).only("profile_id").first()
    return baseline_for(run, context.profile_id) if context else None


def runs_of_profile(profile: HardwareProfile) -> QuerySet[BenchmarkRun]:
    return BenchmarkRun.objects.filter(context__profile=profile)


def profile_of_run(run: BenchmarkRun) -> HardwareProfile | None:
    context = RunContext.objects.select_related("profile").filter(run=run).first()
    return context.profile if context else None


# --------------------------------------------------------------------------------- profiles


def profiles_with_counts() -> list[HardwareProfile]:
    """Profiles with ``run_count``, ``series_count`` and ``open_alerts`` (3 grouped queries)."""
    profiles = list(HardwareProfile.objects.prefetch_related("hosts"))
    runs = _grouped(RunContext.objects.values("profile_id"))
    series = _grouped(Series.objects.values("profile_id"))
    alerts = _grouped(
        Alert.objects.filter(status__in=Alert.OPEN_STATUSES).values("series__profile_id"),
        key="series__profile_id",
    )
    for p in profiles:
        p.run_count = runs.get(p.pk, 0)  # type: ignore[attr-defined]
        p.series_count = series.get(p.pk, 0)  # type: ignore[attr-defined]
        p.open_alerts = alerts.get(p.pk, 0)  # type: ignore[attr-defined]
    return profiles


def _grouped(values: QuerySet, key: str = "profile_id") -> dict[int, int]:
    # COUNT(*), not COUNT(id): counting rows needs no column, so PostgreSQL can answer from
    # the (profile, ...) index alone instead of scanning the table (1M runs: 200 -> 135 ms).
    return {row[key]: row["n"] for row in values.order_by().annotate(n=Count("*"))}


def profiles_by_data() -> list[str]:
    """Profile slugs, the one with the most series first (what a matrix page opens on: an
    automatic profile made by a single upload has one or two series, a tracked one hundreds)."""
    counts = _grouped(Series.objects.values("profile_id"))
    profiles = HardwareProfile.objects.values_list("pk", "slug")
    return [slug for _, slug in sorted(profiles, key=lambda p: (-counts.get(p[0], 0), p[1]))]


def profile_runs(profile: HardwareProfile) -> QuerySet[BenchmarkRun]:
    return (
        BenchmarkRun.objects.filter(context__profile=profile)
        .select_related("artifact", "context__stack")
        .order_by("-measured_at", "-id")
    )


# ----------------------------------------------------------------------------------- stacks


def stacks_with_counts() -> QuerySet[SoftwareStack]:
    return SoftwareStack.objects.annotate(run_count=Count("runs")).order_by(
        "nccl_key", "cuda_key", "driver_key", "kernel_key", "id"
    )


def component_versions(profile: HardwareProfile | None, component: str) -> list[str]:
    """Distinct versions of one component (on one profile), in version order."""
    qs = SoftwareStack.objects.all()
    if profile is not None:
        qs = qs.filter(runs__profile=profile)
    rows = (
        qs.exclude(**{component: ""})
        .order_by(f"{component}_key")
        .values_list(component, f"{component}_key")
        .distinct()
    )
    return list(dict.fromkeys(version for version, _ in rows))


# ----------------------------------------------------------------------------------- series


def series_filtered(params: Params) -> QuerySet[Series]:
    qs = Series.objects.select_related("profile").order_by(
        "profile__slug", "benchmark", "collective", "nranks", "size_bytes", "metric"
    )
    if profile := params.get("profile"):
        qs = qs.filter(profile__slug=profile)
    if benchmark := params.get("benchmark"):
        qs = qs.filter(benchmark=benchmark)
    if collective := params.get("collective"):
        qs = qs.filter(collective=collective)
    if nranks := _int(params.get("nranks")):
        qs = qs.filter(nranks=nranks)
    if size := _int(params.get("size_bytes")):
        qs = qs.filter(size_bytes=size)
    if metric := params.get("metric"):
        qs = qs.filter(metric=metric)
    if dtype := params.get("dtype"):
        qs = qs.filter(dtype=dtype)
    if params.get("alerts") == "open":
        qs = qs.filter(alerts__status__in=Alert.OPEN_STATUSES).distinct()
    return qs


def series_filter_options() -> dict[str, list[Any]]:
    series = Series.objects.order_by()
    return {
        "profiles": list(HardwareProfile.objects.values_list("slug", flat=True)),
        "benchmarks": sorted(set(series.values_list("benchmark", flat=True).distinct())),
        "collectives": sorted(
            v for v in series.values_list("collective", flat=True).distinct() if v
        ),
        "nranks": sorted(v for v in series.values_list("nranks", flat=True).distinct() if v),
        "sizes": sorted(v for v in series.values_list("size_bytes", flat=True).distinct() if v),
        "metrics": sorted(set(series.values_list("metric", flat=True).distinct())),
    }


def series_points(series: Series, *, limit: int = 5000) -> list[dict[str, Any]]:
    """The newest ``limit`` points, oldest first, with their stack's versions.

    The points and their few stacks are read apart: joined, each of thousands of points
    carried its stack's fourteen version columns, and converting those took longer than
    reading the points."""
    rows = list(
        SeriesPoint.objects.filter(series=series)
        .order_by("-measured_at", "-run_id")
        .values_list("run_id", "value", "measured_at", "stack_id")[:limit]
    )
    fields = [*VERSION_FIELDS, *(f"{name}_key" for name in VERSION_FIELDS)]
    stacks = {
        pk: {f"stack__{name}": value for name, value in zip(fields, versions, strict=True)}
        for pk, *versions in SoftwareStack.objects.filter(
            pk__in={row[3] for row in rows}
        ).values_list("pk", *fields)
    }
    return [
        {"run_id": run_id, "value": value, "measured_at": at, "stack_id": stack, **stacks[stack]}
        for run_id, value, at, stack in reversed(rows)
    ]


def series_siblings(series: Series) -> QuerySet[Series]:
    """The other sizes of the same benchmark on the same profile (the size picker)."""
    return Series.objects.filter(
        profile_id=series.profile_id,
        benchmark=series.benchmark,
        collective=series.collective,
        dtype=series.dtype,
        redop=series.redop,
        nranks=series.nranks,
        nnodes=series.nnodes,
        metric=series.metric,
    ).order_by("size_bytes")


def series_alerts(series: Series) -> QuerySet[Alert]:
    return series.alerts.select_related("stack_before", "stack_after").order_by("measured_at")


# -------------------------------------------------------------------------------- baselines


def baselines_filtered(params: Params) -> QuerySet[Baseline]:
    qs = (
        Baseline.objects.select_related("profile", "stack", "created_by")
        .annotate(run_count=Count("runs"))
        .order_by("-created_at", "-id")
    )
    if profile := params.get("profile"):
        qs = qs.filter(profile__slug=profile)
    if collective := params.get("collective"):
        qs = qs.filter(collective=collective)
    if params.get("active") in ("1", "true", "yes"):
        qs = qs.filter(active=True)
    return qs


# ----------------------------------------------------------------------------------- alerts


def alerts_filtered(params: Params) -> QuerySet[Alert]:
    # What the alert table and the API show: the run and the stacks appear as ids only, and
    # joining them made every row also carry the run's JSON columns.
    qs = Alert.objects.select_related("series__profile", "summary", "assignee").order_by(
        "-measured_at", "-id"
    )
    status = params.get("status")
    if status == "open":
        qs = qs.filter(status__in=Alert.OPEN_STATUSES)
    elif status:
        qs = qs.filter(status=status)
    if kind := params.get("kind"):
        qs = qs.filter(kind=kind)
    if profile := params.get("profile"):
        qs = qs.filter(series__profile__slug=profile)
    if collective := params.get("collective"):
        qs = qs.filter(series__collective=collective)
    if summary := _int(params.get("summary")):
        qs = qs.filter(summary_id=summary)
    if series := _int(params.get("series")):
        qs = qs.filter(series_id=series)
    if assignee := params.get("assignee"):
        qs = (
            qs.filter(assignee__isnull=True)
            if assignee == "none"
            else qs.filter(assignee__username=assignee)
        )
    if source := params.get("source"):
        qs = qs.filter(source=source)
    if since := _date(params.get("since")):
        qs = qs.filter(measured_at__date__gte=since)
    if until := _date(params.get("until")):
        qs = qs.filter(measured_at__date__lte=until)
    return qs


def summaries_filtered(params: Params) -> QuerySet[AlertSummary]:
    qs = AlertSummary.objects.select_related(
        "profile", "stack_before", "stack_after", "first_run"
    ).order_by("-created_at", "-id")
    if profile := params.get("profile"):
        qs = qs.filter(profile__slug=profile)
    if params.get("status") == "open":
        qs = qs.filter(open_alerts__gt=0)
    if kind := params.get("kind"):
        field = {"regression": "regressions", "improvement": "improvements"}.get(
            kind, "variance_changes"
        )
        qs = qs.filter(**{f"{field}__gt": 0})
    return qs


def alert_filter_options() -> dict[str, list[Any]]:
    return {
        "profiles": list(HardwareProfile.objects.values_list("slug", flat=True)),
        "collectives": _collectives_with_alerts(),
    }


def _collectives_with_alerts() -> list[str]:
    # The distinct collectives (a handful) each probed by an EXISTS that stops at its first
    # alert, instead of a DISTINCT over the join of every alert (68 -> 15 ms at 120,000).
    series, alert = Series._meta.db_table, Alert._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.collective FROM (SELECT DISTINCT collective FROM {series}) c "
            f"WHERE c.collective <> '' AND EXISTS (SELECT 1 FROM {series} s JOIN {alert} a "
            "ON a.series_id = s.id WHERE s.collective = c.collective)"
        )
        return sorted(row[0] for row in cursor.fetchall())


def open_alert_count() -> int:
    return Alert.objects.filter(status__in=Alert.OPEN_STATUSES).count()


# ------------------------------------------------------------------------------ run panel


def run_comparison(run: BenchmarkRun) -> Comparison | None:
    return (
        Comparison.objects.select_related("baseline", "reference_stack", "stack", "profile")
        .filter(run=run)
        .first()
    )


def run_context(run: BenchmarkRun) -> RunContext | None:
    return RunContext.objects.select_related("profile", "stack").filter(run=run).first()


def baselines_for_identity(run: BenchmarkRun, profile: HardwareProfile) -> QuerySet[Baseline]:
    return Baseline.objects.filter(
        profile=profile, collective=run.collective, nranks=run.nranks or 0, active=True
    ).filter(Q(dtype="") | Q(dtype=run.dtype))


def subscriptions_list() -> QuerySet[Subscription]:
    return Subscription.objects.select_related("profile", "owner").annotate(
        sent=Count("deliveries", filter=Q(deliveries__state="sent")),
        failed=Count("deliveries", filter=Q(deliveries__state="failed")),
        pending=Count("deliveries", filter=Q(deliveries__state="pending")),
    )
