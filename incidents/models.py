"""Incidents and everything hanging off them: timeline, post-mortem, action items, vendor
tickets, evidence bundles. Writes that touch several rows live in services.py."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.urls import reverse

from artifacts.models import Artifact, BenchmarkRun
from documents.pinning import PinnedEmbed

User = settings.AUTH_USER_MODEL


class Severity(models.TextChoices):
    SEV1 = "SEV1", "SEV1 (critical)"
    SEV2 = "SEV2", "SEV2 (major)"
    SEV3 = "SEV3", "SEV3 (minor)"
    SEV4 = "SEV4", "SEV4 (low)"


class Tag(models.Model):
    name = models.CharField(max_length=60, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


# Lifecycle milestones in the order they must happen. Vendor engagement is outside the chain:
# it only has to come after impact started.
MILESTONES: tuple[str, ...] = (
    "impact_started",
    "detected",
    "acknowledged",
    "mitigated",
    "resolved",
    "closed",
)
VENDOR_ENGAGED = "vendor_engaged"
ALL_MILESTONES: tuple[str, ...] = (*MILESTONES, VENDOR_ENGAGED)
MILESTONE_LABELS = {
    "impact_started": "Impact started",
    "detected": "Detected",
    "acknowledged": "Acknowledged",
    "mitigated": "Mitigated",
    "resolved": "Resolved",
    "closed": "Closed",
    "vendor_engaged": "Vendor engaged",
}


class Incident(models.Model):
    class Status(models.TextChoices):
        INVESTIGATING = "investigating", "investigating"
        IDENTIFIED = "identified", "identified"
        MITIGATED = "mitigated", "mitigated"
        RESOLVED = "resolved", "resolved"
        POSTMORTEM = "postmortem", "post-mortem"
        CLOSED = "closed", "closed"

    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True, help_text="Markdown")
    severity = models.CharField(max_length=4, choices=Severity.choices, db_index=True)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.INVESTIGATING, db_index=True
    )
    impact = models.TextField(blank=True, help_text="Markdown: who or what was hurt, how much")
    cluster = models.CharField(max_length=120, blank=True, db_index=True)
    affected_hosts = models.JSONField(default=list, blank=True)
    affected_jobs = models.JSONField(default=list, blank=True)
    hardware_profile = models.CharField(max_length=200, blank=True)
    hardware_generation = models.CharField(
        max_length=40, blank=True, db_index=True, help_text="e.g. H100, H200, B200, MI300X"
    )
    # What the evidence said and the editor accepted (incidents/facts.py): GPUs, NICs, the
    # software stack (nccl, cuda, driver, kernel, firmware) and the impact window.
    environment = models.JSONField(default=dict, blank=True)
    owner = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="owned_incidents"
    )
    participants = models.ManyToManyField(User, blank=True, related_name="incidents")
    tags = models.ManyToManyField(Tag, blank=True, related_name="incidents")

    impact_started_at = models.DateTimeField(null=True, blank=True)
    detected_at = models.DateTimeField(null=True, blank=True, db_index=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    mitigated_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    vendor_engaged_at = models.DateTimeField(null=True, blank=True)

    artifacts = models.ManyToManyField(
        Artifact, through="IncidentArtifact", blank=True, related_name="incidents"
    )
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-detected_at", "-id"]

    def __str__(self) -> str:
        return f"INC-{self.pk}: {self.title}"

    def get_absolute_url(self) -> str:
        return reverse("incident-detail", args=[self.pk])

    @property
    def reference(self) -> str:
        return f"INC-{self.pk}"

    def milestone(self, name: str) -> datetime | None:
        return getattr(self, f"{name}_at")

    @property
    def durations(self) -> dict[str, timedelta | None]:
        """Time to detect / acknowledge / mitigate / resolve (see docs/incidents.md).

        Measured from the start of impact; when that is unknown, from detection.
        """
        start = self.impact_started_at or self.detected_at

        def between(a: datetime | None, b: datetime | None) -> timedelta | None:
            return b - a if a and b else None

        return {
            "detect": between(self.impact_started_at, self.detected_at),
            "acknowledge": between(self.detected_at, self.acknowledged_at),
            "mitigate": between(start, self.mitigated_at),
            "resolve": between(start, self.resolved_at),
        }


class MilestoneRecord(models.Model):
    """Who set a lifecycle timestamp, when and how. The newest record per milestone counts."""

    class Source(models.TextChoices):
        MANUAL = "manual", "set by hand"
        STATUS = "status", "status change"
        ARTIFACT = "artifact", "derived from an artifact"
        ALERTMANAGER = "alertmanager", "from Alertmanager"
        WEBHOOK = "webhook", "from an alerting webhook"

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="milestones")
    milestone = models.CharField(
        max_length=20, choices=[(m, MILESTONE_LABELS[m]) for m in ALL_MILESTONES]
    )
    at = models.DateTimeField(null=True, blank=True, help_text="null: cleared")
    source = models.CharField(max_length=12, choices=Source.choices)
    artifact = models.ForeignKey(Artifact, null=True, blank=True, on_delete=models.SET_NULL)
    override = models.BooleanField(default=False, help_text="accepted although out of order")
    note = models.CharField(max_length=300, blank=True)
    set_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-recorded_at", "-id"]

    def __str__(self) -> str:
        return f"{self.milestone} of incident {self.incident_id}"


class IncidentArtifact(models.Model):
    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="evidence")
    artifact = models.ForeignKey(Artifact, on_delete=models.PROTECT, related_name="+")
    note = models.CharField(max_length=300, blank=True)
    added_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["added_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["incident", "artifact"], name="evidence_once")
        ]

    def __str__(self) -> str:
        return f"artifact {self.artifact_id} on incident {self.incident_id}"


class TimelineEvent(models.Model):
    class Kind(models.TextChoices):
        OBSERVATION = "observation", "observation"
        ACTION = "action", "action"
        DECISION = "decision", "decision"
        ALERT = "alert", "alert"
        CHANGE = "change", "change"
        VENDOR = "vendor", "vendor"
        EVIDENCE = "evidence", "evidence"

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(db_index=True, help_text="when it happened (back-dating allowed)")
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.OBSERVATION)
    text = models.TextField(help_text="Markdown")
    key = models.BooleanField(default=False, help_text="key event: shown in exports")
    author = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    artifact = models.ForeignKey(Artifact, null=True, blank=True, on_delete=models.SET_NULL)
    run = models.ForeignKey(BenchmarkRun, null=True, blank=True, on_delete=models.SET_NULL)
    # A link to something another app owns (finding, alert, report): kind + id + URL.
    ref_kind = models.CharField(max_length=20, blank=True)
    ref_id = models.CharField(max_length=40, blank=True)
    link_url = models.CharField(max_length=500, blank=True)
    # Set when the event came from an accepted suggestion (see incidents/suggestions.py).
    suggestion_key = models.CharField(max_length=200, blank=True)
    # An accepted group of suggestions (incidents/grouping.py) links to every member: their
    # keys, artifacts, runs, findings/alerts, hosts and ranks.
    sources = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["incident", "suggestion_key"],
                condition=~models.Q(suggestion_key=""),
                name="suggestion_accepted_once",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} at {self.at:%Y-%m-%d %H:%M} (incident {self.incident_id})"


class SuggestionDecision(models.Model):
    """An accepted or rejected suggestion, so it is not suggested again."""

    class Decision(models.TextChoices):
        ACCEPTED = "accepted", "accepted"
        REJECTED = "rejected", "rejected"

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="decisions")
    key = models.CharField(max_length=200)
    decision = models.CharField(max_length=8, choices=Decision.choices)
    event = models.ForeignKey(TimelineEvent, null=True, blank=True, on_delete=models.SET_NULL)
    decided_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["incident", "key"], name="suggestion_decided_once")
        ]

    def __str__(self) -> str:
        return f"{self.decision} {self.key}"


class PostMortem(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        IN_REVIEW = "in_review", "in review"
        PUBLISHED = "published", "published"

    incident = models.OneToOneField(Incident, on_delete=models.CASCADE, related_name="postmortem")
    body = models.TextField(blank=True)
    revision = models.PositiveIntegerField(default=0, help_text="number of the latest revision")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    published_at = models.DateTimeField(null=True, blank=True)
    updated_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"post-mortem of incident {self.incident_id} (r{self.revision})"


class PostMortemRevision(models.Model):
    postmortem = models.ForeignKey(PostMortem, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    body = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=PostMortem.Status.choices)
    message = models.CharField(max_length=300, blank=True)
    author = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    restored_from = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(fields=["postmortem", "number"], name="revision_number_once")
        ]

    def __str__(self) -> str:
        return f"r{self.number} of {self.postmortem}"


class PostMortemDraft(models.Model):
    """One user's autosaved, unsaved text: never a revision, never seen by others."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    body = models.TextField(blank=True)
    base_revision = models.PositiveIntegerField(default=0)
    saved_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["incident", "user"], name="one_draft_per_user")
        ]

    def __str__(self) -> str:
        return f"draft of {self.user_id} on incident {self.incident_id}"


