"""Celery tasks: thin, named, idempotent wrappers around services."""

from __future__ import annotations

from celery import shared_task

from reports.models import Report


@shared_task(name="reports.build")
def build_report(report_id: int) -> str:
    """Build one queued report (``report_build`` returns a built report unchanged)."""
    # the report kinds load pandas and plotly: a worker pays for them at its first build,
    # not at start-up
    from reports.services import report_build

    try:
        return report_build(report_id=report_id).status
    except Report.DoesNotExist:
        return "deleted"
