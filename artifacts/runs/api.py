"""REST endpoints for benchmark runs (read-only: runs come from parsing)."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from artifacts.runs.models import BenchmarkRun
from artifacts.runs.querysets import runs_filtered
from artifacts.runs.serializers import (
    RunBriefSerializer,
    RunDetailSerializer,
)

_RUN_FILTERS = [
    OpenApiParameter("collective", str),
    OpenApiParameter("nranks", int),
    OpenApiParameter("host", str, description="any rank's host contains"),
    OpenApiParameter("label", str),
    OpenApiParameter("gpu", str),
    OpenApiParameter("nccl_version", str),
    OpenApiParameter("since", str, description="YYYY-MM-DD"),
    OpenApiParameter("until", str, description="YYYY-MM-DD"),
    OpenApiParameter("status", str, enum=["failed", "incomplete"]),
]


class RunViewSet(viewsets.ReadOnlyModelViewSet):
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[BenchmarkRun]:
        if self.action == "retrieve":
            return BenchmarkRun.objects.prefetch_related("ranks", "measurements")
        return runs_filtered(self.request.query_params)

    def get_serializer_class(self) -> type:
        return RunDetailSerializer if self.action == "retrieve" else RunBriefSerializer

    @extend_schema(parameters=_RUN_FILTERS)
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)
