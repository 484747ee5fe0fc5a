"""Raw evidence files and the typed facts parsed out of them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse

from artifacts.parsers import OTHER, kind_choices


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
    # How the kind was chosen: ranked candidates with their scores and reasons, the cleaning
    # applied (encoding, stripped prefixes, transcript part) and, after a person chose a kind
    # with "parse as", who chose it (artifacts/parsers/detection.py).
    detection = models.JSONField(default=dict, blank=True)
    # What could be read of a file no parser took (kind "other", or its parser refused it):
    # key/value pairs, tables and labelled numbers with their lines, and the nearest kinds
    # with why each declined (artifacts/parsers/generic/, artifacts/generic.py). Emptied
    # when a parse succeeds.
    generic = models.JSONField(default=dict, blank=True)
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
    # Who is parsing and when it last moved: a parse whose worker died (SIGKILL, OOM) is
    # found stalled and re-queued once (artifacts/stalls.py); requeued_at says it was.
    parse_worker = models.CharField(max_length=200, blank=True)
    progress_at = models.DateTimeField(null=True, blank=True)
    requeued_at = models.DateTimeField(null=True, blank=True)
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
