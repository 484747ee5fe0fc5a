"""PyTorch Profiler traces: one summary per trace (= per rank), its kernels, steps, collectives.

The rows are what ``artifacts.traces.parsers.torch_trace`` computed, stored so that lists, job views
and diffs are queries, not re-parses. The summary shares its primary key with the artifact,
so a trace keeps its URL across re-parses (the loader replaces the rows, not the id).
Two breakdown windows are kept side by side (see docs/formats.md, "Two windows"): the
whole trace (plain field names) and HTA's default window (``steps_*``).
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.urls import reverse

from artifacts.models.core import Artifact

# Breakdown parts, in the order pages show them; each is a µs field and a % field per window.
BREAKDOWN_PARTS = (
    "span", "busy", "idle", "compute", "non_compute", "comm", "exposed_comm", "memory", "other",
)  # fmt: skip
WINDOWS = ("trace", "steps")


def _us(help_text: str = "") -> models.FloatField:
    return models.FloatField(null=True, blank=True, help_text=help_text)


def _pct() -> models.FloatField:
    return models.FloatField(null=True, blank=True, help_text="% of the GPU span")


class TraceSummary(models.Model):
    """One rank's trace: metadata and every per-rank number small enough to be a column."""

    artifact = models.OneToOneField(
        Artifact, on_delete=models.CASCADE, primary_key=True, related_name="trace"
    )
    rank = models.IntegerField(null=True, blank=True, db_index=True)
    world_size = models.IntegerField(null=True, blank=True)
    backend = models.CharField(max_length=40, blank=True)
    nccl_version = models.CharField(max_length=40, blank=True, db_index=True)
    host = models.CharField(
        max_length=255, blank=True, db_index=True, help_text="upload host, else the trace's own"
    )
    gpu = models.CharField(max_length=120, blank=True, db_index=True)
    platform = models.CharField(max_length=10, blank=True, help_text="cuda, rocm or cpu")
    devices = models.JSONField(default=list, blank=True)
    cpu_only = models.BooleanField(default=False)
    truncated = models.BooleanField(default=False)
    job_label = models.CharField(
        max_length=120,
        blank=True,
        db_index=True,
        help_text="upload metadata 'job', else the artifact label: traces sharing it form a job",
    )
    recorded_at = models.DateTimeField(
        db_index=True, help_text="the trace's base time, else capture time, else upload time"
    )
    gpu_events = models.IntegerField(default=0)

    # Whole trace window (exact float µs).
    span_us = _us("GPU span: first GPU event start to last end (HTA's kernel time)")
    busy_us = _us("union of all GPU events")
    idle_us = _us()
    compute_us = _us()
    non_compute_us = _us()
    comm_us = _us()
    exposed_comm_us = _us("communication not overlapped by compute")
    memory_us = _us()
    other_us = _us()
    busy_pct, idle_pct, compute_pct, non_compute_pct = _pct(), _pct(), _pct(), _pct()
    comm_pct, exposed_comm_pct, memory_pct, other_pct = _pct(), _pct(), _pct(), _pct()
    span_pct = _pct()
    overlap_pct = models.FloatField(
        null=True, blank=True, help_text="share of communication time overlapped by compute"
    )

    # HTA's default window (last ProfilerStep dropped, HTA rounding).
    steps_filtered = models.BooleanField(default=False)
    steps_cutoff_us = _us("start of the last ProfilerStep, from the trace start")
    steps_dropped_events = models.IntegerField(null=True, blank=True)
    steps_span_us = _us()
    steps_busy_us = _us()
    steps_idle_us = _us()
    steps_compute_us = _us()
    steps_non_compute_us = _us()
    steps_comm_us = _us()
    steps_exposed_comm_us = _us()
    steps_memory_us = _us()
    steps_other_us = _us()
    steps_busy_pct, steps_idle_pct, steps_compute_pct = _pct(), _pct(), _pct()
    steps_non_compute_pct, steps_comm_pct, steps_exposed_comm_pct = _pct(), _pct(), _pct()
    steps_memory_pct, steps_other_pct, steps_span_pct = _pct(), _pct(), _pct()
    steps_overlap_pct = models.FloatField(null=True, blank=True)

    # Idle-time breakdown (sums over streams) and kernel launch statistics (HTA's).
    host_wait_us = _us("GPU idle because the CPU launched late")
    kernel_wait_us = _us("back-to-back launch gaps under 30 µs")
    idle_other_us = _us()
    launches = models.IntegerField(null=True, blank=True)
    short_kernels = models.IntegerField(null=True, blank=True)
    short_kernels_pct = models.FloatField(null=True, blank=True)
    long_runtime_calls = models.IntegerField(null=True, blank=True)
    long_launch_delays = models.IntegerField(null=True, blank=True)
    launch_delay_mean_us = _us()
    launch_delay_p50_us = _us()
    launch_delay_p95_us = _us()

    # Steps and collectives at a glance.
    step_count = models.IntegerField(default=0)
    step_mean_us = _us()
    step_median_us = _us()
    collective_count = models.IntegerField(default=0, help_text="all calls, beyond the rows kept")
    kernel_name_count = models.IntegerField(default=0)

    extra = models.JSONField(
        default=dict,
        blank=True,
        help_text="the rest of the parse: kernel-type tables, idle per stream, launch "
        "distributions, collectives summary, process groups, versions, categories",
    )

    class Meta:
        ordering = ["-recorded_at", "rank", "artifact_id"]
        indexes = [models.Index(fields=["job_label", "rank"])]

    def __str__(self) -> str:
        rank = "?" if self.rank is None else self.rank
        return f"trace rank {rank}/{self.world_size or '?'} ({self.artifact_id})"

    def get_absolute_url(self) -> str:
        return reverse("trace-detail", args=[self.artifact_id])

    @property
    def rank_label(self) -> str:
        """How the trace is named in job views: 'rank 3' (host) or the file name."""
        who = f"rank {self.rank}" if self.rank is not None else f"trace #{self.artifact_id}"
        return f"{who} ({self.host})" if self.host else who

    def breakdown(self, window: str = "trace") -> dict[str, Any]:
        """One window's numbers under window-independent keys (``compute_us``, ``idle_pct``)."""
        if window not in WINDOWS:
            raise ValueError(f"unknown window {window!r}; use one of {WINDOWS}")
        prefix = "" if window == "trace" else "steps_"
        values: dict[str, Any] = {"window": window}
        for part in BREAKDOWN_PARTS:
            values[f"{part}_us"] = getattr(self, f"{prefix}{part}_us")
            values[f"{part}_pct"] = getattr(self, f"{prefix}{part}_pct")
        values["overlap_pct"] = getattr(self, f"{prefix}overlap_pct")
        values["memory_other_us"] = _minus(values["non_compute_us"], values["exposed_comm_us"])
        return values


