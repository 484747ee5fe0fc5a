"""Saved comparison reports: immutable once built, re-built as numbered versions."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.urls import reverse

from artifacts.models import Artifact


class ReportImmutable(Exception):
    """A built report is evidence: its content never changes (re-build makes a new version)."""


# Fields that make up what a report *says*. Once a report is ready they are frozen.
CONTENT_FIELDS = ("kind", "title", "request", "inputs", "tables", "summary", "lineage", "version")


class Report(models.Model):
    """One version of a report. All versions of one report share ``lineage``.

    ``inputs`` pins what it was built from (artifact ids + sha256, run identities); ``tables``
    holds the computed tables as JSON (see ``reports.tables``), so a later re-parse of an
    input, or a changed baseline, never changes a saved report. Charts are drawn from the
    stored tables.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        BUILDING = "building", "building"
        READY = "ready", "ready"
        FAILED = "failed", "failed"

    lineage = models.UUIDField(default=uuid.uuid4, db_index=True, editable=False)
    version = models.PositiveIntegerField(default=1)
    kind = models.CharField(max_length=20, db_index=True)
    title = models.CharField(max_length=200)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    error = models.TextField(blank=True)
    request = models.JSONField(default=dict, help_text="the normalised build request")
    inputs = models.JSONField(default=dict, blank=True, help_text="pinned artifacts and runs")
    tables = models.JSONField(default=list, blank=True)
    summary = models.JSONField(default=list, blank=True, help_text="verdict lines")
    artifacts = models.ManyToManyField(Artifact, blank=True, related_name="reports")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    built_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["lineage", "version"], name="report_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.title} (v{self.version})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk and not self._state.adding:
            stored = Report.objects.filter(pk=self.pk).values("status", *CONTENT_FIELDS).first()
            if stored and stored["status"] == self.Status.READY:
                changed = [f for f in CONTENT_FIELDS if stored[f] != getattr(self, f)]
                if changed or self.status != self.Status.READY:
                    raise ReportImmutable(
                        f"report {self.pk} v{self.version} is saved and immutable "
                        f"(tried to change {', '.join(changed) or 'status'}); re-build it as "
                        "a new version instead"
                    )
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("report-detail", args=[self.pk])

    @property
    def kind_label(self) -> str:
        from reports.kinds import kind_label

        return kind_label(self.kind)

    @property
    def is_ready(self) -> bool:
        return self.status == self.Status.READY

    def table(self, name: str) -> dict[str, Any] | None:
        return next((t for t in self.tables if t["name"] == name), None)