class Embed(PinnedEmbed):
    """Live evidence pinned into a post-mortem: ``{{chart run=12}}`` becomes ``pin=<this id>``."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="embeds")

    def __str__(self) -> str:
        return f"{self.kind} embed {self.pk}"


class VendorTicket(models.Model):
    class Vendor(models.TextChoices):
        NVIDIA = "nvidia", "NVIDIA"
        NVIDIA_NETWORKING = "nvidia_networking", "NVIDIA Networking (Mellanox)"
        AMD = "amd", "AMD"
        BROADCOM = "broadcom", "Broadcom"
        ARISTA = "arista", "Arista"
        CISCO = "cisco", "Cisco"
        INTEL = "intel", "Intel"
        CLOUD = "cloud", "Cloud provider"
        OTHER = "other", "Other"

    class Status(models.TextChoices):
        OPEN = "open", "open"
        WAITING_VENDOR = "waiting_vendor", "waiting on vendor"
        WAITING_US = "waiting_us", "waiting on us"
        FIXED = "fixed", "fixed"
        WONT_FIX = "wont_fix", "won't fix"

    vendor = models.CharField(max_length=20, choices=Vendor.choices, db_index=True)
    vendor_name = models.CharField(max_length=120, blank=True, help_text="for cloud/other")
    case_number = models.CharField(max_length=80, blank=True, db_index=True)
    url = models.URLField(max_length=500, blank=True)
    title = models.CharField(max_length=200)
    severity = models.CharField(max_length=4, choices=Severity.choices, default=Severity.SEV3)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.OPEN, db_index=True
    )
    opened_at = models.DateTimeField(null=True, blank=True)
    vendor_updated_at = models.DateTimeField(null=True, blank=True)
    fixed_in_version = models.CharField(max_length=80, blank=True)
    contacts = models.TextField(blank=True, help_text="names, emails, roles at the vendor")
    incidents = models.ManyToManyField(Incident, blank=True, related_name="vendor_tickets")
    artifacts = models.ManyToManyField(Artifact, blank=True, related_name="vendor_tickets")
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.vendor_label} {self.case_number or '#' + str(self.pk)}: {self.title}"

    def get_absolute_url(self) -> str:
        return reverse("ticket-detail", args=[self.pk])

    @property
    def vendor_label(self) -> str:
        return self.vendor_name or self.get_vendor_display()


class Correspondence(models.Model):
    """One message in a vendor case: what we sent, what came back, or an internal note."""

    class Direction(models.TextChoices):
        SENT = "sent", "sent to vendor"
        RECEIVED = "received", "received from vendor"
        NOTE = "note", "internal note"

    ticket = models.ForeignKey(VendorTicket, on_delete=models.CASCADE, related_name="messages")
    direction = models.CharField(max_length=8, choices=Direction.choices)
    at = models.DateTimeField(db_index=True)
    text = models.TextField(help_text="Markdown")
    bundle = models.ForeignKey(
        "EvidenceBundle", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    author = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.direction} on ticket {self.ticket_id}"


class ActionItem(models.Model):
    class Type(models.TextChoices):
        MITIGATE = "mitigate", "mitigate"
        PREVENT = "prevent", "prevent"
        PROCESS = "process", "process"

    class Status(models.TextChoices):
        OPEN = "open", "open"
        DONE = "done", "done"
        WONT_DO = "wont_do", "won't do"

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="action_items")
    title = models.CharField(max_length=200)
    type = models.CharField(max_length=10, choices=Type.choices, default=Type.PREVENT)
    owner = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="action_items"
    )
    due_date = models.DateField(null=True, blank=True)
    status = models.CharField(
        max_length=8, choices=Status.choices, default=Status.OPEN, db_index=True
    )
    ticket = models.ForeignKey(
        VendorTicket, null=True, blank=True, on_delete=models.SET_NULL, related_name="items"
    )
    tracker_url = models.URLField(max_length=500, blank=True, help_text="internal tracker")
    requires_verification = models.BooleanField(
        default=False, help_text="closing as done needs a verification artifact or report"
    )
    verification_artifact = models.ForeignKey(
        Artifact, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    verification_report = models.CharField(
        max_length=500, blank=True, help_text="URL or id of a report showing the fix"
    )
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["due_date", "id"]

    def __str__(self) -> str:
        return self.title

    @property
    def is_verified(self) -> bool:
        return bool(self.verification_artifact_id or self.verification_report)


class EvidenceBundle(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        BUILDING = "building", "building"
        READY = "ready", "ready"
        FAILED = "failed", "failed"

    incident = models.ForeignKey(
        Incident, null=True, blank=True, on_delete=models.CASCADE, related_name="bundles"
    )
    ticket = models.ForeignKey(
        VendorTicket, null=True, blank=True, on_delete=models.SET_NULL, related_name="bundles"
    )
    artifacts = models.ManyToManyField(Artifact, blank=True, related_name="+")
    redact = models.BooleanField(default=True)
    patterns = models.JSONField(default=list, blank=True, help_text="extra regexes to redact")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    progress_done = models.BigIntegerField(default=0)
    progress_total = models.BigIntegerField(default=0)
    error = models.TextField(blank=True)
    file = models.FileField(upload_to="bundles/", max_length=300, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    size = models.BigIntegerField(null=True, blank=True)
    report = models.JSONField(default=dict, blank=True, help_text="redaction report (counts)")
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"bundle {self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("bundle-detail", args=[self.pk])

    @property
    def filename(self) -> str:
        owner = f"incident-{self.incident_id}" if self.incident_id else f"ticket-{self.ticket_id}"
        return f"perfhub-{owner}-bundle-{self.pk}.zip"

    @property
    def progress_percent(self) -> int | None:
        if self.status != self.Status.BUILDING or not self.progress_total:
            return None
        return min(100, round(100 * self.progress_done / self.progress_total))


class RedactionPattern(models.Model):
    """A site-wide pattern redacted in every bundle (project names, customer ids, ...)."""

    name = models.SlugField(max_length=40, unique=True, help_text="used in the pseudonym")
    regex = models.CharField(max_length=500)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class FactRecord(models.Model):
    """An incident fact taken from the evidence (a proposal of incidents/facts.py):
    which field, the value accepted (possibly edited), and where it was read."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="fact_records")
    field = models.CharField(max_length=40)
    value = models.TextField(blank=True)
    source = models.CharField(max_length=300, blank=True, help_text="where the value was read")
    artifact = models.ForeignKey(Artifact, null=True, blank=True, on_delete=models.SET_NULL)
    edited = models.BooleanField(default=False, help_text="the editor changed the proposal")
    set_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-recorded_at", "-id"]

    def __str__(self) -> str:
        return f"{self.field} of incident {self.incident_id}"


