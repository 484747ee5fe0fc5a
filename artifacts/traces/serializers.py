"""Explicit input and output shapes of the traces API."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from artifacts.models import TraceCollective, TraceKernelStat, TraceStep, TraceSummary
from artifacts.traces.jobs import RANK_COLUMNS
from artifacts.traces.models import WINDOWS


def _absolute(serializer: serializers.Serializer, path: str) -> str:
    request = serializer.context.get("request")
    return request.build_absolute_uri(path) if request else path


class TraceBriefSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="pk", read_only=True)
    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    artifact_url = serializers.SerializerMethodField()
    file = serializers.CharField(source="artifact.original_name", read_only=True)
    label = serializers.CharField(source="artifact.label", read_only=True)

    class Meta:
        model = TraceSummary
        fields = [
            "id", "url", "page_url", "artifact_url", "file", "label", "job_label", "rank",
            "world_size", "host", "gpu", "backend", "nccl_version", "platform", "cpu_only",
            "recorded_at", "gpu_events", "span_us", "busy_pct", "compute_pct", "comm_pct",
            "exposed_comm_pct", "idle_pct", "overlap_pct", "step_count", "step_median_us",
        ]  # fmt: skip

    def get_url(self, trace: TraceSummary) -> str:
        return _absolute(self, reverse("api-trace-detail", args=[trace.pk]))

    def get_page_url(self, trace: TraceSummary) -> str:
        return _absolute(self, trace.get_absolute_url())

    def get_artifact_url(self, trace: TraceSummary) -> str:
        return _absolute(self, reverse("api-artifact-detail", args=[trace.pk]))


class KernelSerializer(serializers.ModelSerializer):
    type = serializers.CharField(source="kernel_type")

    class Meta:
        model = TraceKernelStat
        fields = ["name", "type", "count", "sum_us", "mean_us", "min_us", "max_us", "std_us",
                  "share_pct"]  # fmt: skip


class StepSerializer(serializers.ModelSerializer):
    class Meta:
        model = TraceStep
        exclude = ["id", "trace"]


class CollectiveSerializer(serializers.ModelSerializer):
    class Meta:
        model = TraceCollective
        exclude = ["id", "trace"]


class BreakdownSerializer(serializers.Serializer):
    """One window: µs and % of the GPU span of each part, and the overlap."""

    window = serializers.ChoiceField(choices=WINDOWS)
    span_us = serializers.FloatField(allow_null=True)
    busy_us = serializers.FloatField(allow_null=True)
    idle_us = serializers.FloatField(allow_null=True)
    compute_us = serializers.FloatField(allow_null=True)
    non_compute_us = serializers.FloatField(allow_null=True)
    comm_us = serializers.FloatField(allow_null=True)
    exposed_comm_us = serializers.FloatField(allow_null=True)
    memory_us = serializers.FloatField(allow_null=True)
    other_us = serializers.FloatField(allow_null=True)
    busy_pct = serializers.FloatField(allow_null=True)
    idle_pct = serializers.FloatField(allow_null=True)
    compute_pct = serializers.FloatField(allow_null=True)
    non_compute_pct = serializers.FloatField(allow_null=True)
    comm_pct = serializers.FloatField(allow_null=True)
    exposed_comm_pct = serializers.FloatField(allow_null=True)
    memory_pct = serializers.FloatField(allow_null=True)
    other_pct = serializers.FloatField(allow_null=True)
    overlap_pct = serializers.FloatField(allow_null=True)


class TraceDetailSerializer(TraceBriefSerializer):
    breakdowns = serializers.SerializerMethodField()
    kernels = KernelSerializer(many=True, read_only=True)
    steps = StepSerializer(many=True, read_only=True)
    collectives = CollectiveSerializer(many=True, read_only=True)

    class Meta(TraceBriefSerializer.Meta):
        fields = [
            *TraceBriefSerializer.Meta.fields, "devices", "truncated", "breakdowns",
            "steps_filtered", "steps_cutoff_us", "steps_dropped_events", "host_wait_us",
            "kernel_wait_us", "idle_other_us", "launches", "short_kernels", "short_kernels_pct",
            "long_runtime_calls", "long_launch_delays", "launch_delay_mean_us",
            "launch_delay_p50_us", "launch_delay_p95_us", "step_mean_us", "collective_count",
            "kernel_name_count", "extra", "kernels", "steps", "collectives",
        ]  # fmt: skip

    def get_breakdowns(self, trace: TraceSummary) -> dict[str, Any]:
        """``trace``: the whole trace; ``steps``: HTA's default window (last step dropped)."""
        return {w: BreakdownSerializer(trace.breakdown(w)).data for w in WINDOWS}


