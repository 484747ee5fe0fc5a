"""Jobs and their evidence.

A job groups the artifacts that describe one process world, so that what one of them says
about the process (the ``NCCL_*`` environment, the NCCL version it loaded) may fill what
another leaves out. Membership is decided by what the evidence states (a job id, the same
hosts over an overlapping time), by the bundle or transcript it was cut out of, or by a
person - never by a shared upload label (a label such as ``nightly`` spans clusters).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse

from artifacts.models.core import Artifact


class Job(models.Model):
    """One job: its identity (``key``), hosts and time range (the union of its evidence)."""

    class How(models.TextChoices):
        STATED = "stated", "stated job id"
        HOSTS = "hosts", "same hosts, overlapping time"
        PARENT = "parent", "one bundle or transcript"
        PERSON = "person", "put together by a person"

    # "id:<stated id>", "hosts:<hosts hash>:<artifact id>", "parent:<artifact id>",
    # "person:<uuid>": unique, so two workers assigning at once find the same row.
    key = models.CharField(max_length=200, unique=True)
    name = models.CharField(max_length=200, blank=True)
    how = models.CharField(max_length=10, choices=How.choices)
    hosts = models.JSONField(default=list, blank=True)
    # sha1 of the sorted host names: an indexed equality test for "the same hosts".
    hosts_key = models.CharField(max_length=40, blank=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True, db_index=True)
    ended_at = models.DateTimeField(null=True, blank=True, db_index=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return self.name or self.key

    def get_absolute_url(self) -> str:
        return reverse("job-detail", args=[self.pk])


class JobMember(models.Model):
    """An artifact in a job, and why. An artifact is in one job at most.

    ``pinned``: a person put it there (``placed_by``, when known); re-parsing and
    re-assignment leave it alone.
    """

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="members")
    artifact = models.OneToOneField(
        Artifact, on_delete=models.CASCADE, related_name="job_membership"
    )
    reason = models.CharField(max_length=300)
    placed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    pinned = models.BooleanField(default=False)
    hosts = models.JSONField(default=list, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    joined_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["started_at", "artifact_id"]

    def __str__(self) -> str:
        return f"artifact {self.artifact_id} in job {self.job_id}"
