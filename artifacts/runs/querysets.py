"""Named reads for run pages and the API (filters live here, not in views)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from artifacts.models.core import Artifact
from artifacts.runs.models import BenchmarkRun
from perfhub.params import date_param as _date
from perfhub.params import int_param as _int


def runs_filtered(params: Any) -> QuerySet[BenchmarkRun]:
    qs = BenchmarkRun.objects.select_related("artifact")
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
    runs = BenchmarkRun.objects.order_by()
    return {
        "collectives": sorted(v for v in runs.values_list("collective", flat=True).distinct() if v),
        "nranks": sorted(v for v in runs.values_list("nranks", flat=True).distinct() if v),
        "labels": sorted(
            v for v in Artifact.objects.order_by().values_list("label", flat=True).distinct() if v
        ),
        "nccl_versions": sorted(
            v for v in runs.values_list("nccl_version", flat=True).distinct() if v
        ),
    }