class JobListSerializer(serializers.Serializer):
    title = serializers.CharField()
    label = serializers.CharField(help_text="job label; empty for an upload batch")
    trace_ids = serializers.ListField(child=serializers.IntegerField())
    traces = serializers.IntegerField()
    ranks = serializers.IntegerField()
    world_size = serializers.IntegerField(allow_null=True)
    hosts = serializers.IntegerField()
    first_recorded = serializers.DateTimeField(allow_null=True)
    last_uploaded = serializers.DateTimeField(allow_null=True)
    query = serializers.CharField(help_text="query string for the job endpoint and page")


_RANK_FLOATS = {c for c in RANK_COLUMNS if c.endswith(("_us", "_pct")) or c.startswith("z_")}
_RANK_INTS = {"trace_id", "rank", "world_size", "steps", "collectives_matched"}


class JobRankSerializer(serializers.Serializer):
    """One rank of a job; ``straggler`` lists the signals that flag it (';'-separated)."""

    def get_fields(self) -> dict[str, serializers.Field]:
        fields: dict[str, serializers.Field] = {}
        for column in RANK_COLUMNS:
            if column in _RANK_FLOATS:
                fields[column] = serializers.FloatField(allow_null=True)
            elif column in _RANK_INTS:
                fields[column] = serializers.IntegerField(allow_null=True)
            else:
                fields[column] = serializers.CharField(allow_blank=True)
        return fields


class StragglerSerializer(serializers.Serializer):
    trace_id = serializers.IntegerField()
    rank = serializers.IntegerField(allow_null=True)
    host = serializers.CharField(allow_blank=True)
    signal = serializers.CharField()
    value_us = serializers.FloatField()
    median_us = serializers.FloatField()
    deviation_pct = serializers.FloatField(allow_null=True)
    score = serializers.FloatField(help_text="modified z-score (median/MAD)")
    message = serializers.CharField()


class JobViewSerializer(serializers.Serializer):
    title = serializers.CharField()
    query = serializers.CharField()
    window = serializers.ChoiceField(choices=WINDOWS)
    ranks = JobRankSerializer(many=True)
    stragglers = StragglerSerializer(many=True)
    common_steps = serializers.ListField(child=serializers.IntegerField())
    matched_collectives = serializers.IntegerField()
    threshold = serializers.FloatField()
    min_relative = serializers.FloatField()
    notes = serializers.ListField(child=serializers.CharField())


class BreakdownDeltaSerializer(serializers.Serializer):
    metric = serializers.CharField()
    label = serializers.CharField()
    a = serializers.FloatField(allow_null=True)
    b = serializers.FloatField(allow_null=True)
    delta = serializers.FloatField(allow_null=True)
    delta_pct = serializers.FloatField(allow_null=True)


class KernelDeltaSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField()
    a_count = serializers.FloatField(allow_null=True)
    b_count = serializers.FloatField(allow_null=True)
    a_sum_us = serializers.FloatField(allow_null=True)
    b_sum_us = serializers.FloatField(allow_null=True)
    delta_us = serializers.FloatField()
    delta_pct = serializers.FloatField(allow_null=True)
    change = serializers.ChoiceField(choices=["new", "gone", "slower", "faster", "same"])


class TypeDeltaSerializer(serializers.Serializer):
    type = serializers.CharField()
    a_sum_us = serializers.FloatField()
    b_sum_us = serializers.FloatField()
    delta_us = serializers.FloatField()
    delta_pct = serializers.FloatField(allow_null=True)


class DiffSideSerializer(serializers.Serializer):
    title = serializers.CharField()
    trace_ids = serializers.ListField(child=serializers.IntegerField())


class DiffSerializer(serializers.Serializer):
    a = DiffSideSerializer()
    b = DiffSideSerializer()
    window = serializers.ChoiceField(choices=WINDOWS)
    per_step = serializers.BooleanField()
    breakdown = BreakdownDeltaSerializer(many=True)
    kernels = KernelDeltaSerializer(many=True)
    types = TypeDeltaSerializer(many=True)


class AssignJobSerializer(serializers.Serializer):
    traces = serializers.ListField(child=serializers.IntegerField(min_value=1), min_length=1)
    job = serializers.CharField(max_length=120, allow_blank=True, help_text="'' ungroups")
