"""Benchmark runs (nccl-tests and metrics uploads): one row per run, its ranks and its points."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.urls import reverse

from artifacts.models.core import Artifact


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


class MeasurementQuerySet(models.QuerySet):
    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> list[Measurement]:
        """Rows made without their time take their run's (the partition key, see below)."""
        objs = list(objs)
        for obj in objs:
            obj.fill_measured_at()
        return super().bulk_create(objs, *args, **kwargs)


class Measurement(models.Model):
    """One message size of an nccl-tests run: out-of-place and in-place results.

    ``measured_at`` is the run's time, copied on every row: on PostgreSQL the table is
    partitioned by month of it (``artifacts/runs/partitions.py``, migration 0011), and a row
    made without it takes its run's. The run's index is ``(run, size_bytes)``: it serves the
    lookups by run alone, so the foreign key has no index of its own.
    """

    run = models.ForeignKey(
        BenchmarkRun, on_delete=models.CASCADE, related_name="measurements", db_index=False
    )
    measured_at = models.DateTimeField(help_text="the run's time (the partition key)")
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

    objects = MeasurementQuerySet.as_manager()

    class Meta:
        ordering = ["size_bytes", "id"]
        indexes = [models.Index(fields=["run", "size_bytes"])]

    def __str__(self) -> str:
        return f"{self.size_bytes} B of run {self.run_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.fill_measured_at()
        super().save(*args, **kwargs)

    def fill_measured_at(self) -> None:
        if self.measured_at is None and self.run_id is not None:
            self.measured_at = self.run.measured_at
