"""``/api/v1/sweeps/``: list, one sweep with its analysis, and make one (editors).

Adapters only: the analysis is ``reads.sweep_view``, the write ``services.sweep_create``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from baselines.models import Sweep
from baselines.sweeps import reads, services
from baselines.sweeps.views import sweep_payload


class SweepSerializer(serializers.ModelSerializer):
    profile = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    url = serializers.CharField(source="get_absolute_url", read_only=True)
    created_by = serializers.StringRelatedField()

    class Meta:
        model = Sweep
        fields = ["id", "name", "profile", "source", "notes", "created_by", "created_at", "url"]


class SweepCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    run_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    artifact_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    notes = serializers.CharField(required=False, allow_blank=True)


class SweepViewSet(viewsets.ViewSet):
    """Tuning sweeps: runs on one profile that differ in settings (docs/tuning.md)."""

    @extend_schema(responses=SweepSerializer(many=True))
    def list(self, request: Request) -> Response:
        sweeps = Sweep.objects.select_related("profile", "created_by").order_by("-created_at")
        pager = PageNumberPagination()
        page = pager.paginate_queryset(sweeps, request, view=self)
        return pager.get_paginated_response(SweepSerializer(page, many=True).data)

    @extend_schema(responses=dict)
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        sweep = get_object_or_404(Sweep.objects.select_related("profile"), pk=pk)
        return Response(sweep_payload(reads.sweep_view(sweep)))

    @extend_schema(request=SweepCreateSerializer, responses={201: SweepSerializer})
    def create(self, request: Request) -> Response:
        data = SweepCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values: dict[str, Any] = data.validated_data
        try:
            sweep = services.sweep_create(
                name=values.get("name", ""),
                run_ids=values.get("run_ids", []),
                artifact_ids=values.get("artifact_ids", []),
                notes=values.get("notes", ""),
                user=request.user,
            )
        except ValidationError as exc:
            raise ApiValidationError({"detail": exc.messages}) from exc
        return Response(SweepSerializer(sweep).data, status=status.HTTP_201_CREATED)
