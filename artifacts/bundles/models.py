"""Support bundles: which sections/members a bundle holds and what became of each one."""

from __future__ import annotations

from django.db import models

from artifacts.models.core import Artifact


class BundleMember(models.Model):
    """One section of an nvidia-bug-report or one member of a sysinfo-snapshot archive.

    A row exists for every part the bundle parser saw, also for those not stored on their
    own (no parser, empty, unsafe name, over a limit: ``note`` says why). ``artifact`` is the
    evidence the part became; when the same bytes were uploaded before (another bundle of the
    same host holds the same ``/proc/cmdline``), it is that earlier artifact, so the bundle
    still lists it while the ``parent`` of that artifact keeps pointing at its first bundle.
    """

    bundle = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="bundle_members")
    artifact = models.ForeignKey(
        Artifact,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="bundle_memberships",
    )
    position = models.PositiveIntegerField(help_text="order inside the bundle")
    name = models.CharField(max_length=500, help_text="section header or member path")
    kind = models.CharField(max_length=40, blank=True, help_text="kind chosen for the part")
    size = models.BigIntegerField(default=0)
    line_start = models.PositiveIntegerField(null=True, blank=True)
    line_end = models.PositiveIntegerField(null=True, blank=True)
    note = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["bundle_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["bundle", "position"], name="bundle_member_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name} in bundle {self.bundle_id}"

    @property
    def lines(self) -> str:
        if self.line_start is None:
            return ""
        return f"{self.line_start}-{self.line_end}" if self.line_end else str(self.line_start)
