"""Fabric and host evidence: counter snapshots, log events, facts, derived rates, findings.

Every row hangs off the artifact it came from (CASCADE), so re-parsing or deleting a file
never leaves orphans. Rates and findings are derived: the findings task rebuilds them after
each parse, keeping only what people added (acknowledgements).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import NoReverseMatch, reverse

from artifacts.models.core import Artifact


class CounterSnapshot(models.Model):
    """One reading of one device's counters (a block of ``ethtool -S``, one sysfs port...)."""

    class TimeSource(models.TextChoices):
        FILE = "file", "time in the file"
        METADATA = "metadata", "upload metadata (captured_at)"
        UPLOAD = "upload", "upload time"

    artifact = models.ForeignKey(
        Artifact, on_delete=models.CASCADE, related_name="counter_snapshots"
    )
    index = models.PositiveIntegerField(help_text="the parser's snapshot number in the file")
    source = models.CharField(max_length=40, help_text="parser kind that read it")
    host = models.CharField(max_length=255, blank=True, db_index=True)
    device = models.CharField(max_length=255, blank=True, db_index=True)
    port = models.IntegerField(null=True, blank=True)
    label = models.CharField(max_length=255, blank=True)
    taken_at = models.DateTimeField(db_index=True, help_text="when the counters were read")
    time_source = models.CharField(max_length=10, choices=TimeSource.choices)

    class Meta:
        ordering = ["taken_at", "artifact_id", "index", "id"]
        indexes = [models.Index(fields=["host", "device", "port", "taken_at"])]

    def __str__(self) -> str:
        where = self.device + (f"/{self.port}" if self.port is not None else "")
        return f"{self.host or '?'} {where or '?'} #{self.index} ({self.artifact_id})"


class CounterSample(models.Model):
    """One counter value of a snapshot, in the unit the tool counts in."""

    snapshot = models.ForeignKey(CounterSnapshot, on_delete=models.CASCADE, related_name="samples")
    counter = models.CharField(max_length=200, db_index=True)
    # A float: 64-bit counters near 2**64 do not fit a signed bigint, and the precision a
    # double keeps (~1e-16 relative) is far below what a rate over seconds can resolve.
    value = models.FloatField()
    unit = models.CharField(max_length=20, blank=True)

    class Meta:
        ordering = ["snapshot_id", "counter"]
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "counter"], name="sample_unique_counter")
        ]

    def __str__(self) -> str:
        return f"{self.counter}={self.value:g}"


class LogEvent(models.Model):
    """A timeline-ready event from a log (NCCL WARN, watchdog timeout, Xid...)."""

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="log_events")
    kind = models.CharField(max_length=40, db_index=True)
    time = models.DateTimeField(null=True, blank=True, db_index=True)
    host = models.CharField(max_length=255, blank=True, db_index=True)
    rank = models.IntegerField(null=True, blank=True)
    pid = models.IntegerField(null=True, blank=True)
    line = models.PositiveIntegerField(null=True, blank=True)
    text = models.TextField()
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["artifact_id", "line", "id"]

    def __str__(self) -> str:
        return f"{self.kind} on {self.host or '?'}: {self.text[:60]}"


class HostFact(models.Model):
    """A fact a file states about a host or one of its devices (``device`` blank = the host).

    ``name`` is a dotted key (``nccl.version``, ``nccl.env.NCCL_IB_HCA``, ``port.state``,
    ``port.rate_gbps``, ``gpu.pcie_gen_current``...); ``value`` is the text as stated and
    ``number`` its numeric reading when it has one, so rules and pages can compare.
    """

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="host_facts")
    host = models.CharField(max_length=255, blank=True, db_index=True)
    device = models.CharField(max_length=255, blank=True, db_index=True)
    port = models.IntegerField(null=True, blank=True)
    name = models.CharField(max_length=120, db_index=True)
    value = models.TextField(blank=True)
    number = models.FloatField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    observed_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["host", "device", "port", "name", "id"]

    def __str__(self) -> str:
        return f"{self.host or '?'} {self.device} {self.name}={self.value}"


class CounterRate(models.Model):
    """A counter's change between two snapshots of the same host/device/port.

    Raw rows (``derived=False``): ``delta`` in the counter's unit and ``value`` = delta/s.
    Derived rows (pause-duration %, ECN-marked share, goodput...): ``value`` in ``unit``.
    A counter that went backwards is flagged (``reset``/``wrap``) and has no value: a
    negative rate would be a lie.
    """

    class Flag(models.TextChoices):
        OK = "", "ok"
        RESET = "reset", "went backwards (reset)"
        WRAP = "wrap", "went backwards (wrapped)"
        SATURATED = "saturated", "stuck at its maximum"
        NO_TIME = "no_time", "snapshots have the same time"

    before = models.ForeignKey(CounterSnapshot, on_delete=models.CASCADE, related_name="+")
    after = models.ForeignKey(CounterSnapshot, on_delete=models.CASCADE, related_name="rates")
    host = models.CharField(max_length=255, blank=True, db_index=True)
    device = models.CharField(max_length=255, blank=True)
    port = models.IntegerField(null=True, blank=True)
    counter = models.CharField(max_length=200, db_index=True)
    derived = models.BooleanField(default=False)
    delta = models.FloatField(null=True, blank=True)
    dt_seconds = models.FloatField()
    value = models.FloatField(null=True, blank=True)
    unit = models.CharField(max_length=20, blank=True)
    flag = models.CharField(max_length=10, choices=Flag.choices, blank=True)
    at = models.DateTimeField(db_index=True, help_text="time of the later snapshot")

    class Meta:
        ordering = ["at", "host", "device", "port", "counter"]
        indexes = [models.Index(fields=["counter", "at"])]

    def __str__(self) -> str:
        return f"{self.counter} {self.value} {self.unit}"


class Finding(models.Model):
    """Something wrong, said in plain words, with the numbers that show it."""

    class Severity(models.TextChoices):
        INFO = "info", "info"
        WARNING = "warning", "warning"
        CRITICAL = "critical", "critical"

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="findings")
    related_artifacts = models.ManyToManyField(Artifact, blank=True, related_name="+")
    rule = models.CharField(max_length=60, db_index=True)
    # Same rule + same subject = same finding: re-evaluation updates it and keeps its ack.
    fingerprint = models.CharField(max_length=255)
    severity = models.CharField(max_length=10, choices=Severity.choices, db_index=True)
    severity_rank = models.PositiveSmallIntegerField(default=0, db_index=True)
    title = models.CharField(max_length=255)
    explanation = models.TextField()
    evidence = models.JSONField(default=dict, blank=True)
    host = models.CharField(max_length=255, blank=True, db_index=True)
    device = models.CharField(max_length=255, blank=True)
    port = models.IntegerField(null=True, blank=True)
    kb_slug = models.SlugField(max_length=120, blank=True)
    observed_at = models.DateTimeField(db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledgement_note = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-severity_rank", "-observed_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["artifact", "fingerprint"], name="finding_unique_per_artifact"
            )
        ]

    def __str__(self) -> str:
        return f"[{self.severity}] {self.title}"

    def get_absolute_url(self) -> str:
        return reverse("finding-detail", args=[self.pk])

    @property
    def acknowledged(self) -> bool:
        return self.acknowledged_at is not None

    @property
    def kb_url(self) -> str | None:
        """The knowledge-base page for the rule's topic, when the knowledge app serves one."""
        if not self.kb_slug:
            return None
        try:
            return reverse("kb-page", args=[self.kb_slug])
        except NoReverseMatch:
            return None
