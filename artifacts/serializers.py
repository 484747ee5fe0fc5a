"""Explicit input and output shapes of the artifacts API."""

from __future__ import annotations

import json
from typing import Any

from django.urls import reverse
from rest_framework import serializers

from artifacts.models import Artifact, BundleMember
from artifacts.parsers import OTHER, PARSERS
from artifacts.runs.serializers import RunBriefSerializer


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
    job = serializers.CharField(
        max_length=150,
        required=False,
        allow_blank=True,
        help_text="the job this file belongs to (Slurm/Kubernetes job id, CI run id): files "
        "of one job share its NCCL_* environment and NCCL version; stored as metadata 'job'",
    )


class ReparseSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=[*PARSERS, OTHER], required=False)


class ArtifactSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField()
    uploaded_by = serializers.StringRelatedField()
    progress_percent = serializers.IntegerField(read_only=True)
    kind_label = serializers.CharField(source="get_kind_display", read_only=True)

    class Meta:
        model = Artifact
        fields = [
            "id", "url", "page_url", "download_url", "original_name", "sha256", "size", "kind",
            "kind_label", "kind_detected", "status", "error", "warnings", "summary",
            "parser_version", "progress_percent", "uploaded_by", "uploaded_at", "captured_at",
            "parsed_at", "label", "host",
            "metadata",
            "parent",
            "detection",
            "requeued_at",
        ]  # fmt: skip
        # detection: ranked candidates with scores and reasons, the cleaning applied, a
        # transcript's parts, and the kind a person chose (POST .../reparse/ {"kind": ...})
        extra_kwargs = {
            "parent": {"read_only": True},
            "detection": {"read_only": True},
            "requeued_at": {"read_only": True},
        }  # set by bundle unpacking only

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
    # A file no parser took: its pairs, tables and labelled numbers with their lines, and
    # the nearest kinds with why each declined ({} once a parser took it; docs/formats.md).
    generic = serializers.JSONField(read_only=True)

    class Meta(ArtifactSerializer.Meta):
        fields = [*ArtifactSerializer.Meta.fields, "runs", "bundle_members", "generic"]


def _absolute(serializer: serializers.Serializer, path: str) -> str:
    request = serializer.context.get("request")
    return request.build_absolute_uri(path) if request else path
