"""Hardware profiles, software stacks, series of numbers, baselines and regression alerts.

A benchmark run (``artifacts.BenchmarkRun``) is *filed* once parsed: it gets a hardware
profile and a software stack (``RunContext``) and every message size becomes one point of
a ``Series`` (one benchmark identity on one profile). Runs are compared with a ``Baseline``
(``Comparison``), series are scanned for change points, and what changed becomes ``Alert``
rows grouped into an ``AlertSummary`` per software change.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from typing import Any

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.urls import reverse

from artifacts.models import Artifact, BenchmarkRun
from baselines.facts import COMPONENT_LABELS, Change, diff_stacks
from baselines.versions import version_key
from perfhub.units import human_bytes


class HardwareProfile(models.Model):
    """A kind of machine a benchmark ran on: what its numbers should be compared with."""

    class Fabric(models.TextChoices):
        ROCE_V2 = "roce_v2", "RoCE v2"
        INFINIBAND = "infiniband", "InfiniBand"
        NVLINK_ONLY = "nvlink", "NVLink only (single node)"
        OTHER = "other", "other"

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=120, blank=True)
    gpu_model = models.CharField(max_length=60, blank=True, help_text="H100, H200, B200, MI300X")
    gpu_generation = models.CharField(max_length=40, blank=True, help_text="Hopper, Blackwell")
    gpu_match = models.CharField(
        max_length=120,
        blank=True,
        help_text="text the GPU name must contain to match this profile, e.g. 'H200' "
        "(used when no host mapping applies)",
    )
    gpus_per_node = models.PositiveSmallIntegerField(null=True, blank=True)
    nvlink = models.CharField(max_length=60, blank=True, help_text="e.g. NVLink 4, 18 links")
    nvswitch = models.BooleanField(default=False)
    nic_model = models.CharField(max_length=80, blank=True, help_text="e.g. ConnectX-7")
    nic_speed_gbps = models.PositiveIntegerField(null=True, blank=True)
    nics_per_node = models.PositiveSmallIntegerField(null=True, blank=True)
    fabric = models.CharField(max_length=20, choices=Fabric.choices, default=Fabric.OTHER)
    topology_notes = models.TextField(blank=True)
    # Overrides of the hardware limits model (docs/efficiency.md): name -> value, e.g.
    # {"nvlink_busbw_gbps": 450}; a value here wins over the datasheet default.
    limits = models.JSONField(default=dict, blank=True)
    auto_created = models.BooleanField(
        default=False, help_text="made by the pipeline from a GPU name; edit and rename freely"
    )
    # Fields an automatic profile learned from host facts -> where each came from ("ib_status
    # artifact #12, host n1"): shown on the profile page, and what the repair may unlearn.
    learned = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.name or self.slug

    def get_absolute_url(self) -> str:
        return reverse("baselines:profile-detail", args=[self.slug])

    def matches_gpu(self, gpu_name: str) -> bool:
        return bool(self.gpu_match) and self.gpu_match.lower() in (gpu_name or "").lower()


class HostProfileMapping(models.Model):
    """Host name pattern -> profile. Shell-style patterns: ``h200-r07n*``, ``ib-h100-n0[0-9]*``."""

    pattern = models.CharField(max_length=200)
    profile = models.ForeignKey(HardwareProfile, on_delete=models.CASCADE, related_name="hosts")
    priority = models.IntegerField(default=0, help_text="higher wins when several match")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-priority", "pattern"]
        constraints = [
            models.UniqueConstraint(fields=["pattern"], name="host_pattern_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.pattern} -> {self.profile}"

    def matches(self, host: str) -> bool:
        return fnmatch.fnmatchcase((host or "").lower(), self.pattern.lower())


VERSION_FIELDS = ("nccl", "cuda", "driver", "kernel", "pytorch", "ofed", "nic_firmware")
ALL_VERSION_FIELDS = (*VERSION_FIELDS, "nccl_tests")


class SoftwareStack(models.Model):
    """One combination of versions and NCCL_* settings. Each ``<component>_key`` sorts as the
    version does (``baselines.versions.version_key``); ``fingerprint`` identifies the content."""

    nccl = models.CharField("NCCL", max_length=80, blank=True)
    nccl_key = models.CharField(max_length=200, blank=True, db_index=True, editable=False)
    cuda = models.CharField("CUDA", max_length=80, blank=True)
    cuda_key = models.CharField(max_length=200, blank=True, editable=False)
    driver = models.CharField(max_length=80, blank=True)
    driver_key = models.CharField(max_length=200, blank=True, editable=False)
    kernel = models.CharField(max_length=80, blank=True)
    kernel_key = models.CharField(max_length=200, blank=True, editable=False)
    pytorch = models.CharField("PyTorch", max_length=80, blank=True)
    pytorch_key = models.CharField(max_length=200, blank=True, editable=False)
    ofed = models.CharField("OFED/DOCA", max_length=80, blank=True)
    ofed_key = models.CharField(max_length=200, blank=True, editable=False)
    nic_firmware = models.CharField("NIC firmware", max_length=80, blank=True)
    nic_firmware_key = models.CharField(max_length=200, blank=True, editable=False)
    nccl_tests = models.CharField("nccl-tests", max_length=80, blank=True)
    nccl_tests_key = models.CharField(max_length=200, blank=True, editable=False)
    nccl_env = models.JSONField("NCCL_* environment", default=dict, blank=True)
    fingerprint = models.CharField(max_length=64, unique=True, editable=False)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["nccl_key", "cuda_key", "driver_key", "id"]

    def __str__(self) -> str:
        return self.short_text() or f"stack #{self.pk}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        for name in ALL_VERSION_FIELDS:
            setattr(self, f"{name}_key", version_key(getattr(self, name)))
        self.nccl_env = {str(k): str(v) for k, v in sorted((self.nccl_env or {}).items())}
        self.fingerprint = self.compute_fingerprint(self.versions(), self.nccl_env)
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {
                *kwargs["update_fields"],
                "fingerprint",
                *(f"{n}_key" for n in ALL_VERSION_FIELDS),
            }
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("baselines:stack-detail", args=[self.pk])

    def versions(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in ALL_VERSION_FIELDS if getattr(self, name)}

    def short_text(self) -> str:
        parts = [f"{COMPONENT_LABELS[n]} {v}" for n, v in self.versions().items()]
        return ", ".join(p for p in parts if not p.startswith("nccl-tests"))

    def diff(self, other: SoftwareStack | None) -> list[Change]:
        """What changed from ``self`` to ``other`` (versions, then NCCL_* variables)."""
        if other is None:
            return []
        return diff_stacks(self.versions(), self.nccl_env, other.versions(), other.nccl_env)

    @staticmethod
    def compute_fingerprint(versions: dict[str, str], nccl_env: dict[str, Any]) -> str:
        canonical = json.dumps(
            {"versions": {k: v for k, v in sorted(versions.items()) if v}, "env": nccl_env},
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode()).hexdigest()


class RunContext(models.Model):
    """Where and with what a run ran: its profile and stack, and how they were found."""

    run = models.OneToOneField(BenchmarkRun, on_delete=models.CASCADE, related_name="context")
    profile = models.ForeignKey(HardwareProfile, on_delete=models.CASCADE, related_name="runs")
    stack = models.ForeignKey(SoftwareStack, on_delete=models.PROTECT, related_name="runs")
    matched_by = models.CharField(max_length=120, blank=True)
    stack_sources = models.JSONField(default=dict, blank=True)
    # Every fact filing considered: key, value, source (artifact and line, or person), why it
    # applies (same file, same job, same host) and whether it was used; see host_facts.py.
    provenance = models.JSONField(default=list, blank=True)
    filed_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["profile", "stack"])]

    def __str__(self) -> str:
        return f"run {self.run_id} on {self.profile_id}"


class FactDetachment(models.Model):
    """A person's "this fact does not describe these runs": facts of ``source`` for ``key``
    (a stack component, an ``NCCL_*`` variable, a profile field, or ``*`` for all) no longer
    reach the runs of ``artifact``. Keyed by artifacts, not runs, so it survives re-parses."""

    ALL = "*"

    artifact = models.ForeignKey(
        "artifacts.Artifact", on_delete=models.CASCADE, related_name="fact_detachments"
    )
    source = models.ForeignKey(
        "artifacts.Artifact", on_delete=models.CASCADE, related_name="detached_from"
    )
    key = models.CharField(max_length=120)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["artifact", "source", "key"], name="fact_detachment_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.key} of artifact {self.source_id} detached from {self.artifact_id}"


class Series(models.Model):
    """One number tracked over time: a benchmark identity at one message size on a profile.

    ``size_bytes`` 0 and ``nranks`` 0 mean "not applicable" (a whole-run metric), so the
    uniqueness constraint needs no NULL handling on any database.
    """

    class Direction(models.TextChoices):
        HIGHER = "higher", "higher is better"
        LOWER = "lower", "lower is better"

    profile = models.ForeignKey(HardwareProfile, on_delete=models.CASCADE, related_name="series")
    benchmark = models.CharField(max_length=40, default="nccl-tests")
    collective = models.CharField(max_length=40, blank=True)
    dtype = models.CharField(max_length=20, blank=True)
    redop = models.CharField(max_length=20, blank=True)
    nranks = models.PositiveIntegerField(default=0)
    nnodes = models.PositiveIntegerField(default=0)
    size_bytes = models.BigIntegerField(default=0)
    metric = models.CharField(max_length=40, default="busbw")
    unit = models.CharField(max_length=20, default="GB/s")
    direction = models.CharField(max_length=6, choices=Direction.choices, default="higher")
    resolution = models.FloatField(
        default=0.0,
        help_text="absolute print step of the values (nccl-tests busbw: 0.01 GB/s); changes "
        "within one step are rounding, not change (0 = exact values)",
    )
    point_count = models.PositiveIntegerField(default=0)
    last_value = models.FloatField(null=True, blank=True)
    last_measured_at = models.DateTimeField(null=True, blank=True, db_index=True)
    detected_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["profile_id", "benchmark", "collective", "nranks", "size_bytes"]
        verbose_name_plural = "series"
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "profile", "benchmark", "collective", "dtype", "redop", "nranks", "nnodes",
                    "size_bytes", "metric",
                ],
                name="series_identity_unique",
            )
        ]  # fmt: skip
        indexes = [models.Index(fields=["profile", "collective", "nranks", "size_bytes"])]

    def __str__(self) -> str:
        return f"{self.identity_text()} @ {self.profile_id}"

    def get_absolute_url(self) -> str:
        return reverse("baselines:series-detail", args=[self.pk])

    def identity_text(self) -> str:
        parts = [self.collective or self.benchmark]
        if self.benchmark != "nccl-tests" and self.collective:
            # evidence series (perftest, traces, metrics uploads): the tool or workload first
            parts = [self.benchmark, self.collective]
        if self.dtype:
            parts.append(self.dtype)
        if self.nranks:
            parts.append(f"{self.nranks} ranks")
        if self.size_bytes:
            parts.append(human_bytes(self.size_bytes))
        if self.metric != self.collective:
            parts.append(self.metric)
        return " · ".join(parts)


class SeriesPoint(models.Model):
    """One run's value in a series, with the run's stack (copied here for fast charts)."""

    series = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="points")
    run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="series_points")
    stack = models.ForeignKey(SoftwareStack, on_delete=models.PROTECT, related_name="+")
    measured_at = models.DateTimeField()
    value = models.FloatField()

    class Meta:
        ordering = ["measured_at", "run_id"]
        constraints = [
            models.UniqueConstraint(fields=["series", "run"], name="series_point_unique"),
        ]
        indexes = [
            models.Index(fields=["series", "measured_at"]),
            models.Index(fields=["run"], name="seriespoint_run"),
        ]

    def __str__(self) -> str:
        return f"{self.value} ({self.series_id}, run {self.run_id})"


class SeriesStackStats(models.Model):
    """Per series and stack: how many points and their mean. Kept up to date when runs are
    filed, so that the version matrix reads a few hundred rows instead of every point."""

    series = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="stack_stats")
    stack = models.ForeignKey(SoftwareStack, on_delete=models.CASCADE, related_name="+")
    points = models.PositiveIntegerField()
    mean = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["series", "stack"], name="series_stack_stats_unique")
        ]

    def __str__(self) -> str:
        return f"series {self.series_id} on stack {self.stack_id}: {self.mean:.2f} x{self.points}"


class Baseline(models.Model):
    """A named, pinned set of runs that later runs of the same benchmark are compared with.

    The identity (profile, benchmark, collective, dtype, nranks) says which runs it applies
    to; ``stack`` records the stack its runs share (informational: a baseline of NCCL 2.21.5
    is what runs on 2.23.4 are compared with). The newest active baseline wins.
    """

    name = models.CharField(max_length=120)
    profile = models.ForeignKey(HardwareProfile, on_delete=models.CASCADE, related_name="baselines")
    benchmark = models.CharField(max_length=40, default="nccl-tests")
    collective = models.CharField(max_length=40, blank=True)
    dtype = models.CharField(max_length=20, blank=True)
    nranks = models.PositiveIntegerField(default=0)
    stack = models.ForeignKey(
        SoftwareStack, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    runs = models.ManyToManyField(BenchmarkRun, related_name="baselines", blank=True)
    tolerance_pct = models.FloatField(
        default=3.0, help_text="changes smaller than this (percent) count as unchanged"
    )
    active = models.BooleanField(default=True)
    notes = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["profile", "collective", "nranks", "active"])]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("baselines:baseline-detail", args=[self.pk])

    def identity_text(self) -> str:
        parts = [self.collective or self.benchmark, self.dtype, f"{self.nranks} ranks"]
        return " · ".join(p for p in parts if p and p != "0 ranks")


class Comparison(models.Model):
    """A run's bandwidth curve against its reference (a pinned baseline or recent runs)."""

    class Verdict(models.TextChoices):
        IMPROVED = "improved", "improved"
        REGRESSED = "regressed", "regressed"
        MIXED = "mixed", "mixed"
        UNCHANGED = "unchanged", "unchanged"

    class Reference(models.TextChoices):
        BASELINE = "baseline", "pinned baseline"
        RECENT = "recent", "recent runs (automatic)"

    run = models.OneToOneField(BenchmarkRun, on_delete=models.CASCADE, related_name="comparison")
    profile = models.ForeignKey(HardwareProfile, on_delete=models.CASCADE, related_name="+")
    reference = models.CharField(max_length=10, choices=Reference.choices)
    baseline = models.ForeignKey(
        Baseline, null=True, blank=True, on_delete=models.CASCADE, related_name="comparisons"
    )
    reference_run_ids = models.JSONField(default=list)
    # The run, plus (first run on a new stack) the runs after it on that stack: see
    # baselines.comparing.candidate_ids.
    candidate_run_ids = models.JSONField(default=list)
    reference_stack = models.ForeignKey(
        SoftwareStack, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    stack = models.ForeignKey(SoftwareStack, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=10, choices=Verdict.choices, db_index=True)
    regressed_ranges = models.JSONField(default=list, blank=True)  # [[low, high], ...] bytes
    improved_ranges = models.JSONField(default=list, blank=True)
    worst_delta_pct = models.FloatField(null=True, blank=True)
    tolerance_pct = models.FloatField(default=3.0)
    result = models.JSONField(default=dict)  # curve_compare's to_json()
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["profile", "verdict"])]

    def __str__(self) -> str:
        return f"run {self.run_id}: {self.verdict}"


