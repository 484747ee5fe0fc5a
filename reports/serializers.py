"""Explicit input and output shapes of the reports API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from reports.comparisons import GROUPINGS
from reports.exports import FORMATS
from reports.kinds import KINDS
from reports.models import Report


class ReportCreateSerializer(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=list(KINDS))
    run_ids = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False)
    artifact_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False
    )
    profile_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        help_text='kind "profiles": [reference profile, new profile]',
    )
    with_baseline = serializers.BooleanField(
        default=False, help_text="compare each run with its matching baseline"
    )
    group_by = serializers.ChoiceField(
        choices=list(GROUPINGS),
        default="artifact",
        help_text="how runs are put on sides: "
        + "; ".join(f"{k}: {v}" for k, v in GROUPINGS.items()),
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["kind"] == "profiles":
            if len(attrs.get("profile_ids") or []) != 2:
                raise serializers.ValidationError(
                    {"profile_ids": 'kind "profiles" needs profile_ids: [reference, new]'}
                )
        elif attrs["kind"] == "runs" and not (attrs.get("run_ids") or attrs.get("artifact_ids")):
            raise serializers.ValidationError(
                {"run_ids": 'kind "runs" needs run_ids or artifact_ids (at least one)'}
            )
        return attrs


class ReportCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField(help_text="the API resource")
    page_url = serializers.CharField(help_text="the report page (permalink of this version)")
    version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Report.Status.choices)
    error = serializers.CharField()


class ReportBriefSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Report
        fields = [
            "id",
            "url",
            "title",
            "kind",
            "version",
            "status",
            "summary",
            "created_by",
            "created_at",
        ]

    def get_url(self, report: Report) -> str:
        request = self.context.get("request")
        path = f"/api/v1/reports/{report.pk}/"
        return request.build_absolute_uri(path) if request else path


class ReportTableSerializer(serializers.Serializer):
    title = serializers.CharField()
    note = serializers.CharField()
    columns = serializers.ListField(child=serializers.DictField())
    rows = serializers.ListField(child=serializers.DictField(), help_text="one object per row")


class ReportDetailSerializer(serializers.Serializer):
    """Documentation of ``exports.report_payload`` (what the endpoint returns)."""

    id = serializers.IntegerField()
    url = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.CharField()
    version = serializers.IntegerField()
    lineage = serializers.UUIDField()
    status = serializers.CharField()
    error = serializers.CharField()
    created_at = serializers.DateTimeField()
    built_at = serializers.DateTimeField(allow_null=True)
    created_by = serializers.CharField(allow_null=True)
    request = serializers.DictField()
    inputs = serializers.DictField(help_text="pinned artifacts (id, sha256), runs, baselines")
    summary = serializers.ListField(child=serializers.CharField(), help_text="verdict lines")
    tables = serializers.DictField(child=ReportTableSerializer())
    versions = serializers.ListField(child=serializers.DictField())


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=list(FORMATS), default="json")
    table = serializers.CharField(required=False, allow_blank=True)
    chart = serializers.CharField(required=False, allow_blank=True)
