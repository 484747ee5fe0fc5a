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
