"""Raw evidence files and the typed facts parsed out of them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse

from ..parsers import OTHER, kind_choices


class Artifact(models.Model):
    """One uploaded file, kept byte for byte; parsing derives rows from it and can be redone."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        PARSING = "parsing", "parsing"
        PARSED = "parsed", "parsed"
        FAILED = "failed", "failed"
        STORED = "stored", "stored (no parser)"

    file = models.FileField(upload_to="artifacts/", max_length=300)
    original_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64, unique=True)
    size = models.BigIntegerField()
    kind = models.CharField(max_length=40, choices=kind_choices, default=OTHER, db_index=True)
    kind_detected = models.CharField(max_length=40, blank=True)
    status = models.CharField(
        max_length=12, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    error = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    parser_version = models.CharField(max_length=20, blank=True)
    progress_bytes = models.BigIntegerField(default=0)
    progress_total = models.BigIntegerField(default=0)
    parse_started_at = models.DateTimeField(null=True, blank=True)
    parsed_at = models.DateTimeField(null=True, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    uploaded_at = models.DateTimeField(auto_now_add=True, db_index=True)
    captured_at = models.DateTimeField(
        null=True, blank=True, help_text="when the evidence was produced (upload metadata)"
    )
    label = models.CharField(max_length=120, blank=True, db_index=True)
    host = models.CharField(max_length=255, blank=True, db_index=True)
    metadata = models.JSONField(default=dict, blank=True)
    # Set on files extracted from a support bundle (nvidia-bug-report sections, sysinfo-snapshot
    # members): the bundle they came from. Deleting the bundle deletes what was cut out of it.
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="children",
        help_text="the support bundle this file was extracted from",
    )

    class Meta:
        ordering = ["-uploaded_at", "-id"]

    def __str__(self) -> str:
        return f"{self.original_name} ({self.kind})"

    def get_absolute_url(self) -> str:
        return reverse("artifact-detail", args=[self.pk])

    @property
    def is_parseable(self) -> bool:
        return self.kind != OTHER

    @property
    def progress_percent(self) -> int | None:
        if self.status != self.Status.PARSING or not self.progress_total:
            return None
        return min(100, round(100 * self.progress_bytes / self.progress_total))


class BenchmarkRun(models.Model):
    """One benchmark execution found in an artifact (for nccl-tests: one collective test)."""

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="runs")
    index = models.PositiveIntegerField(help_text="position of the run inside its file")
    benchmark = models.CharField(max_length=40, default="nccl-tests", db_index=True)
    collective = models.CharField(max_length=40, blank=True, db_index=True)
    nccl_tests_version = models.CharField(max_length=40, blank=True)
    nccl_version = models.CharField(max_length=40, blank=True, db_index=True)
    params = models.JSONField(default=dict, blank=True)
    nranks = models.PositiveIntegerField(null=True, blank=True, db_index=True)
    nhosts = models.PositiveIntegerField(null=True, blank=True)
    gpu = models.CharField(max_length=120, blank=True, db_index=True)
    dtype = models.CharField(max_length=20, blank=True)
    avg_busbw_gbps = models.FloatField(null=True, blank=True)
    max_busbw_gbps = models.FloatField(null=True, blank=True)
    out_of_bounds = models.IntegerField(null=True, blank=True)
    complete = models.BooleanField(default=True)
    errors = models.JSONField(default=list, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    measured_at = models.DateTimeField(
        db_index=True, help_text="the run's own start time, else the artifact's capture time"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-measured_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["artifact", "index"], name="run_unique_per_artifact")
        ]

    def __str__(self) -> str:
        return f"{self.collective or self.benchmark} x{self.nranks or '?'} ({self.artifact_id})"

    def get_absolute_url(self) -> str:
        return reverse("run-detail", args=[self.pk])

    @property
    def failed(self) -> bool:
        return bool(self.errors)


class RunRank(models.Model):
    """A rank of a run: where it ran, on which GPU."""

    run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="ranks")
    rank = models.PositiveIntegerField()
    host = models.CharField(max_length=255, db_index=True)
    device = models.IntegerField(null=True, blank=True)
    busid = models.CharField(max_length=40, blank=True)
    gpu = models.CharField(max_length=120, blank=True)

    class Meta:
        ordering = ["rank"]

    def __str__(self) -> str:
        return f"rank {self.rank} on {self.host}"


class Measurement(models.Model):
    """One message size of an nccl-tests run: out-of-place and in-place results."""

    run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="measurements")
    size_bytes = models.BigIntegerField()
    count = models.BigIntegerField(null=True, blank=True)
    dtype = models.CharField(max_length=20, blank=True)
    redop = models.CharField(max_length=20, blank=True)
    root = models.IntegerField(null=True, blank=True)
    oop_time_us = models.FloatField(null=True, blank=True)
    oop_algbw_gbps = models.FloatField(null=True, blank=True)
    oop_busbw_gbps = models.FloatField(null=True, blank=True)
    oop_wrong = models.FloatField(null=True, blank=True)
    ip_time_us = models.FloatField(null=True, blank=True)
    ip_algbw_gbps = models.FloatField(null=True, blank=True)
    ip_busbw_gbps = models.FloatField(null=True, blank=True)
    ip_wrong = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["size_bytes", "id"]
        indexes = [models.Index(fields=["run", "size_bytes"])]

    def __str__(self) -> str:
        return f"{self.size_bytes} B of run {self.run_id}"
