"""API shapes of benchmark runs."""

from __future__ import annotations

from django.urls import reverse
from rest_framework import serializers

from artifacts.runs.models import BenchmarkRun, Measurement, RunRank


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


class EfficiencySizeSerializer(serializers.Serializer):
    size_bytes = serializers.IntegerField()
    busbw_gbps = serializers.FloatField(allow_null=True)
    pct_of_peak = serializers.FloatField(allow_null=True)


class RunEfficiencySerializer(serializers.Serializer):
    """``GET /api/v1/runs/{id}/efficiency/`` (docs/efficiency.md)."""

    run = serializers.IntegerField()
    peak_busbw_gbps = serializers.FloatField(help_text="GB/s the bottleneck allows")
    bottleneck = serializers.ChoiceField(
        choices=["nvlink", "network", "pcie", "nic_line_rate", "override"]
    )
    model = serializers.JSONField(
        help_text="every input of the model: name -> {value, unit, source} (GPU model, NVLink "
        "links and rate, PCIe, NICs and line rate, per-node network per host, ranks, nodes)"
    )
    bottleneck_label = serializers.CharField()
    explanation = serializers.CharField(allow_blank=True)
    bounds_gbps = serializers.DictField(child=serializers.FloatField())
    notes = serializers.ListField(child=serializers.CharField())
    profile = serializers.CharField(allow_null=True)
    metric = serializers.CharField()
    large_message = EfficiencySizeSerializer(allow_null=True)
    threshold_pct = serializers.FloatField()
    sizes = EfficiencySizeSerializer(many=True)
