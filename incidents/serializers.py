"""Explicit input and output shapes of the incidents API."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework import serializers

from artifacts.models import Artifact
from incidents.models import (
    ALL_MILESTONES,
    ActionItem,
    Correspondence,
    EvidenceBundle,
    Incident,
    IncidentArtifact,
    PostMortem,
    PostMortemReview,
    PostMortemRevision,
    Severity,
    TimelineEvent,
    VendorTicket,
)

User = get_user_model()


def _absolute(serializer: serializers.Serializer, path: str) -> str:
    request = serializer.context.get("request")
    return request.build_absolute_uri(path) if request else path


class UsernameField(serializers.SlugRelatedField):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("slug_field", "username")
        kwargs.setdefault("queryset", User.objects.all())
        super().__init__(**kwargs)


# --- incidents ----------------------------------------------------------------------------


class IncidentSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    reference = serializers.CharField(read_only=True)
    owner = serializers.StringRelatedField()
    participants = serializers.SlugRelatedField(many=True, read_only=True, slug_field="username")
    tags = serializers.SlugRelatedField(many=True, read_only=True, slug_field="name")
    durations = serializers.SerializerMethodField()

    class Meta:
        model = Incident
        fields = [
            "id", "url", "page_url", "reference", "title", "summary", "severity", "status",
            "impact", "cluster", "affected_hosts", "affected_jobs", "hardware_profile",
            "hardware_generation", "owner", "participants", "tags",
            *[f"{m}_at" for m in ALL_MILESTONES],
            "durations", "created_at", "updated_at",
        ]  # fmt: skip

    def get_url(self, incident: Incident) -> str:
        return _absolute(self, reverse("api-incident-detail", args=[incident.pk]))

    def get_page_url(self, incident: Incident) -> str:
        return _absolute(self, incident.get_absolute_url())

    def get_durations(self, incident: Incident) -> dict[str, float | None]:
        """Seconds: time to detect, acknowledge, mitigate, resolve (null when unknown)."""
        return {
            name: value.total_seconds() if value is not None else None
            for name, value in incident.durations.items()
        }


class IncidentWriteSerializer(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    severity = serializers.ChoiceField(choices=Severity.choices)
    status = serializers.ChoiceField(choices=Incident.Status.choices, required=False)
    summary = serializers.CharField(required=False, allow_blank=True)
    impact = serializers.CharField(required=False, allow_blank=True)
    cluster = serializers.CharField(required=False, allow_blank=True, max_length=120)
    affected_hosts = serializers.ListField(child=serializers.CharField(), required=False)
    affected_jobs = serializers.ListField(child=serializers.CharField(), required=False)
    hardware_profile = serializers.CharField(required=False, allow_blank=True, max_length=200)
    hardware_generation = serializers.CharField(required=False, allow_blank=True, max_length=40)
    owner = UsernameField(required=False, allow_null=True)
    participants = UsernameField(many=True, required=False)
    tags = serializers.ListField(child=serializers.CharField(max_length=60), required=False)
    override = serializers.BooleanField(
        required=False, default=False, help_text="accept lifecycle times that are out of order"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for milestone in ALL_MILESTONES:
            self.fields[f"{milestone}_at"] = serializers.DateTimeField(
                required=False, allow_null=True
            )


class MilestoneRecordSerializer(serializers.Serializer):
    """One lifecycle change: which time, when, who set it and how."""

    milestone = serializers.CharField()
    at = serializers.DateTimeField(allow_null=True)
    source = serializers.CharField(help_text="manual, status (a status change) or artifact")
    artifact = serializers.IntegerField(source="artifact_id", allow_null=True)
    override = serializers.BooleanField(help_text="accepted although out of order")
    note = serializers.CharField()
    set_by = serializers.StringRelatedField()
    recorded_at = serializers.DateTimeField()


class MilestoneWriteSerializer(serializers.Serializer):
    milestone = serializers.ChoiceField(choices=ALL_MILESTONES)
    at = serializers.DateTimeField(
        required=False, allow_null=True,
        help_text="null with an artifact: the artifact's evidence time; null without: clear",
    )  # fmt: skip
    artifact = serializers.PrimaryKeyRelatedField(
        queryset=Artifact.objects.all(), required=False, allow_null=True,
        help_text="derive the time from this artifact (capture time, first run, upload)",
    )  # fmt: skip
    override = serializers.BooleanField(required=False, default=False)
    note = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")


class AttachSerializer(serializers.Serializer):
    artifact_ids = serializers.ListField(child=serializers.IntegerField(), allow_empty=False)
    note = serializers.CharField(required=False, allow_blank=True, max_length=300)


class ArtifactBriefSerializer(serializers.ModelSerializer):
    page_url = serializers.SerializerMethodField()

    class Meta:
        model = Artifact
        fields = [
            "id", "page_url", "original_name", "kind", "status", "sha256", "size",
            "captured_at", "uploaded_at", "host", "label",
        ]  # fmt: skip

    def get_page_url(self, artifact: Artifact) -> str:
        return _absolute(self, artifact.get_absolute_url())


class EvidenceSerializer(serializers.ModelSerializer):
    artifact = ArtifactBriefSerializer()
    added_by = serializers.StringRelatedField()

    class Meta:
        model = IncidentArtifact
        fields = ["artifact", "note", "added_by", "added_at"]


class SuggestionSerializer(serializers.Serializer):
    key = serializers.CharField()
    at = serializers.DateTimeField()
    kind = serializers.CharField()
    text = serializers.CharField()
    source = serializers.CharField()
    artifact_id = serializers.IntegerField()
    run_id = serializers.IntegerField(allow_null=True)
    approximate_time = serializers.BooleanField()
    ref_kind = serializers.CharField(help_text="finding, alert, ... (blank: the artifact/run)")
    ref_id = serializers.CharField()
    link_url = serializers.CharField(help_text="page of the finding or alert")


class SuggestionItemSerializer(SuggestionSerializer):
    """A suggestion or a group of suggestions of one symptom (``key`` starts with ``group:``);
    accepting or rejecting a group decides every member."""

    count = serializers.IntegerField(help_text="reports folded into this item (1: a single one)")
    hosts = serializers.SerializerMethodField()
    ranks = serializers.SerializerMethodField()
    members = SuggestionSerializer(many=True, help_text="the individual lines of a group")

    def get_hosts(self, item: Any) -> list[str]:
        return list(getattr(item, "hosts", None) or ([item.host] if item.host else []))

    def get_ranks(self, item: Any) -> list[int]:
        if hasattr(item, "ranks"):
            return list(item.ranks)
        return [item.rank] if item.rank is not None else []


class SuggestionDecisionSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=TimelineEvent.Kind.choices, required=False)
    text = serializers.CharField(required=False, allow_blank=False)
    key_event = serializers.BooleanField(required=False, default=False)


class TimelineEventSerializer(serializers.ModelSerializer):
    author = serializers.StringRelatedField()

    class Meta:
        model = TimelineEvent
        fields = [
            "id", "incident", "at", "kind", "text", "key", "author", "artifact", "run",
            "ref_kind", "ref_id", "link_url", "suggestion_key", "sources", "created_at",
        ]  # fmt: skip
        read_only_fields = ["incident", "suggestion_key", "sources", "created_at"]


class TimelineEventWriteSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.ChoiceField(choices=TimelineEvent.Kind.choices)
    text = serializers.CharField()
    key = serializers.BooleanField(required=False, default=False)
    artifact = serializers.PrimaryKeyRelatedField(
        queryset=Artifact.objects.all(), required=False, allow_null=True
    )
    ref_kind = serializers.CharField(required=False, allow_blank=True, max_length=20)
    ref_id = serializers.CharField(required=False, allow_blank=True, max_length=40)
    link_url = serializers.CharField(required=False, allow_blank=True, max_length=500)


class TimelineEventPatchSerializer(serializers.Serializer):
    at = serializers.DateTimeField(required=False)
    kind = serializers.ChoiceField(choices=TimelineEvent.Kind.choices, required=False)
    text = serializers.CharField(required=False)
    key = serializers.BooleanField(required=False)


# --- post-mortems -------------------------------------------------------------------------


class PostMortemSerializer(serializers.Serializer):
    body = serializers.CharField(allow_blank=True)
    revision = serializers.IntegerField(help_text="0 until the first save")
    status = serializers.ChoiceField(choices=PostMortem.Status.choices)
    message = serializers.CharField(allow_blank=True, help_text="message of the latest revision")
    html = serializers.CharField(help_text="sanitized HTML with static embeds")
    updated_by = serializers.CharField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class PostMortemWriteSerializer(serializers.Serializer):
    body = serializers.CharField(allow_blank=True, trim_whitespace=False)
    revision = serializers.IntegerField(
        min_value=0, help_text="the revision this edit is based on (the one you read)"
    )
    status = serializers.ChoiceField(choices=PostMortem.Status.choices, required=False)
    message = serializers.CharField(required=False, allow_blank=True, max_length=300)


class PostMortemConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    revision = serializers.IntegerField(help_text="the current revision")
    body = serializers.CharField(help_text="the current text")
    status = serializers.CharField()
    merged = serializers.CharField(
        allow_null=True, help_text="a merge of both edits when they touch different lines"
    )


class PostMortemRevisionSerializer(serializers.ModelSerializer):
    author = serializers.StringRelatedField()

    class Meta:
        model = PostMortemRevision
        fields = ["number", "status", "message", "author", "restored_from", "created_at", "body"]


# --- bundles ------------------------------------------------------------------------------


class BundleRequestSerializer(serializers.Serializer):
    artifact_ids = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text="default: all evidence of the incident (or ticket)",
    )
    redact = serializers.BooleanField(default=True)
    patterns = serializers.ListField(
        child=serializers.CharField(max_length=500), required=False, default=list
    )
    ticket = serializers.PrimaryKeyRelatedField(
        queryset=VendorTicket.objects.all(),
        required=False,
        allow_null=True,
        help_text="record the bundle on this vendor ticket too",
    )


class BundleSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField()
    artifact_ids = serializers.SerializerMethodField()
    progress_percent = serializers.IntegerField(read_only=True)
    created_by = serializers.StringRelatedField()

    class Meta:
        model = EvidenceBundle
        fields = [
            "id", "url", "page_url", "download_url", "status", "sha256", "size", "redact",
            "patterns", "incident", "ticket", "artifact_ids", "progress_percent", "error",
            "report", "created_by", "created_at", "finished_at",
        ]  # fmt: skip

    def get_url(self, bundle: EvidenceBundle) -> str:
        return _absolute(self, reverse("api-bundle-detail", args=[bundle.pk]))

    def get_page_url(self, bundle: EvidenceBundle) -> str:
        return _absolute(self, bundle.get_absolute_url())

    def get_download_url(self, bundle: EvidenceBundle) -> str | None:
        if bundle.status != EvidenceBundle.Status.READY:
            return None
        return _absolute(self, reverse("api-bundle-download", args=[bundle.pk]))

    def get_artifact_ids(self, bundle: EvidenceBundle) -> list[int]:
        return sorted(a.pk for a in bundle.artifacts.all())


# --- action items and vendor tickets ------------------------------------------------------


class ActionItemSerializer(serializers.ModelSerializer):
    owner = UsernameField(required=False, allow_null=True)
    is_verified = serializers.BooleanField(read_only=True)

    class Meta:
        model = ActionItem
        fields = [
            "id", "incident", "title", "type", "owner", "due_date", "status", "ticket",
            "tracker_url", "requires_verification", "verification_artifact",
            "verification_report", "is_verified", "created_at", "closed_at",
        ]  # fmt: skip
        read_only_fields = ["created_at", "closed_at"]


class CorrespondenceSerializer(serializers.ModelSerializer):
    author = serializers.StringRelatedField()

    class Meta:
        model = Correspondence
        fields = ["id", "ticket", "direction", "at", "text", "bundle", "author", "created_at"]
        read_only_fields = ["ticket", "author", "created_at"]
        extra_kwargs = {"at": {"required": False}, "text": {"required": False}}


class VendorTicketSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    incident_ids = serializers.PrimaryKeyRelatedField(
        source="incidents", many=True, queryset=Incident.objects.all(), required=False
    )
    artifact_ids = serializers.PrimaryKeyRelatedField(
        source="artifacts", many=True, queryset=Artifact.objects.all(), required=False
    )
    case_url = serializers.URLField(
        source="url", required=False, allow_blank=True, max_length=500, help_text="vendor portal"
    )

    class Meta:
        model = VendorTicket
        fields = [
            "id", "url", "page_url", "vendor", "vendor_name", "case_number", "case_url",
            "title", "severity", "status", "opened_at", "vendor_updated_at",
            "fixed_in_version", "contacts", "incident_ids", "artifact_ids", "created_at",
            "updated_at",
        ]  # fmt: skip

    def get_url(self, ticket: VendorTicket) -> str:
        return _absolute(self, reverse("api-ticket-detail", args=[ticket.pk]))

    def get_page_url(self, ticket: VendorTicket) -> str:
        return _absolute(self, ticket.get_absolute_url())


class PostMortemRestoreSerializer(serializers.Serializer):
    number = serializers.IntegerField(min_value=1, help_text="the revision to restore")
    revision = serializers.IntegerField(
        min_value=0, help_text="the current revision you saw (a stale one gets 409)"
    )


class PostMortemDiffSerializer(serializers.Serializer):
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    lines = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="[css, line]: css is add, del, hunk or same",
    )


class PostMortemDraftSerializer(serializers.Serializer):
    body = serializers.CharField(help_text="the template filled from the evidence")
    revision = serializers.IntegerField(help_text="base revision to PUT it with")


class PostMortemReviewSerializer(serializers.ModelSerializer):
    reviewer = serializers.StringRelatedField()
    resolved_by = serializers.StringRelatedField()
    is_open = serializers.BooleanField(read_only=True)

    class Meta:
        model = PostMortemReview
        fields = [
            "id", "reviewer", "verdict", "revision", "paragraph", "quote", "text", "is_open",
            "resolved_at", "resolved_by", "created_at",
        ]  # fmt: skip


class PostMortemReviewWriteSerializer(serializers.Serializer):
    text = serializers.CharField(required=False, allow_blank=True, default="")
    verdict = serializers.ChoiceField(
        choices=PostMortemReview.Verdict.choices, default=PostMortemReview.Verdict.COMMENT
    )
    paragraph = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, help_text="0-based; omit: the whole text"
    )
