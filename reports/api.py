"""REST endpoints for reports. Adapters only: validate, call a service, render."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response

from reports import exports
from reports.kinds import KINDS, ReportInputError
from reports.models import Report
from reports.querysets import report_versions, reports_filtered
from reports.serializers import (
    ExportQuerySerializer,
    ReportBriefSerializer,
    ReportCreatedSerializer,
    ReportCreateSerializer,
    ReportDetailSerializer,
)
from reports.services import report_create, report_rebuild

_LIST_FILTERS = [
    OpenApiParameter("kind", str, enum=list(KINDS)),
    OpenApiParameter("status", str, enum=[s.value for s in Report.Status]),
    OpenApiParameter("q", str, description="title or verdict contains"),
    OpenApiParameter("created_by", str, description="author's username"),
    OpenApiParameter("artifact", int, description="reports built from this artifact"),
    OpenApiParameter(
        "versions", str, enum=["all"], description="all versions, not only the latest"
    ),
]


class _NoFormatOverride:
    URL_FORMAT_OVERRIDE = None


class ExportFormatNegotiation(DefaultContentNegotiation):
    """``?format=html|csv|json`` names the export file (the issue's contract), not one of
    DRF's renderers: without this DRF would answer 404 for ``format=csv``."""

    settings = _NoFormatOverride()


class ReportViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    filter_backends: list[type] = []
    serializer_class = ReportBriefSerializer
    content_negotiation_class = ExportFormatNegotiation

    def get_queryset(self) -> QuerySet[Report]:
        if self.action == "list":
            return reports_filtered(self.request.query_params)
        return Report.objects.select_related("created_by")

    @extend_schema(parameters=_LIST_FILTERS)
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=ReportCreateSerializer,
        responses={201: ReportCreatedSerializer, 400: OpenApiResponse(description="why not")},
        description="Build and save a report. Small inputs are built before the answer "
        "(status `ready`); big ones are queued (`pending`: poll the report). Kinds "
        '"traces" and "counters" answer 400 "not available yet" until their evidence has models.',
    )
    def create(self, request: Request) -> Response:
        form = ReportCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            report = report_create(
                kind=data["kind"],
                title=data["title"],
                run_ids=data.get("run_ids", []),
                artifact_ids=data.get("artifact_ids", []),
                profile_ids=data.get("profile_ids", []),
                with_baseline=data["with_baseline"],
                group_by=data["group_by"],
                created_by=request.user,
            )
        except ReportInputError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self._created(request, report), status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: ReportDetailSerializer})
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        report = self.get_object()
        body = exports.report_payload(report, url=request.build_absolute_uri())
        body["versions"] = [
            {"id": v.pk, "version": v.version, "status": v.status, "url": self._api_url(request, v)}
            for v in report_versions(report)
        ]
        return Response(body)

    @extend_schema(
        parameters=[ExportQuerySerializer],
        responses={
            (200, "text/html"): OpenApiTypes.BINARY,
            (200, "text/csv"): OpenApiTypes.BINARY,
            (200, "application/zip"): OpenApiTypes.BINARY,
            (200, "application/json"): OpenApiTypes.BINARY,
            (200, "text/markdown"): OpenApiTypes.BINARY,
            (200, "image/png"): OpenApiTypes.BINARY,
            (200, "image/svg+xml"): OpenApiTypes.BINARY,
            400: OpenApiResponse(description="unknown format, table or chart"),
            409: OpenApiResponse(description="the report is not built yet"),
            503: OpenApiResponse(description="chart images cannot be rendered on this server"),
        },
        description="The report as a file (attachment). `csv` without `table` is a zip of "
        "every table; `png`/`svg` need `chart` (names are on the report page and in errors).",
    )
    @action(detail=True, methods=["get"])
    def export(self, request: Request, pk: str | None = None) -> HttpResponse:
        report = self.get_object()
        query = ExportQuerySerializer(data=request.query_params)
        if not query.is_valid():
            return Response(query.errors, status=status.HTTP_400_BAD_REQUEST)
        try:
            content, content_type, name = exports.export_file(
                report,
                query.validated_data["format"],
                table=query.validated_data.get("table", ""),
                chart=query.validated_data.get("chart", ""),
                url=request.build_absolute_uri(report.get_absolute_url()),
            )
        except exports.ExportError as exc:
            return Response({"detail": str(exc)}, status=exc.status)
        response = HttpResponse(content, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        response["X-Content-Type-Options"] = "nosniff"
        return response

    @extend_schema(request=None, responses={201: ReportCreatedSerializer})
    @action(detail=True, methods=["post"])
    def rebuild(self, request: Request, pk: str | None = None) -> Response:
        """A new version of the report from the same request and the data as it is now."""
        try:
            report = report_rebuild(report=self.get_object(), created_by=request.user)
        except ReportInputError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self._created(request, report), status=status.HTTP_201_CREATED)

    def _created(self, request: Request, report: Report) -> dict[str, object]:
        return {
            "id": report.pk,
            "url": self._api_url(request, report),
            "page_url": request.build_absolute_uri(report.get_absolute_url()),
            "version": report.version,
            "status": report.status,
            "error": report.error,
        }

    @staticmethod
    def _api_url(request: Request, report: Report) -> str:
        return request.build_absolute_uri(reverse("api-report-detail", args=[report.pk]))
