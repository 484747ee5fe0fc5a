"""Django admin for the artifacts app.

Evidence rows (trace summaries, kernel stats, counter samples, Nsight reports, findings...)
are derived: the loader rewrites them on every (re-)parse, so the admin shows them read-only
(an edit would be silently lost on the next parse, and could contradict the raw file). They
are fixed by re-parsing, or removed with their artifact. Findings keep their acknowledgement
editable: that is a human decision, not parser output.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from artifacts.models import (
    Artifact,
    BenchmarkRun,
    CounterRate,
    CounterSample,
    CounterSnapshot,
    Finding,
    HostFact,
    LogEvent,
    NcuKernel,
    NsightApiStat,
    NsightKernelStat,
    NsightMemStat,
    NsightRange,
    NsightReport,
    TraceCollective,
    TraceKernelStat,
    TraceStep,
    TraceSummary,
)


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ["id", "original_name", "kind", "status", "size", "label", "host", "uploaded_at"]
    list_filter = ["kind", "status"]
    search_fields = ["original_name", "sha256", "label", "host"]
    readonly_fields = ["sha256", "size", "file", "summary", "warnings", "parser_version"]


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(admin.ModelAdmin):
    list_display = ["id", "collective", "nranks", "gpu", "nccl_version", "avg_busbw_gbps"]
    list_filter = ["collective", "nccl_version"]
    raw_id_fields = ["artifact"]


class DerivedAdmin(admin.ModelAdmin):
    """View-only: parser output is changed by re-parsing the artifact, not by hand."""

    list_per_page = 50
    show_full_result_count = False  # no COUNT(*) over millions of samples per page view

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# -- PyTorch Profiler traces -----------------------------------------------------------


class TraceKernelInline(admin.TabularInline):
    model = TraceKernelStat
    fields = ["name", "kernel_type", "count", "sum_us", "mean_us", "max_us", "share_pct"]
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = False

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).order_by("-sum_us")


@admin.register(TraceSummary)
class TraceSummaryAdmin(DerivedAdmin):
    list_display = [
        "artifact",
        "job_label",
        "rank",
        "world_size",
        "host",
        "gpu",
        "span_us",
        "idle_pct",
        "compute_pct",
        "comm_pct",
        "overlap_pct",
        "step_count",
        "recorded_at",
    ]
    list_filter = ["platform", "cpu_only", "truncated", "backend", "nccl_version"]
    search_fields = ["job_label", "host", "gpu", "artifact__original_name", "artifact__label"]
    date_hierarchy = "recorded_at"
    list_select_related = ["artifact"]
    inlines = [TraceKernelInline]


@admin.register(TraceKernelStat)
class TraceKernelStatAdmin(DerivedAdmin):
    list_display = ["trace", "name", "kernel_type", "count", "sum_us", "mean_us", "share_pct"]
    list_filter = ["kernel_type"]
    search_fields = ["name"]
    raw_id_fields = ["trace"]


@admin.register(TraceStep)
class TraceStepAdmin(DerivedAdmin):
    list_display = ["trace", "step", "start_us", "dur_us", "gpu_events", "gpu_idle_pct"]
    raw_id_fields = ["trace"]


@admin.register(TraceCollective)
class TraceCollectiveAdmin(DerivedAdmin):
    list_display = ["trace", "name", "start_us", "dur_us", "size_bytes", "group_size", "busbw_gbps"]
    list_filter = ["name", "dtype"]
    search_fields = ["kernel", "process_group"]
    raw_id_fields = ["trace"]


# -- Nsight Systems / Compute ---------------------------------------------------------


@admin.register(NsightReport)
class NsightReportAdmin(DerivedAdmin):
    list_display = [
        "artifact",
        "source_kind",
        "nsys_version",
        "schema_version",
        "host",
        "kernel_count",
        "duration_ns",
    ]
    list_filter = ["source_kind", "nsys_version", "schema_version"]
    search_fields = ["host", "artifact__original_name", "artifact__label"]
    list_select_related = ["artifact"]


class _NsightStatAdmin(DerivedAdmin):
    list_display = ["artifact", "name", "source_kind", "count", "total_ns", "time_pct", "avg_ns"]
    list_filter = ["source_kind"]
    search_fields = ["name", "artifact__original_name"]
    raw_id_fields = ["artifact"]


@admin.register(NsightKernelStat)
class NsightKernelStatAdmin(_NsightStatAdmin):
    list_filter = ["source_kind", "is_nccl"]


@admin.register(NsightMemStat)
class NsightMemStatAdmin(_NsightStatAdmin):
    pass


@admin.register(NsightApiStat)
class NsightApiStatAdmin(_NsightStatAdmin):
    list_filter = ["source_kind", "api"]


@admin.register(NsightRange)
class NsightRangeAdmin(_NsightStatAdmin):
    list_filter = ["source_kind", "style"]


@admin.register(NcuKernel)
class NcuKernelAdmin(DerivedAdmin):
    list_display = [
        "artifact",
        "kernel_id",
        "name",
        "device",
        "duration_ns",
        "sm_throughput_pct",
        "dram_throughput_pct",
        "achieved_occupancy_pct",
    ]
    list_filter = ["source_kind", "device", "cc"]
    search_fields = ["name", "process", "artifact__original_name"]
    raw_id_fields = ["artifact"]


# -- Fabric: counters, logs, host facts, findings -------------------------------------


@admin.register(CounterSnapshot)
class CounterSnapshotAdmin(DerivedAdmin):
    list_display = ["artifact", "source", "host", "device", "port", "taken_at", "time_source"]
    list_filter = ["source", "time_source"]
    search_fields = ["host", "device", "label"]
    date_hierarchy = "taken_at"
    raw_id_fields = ["artifact"]


@admin.register(CounterSample)
class CounterSampleAdmin(DerivedAdmin):
    list_display = ["snapshot", "counter", "value", "unit"]
    search_fields = ["counter"]
    raw_id_fields = ["snapshot"]


@admin.register(CounterRate)
class CounterRateAdmin(DerivedAdmin):
    list_display = ["host", "device", "port", "counter", "value", "unit", "flag", "at"]
    list_filter = ["flag", "derived"]
    search_fields = ["host", "device", "counter"]
    date_hierarchy = "at"
    raw_id_fields = ["before", "after"]


@admin.register(LogEvent)
class LogEventAdmin(DerivedAdmin):
    list_display = ["artifact", "kind", "time", "host", "rank", "line", "short_text"]
    list_filter = ["kind"]
    search_fields = ["text", "host"]
    raw_id_fields = ["artifact"]

    @admin.display(description="text")
    def short_text(self, obj: LogEvent) -> str:
        return obj.text[:120]


@admin.register(HostFact)
class HostFactAdmin(DerivedAdmin):
    list_display = ["host", "device", "port", "name", "value", "observed_at", "artifact"]
    list_filter = ["name"]
    search_fields = ["host", "device", "name", "value"]
    raw_id_fields = ["artifact"]


@admin.register(Finding)
class FindingAdmin(admin.ModelAdmin):
    """Parser/rule output, read-only except the acknowledgement (a person's call)."""

    list_display = ["title", "severity", "rule", "host", "device", "observed_at", "acknowledged"]
    list_filter = ["severity", "rule"]
    search_fields = ["title", "host", "device", "rule"]
    date_hierarchy = "observed_at"
    raw_id_fields = ["artifact", "acknowledged_by"]
    fields = [
        "title",
        "severity",
        "rule",
        "fingerprint",
        "explanation",
        "evidence",
        "host",
        "device",
        "port",
        "kb_slug",
        "artifact",
        "observed_at",
        "acknowledged_by",
        "acknowledged_at",
        "acknowledgement_note",
    ]
    readonly_fields = fields[:12]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(boolean=True, description="acknowledged")
    def acknowledged(self, obj: Finding) -> bool:
        return obj.acknowledged
