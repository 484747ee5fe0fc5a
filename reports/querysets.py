"""Named reads for report pages, the API and embeds (filters live here, not in views)."""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from perfhub.params import int_param as _int
from reports.models import Report


def reports_filtered(params: Any) -> QuerySet[Report]:
    """The list: newest first, latest version of each report unless ``versions=all``.

    The list never loads the stored tables (they can be large): ``defer`` keeps the list
    query light whatever the reports hold.
    """
    qs = Report.objects.select_related("created_by").defer("tables", "inputs", "request")
    if params.get("versions") != "all":
        newer = Report.objects.filter(lineage=OuterRef("lineage"), version__gt=OuterRef("version"))
        qs = qs.filter(~Exists(newer))
    if kind := params.get("kind"):
        qs = qs.filter(kind=kind)
    if status := params.get("status"):
        qs = qs.filter(status=status)
    if q := params.get("q"):
        qs = qs.filter(Q(title__icontains=q) | Q(summary__icontains=q))
    if author := params.get("created_by"):
        qs = qs.filter(created_by__username=author)
    if artifact := _int(params.get("artifact")):
        qs = qs.filter(artifacts__id=artifact)
    return qs.order_by("-created_at", "-id")


def report_versions(report: Report) -> QuerySet[Report]:
    """Every version of ``report``'s lineage, oldest first (light: no tables)."""
    return (
        Report.objects.filter(lineage=report.lineage)
        .only("id", "version", "status", "created_at", "created_by__username", "title")
        .select_related("created_by")
        .order_by("version")
    )


def latest_version(report: Report) -> Report:
    return Report.objects.filter(lineage=report.lineage).order_by("-version").first() or report
