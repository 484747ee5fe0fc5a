"""REST endpoints of the fabric evidence. Adapters: filter via querysets, write via services."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from artifacts.fabric import querysets
from artifacts.fabric.serializers import (
    AcknowledgeSerializer,
    CounterRateSerializer,
    CounterSampleSerializer,
    FindingDetailSerializer,
    FindingSerializer,
    HostSerializer,
    LogEventSerializer,
)
from artifacts.fabric.services import FindingError, finding_acknowledge, finding_unacknowledge
from artifacts.models import CounterRate, CounterSample, Finding, LogEvent

_FINDING_FILTERS = [
    OpenApiParameter("severity", str, enum=[s.value for s in Finding.Severity]),
    OpenApiParameter("rule", str, description="rule id, e.g. pfc_pause_storm"),
    OpenApiParameter("host", str, description="host contains"),
    OpenApiParameter("artifact", int, description="findings of (or citing) this artifact"),
    OpenApiParameter("acknowledged", str, enum=["yes", "no"]),
    OpenApiParameter("since", str, description="YYYY-MM-DD"),
    OpenApiParameter("until", str, description="YYYY-MM-DD"),
    OpenApiParameter("q", str, description="title contains"),
]
_ARTIFACT_REQUIRED = OpenApiParameter("artifact", int, required=True, description="artifact id")


class FindingViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[Finding]:
        if self.action == "retrieve":
            return Finding.objects.select_related("acknowledged_by").prefetch_related(
                "related_artifacts"
            )
        return querysets.findings_filtered(self.request.query_params)

    def get_serializer_class(self) -> type:
        return FindingDetailSerializer if self.action == "retrieve" else FindingSerializer

    @extend_schema(parameters=_FINDING_FILTERS)
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=AcknowledgeSerializer,
        responses={200: FindingSerializer},
        description="Acknowledge a finding (editor role), with an optional note.",
    )
    @action(detail=True, methods=["post"])
    def acknowledge(self, request: Request, pk: str | None = None) -> Response:
        form = AcknowledgeSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            finding = finding_acknowledge(
                finding=self.get_object(),
                user=request.user,
                note=form.validated_data.get("note", ""),
            )
        except FindingError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(FindingSerializer(finding, context={"request": request}).data)

    @extend_schema(request=None, responses={200: FindingSerializer})
    @action(detail=True, methods=["post"])
    def reopen(self, request: Request, pk: str | None = None) -> Response:
        finding = finding_unacknowledge(finding=self.get_object())
        return Response(FindingSerializer(finding, context={"request": request}).data)


def _require_artifact(request: Request) -> int:
    raw = request.query_params.get("artifact")
    try:
        return int(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValidationError({"artifact": "required: the id of an artifact"}) from None


class CounterSampleViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    serializer_class = CounterSampleSerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[CounterSample]:
        artifact = _require_artifact(self.request)
        return querysets.artifact_samples_by_id(artifact, self.request.query_params)

    @extend_schema(
        parameters=[
            _ARTIFACT_REQUIRED,
            OpenApiParameter("counter", str, description="counter name contains"),
            OpenApiParameter("nonzero", bool),
        ]
    )
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)


class CounterRateViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    serializer_class = CounterRateSerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[CounterRate]:
        params = self.request.query_params
        if not params.get("artifact") and not params.get("host"):
            raise ValidationError({"artifact": "give an artifact id or a host"})
        return querysets.rates_filtered(params).select_related("after")

    @extend_schema(
        parameters=[
            OpenApiParameter("artifact", int, description="rates ending in this artifact"),
            OpenApiParameter("host", str, description="exact host (artifact or host needed)"),
            OpenApiParameter("device", str),
            OpenApiParameter("counter", str, description="counter name contains"),
            OpenApiParameter("derived", bool),
            OpenApiParameter("flag", str, enum=["ok", "reset", "wrap", "saturated", "no_time"]),
            OpenApiParameter("since", str, description="YYYY-MM-DD"),
            OpenApiParameter("until", str, description="YYYY-MM-DD"),
        ]
    )
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)


class LogEventViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    serializer_class = LogEventSerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[LogEvent]:
        return querysets.events_filtered(self.request.query_params)

    @extend_schema(
        parameters=[
            OpenApiParameter("artifact", int),
            OpenApiParameter("host", str, description="exact host"),
            OpenApiParameter("kind", str, description="nccl_warn, watchdog_timeout, xid, ..."),
        ]
    )
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)


class HostViewSet(viewsets.ViewSet):
    """Hosts PerfHub has evidence for, with their finding counts."""

    @extend_schema(
        parameters=[OpenApiParameter("q", str, description="host contains")],
        responses={200: HostSerializer(many=True)},
    )
    def list(self, request: Request) -> Response:
        rows = querysets.hosts_overview(request.query_params)
        return Response(HostSerializer(rows, many=True).data)
