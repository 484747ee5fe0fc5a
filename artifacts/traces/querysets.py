"""Named reads of PyTorch Profiler traces: the list, its filters, jobs and job selections."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Count, F, Max, Min, Q, QuerySet
from django.utils.http import urlencode

from artifacts.models import TraceSummary

# Unlabelled traces of one uploader that arrive this close to each other form one upload batch.
BATCH_GAP = timedelta(minutes=10)
# Upload batches are looked for among this many of the newest unlabelled traces.
BATCH_SCAN_LIMIT = 5000
# A job view compares at most this many traces (ranks).
MAX_JOB_TRACES = 1024


class SelectionError(ValueError):
    """A job or diff selection that names nothing usable; the message says why."""


def traces_filtered(params: Any) -> QuerySet[TraceSummary]:
    qs = TraceSummary.objects.select_related("artifact")
    if job := params.get("job"):
        qs = qs.filter(job_label=job)
    if (rank := _int(params.get("rank"))) is not None:
        qs = qs.filter(rank=rank)
    if host := params.get("host"):
        qs = qs.filter(host__icontains=host)
    if label := params.get("label"):
        qs = qs.filter(artifact__label=label)
    if gpu := params.get("gpu"):
        qs = qs.filter(gpu__icontains=gpu)
    if q := params.get("q"):
        qs = qs.filter(artifact__original_name__icontains=q)
    if since := _date(params.get("since")):
        qs = qs.filter(recorded_at__date__gte=since)
    if until := _date(params.get("until")):
        qs = qs.filter(recorded_at__date__lte=until)
    if params.get("cpu_only") in ("1", "true", "yes"):
        qs = qs.filter(cpu_only=True)
    return qs.order_by("-recorded_at", "job_label", F("rank").asc(nulls_last=True), "artifact_id")


def trace_filter_options() -> dict[str, list[str]]:
    traces = TraceSummary.objects.order_by()
    return {
        "jobs": sorted(v for v in traces.values_list("job_label", flat=True).distinct() if v),
        "labels": sorted(
            v for v in traces.values_list("artifact__label", flat=True).distinct() if v
        ),
    }


@dataclass(frozen=True)
class JobRow:
    """One job in the jobs list: a label, or an upload batch of unlabelled traces."""

    title: str
    label: str  # "" for an upload batch
    trace_ids: tuple[int, ...]  # the batch's traces (empty for labelled jobs: by label)
    traces: int
    ranks: int
    world_size: int | None
    hosts: int
    first_recorded: datetime | None
    last_uploaded: datetime | None

    @property
    def query(self) -> str:
        """Query string selecting this job on the job page and in the API."""
        if self.label:
            return urlencode({"job": self.label})
        return urlencode({"ids": ",".join(map(str, self.trace_ids))})


def trace_jobs() -> list[JobRow]:
    """Every labelled job (newest first), then the upload batches of unlabelled traces."""
    labelled = (
        TraceSummary.objects.exclude(job_label="")
        .values("job_label")
        .annotate(
            traces=Count("artifact"),
            ranks=Count("rank", distinct=True),
            world_size=Max("world_size"),
            hosts=Count("host", distinct=True, filter=~Q(host="")),
            first_recorded=Min("recorded_at"),
            last_uploaded=Max("artifact__uploaded_at"),
        )
        .order_by("-last_uploaded", "job_label")
    )
    jobs = [
        JobRow(
            title=row["job_label"],
            label=row["job_label"],
            trace_ids=(),
            traces=row["traces"],
            ranks=row["ranks"],
            world_size=row["world_size"],
            hosts=row["hosts"],
            first_recorded=row["first_recorded"],
            last_uploaded=row["last_uploaded"],
        )
        for row in labelled
    ]
    return jobs + upload_batches()


def jobs_filtered(jobs: list[JobRow], params: Mapping[str, Any]) -> list[JobRow]:
    """The jobs list narrowed by the page's query string (``q`` in the title, ``kind``
    labelled/batch, ``min_ranks``, ``since``/``until`` on the last upload date). Junk
    values mean no filter, as everywhere else."""
    q = str(params.get("q") or "").strip().lower()
    kind = params.get("kind") or ""
    min_ranks = _int(params.get("min_ranks"))
    since, until = _date(params.get("since")), _date(params.get("until"))

    def keep(job: JobRow) -> bool:
        uploaded = job.last_uploaded.date() if job.last_uploaded else None
        return (
            (not q or q in job.title.lower())
            and (kind != "labelled" or bool(job.label))
            and (kind != "batch" or not job.label)
            and (min_ranks is None or job.ranks >= min_ranks)
            and (since is None or (uploaded is not None and uploaded >= since))
            and (until is None or (uploaded is not None and uploaded <= until))
        )

    return [job for job in jobs if keep(job)]


def upload_batches() -> list[JobRow]:
    """Unlabelled multi-rank traces uploaded together: same uploader and world size, each
    within BATCH_GAP of the previous one, no rank twice. Computed on read, so a batch never
    depends on the order in which workers happened to parse its files."""
    rows = list(
        TraceSummary.objects.filter(job_label="", world_size__gt=1)
        .order_by("-artifact__uploaded_at")
        .values_list(
            "artifact_id",
            "artifact__uploaded_by__username",
            "artifact__uploaded_at",
            "rank",
            "world_size",
            "host",
            "recorded_at",
        )[:BATCH_SCAN_LIMIT]
    )
    rows.sort(key=lambda r: (r[1] or "", r[4], r[2], r[0]))
    batches: list[list[tuple[Any, ...]]] = []
    for row in rows:
        current = batches[-1] if batches else None
        if (
            current
            and (current[-1][1], current[-1][4]) == (row[1], row[4])
            and row[2] - current[-1][2] <= BATCH_GAP
            and row[3] not in {r[3] for r in current}
        ):
            current.append(row)
        else:
            batches.append([row])
    jobs = [
        JobRow(
            title=f"upload batch {b[0][2]:%Y-%m-%d %H:%M}" + (f" by {b[0][1]}" if b[0][1] else ""),
            label="",
            trace_ids=tuple(r[0] for r in b),
            traces=len(b),
            ranks=len({r[3] for r in b}),
            world_size=b[0][4],
            hosts=len({r[5] for r in b if r[5]}),
            first_recorded=min(r[6] for r in b),
            last_uploaded=max(r[2] for r in b),
        )
        for b in batches
        if len(b) > 1
    ]
    jobs.sort(key=lambda j: j.last_uploaded or datetime.min, reverse=True)
    return jobs


@dataclass(frozen=True)
class Selection:
    """A set of traces named by a job label or by ids, with a title for pages."""

    title: str
    label: str
    ids: tuple[int, ...]

    @property
    def query(self) -> str:
        if self.label:
            return urlencode({"job": self.label})
        return urlencode({"ids": ",".join(map(str, self.ids))})

    def traces(self) -> QuerySet[TraceSummary]:
        qs = TraceSummary.objects.select_related("artifact")
        qs = qs.filter(job_label=self.label) if self.label else qs.filter(artifact_id__in=self.ids)
        return qs.order_by(F("rank").asc(nulls_last=True), "host", "artifact_id")


def job_selection(params: Any, *, prefix: str = "") -> Selection:
    """``job=<label>``, or ``ids=1,2,3`` / repeated ``trace=<id>`` (ticked in the list).

    ``prefix`` reads ``a_job``/``a_ids`` etc. (the two sides of a diff).
    """
    label = (params.get(f"{prefix}job") or "").strip()
    if label:
        if not TraceSummary.objects.filter(job_label=label).exists():
            raise SelectionError(f"no trace has the job label {label!r}")
        return Selection(title=label, label=label, ids=())
    ids = parse_ids(params.get(f"{prefix}ids") or "")
    if not prefix and hasattr(params, "getlist"):
        ids += parse_ids(params.getlist("trace"))
    ids = tuple(dict.fromkeys(ids))
    if not ids:
        raise SelectionError(
            f"name a job: {prefix}job=<label>, or trace ids with {prefix}ids=1,2,3"
            + ("" if prefix else " (or tick traces in the list)")
        )
    if len(ids) > MAX_JOB_TRACES:
        raise SelectionError(f"at most {MAX_JOB_TRACES} traces at once ({len(ids)} named)")
    found = set(TraceSummary.objects.filter(artifact_id__in=ids).values_list("pk", flat=True))
    missing = [i for i in ids if i not in found]
    if missing:
        raise SelectionError(f"no trace with id {', '.join(map(str, missing[:10]))}")
    return Selection(title=f"{len(ids)} selected traces", label="", ids=ids)


def diff_selections(params: Any) -> tuple[Selection, Selection]:
    """The two sides of a diff: ``a``/``b`` trace ids, ``a_job``/``b_job`` labels, or
    ``a_ids``/``b_ids`` lists; two ticked ``trace`` ids from the list also do."""
    ticked = parse_ids(params.getlist("trace")) if hasattr(params, "getlist") else ()
    if len(ticked) == 2 and not (params.get("a") or params.get("b")):
        return _single(ticked[0]), _single(ticked[1])
    if ticked and len(ticked) != 2:
        raise SelectionError(f"tick exactly two traces to compare ({len(ticked)} ticked)")
    sides = []
    for side in ("a", "b"):
        if params.get(side):
            ids = parse_ids(params.get(side))
            if len(ids) != 1:
                raise SelectionError(f"{side}= takes one trace id; use {side}_ids= for several")
            sides.append(_single(ids[0]))
        else:
            try:
                sides.append(job_selection(params, prefix=f"{side}_"))
            except SelectionError as exc:
                raise SelectionError(f"side {side.upper()}: {exc}") from None
    return sides[0], sides[1]


def _single(trace_id: int) -> Selection:
    if not TraceSummary.objects.filter(pk=trace_id).exists():
        raise SelectionError(f"no trace with id {trace_id}")
    return Selection(title=f"trace #{trace_id}", label="", ids=(trace_id,))


def parse_ids(value: str | Iterable[str]) -> tuple[int, ...]:
    parts = value.replace(" ", ",").split(",") if isinstance(value, str) else value
    ids = []
    for part in parts:
        part = str(part).strip()
        if not part:
            continue
        if not part.isdigit():
            raise SelectionError(f"{part!r} is not a trace id")
        ids.append(int(part))
    return tuple(ids)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _date(value: Any) -> date | None:
    try:
        return date.fromisoformat(str(value)) if value else None
    except ValueError:
        return None