def _minus(a: float | None, b: float | None) -> float | None:
    """Non-compute busy time that is not exposed communication (memory, syncs, ...)."""
    if a is None:
        return None
    return max(0.0, a - (b or 0.0))


class TraceKernelStat(models.Model):
    """One GPU kernel name (or memcpy/memset) of a trace, over the whole trace."""

    trace = models.ForeignKey(TraceSummary, on_delete=models.CASCADE, related_name="kernels")
    name = models.TextField()
    kernel_type = models.CharField(max_length=16, db_index=True)
    count = models.IntegerField()
    sum_us = models.FloatField()
    mean_us = models.FloatField()
    min_us = models.FloatField()
    max_us = models.FloatField()
    std_us = models.FloatField(null=True, blank=True)
    share_pct = models.FloatField(null=True, blank=True, help_text="% of summed GPU time")

    class Meta:
        ordering = ["-sum_us", "id"]
        indexes = [models.Index(fields=["trace", "kernel_type"])]

    def __str__(self) -> str:
        return f"{self.name[:60]} x{self.count}"


class TraceStep(models.Model):
    """One ProfilerStep, with the GPU work launched while it ran."""

    trace = models.ForeignKey(TraceSummary, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField(help_text="position in time order")
    step = models.IntegerField(null=True, blank=True, help_text="N of ProfilerStep#N")
    start_us = models.FloatField(help_text="from the trace start")
    dur_us = models.FloatField()
    gpu_events = models.IntegerField(default=0)
    gpu_span_us = models.FloatField(null=True, blank=True)
    gpu_busy_us = models.FloatField(null=True, blank=True)
    gpu_compute_us = models.FloatField(null=True, blank=True)
    gpu_comm_us = models.FloatField(null=True, blank=True)
    gpu_idle_pct = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["trace_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["trace", "index"], name="trace_step_unique_index")
        ]

    def __str__(self) -> str:
        return f"step {self.step} of {self.trace_id}"


class TraceCollective(models.Model):
    """One NCCL/RCCL collective kernel (the first 1000 of a trace, in time order)."""

    trace = models.ForeignKey(TraceSummary, on_delete=models.CASCADE, related_name="collectives")
    index = models.PositiveIntegerField(help_text="position in time order")
    name = models.CharField(max_length=40, blank=True, db_index=True, help_text="collective")
    kernel = models.TextField(blank=True)
    start_us = models.FloatField(help_text="from the trace start")
    dur_us = models.FloatField()
    stream = models.IntegerField(null=True, blank=True)
    size_bytes = models.BigIntegerField(null=True, blank=True)
    group_size = models.IntegerField(null=True, blank=True)
    dtype = models.CharField(max_length=40, blank=True)
    in_nelems = models.BigIntegerField(null=True, blank=True)
    out_nelems = models.BigIntegerField(null=True, blank=True)
    algbw_gbps = models.FloatField(null=True, blank=True)
    busbw_gbps = models.FloatField(null=True, blank=True)
    process_group = models.CharField(max_length=300, blank=True)
    process_group_desc = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["trace_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["trace", "index"], name="trace_collective_unique_index")
        ]

    def __str__(self) -> str:
        return f"{self.name or 'collective'} {self.dur_us:.1f} µs ({self.trace_id})"
