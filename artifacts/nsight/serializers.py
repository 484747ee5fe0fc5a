"""API shapes of the Nsight summaries (also the page's JSON export)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from artifacts.models import (
    Artifact,
    NcuKernel,
    NsightApiStat,
    NsightKernelStat,
    NsightMemStat,
    NsightRange,
    NsightReport,
)
from artifacts.nsight.querysets import nsys_api

_DURATIONS = ["name", "count", "total_ns", "time_pct", "avg_ns", "med_ns", "min_ns", "max_ns",
              "stddev_ns"]  # fmt: skip
# API lists are capped; the page's CSV export has every row.
MAX_ROWS = 5000


class NsysKernelSerializer(serializers.ModelSerializer):
    class Meta:
        model = NsightKernelStat
        fields = [*_DURATIONS, "is_nccl", "launch_api", "avg_launch_ns"]


class NsysMemSerializer(serializers.ModelSerializer):
    class Meta:
        model = NsightMemStat
        fields = [*_DURATIONS, "total_bytes", "avg_bytes", "min_bytes", "max_bytes",
                  "throughput_gbps"]  # fmt: skip


class NsysApiSerializer(serializers.ModelSerializer):
    class Meta:
        model = NsightApiStat
        fields = _DURATIONS


class NsysRangeSerializer(serializers.ModelSerializer):
    class Meta:
        model = NsightRange
        fields = [*_DURATIONS, "style"]


class NsysSummarySerializer(serializers.Serializer):
    """One Nsight Systems artifact: session facts and every summary table."""

    artifact = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    warnings = serializers.ListField(child=serializers.CharField())
    nsys_version = serializers.CharField(allow_blank=True, allow_null=True)
    schema_version = serializers.CharField(allow_blank=True, allow_null=True)
    host = serializers.CharField(allow_blank=True, allow_null=True)
    driver_version = serializers.CharField(allow_blank=True, allow_null=True)
    cuda_driver_version = serializers.CharField(allow_blank=True, allow_null=True)
    duration_ns = serializers.IntegerField(allow_null=True)
    kernel_time_ns = serializers.FloatField(allow_null=True)
    nccl_time_ns = serializers.FloatField(allow_null=True)
    nccl_pct = serializers.FloatField(allow_null=True)
    gpus = serializers.ListField(child=serializers.DictField())
    target = serializers.DictField()
    utilisation = serializers.ListField(
        child=serializers.DictField(), help_text="per GPU: start_ns, bin_ns, busy_pct[], nccl_pct[]"
    )
    diagnostics = serializers.ListField(child=serializers.DictField())
    kernels = NsysKernelSerializer(many=True)
    memory = NsysMemSerializer(many=True)
    cuda_api = NsysApiSerializer(many=True)
    os_runtime = NsysApiSerializer(many=True)
    ranges = NsysRangeSerializer(many=True)


class NcuKernelSerializer(serializers.ModelSerializer):
    metrics = serializers.ListField(
        child=serializers.ListField(), help_text="[section, name, unit, value] per metric"
    )
    rules = serializers.ListField(
        child=serializers.DictField(),
        help_text="section, name, type, description, speedup_type, speedup_pct",
    )

    class Meta:
        model = NcuKernel
        fields = [
            "index", "kernel_id", "name", "process", "device", "cc", "stream", "grid", "block",
            "nvtx", "duration_ns", "sm_throughput_pct", "memory_throughput_pct",
            "dram_throughput_pct", "achieved_occupancy_pct", "registers_per_thread", "metrics",
            "rules",
        ]  # fmt: skip


class NcuSummarySerializer(serializers.Serializer):
    artifact = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    warnings = serializers.ListField(child=serializers.CharField())
    summary = serializers.DictField()
    kernels = serializers.IntegerField(help_text="number of profiled kernels")
    kernels_url = serializers.CharField(help_text="paginated kernels with all metrics")


def nsys_payload(artifact: Artifact, report: NsightReport | None) -> dict[str, Any]:
    """The summary as plain data (the API's response body and the page's JSON export)."""
    facts = ("nsys_version", "schema_version", "host", "driver_version", "cuda_driver_version",
             "duration_ns", "kernel_time_ns", "nccl_time_ns", "nccl_pct")  # fmt: skip
    body: dict[str, Any] = {
        "artifact": artifact.pk,
        "kind": artifact.kind,
        "status": artifact.status,
        "warnings": list(artifact.warnings or []),
        **{f: getattr(report, f) if report else None for f in facts},
        "gpus": report.gpus if report else [],
        "target": report.target if report else {},
        "utilisation": report.utilisation if report else [],
        "diagnostics": report.diagnostics if report else [],
    }
    rows = {
        "kernels": (NsysKernelSerializer, NsightKernelStat.objects.filter(artifact=artifact)),
        "memory": (NsysMemSerializer, NsightMemStat.objects.filter(artifact=artifact)),
        "cuda_api": (NsysApiSerializer, nsys_api(artifact, NsightApiStat.Api.CUDA)),
        "os_runtime": (NsysApiSerializer, nsys_api(artifact, NsightApiStat.Api.OSRT)),
        "ranges": (NsysRangeSerializer, NsightRange.objects.filter(artifact=artifact)),
    }
    for key, (serializer, queryset) in rows.items():
        body[key] = serializer(queryset[:MAX_ROWS], many=True).data
    return body