class PostMortemReview(models.Model):
    """A reviewer's comment on a post-mortem, optionally on one paragraph, optionally asking
    for changes. Open change requests block publishing (``PERFHUB_POSTMORTEM_REVIEW``)."""

    class Verdict(models.TextChoices):
        COMMENT = "comment", "comment"
        CHANGES = "changes", "changes requested"
        APPROVED = "approved", "approved"

    postmortem = models.ForeignKey(PostMortem, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    verdict = models.CharField(max_length=8, choices=Verdict.choices, default=Verdict.COMMENT)
    revision = models.PositiveIntegerField(help_text="the revision reviewed")
    paragraph = models.PositiveIntegerField(null=True, blank=True, help_text="0-based")
    quote = models.TextField(blank=True, help_text="the paragraph's text when commented")
    text = models.TextField(blank=True, help_text="Markdown")
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.verdict} on {self.postmortem}"

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None


class WebhookReceiver(models.Model):
    """An alerting tool allowed to open incidents: its token (stored as sha256) and how its
    labels map to incident fields (``label_map``; see incidents/alerting/labels.py)."""

    class Kind(models.TextChoices):
        ALERTMANAGER = "alertmanager", "Prometheus Alertmanager"
        GENERIC = "generic", "generic JSON (Grafana alerting)"

    name = models.SlugField(max_length=60, unique=True)
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.ALERTMANAGER)
    token_sha256 = models.CharField(max_length=64, unique=True)
    label_map = models.JSONField(default=dict, blank=True, help_text="overrides of the default")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class AlertLink(models.Model):
    """Which incident an alert group (``groupKey``) or one alert (fingerprint) belongs to, so
    a re-sent or repeated notification updates that incident instead of opening another."""

    receiver = models.ForeignKey(WebhookReceiver, on_delete=models.CASCADE, related_name="links")
    group_key = models.CharField(max_length=500, blank=True, db_index=True)
    fingerprint = models.CharField(max_length=200, blank=True, db_index=True)
    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="alert_links")
    status = models.CharField(max_length=10, default="firing")
    labels = models.JSONField(default=dict, blank=True)
    starts_at = models.DateTimeField(null=True, blank=True)
    ends_at = models.DateTimeField(null=True, blank=True)
    first_seen = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["first_seen", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["receiver", "group_key", "fingerprint"], name="alert_link_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.fingerprint or self.group_key} -> incident {self.incident_id}"


class WebhookCall(models.Model):
    """Every call to a webhook receiver, kept as received so it can be read and replayed."""

    receiver = models.ForeignKey(
        WebhookReceiver, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls"
    )
    kind = models.CharField(max_length=12)
    received_at = models.DateTimeField(auto_now_add=True, db_index=True)
    remote_addr = models.CharField(max_length=64, blank=True)
    body = models.TextField(blank=True)
    status_code = models.PositiveSmallIntegerField()
    outcome = models.TextField(blank=True, help_text="what the call did, or why it was refused")
    incidents = models.ManyToManyField(Incident, blank=True, related_name="webhook_calls")
    replay_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replays"
    )

    class Meta:
        ordering = ["-received_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} call {self.pk} ({self.status_code})"
