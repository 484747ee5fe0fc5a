"""Writes on reports: create (validate + pin + build), build (the Celery task's body), rebuild.

The single place a report is built, whether inline (small inputs, the answer is ready when the
request returns) or in the ``reports.build`` task (big inputs). A built report is never
updated: re-building makes the next version of the same lineage.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from perfhub import dispatch
from reports.kinds import ReportInputError, ReportSpec, get_kind
from reports.models import Report

log = logging.getLogger(__name__)

# Reports reading more measurement rows than this are built by a worker, not in the request.
INLINE_MAX_POINTS = 20_000
TITLE_MAX = 200


def report_create(
    *,
    kind: str,
    title: str,
    run_ids: Iterable[int] = (),
    artifact_ids: Iterable[int] = (),
    profile_ids: Iterable[int] = (),
    with_baseline: bool = False,
    group_by: str = "artifact",
    created_by: Any = None,
) -> Report:
    """Validate the request, save version 1 and build it (inline or queued).

    Raises ``ReportInputError`` (nothing saved) when the request cannot make a report.
    """
    title = _clean_title(title)
    spec = ReportSpec(
        kind=kind,
        title=title,
        run_ids=tuple(int(i) for i in run_ids),
        artifact_ids=tuple(int(i) for i in artifact_ids),
        profile_ids=tuple(int(i) for i in profile_ids),
        with_baseline=with_baseline,
        group_by=group_by or "artifact",
    )
    spec = get_kind(kind).normalise(spec)
    return _save_and_build(spec, lineage=None, created_by=created_by)


def report_rebuild(*, report: Report, created_by: Any = None) -> Report:
    """A new version from the same request, read from the data as it is now."""
    stored = ReportSpec.from_json(report.request)
    # Rebuild from the pinned run positions, not the run ids (a re-parse renumbers runs).
    spec = ReportSpec(
        kind=stored.kind,
        title=stored.title,
        profile_ids=stored.profile_ids,
        with_baseline=stored.with_baseline,
        group_by=stored.group_by,
        run_refs=stored.run_refs,
    )
    spec = get_kind(spec.kind).normalise(spec)
    return _save_and_build(spec, lineage=report, created_by=created_by)


def report_build(*, report_id: int) -> Report:
    """Collect, compute and freeze one pending report. Idempotent: a built report is returned
    as it is. Bad input marks it failed with the reason; nothing half-built is ever visible."""
    with transaction.atomic():
        report = Report.objects.select_for_update().get(pk=report_id)
        if report.status == Report.Status.READY:
            return report
        Report.objects.filter(pk=report_id).update(status=Report.Status.BUILDING, error="")
    spec = ReportSpec.from_json(report.request)
    try:
        module = get_kind(spec.kind)
        collected = module.collect(spec)
        built = module.compute(collected, spec)
    except ReportInputError as exc:
        _mark_failed(report_id, str(exc))
        return _fresh(report_id)
    except Exception as exc:  # a bug must show on the report page, not leave it "building"
        log.exception("building report %s failed", report_id)
        _mark_failed(report_id, f"internal error while building: {type(exc).__name__}: {exc}")
        raise
    with transaction.atomic():
        updated = Report.objects.filter(
            pk=report_id, status__in=[Report.Status.PENDING, Report.Status.BUILDING]
        ).update(
            status=Report.Status.READY,
            inputs=collected.inputs,
            tables=built.tables,
            summary=built.summary,
            built_at=timezone.now(),
            error="",
        )
        if updated:
            report.artifacts.set(sorted(collected.artifact_ids))
    return _fresh(report_id)


def _save_and_build(spec: ReportSpec, *, lineage: Report | None, created_by: Any) -> Report:
    module = get_kind(spec.kind)
    points = module.estimate(spec)
    report = _new_version(spec, lineage=lineage, created_by=created_by)
    if points <= INLINE_MAX_POINTS:
        return report_build(report_id=report.pk)
    _enqueue_build(report.pk)
    return report


def _new_version(spec: ReportSpec, *, lineage: Report | None, created_by: Any) -> Report:
    user = created_by if getattr(created_by, "pk", None) else None
    for _attempt in range(3):
        try:
            with transaction.atomic():
                fields: dict[str, Any] = {
                    "kind": spec.kind,
                    "title": spec.title,
                    "request": spec.as_json(),
                    "created_by": user,
                }
                if lineage is not None:
                    top = Report.objects.filter(lineage=lineage.lineage).aggregate(v=Max("version"))
                    fields |= {"lineage": lineage.lineage, "version": (top["v"] or 0) + 1}
                return Report.objects.create(**fields)
        except IntegrityError:
            continue  # someone else re-built the same report a moment ago: take the next number
    raise ReportInputError("could not number the new version; try again")


def _enqueue_build(report_id: int) -> None:
    def not_queued(reason: str) -> None:
        _mark_failed(report_id, f"not built: {reason}; build it again once the queue is back")

    dispatch.enqueue("reports.build", report_id, on_failure=not_queued)


def _mark_failed(report_id: int, message: str) -> None:
    Report.objects.filter(pk=report_id).exclude(status=Report.Status.READY).update(
        status=Report.Status.FAILED, error=message[:5000]
    )


def _fresh(report_id: int) -> Report:
    return Report.objects.get(pk=report_id)


def _clean_title(title: str) -> str:
    title = " ".join(str(title or "").split())
    if not title:
        raise ReportInputError("a report needs a title")
    if len(title) > TITLE_MAX:
        raise ReportInputError(f"the title is longer than {TITLE_MAX} characters")
    return title
