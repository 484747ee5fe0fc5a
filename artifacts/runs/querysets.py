"""Named reads for run pages and the API (filters live here, not in views)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import connection
from django.db.models import Model, Q, QuerySet

from artifacts.models.core import Artifact
from artifacts.runs.models import BenchmarkRun
from perfhub.params import date_param as _date
from perfhub.params import int_param as _int

# Runs made from observations rather than benchmarks: a trace's step time and GPU idle
# (torch-trace:<job>), a host's counter rates (fabric:<host>). Their series belong to the
# trace, job and fabric pages; the run list is the benchmarks' (nccl-tests, perftest,
# metrics uploads) unless asked (``derived=1``).
DERIVED_PREFIXES = ("torch-trace", "fabric")


def derived_benchmarks() -> list[str]:
    """The derived benchmark names stored, from the distinct values of the indexed column
    (a few index probes), so the list filters by equality and a database without any keeps
    an unfiltered, estimated count."""
    return [
        b
        for b in _distinct(BenchmarkRun, "benchmark")
        if b and any(b == p or b.startswith(p + ":") for p in DERIVED_PREFIXES)
    ]


def runs_filtered(params: Any) -> QuerySet[BenchmarkRun]:
    qs = BenchmarkRun.objects.select_related("artifact")
    asked = str(params.get("derived") or "") in ("1", "true", "yes")
    if not asked and (derived := derived_benchmarks()):
        qs = qs.exclude(benchmark__in=derived)
    if collective := params.get("collective"):
        qs = qs.filter(collective=collective)
    if nranks := _int(params.get("nranks")):
        qs = qs.filter(nranks=nranks)
    if label := params.get("label"):
        qs = qs.filter(artifact__label=label)
    if gpu := params.get("gpu"):
        qs = qs.filter(gpu__icontains=gpu)
    if nccl := params.get("nccl_version"):
        qs = qs.filter(nccl_version=nccl)
    if host := params.get("host"):
        # a run matches when any of its ranks ran on a host containing the text
        qs = qs.filter(ranks__host__icontains=host).distinct()
    if since := _date(params.get("since")):
        qs = qs.filter(measured_at__date__gte=since)
    if until := _date(params.get("until")):
        qs = qs.filter(measured_at__date__lte=until)
    if params.get("status") == "failed":
        qs = qs.exclude(errors=[])
    elif params.get("status") == "incomplete":
        qs = qs.filter(complete=False)
    return qs


def run_filter_options() -> dict[str, list[Any]]:
    """Distinct values for the run list's drop-downs."""
    return {
        "collectives": sorted(v for v in _distinct(BenchmarkRun, "collective") if v),
        "nranks": sorted(v for v in _distinct(BenchmarkRun, "nranks") if v),
        "labels": sorted(v for v in _distinct(Artifact, "label") if v),
        "nccl_versions": sorted(v for v in _distinct(BenchmarkRun, "nccl_version") if v),
    }


def _distinct(model: type[Model], field: str) -> list[Any]:
    """The distinct values of an indexed column. On PostgreSQL a "loose index scan" (a
    recursive query that jumps from one value to the next in the column's index): a few
    index probes per distinct value instead of reading every row — 350,000 runs have ten
    collectives, and SELECT DISTINCT read all of them on every run list request."""
    if connection.vendor != "postgresql":
        return list(model.objects.order_by().values_list(field, flat=True).distinct())
    quote = connection.ops.quote_name
    table, column = quote(model._meta.db_table), quote(model._meta.get_field(field).column)
    sql = (
        f"WITH RECURSIVE v AS ("
        f"(SELECT {column} AS x FROM {table} WHERE {column} IS NOT NULL ORDER BY 1 LIMIT 1) "
        f"UNION ALL SELECT (SELECT {column} FROM {table} WHERE {column} > v.x "
        f"ORDER BY 1 LIMIT 1) FROM v WHERE v.x IS NOT NULL"
        f") SELECT x FROM v WHERE x IS NOT NULL"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return [row[0] for row in cursor.fetchall()]


# "Close in time" for the evidence of a run's job until jobs exist: the same hosts' files
# within this of the run (a nightly job's NCCL log, dmesg, ibstat taken around it).
JOB_WINDOW = timedelta(hours=2)
MAX_JOB_ARTIFACTS = 50


def job_artifact_ids(run: BenchmarkRun) -> list[int]:
    """The artifacts that are the evidence of the run's job: its own file, and files that
    report findings or fault events on the run's hosts within ``JOB_WINDOW`` of it.

    The one seam a job lookup (same Slurm job id, same hosts, overlapping time) replaces:
    the run page's findings and the knowledge pages by symptom both read it."""
    from artifacts.fabric.fault_events import FAULT_EVENT_KINDS
    from artifacts.fabric.models import Finding, LogEvent

    ids = [run.artifact_id]
    hosts = sorted({h for h in run.ranks.values_list("host", flat=True) if h})
    if not hosts or run.measured_at is None:
        return ids
    window = (run.measured_at - JOB_WINDOW, run.measured_at + JOB_WINDOW)
    found = (
        Finding.objects.filter(host__in=hosts, observed_at__range=window)
        .exclude(device__startswith="run ")  # another run's failure is that run's, not ours
        .order_by()
        .values_list("artifact_id", flat=True)
    )
    events = (
        LogEvent.objects.filter(host__in=hosts, time__range=window, kind__in=FAULT_EVENT_KINDS)
        .order_by()
        .values_list("artifact_id", flat=True)
    )
    for artifact_id in [
        *found.distinct()[:MAX_JOB_ARTIFACTS],
        *events.distinct()[:MAX_JOB_ARTIFACTS],
    ]:
        if artifact_id not in ids:
            ids.append(artifact_id)
    return ids[: MAX_JOB_ARTIFACTS + 1]


def run_findings(run: BenchmarkRun, limit: int = 50) -> list[Any]:
    """The findings that concern this run: its own (``run N``: failed, truncated, below
    peak), its file's error signatures (per host, no run named), and the findings of the
    other files of its job (``job_artifact_ids``) on its hosts."""
    from artifacts.fabric.models import Finding

    others = [i for i in job_artifact_ids(run) if i != run.artifact_id]
    hosts = {h for h in run.ranks.values_list("host", flat=True) if h}
    own = Q(artifact_id=run.artifact_id) & (
        Q(device=f"run {run.index}") | ~Q(device__startswith="run ")
    )
    rows = (
        Finding.objects.filter(
            own | (Q(artifact_id__in=others, host__in=hosts) & ~Q(device__startswith="run "))
        )
        .select_related("artifact")
        .order_by("-severity_rank", "-observed_at", "id")
    )
    return list(rows[:limit])