class AlertSummary(models.Model):
    """The alerts one change caused, across series: "NCCL 2.21.5 -> 2.23.4 on h200: ..."."""

    key = models.CharField(max_length=200, unique=True)
    profile = models.ForeignKey(
        HardwareProfile, on_delete=models.CASCADE, related_name="alert_summaries"
    )
    stack_before = models.ForeignKey(
        SoftwareStack, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    stack_after = models.ForeignKey(
        SoftwareStack, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    first_run = models.ForeignKey(
        BenchmarkRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    title = models.CharField(max_length=300)
    change_text = models.CharField(max_length=300, blank=True)
    regressions = models.PositiveIntegerField(default=0)
    improvements = models.PositiveIntegerField(default=0)
    variance_changes = models.PositiveIntegerField(default=0)
    open_alerts = models.PositiveIntegerField(default=0)
    confirmed = models.BooleanField(
        default=False,
        help_text="two runs show the change, or change-point detection found it: notify",
    )
    notified_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "alert summaries"

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("baselines:summary-detail", args=[self.pk])


class Alert(models.Model):
    """One series changed: a step regression/improvement or a change of its spread."""

    class Kind(models.TextChoices):
        REGRESSION = "regression", "regression"
        IMPROVEMENT = "improvement", "improvement"
        VARIANCE = "variance", "variance change"
        DRIFT = "drift", "drift"

    class Status(models.TextChoices):
        UNTRIAGED = "untriaged", "untriaged"
        ACKNOWLEDGED = "acknowledged", "acknowledged"
        INVESTIGATING = "investigating", "investigating"
        FIXED = "fixed", "fixed"
        WONTFIX = "wontfix", "won't fix"
        INVALID = "invalid", "invalid"

    class Source(models.TextChoices):
        COMPARISON = "comparison", "comparison with the reference"
        HISTORY = "history", "change-point detection on the series"

    OPEN_STATUSES = ("untriaged", "acknowledged", "investigating")

    fingerprint = models.CharField(max_length=200, unique=True)
    summary = models.ForeignKey(AlertSummary, on_delete=models.CASCADE, related_name="alerts")
    series = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="alerts")
    # SET_NULL: a re-parse replaces the run rows, and triage (status, notes) must survive it;
    # the re-evaluation finds the alert again by its fingerprint and points it at the new run.
    run = models.ForeignKey(
        BenchmarkRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="alerts"
    )
    previous_run = models.ForeignKey(
        BenchmarkRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=12, choices=Kind.choices, db_index=True)
    source = models.CharField(max_length=12, choices=Source.choices)
    magnitude_pct = models.FloatField()
    value_before = models.FloatField(null=True, blank=True)
    value_after = models.FloatField(null=True, blank=True)
    low_pct = models.FloatField(null=True, blank=True)  # uncertainty band of the change
    high_pct = models.FloatField(null=True, blank=True)
    stack_before = models.ForeignKey(
        SoftwareStack, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    stack_after = models.ForeignKey(
        SoftwareStack, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(
        max_length=14, choices=Status.choices, default=Status.UNTRIAGED, db_index=True
    )
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="baseline_alerts",
    )
    notes = models.TextField(blank=True)
    # A link to whatever tracks the follow-up: an incident, a vendor ticket. Either a URL or
    # any row of this database (generic FK), so the incidents app needs no change here.
    link_url = models.URLField(max_length=500, blank=True)
    link_label = models.CharField(max_length=120, blank=True)
    link_type = models.ForeignKey(
        ContentType, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    link_id = models.PositiveBigIntegerField(null=True, blank=True)
    link_object = GenericForeignKey("link_type", "link_id")
    details = models.JSONField(default=dict, blank=True)  # detector score, recovery, ...
    measured_at = models.DateTimeField(db_index=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-measured_at", "-id"]
        indexes = [
            models.Index(fields=["status", "-measured_at"]),
            # The alert list opens on the open ones, newest first: read in this order and
            # stop at the page's 50, instead of joining and sorting every open alert.
            models.Index(
                fields=["-measured_at", "-id"],
                condition=models.Q(status__in=("untriaged", "acknowledged", "investigating")),
                name="alert_open_newest",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.magnitude_pct:+.1f}% on {self.series_id}"

    def get_absolute_url(self) -> str:
        return reverse("baselines:alert-detail", args=[self.pk])

    @property
    def is_open(self) -> bool:
        return self.status in self.OPEN_STATUSES


class Subscription(models.Model):
    """Who hears about new alert summaries, for which profile or benchmark, and how."""

    class Channel(models.TextChoices):
        EMAIL = "email", "e-mail"
        WEBHOOK = "webhook", "webhook (JSON POST, Slack-compatible)"

    name = models.CharField(max_length=120)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    profile = models.ForeignKey(
        HardwareProfile,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="subscriptions",
        help_text="empty: every profile",
    )
    collective = models.CharField(
        max_length=40, blank=True, help_text="benchmark/collective, e.g. all_reduce; empty: all"
    )
    channel = models.CharField(max_length=10, choices=Channel.choices, default=Channel.EMAIL)
    target = models.CharField(
        max_length=500, help_text="e-mail addresses (comma-separated) or the webhook URL"
    )
    digest = models.BooleanField(
        default=False, help_text="collect summaries and send one message per digest run"
    )
    include_improvements = models.BooleanField(default=False)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name

    def wants(self, summary: AlertSummary, collectives: set[str]) -> bool:
        if not self.active:
            return False
        if self.profile_id and self.profile_id != summary.profile_id:
            return False
        if self.collective and self.collective not in collectives:
            return False
        return bool(summary.regressions or summary.variance_changes) or (
            self.include_improvements and summary.improvements > 0
        )


class Delivery(models.Model):
    """One summary sent (or to be sent, for digests) to one subscription: sent at most once."""

    class State(models.TextChoices):
        PENDING = "pending", "pending (digest)"
        SENT = "sent", "sent"
        FAILED = "failed", "failed"

    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    summary = models.ForeignKey(AlertSummary, on_delete=models.CASCADE, related_name="deliveries")
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["subscription", "summary"], name="delivery_once"),
        ]

    def __str__(self) -> str:
        return f"{self.summary_id} -> {self.subscription_id}: {self.state}"


class Sweep(models.Model):
    """Runs on one profile that differ in one or more settings (docs/tuning.md).

    Its runs are the picked runs plus every run of its ``artifacts``: an uploaded folder
    names its files before they are parsed, so those runs join as the worker files them.
    Picked runs are kept as (artifact, index in the file), not run ids: a re-parse gives the
    runs new ids, and the sweep must keep them (as citations do).
    What differs is not stored: it is read from the runs' settings each time (their stack's
    NCCL_* environment and the upload's ``settings``), so a re-parse or a re-filing shows.
    """

    class Source(models.TextChoices):
        PICKED = "picked", "picked on the runs list"
        UPLOAD = "upload", "uploaded as a folder"

    name = models.CharField(max_length=200)
    profile = models.ForeignKey(
        HardwareProfile, null=True, blank=True, on_delete=models.SET_NULL, related_name="sweeps"
    )
    run_keys = models.JSONField(
        default=list, blank=True, help_text="picked runs: [[artifact id, run index], ...]"
    )
    artifacts = models.ManyToManyField(Artifact, related_name="sweeps", blank=True)
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.PICKED)
    notes = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("baselines:sweep-detail", args=[self.pk])
