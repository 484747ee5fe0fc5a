"""Named reads for the Nsight pages and API (filters and sort orders live here, not in views)."""

from __future__ import annotations

from typing import Any

from django.db.models import F, QuerySet
from django.db.models.expressions import OrderBy

from artifacts.models import Artifact, NcuKernel, NsightApiStat, NsightKernelStat

NSYS_KINDS = ("nsys_sqlite", "nsys_stats", "nsys_rep")
NCU_KINDS = ("ncu_csv", "ncu_text")
NSIGHT_KINDS = NSYS_KINDS + NCU_KINDS


# ?sort= values -> ORDER BY; a whitelist, so a query string can never name a column. Nulls
# go last on every database (PostgreSQL would put them first in a descending order).
def _desc(field: str) -> OrderBy:
    return F(field).desc(nulls_last=True)


def _asc(field: str) -> OrderBy:
    return F(field).asc(nulls_last=True)


NSYS_KERNEL_SORTS: dict[str, tuple[Any, ...]] = {
    "total": (_desc("total_ns"), "id"),
    "count": (_desc("count"), _desc("total_ns"), "id"),
    "avg": (_desc("avg_ns"), "id"),
    "max": (_desc("max_ns"), "id"),
    "name": ("name", "id"),
}
NCU_KERNEL_SORTS: dict[str, tuple[Any, ...]] = {
    "index": ("index",),
    "duration": (_desc("duration_ns"), "index"),
    "sm": (_desc("sm_throughput_pct"), "index"),
    "dram": (_desc("dram_throughput_pct"), "index"),
    "occupancy": (_asc("achieved_occupancy_pct"), "index"),
    "registers": (_desc("registers_per_thread"), "index"),
}


def nsight_artifacts(params: Any) -> QuerySet[Artifact]:
    """Nsight artifacts for the list page: kind, label, host and file-name filters."""
    qs = Artifact.objects.filter(kind__in=NSIGHT_KINDS).order_by("-uploaded_at", "-id")
    if (kind := params.get("kind")) in NSIGHT_KINDS:
        qs = qs.filter(kind=kind)
    if label := params.get("label"):
        qs = qs.filter(label=label)
    if host := params.get("host"):
        qs = qs.filter(host__icontains=host)
    if q := params.get("q"):
        qs = qs.filter(original_name__icontains=q)
    return qs


def nsys_kernels(artifact: Artifact, params: Any) -> QuerySet[NsightKernelStat]:
    qs = NsightKernelStat.objects.filter(artifact=artifact)
    if q := params.get("q"):
        qs = qs.filter(name__icontains=q)
    if params.get("nccl") in ("1", "true", "yes"):
        qs = qs.filter(is_nccl=True)
    return qs.order_by(*NSYS_KERNEL_SORTS.get(params.get("sort", ""), NSYS_KERNEL_SORTS["total"]))


def nsys_api(artifact: Artifact, api: str) -> QuerySet[NsightApiStat]:
    return NsightApiStat.objects.filter(artifact=artifact, api=api).order_by("-total_ns", "id")


def ncu_kernels(artifact: Artifact, params: Any) -> QuerySet[NcuKernel]:
    qs = NcuKernel.objects.filter(artifact=artifact)
    if q := params.get("q"):
        qs = qs.filter(name__icontains=q)
    return qs.order_by(*NCU_KERNEL_SORTS.get(params.get("sort", ""), NCU_KERNEL_SORTS["index"]))
