"""REST endpoints for benchmark runs (read-only: runs come from parsing)."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from artifacts.runs.models import BenchmarkRun
from artifacts.runs.querysets import runs_filtered
from artifacts.runs.serializers import (
    RunBriefSerializer,
    RunDetailSerializer,
    RunEfficiencySerializer,
)
from baselines.limits.reads import Unavailable, run_efficiency

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

    @extend_schema(
        responses={
            200: RunEfficiencySerializer,
            404: OpenApiResponse(description="no such run, or its hardware limits are unknown "
                                 "(``detail`` says which input is missing)"),
        },
        description="The run measured against what its hardware can do: the bottleneck of "
        "its collective and topology (NVLink, per-node network, PCIe), the peak busbw it "
        "implies, every input with its source, and per message size busbw as % of the peak.",
    )  # fmt: skip
    @action(detail=True, methods=["get"], url_path="efficiency")
    def efficiency(self, request: Request, pk: str | None = None) -> Response:
        result = run_efficiency(self.get_object())
        if isinstance(result, Unavailable):
            return Response({"detail": result.reason}, status=status.HTTP_404_NOT_FOUND)
        return Response(RunEfficiencySerializer(result.to_json()).data)
