"""Explicit input and output shapes of the artifacts API."""

from __future__ import annotations

import json
from typing import Any

from django.urls import reverse
from rest_framework import serializers

from .models import Artifact, BenchmarkRun, BundleMember, Measurement, RunRank
from .parsers import OTHER, PARSERS


class MetadataField(serializers.Field):
    """Accepts a JSON object, or (multipart forms) a string holding one."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, str):
            try:
                data = json.loads(data) if data.strip() else {}
            except json.JSONDecodeError as exc:
                raise serializers.ValidationError(f"metadata is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise serializers.ValidationError("metadata must be a JSON object")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class ArtifactUploadSerializer(serializers.Serializer):
    file = serializers.FileField()
    kind = serializers.ChoiceField(choices=[*PARSERS, OTHER], required=False)
    label = serializers.CharField(max_length=120, required=False, allow_blank=True)
    host = serializers.CharField(max_length=255, required=False, allow_blank=True)
    metadata = MetadataField(required=False)


class ReparseSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=[*PARSERS, OTHER], required=False)


class RunBriefSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()

    class Meta:
        model = BenchmarkRun
        fields = [
            "id", "url", "benchmark", "collective", "nranks", "nhosts", "gpu", "dtype",
            "nccl_version", "avg_busbw_gbps", "max_busbw_gbps", "complete", "errors",
        ]  # fmt: skip

    def get_url(self, run: BenchmarkRun) -> str:
        return _absolute(self, reverse("api-run-detail", args=[run.pk]))


class ArtifactSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField()
    uploaded_by = serializers.StringRelatedField()
    progress_percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = Artifact
        fields = [
            "id", "url", "page_url", "download_url", "original_name", "sha256", "size", "kind",
            "kind_detected", "status", "error", "warnings", "summary", "parser_version",
            "progress_percent", "uploaded_by", "uploaded_at", "captured_at", "parsed_at", "label",
            "host",
            "metadata",
            "parent",
        ]  # fmt: skip
        extra_kwargs = {"parent": {"read_only": True}}  # set by bundle unpacking only

    def get_url(self, artifact: Artifact) -> str:
        return _absolute(self, reverse("api-artifact-detail", args=[artifact.pk]))

    def get_page_url(self, artifact: Artifact) -> str:
        return _absolute(self, artifact.get_absolute_url())

    def get_download_url(self, artifact: Artifact) -> str:
        return _absolute(self, reverse("artifact-download", args=[artifact.pk]))


class BundleMemberSerializer(serializers.ModelSerializer):
    class Meta:
        model = BundleMember
        fields = ["position", "name", "kind", "size", "line_start", "line_end", "note", "artifact"]


class ArtifactDetailSerializer(ArtifactSerializer):
    runs = RunBriefSerializer(many=True, read_only=True)
    bundle_members = BundleMemberSerializer(many=True, read_only=True)

    class Meta(ArtifactSerializer.Meta):
        fields = [*ArtifactSerializer.Meta.fields, "runs", "bundle_members"]


class RankSerializer(serializers.ModelSerializer):
    class Meta:
        model = RunRank
        fields = ["rank", "host", "device", "busid", "gpu"]


class MeasurementSerializer(serializers.ModelSerializer):
    class Meta:
        model = Measurement
        exclude = ["id", "run"]


class RunDetailSerializer(RunBriefSerializer):
    artifact = serializers.PrimaryKeyRelatedField(read_only=True)
    ranks = RankSerializer(many=True, read_only=True)
    measurements = MeasurementSerializer(many=True, read_only=True)

    class Meta(RunBriefSerializer.Meta):
        fields = [
            *RunBriefSerializer.Meta.fields, "artifact", "nccl_tests_version", "params",
            "out_of_bounds", "measured_at", "created_at", "ranks", "measurements",
        ]  # fmt: skip


def _absolute(serializer: serializers.Serializer, path: str) -> str:
    request = serializer.context.get("request")
    return request.build_absolute_uri(path) if request else path
