"""Nsight Systems and Nsight Compute evidence: summaries as typed rows.

One NsightReport per Nsight Systems artifact (SQLite export, stats output or a kept
.nsys-rep) holds the session facts; its kernel, memory-operation, API and NVTX range
summaries are rows (shaped like ``nsys stats`` reports, times in ns) so they can be filtered,
exported and compared. Nsight Compute kernels are rows with their key metrics as columns and
every metric and rule message as JSON. The report shares its primary key with the artifact,
so its page keeps its URL across re-parses (the loader replaces the rows, not the id).
"""

from __future__ import annotations

from django.db import models
from django.urls import reverse

from artifacts.models.core import Artifact


def _ns(help_text: str = "") -> models.FloatField:
    return models.FloatField(null=True, blank=True, help_text=help_text)


class NsightReport(models.Model):
    """Session facts of one Nsight Systems artifact."""

    artifact = models.OneToOneField(
        Artifact, on_delete=models.CASCADE, primary_key=True, related_name="nsight"
    )
    source_kind = models.CharField(max_length=40, help_text="nsys_sqlite, nsys_stats or nsys_rep")
    nsys_version = models.CharField(max_length=40, blank=True)
    schema_version = models.CharField(max_length=20, blank=True)
    host = models.CharField(max_length=255, blank=True, db_index=True)
    driver_version = models.CharField(max_length=40, blank=True)
    cuda_driver_version = models.CharField(max_length=40, blank=True)
    duration_ns = models.BigIntegerField(null=True, blank=True)
    kernel_count = models.IntegerField(default=0)
    kernel_time_ns = models.FloatField(default=0)
    nccl_time_ns = models.FloatField(default=0)
    gpus = models.JSONField(default=list, blank=True)
    target = models.JSONField(default=dict, blank=True, help_text="os, cpu, platform...")
    utilisation = models.JSONField(default=list, blank=True, help_text="binned busy % per GPU")
    processes = models.JSONField(default=list, blank=True)
    activity_tables = models.JSONField(default=dict, blank=True)
    diagnostics = models.JSONField(default=list, blank=True)
    other_reports = models.JSONField(
        default=list, blank=True, help_text="nsys stats tables without a typed summary"
    )
    skipped_reports = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"Nsight Systems report of artifact {self.artifact_id}"

    def get_absolute_url(self) -> str:
        return reverse("nsight-systems", args=[self.artifact_id])

    @property
    def nccl_pct(self) -> float | None:
        return 100 * self.nccl_time_ns / self.kernel_time_ns if self.kernel_time_ns else None


class _Durations(models.Model):
    """The columns of an nsys ``*_sum`` report row."""

    source_kind = models.CharField(max_length=40)
    name = models.TextField()
    count = models.BigIntegerField(default=0)
    total_ns = models.FloatField(default=0)
    time_pct = models.FloatField(null=True, blank=True)
    avg_ns = _ns()
    med_ns = _ns()
    min_ns = _ns()
    max_ns = _ns()
    stddev_ns = _ns("sample standard deviation, as nsys")

    class Meta:
        abstract = True
        ordering = ["-total_ns", "id"]

    def __str__(self) -> str:
        return f"{self.name[:80]} ({self.count}x)"


class NsightKernelStat(_Durations):
    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="nsight_kernels")
    is_nccl = models.BooleanField(default=False, db_index=True)
    launch_api = models.CharField(max_length=120, blank=True)
    avg_launch_ns = _ns("kernel start - launch call start, joined on (globalPid, correlationId)")

    class Meta(_Durations.Meta):
        indexes = [models.Index(fields=["artifact", "-total_ns"], name="nsight_kernel_by_time")]


class NsightMemStat(_Durations):
    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="nsight_memory")
    total_bytes = models.FloatField(null=True, blank=True)
    avg_bytes = models.FloatField(null=True, blank=True)
    min_bytes = models.FloatField(null=True, blank=True)
    max_bytes = models.FloatField(null=True, blank=True)
    throughput_gbps = models.FloatField(null=True, blank=True, help_text="bytes / time, GB/s")

    class Meta(_Durations.Meta):
        indexes = [models.Index(fields=["artifact", "-total_ns"], name="nsight_mem_by_time")]


class NsightApiStat(_Durations):
    class Api(models.TextChoices):
        CUDA = "cuda", "CUDA API"
        OSRT = "osrt", "OS runtime"

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="nsight_api")
    api = models.CharField(max_length=8, choices=Api.choices, default=Api.CUDA)

    class Meta(_Durations.Meta):
        indexes = [models.Index(fields=["artifact", "api", "-total_ns"], name="nsight_api_by_time")]


class NsightRange(_Durations):
    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="nsight_ranges")
    style = models.CharField(max_length=20, blank=True, help_text="PushPop or StartEnd")

    class Meta(_Durations.Meta):
        indexes = [models.Index(fields=["artifact", "-total_ns"], name="nsight_range_by_time")]


class NcuKernel(models.Model):
    """One profiled kernel launch of an Nsight Compute report."""

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="ncu_kernels")
    source_kind = models.CharField(max_length=40, help_text="ncu_csv or ncu_text")
    index = models.PositiveIntegerField(help_text="position in the file")
    kernel_id = models.IntegerField(help_text="ncu's ID column")
    name = models.TextField()
    process = models.CharField(max_length=255, blank=True)
    device = models.CharField(max_length=60, blank=True)
    cc = models.CharField(max_length=10, blank=True)
    stream = models.CharField(max_length=20, blank=True)
    grid = models.CharField(max_length=60, blank=True)
    block = models.CharField(max_length=60, blank=True)
    nvtx = models.JSONField(default=list, blank=True)
    duration_ns = models.FloatField(null=True, blank=True)
    sm_throughput_pct = models.FloatField(null=True, blank=True)
    memory_throughput_pct = models.FloatField(null=True, blank=True)
    dram_throughput_pct = models.FloatField(null=True, blank=True)
    achieved_occupancy_pct = models.FloatField(null=True, blank=True)
    registers_per_thread = models.FloatField(null=True, blank=True)
    metrics = models.JSONField(default=list, blank=True, help_text="[[section, name, unit, value]]")
    rules = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(fields=["artifact", "index"], name="ncu_kernel_unique_index")
        ]

    def __str__(self) -> str:
        return f"{self.name[:80]} (#{self.kernel_id})"

    def metrics_by_section(self) -> list[tuple[str, list[list[object]]]]:
        """Metrics grouped by section, in the order the report lists them."""
        groups: dict[str, list[list[object]]] = {}
        for section, name, unit, value in self.metrics:
            groups.setdefault(section or "", []).append([name, unit, value])
        return list(groups.items())
