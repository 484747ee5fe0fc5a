"""REST endpoints for jobs: list, one job with its evidence and facts, a person's changes.
Adapters only: reads from querysets, writes through services."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from artifacts.jobs.models import Job, JobMember
from artifacts.jobs.querysets import jobs_filtered
from artifacts.jobs.serializers import (
    JobDetailSerializer,
    JobMemberChangeSerializer,
    JobSerializer,
)
from artifacts.jobs.services import job_member_place
from artifacts.models.core import Artifact
from perfhub import dispatch


class JobViewSet(viewsets.ReadOnlyModelViewSet):
    """Jobs: the evidence that shares job facts (docs/baselines.md)."""

    filter_backends: list[type] = []
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> QuerySet[Job]:
        if self.action == "list":
            return jobs_filtered(self.request.query_params)
        return Job.objects.prefetch_related("members__artifact")

    def get_serializer_class(self) -> type:
        if self.action == "retrieve":
            return JobDetailSerializer
        if self.action == "members":
            return JobMemberChangeSerializer
        return JobSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("host", str, description="a member names this host (contains)"),
            OpenApiParameter("how", str, enum=list(Job.How.values)),
        ]
    )
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=JobMemberChangeSerializer,
        responses=JobDetailSerializer,
        description="Editors: put an artifact in this job (`add`) or take it out to stand "
        "alone (`remove`). Kept through re-parses; the runs concerned are re-filed.",
    )
    @action(detail=True, methods=["post"])
    def members(self, request: Request, pk: str | None = None) -> Response:
        job = self.get_object()
        data = JobMemberChangeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        artifact = get_object_or_404(Artifact, pk=data.validated_data["artifact"])
        left = (
            JobMember.objects.filter(job__members__artifact=artifact)
            .exclude(artifact=artifact)
            .values_list("artifact_id", flat=True)
            .first()
        )
        target = None if data.validated_data["action"] == "remove" else job
        placed = job_member_place(artifact=artifact, job=target, user=request.user)
        for artifact_id in {artifact.pk, left} - {None}:
            dispatch.enqueue("baselines.after_parse", artifact_id)
        fresh = Job.objects.prefetch_related("members__artifact").get(pk=placed.pk)
        return Response(JobDetailSerializer(fresh, context={"request": request}).data)
