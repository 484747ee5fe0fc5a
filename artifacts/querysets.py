"""Named reads for artifact and run pages and the API (filters live here, not in views)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from artifacts.models import Artifact, BenchmarkRun


def artifacts_filtered(params: Any) -> QuerySet[Artifact]:
    # The run count is a subquery per listed artifact, not a JOIN + GROUP BY: grouped, the
    # database counts every run of every artifact before the LIMIT of a page (1.5 s with
    # 1M runs); as a subquery it counts only the page's rows, read off the newest first.
    runs = (
        BenchmarkRun.objects.filter(artifact=OuterRef("pk"))
        .order_by()
        .values("artifact")
        .annotate(n=Count("*"))
        .values("n")
    )
    qs = (
        Artifact.objects.select_related("uploaded_by")
        .annotate(run_count=Coalesce(Subquery(runs), 0))
        .order_by("-uploaded_at", "-id")
    )
    if kind := params.get("kind"):
        qs = qs.filter(kind=kind)
    if status := params.get("status"):
        qs = qs.filter(status=status)
    if label := params.get("label"):
        qs = qs.filter(label=label)
    if host := params.get("host"):
        qs = qs.filter(host__icontains=host)
    if q := params.get("q"):
        qs = qs.filter(original_name__icontains=q)
    return qs
