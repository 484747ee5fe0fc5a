"""Named reads for artifact and run pages and the API (filters live here, not in views)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet

from artifacts.models import Artifact


def artifacts_filtered(params: Any) -> QuerySet[Artifact]:
    qs = (
        Artifact.objects.select_related("uploaded_by")
        .annotate(run_count=Count("runs"))
        .order_by("-uploaded_at", "-id")  # GROUP BY queries drop Meta.ordering
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
