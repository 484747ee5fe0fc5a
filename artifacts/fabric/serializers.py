"""Explicit input and output shapes of the fabric API."""

from __future__ import annotations

from rest_framework import serializers

from artifacts.models import CounterRate, CounterSample, Finding, LogEvent


class FindingSerializer(serializers.ModelSerializer):
    acknowledged_by = serializers.StringRelatedField()
    acknowledged = serializers.BooleanField(read_only=True)
    page_url = serializers.SerializerMethodField()

    class Meta:
        model = Finding
        fields = [
            "id", "page_url", "rule", "severity", "title", "explanation", "evidence", "host",
            "device", "port", "artifact", "kb_slug", "observed_at", "created_at",
            "acknowledged", "acknowledged_by", "acknowledged_at", "acknowledgement_note",
        ]  # fmt: skip

    def get_page_url(self, finding: Finding) -> str:
        request = self.context.get("request")
        path = finding.get_absolute_url()
        return request.build_absolute_uri(path) if request else path


class FindingDetailSerializer(FindingSerializer):
    related_artifacts = serializers.PrimaryKeyRelatedField(many=True, read_only=True)

    class Meta(FindingSerializer.Meta):
        fields = [*FindingSerializer.Meta.fields, "related_artifacts"]


class AcknowledgeSerializer(serializers.Serializer):
    note = serializers.CharField(max_length=500, required=False, allow_blank=True)


class CounterSampleSerializer(serializers.ModelSerializer):
    snapshot = serializers.IntegerField(source="snapshot_id", read_only=True)
    index = serializers.IntegerField(source="snapshot.index", read_only=True)
    host = serializers.CharField(source="snapshot.host", read_only=True)
    device = serializers.CharField(source="snapshot.device", read_only=True)
    port = serializers.IntegerField(source="snapshot.port", read_only=True, allow_null=True)
    taken_at = serializers.DateTimeField(source="snapshot.taken_at", read_only=True)
    time_source = serializers.CharField(source="snapshot.time_source", read_only=True)

    class Meta:
        model = CounterSample
        fields = [
            "snapshot", "index", "host", "device", "port", "taken_at", "time_source", "counter",
            "value", "unit",
        ]  # fmt: skip


class CounterRateSerializer(serializers.ModelSerializer):
    artifact = serializers.IntegerField(source="after.artifact_id", read_only=True)

    class Meta:
        model = CounterRate
        fields = [
            "id", "artifact", "before", "after", "at", "host", "device", "port", "counter",
            "derived", "delta", "dt_seconds", "value", "unit", "flag",
        ]  # fmt: skip


class LogEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = LogEvent
        fields = ["id", "artifact", "kind", "time", "host", "rank", "pid", "line", "text", "extra"]


class HostSerializer(serializers.Serializer):
    host = serializers.CharField()
    findings = serializers.IntegerField()
    open = serializers.IntegerField()
    critical = serializers.IntegerField()
    last_seen = serializers.DateTimeField(allow_null=True)
