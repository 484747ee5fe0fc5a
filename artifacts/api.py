"""REST endpoints for artifacts and runs. Adapters only: validate, call a service, render."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from artifacts.models import Artifact, BenchmarkRun
from artifacts.querysets import artifacts_filtered
from artifacts.serializers import (
    ArtifactDetailSerializer,
    ArtifactSerializer,
    ArtifactUploadSerializer,
    ReparseSerializer,
)
from artifacts.services import IngestError, artifact_ingest, artifact_request_parse

_ARTIFACT_FILTERS = [
    OpenApiParameter("kind", str, description="artifact kind, e.g. nccl_tests"),
    OpenApiParameter("status", str, enum=[s.value for s in Artifact.Status]),
    OpenApiParameter("label", str, description="exact label"),
    OpenApiParameter("host", str, description="host contains"),
    OpenApiParameter("q", str, description="file name contains"),
]


class ArtifactViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    parser_classes = [MultiPartParser, FormParser, JSONParser]
    filter_backends: list[type] = []  # filtering is done by artifacts_filtered

    def get_queryset(self) -> QuerySet[Artifact]:
        if self.action == "retrieve":
            runs_in_file_order = Prefetch("runs", queryset=BenchmarkRun.objects.order_by("index"))
            return Artifact.objects.select_related("uploaded_by").prefetch_related(
                runs_in_file_order
            )
        return artifacts_filtered(self.request.query_params)

    def get_serializer_class(self) -> type:
        return ArtifactDetailSerializer if self.action == "retrieve" else ArtifactSerializer

    @extend_schema(parameters=_ARTIFACT_FILTERS)
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request={"multipart/form-data": ArtifactUploadSerializer},
        responses={201: ArtifactSerializer, 200: ArtifactSerializer},
        description="Upload one file. Same bytes as an existing artifact: 200 with that "
        "artifact and `duplicate: true`.",
    )
    def create(self, request: Request) -> Response:
        form = ArtifactUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        upload = form.validated_data["file"]
        try:
            outcome = artifact_ingest(
                stream=upload,
                name=upload.name,
                uploaded_by=request.user,
                kind=form.validated_data.get("kind"),
                label=form.validated_data.get("label", ""),
                host=form.validated_data.get("host", ""),
                metadata=_with_job(form.validated_data.get("metadata"), form.validated_data),
            )
        except IngestError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        body = ArtifactSerializer(outcome.artifact, context={"request": request}).data
        body = {**body, "duplicate": not outcome.created, "detail": outcome.message}
        code = status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK
        return Response(body, status=code)

    @extend_schema(request=ReparseSerializer, responses={202: ArtifactSerializer})
    @action(detail=True, methods=["post"])
    def reparse(self, request: Request, pk: str | None = None) -> Response:
        form = ReparseSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        artifact = artifact_request_parse(
            artifact=self.get_object(), kind=form.validated_data.get("kind"), by=request.user
        )
        body = ArtifactSerializer(artifact, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED)


def _with_job(metadata: dict[str, Any] | None, data: dict[str, Any]) -> dict[str, Any] | None:
    """The ``job`` field is the metadata key ``job`` (artifacts/jobs/services.py reads it)."""
    job = str(data.get("job") or "").strip()
    if not job:
        return metadata
    return {**(metadata or {}), "job": job}
