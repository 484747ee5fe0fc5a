"""Page forms. They only parse and validate input; views hand the values to services."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib.auth import get_user_model

from artifacts.models import Artifact
from incidents.models import (
    ALL_MILESTONES,
    MILESTONE_LABELS,
    ActionItem,
    Correspondence,
    EvidenceBundle,
    Incident,
    PostMortem,
    Severity,
    TimelineEvent,
    VendorTicket,
)

User = get_user_model()
_DATETIME = {"type": "datetime-local", "step": "0.001"}


def split_list(text: str) -> list[str]:
    """Hosts, jobs or tags typed one per line or separated by commas/spaces."""
    return [part for part in re.split(r"[\s,]+", text or "") if part]


class ListField(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 2})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list | tuple) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        return split_list(super().to_python(value))


def _users() -> Any:
    return User.objects.filter(is_active=True).order_by("username")


class UserChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return obj.get_username()


class IncidentFilterForm(forms.Form):
    q = forms.CharField(required=False, label="Search")
    status = forms.ChoiceField(
        required=False, choices=[("", "any status"), *Incident.Status.choices]
    )
    severity = forms.ChoiceField(required=False, choices=[("", "any"), *Severity.choices])
    open = forms.BooleanField(required=False, label="Open only")
    tag = forms.CharField(required=False)
    owner = forms.CharField(required=False, help_text="username")
    cluster = forms.CharField(required=False)
    hardware_generation = forms.CharField(required=False, label="Generation")
    vendor = forms.ChoiceField(
        required=False, choices=[("", "any vendor"), *VendorTicket.Vendor.choices]
    )
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))


class IncidentForm(forms.Form):
    title = forms.CharField(max_length=200)
    severity = forms.ChoiceField(choices=Severity.choices, initial=Severity.SEV3)
    summary = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4}))
    impact = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    cluster = forms.CharField(required=False, max_length=120)
    affected_hosts = ListField(required=False, help_text="one per line or comma-separated")
    affected_jobs = ListField(required=False)
    hardware_profile = forms.CharField(required=False, max_length=200)
    hardware_generation = forms.CharField(
        required=False, max_length=40, help_text="H100, H200, B200, MI300X, ..."
    )
    owner = UserChoiceField(queryset=_users(), required=False)
    participants = forms.ModelMultipleChoiceField(queryset=_users(), required=False)
    tags = ListField(required=False, widget=forms.TextInput, help_text="comma-separated")
    impact_started_at = forms.DateTimeField(
        required=False, widget=forms.DateTimeInput(attrs=_DATETIME)
    )
    detected_at = forms.DateTimeField(
        required=False, widget=forms.DateTimeInput(attrs=_DATETIME), help_text="default: now"
    )
    override = forms.BooleanField(required=False, label="Accept lifecycle times out of order")

    def __init__(self, *args: Any, creating: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["participants"].label_from_instance = lambda u: u.get_username()
        if not creating:  # lifecycle times have their own form on the detail page
            for name in ("impact_started_at", "detected_at", "override"):
                del self.fields[name]


class StatusForm(forms.Form):
    status = forms.ChoiceField(choices=Incident.Status.choices)


class MilestoneForm(forms.Form):
    milestone = forms.ChoiceField(choices=[(m, MILESTONE_LABELS[m]) for m in ALL_MILESTONES])
    at = forms.DateTimeField(
        required=False,
        widget=forms.DateTimeInput(attrs=_DATETIME),
        help_text="empty with an artifact: the artifact's time; empty without: clear",
    )
    artifact = forms.ModelChoiceField(
        queryset=Artifact.objects.none(), required=False, label="Derived from artifact"
    )
    override = forms.BooleanField(required=False, label="Out of order is fine")
    note = forms.CharField(required=False, max_length=300)

    def __init__(self, *args: Any, incident: Incident, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["artifact"].queryset = Artifact.objects.filter(incidents=incident)


class TimelineEventForm(forms.Form):
    at = forms.DateTimeField(widget=forms.DateTimeInput(attrs=_DATETIME), label="When")
    kind = forms.ChoiceField(choices=TimelineEvent.Kind.choices)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), help_text="Markdown")
    key = forms.BooleanField(required=False, label="Key event")


class AttachForm(forms.Form):
    artifacts = forms.ModelMultipleChoiceField(
        queryset=Artifact.objects.none(), required=False, label="Recent artifacts"
    )
    artifact_ids = forms.CharField(required=False, label="or artifact ids")
    note = forms.CharField(required=False, max_length=300)

    def __init__(self, *args: Any, incident: Incident, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        recent = Artifact.objects.exclude(incidents=incident).order_by("-uploaded_at", "-id")
        self.fields["artifacts"].queryset = Artifact.objects.filter(
            pk__in=list(recent.values_list("pk", flat=True)[:50])
        ).order_by("-uploaded_at", "-id")
        self.fields["artifacts"].label_from_instance = lambda a: f"#{a.pk} {a.original_name}"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        ids = [a.pk for a in data.get("artifacts") or []]
        for part in split_list(data.get("artifact_ids", "")):
            if not part.lstrip("#").isdigit():
                raise forms.ValidationError(f"{part!r} is not an artifact id")
            ids.append(int(part.lstrip("#")))
        if not ids:
            raise forms.ValidationError("choose at least one artifact")
        data["ids"] = ids
        return data


class ActionItemForm(forms.Form):
    title = forms.CharField(max_length=200)
    type = forms.ChoiceField(choices=ActionItem.Type.choices, initial=ActionItem.Type.PREVENT)
    owner = UserChoiceField(queryset=_users(), required=False)
    due_date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    requires_verification = forms.BooleanField(
        required=False, label="Needs a verification artifact/report to close"
    )
    ticket = forms.ModelChoiceField(queryset=VendorTicket.objects.all(), required=False)
    tracker_url = forms.URLField(required=False, label="Tracker URL", assume_scheme="https")


class ActionItemCloseForm(forms.Form):
    status = forms.ChoiceField(choices=ActionItem.Status.choices)
    verification_artifact = forms.ModelChoiceField(
        queryset=Artifact.objects.order_by("-uploaded_at"), required=False
    )
    verification_report = forms.CharField(required=False, max_length=500)


class TicketForm(forms.Form):
    title = forms.CharField(max_length=200)
    vendor = forms.ChoiceField(choices=VendorTicket.Vendor.choices)
    vendor_name = forms.CharField(required=False, max_length=120, help_text="for cloud/other")
    case_number = forms.CharField(required=False, max_length=80)
    url = forms.URLField(required=False, label="Case URL", assume_scheme="https")
    severity = forms.ChoiceField(choices=Severity.choices, initial=Severity.SEV3)
    status = forms.ChoiceField(choices=VendorTicket.Status.choices)
    opened_at = forms.DateTimeField(required=False, widget=forms.DateTimeInput(attrs=_DATETIME))
    fixed_in_version = forms.CharField(required=False, max_length=80)
    contacts = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    incidents = forms.ModelMultipleChoiceField(
        queryset=Incident.objects.order_by("-id"), required=False
    )
    artifact_ids = forms.CharField(required=False, label="Artifact ids")

    def clean_artifact_ids(self) -> list[int]:
        parts = split_list(self.cleaned_data.get("artifact_ids", ""))
        if bad := [p for p in parts if not p.lstrip("#").isdigit()]:
            raise forms.ValidationError(f"not artifact ids: {', '.join(bad)}")
        return [int(p.lstrip("#")) for p in parts]


class CorrespondenceForm(forms.Form):
    direction = forms.ChoiceField(choices=Correspondence.Direction.choices)
    at = forms.DateTimeField(
        required=False, widget=forms.DateTimeInput(attrs=_DATETIME), help_text="default: now"
    )
    text = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), help_text="Markdown"
    )
    bundle = forms.ModelChoiceField(
        queryset=EvidenceBundle.objects.none(), required=False, label="Evidence bundle sent"
    )

    def __init__(self, *args: Any, ticket: VendorTicket, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        ready = EvidenceBundle.objects.filter(status=EvidenceBundle.Status.READY)
        incidents = list(ticket.incidents.values_list("pk", flat=True))
        self.fields["bundle"].queryset = (
            ready.filter(ticket=ticket) | ready.filter(incident__in=incidents)
        ).distinct()


class BundleForm(forms.Form):
    artifacts = forms.ModelMultipleChoiceField(
        queryset=Artifact.objects.none(), widget=forms.CheckboxSelectMultiple
    )
    redact = forms.BooleanField(required=False, initial=True, label="Redact (recommended)")
    patterns = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="extra regular expressions to redact, one per line",
    )
    ticket = forms.ModelChoiceField(
        queryset=VendorTicket.objects.none(), required=False, label="Record on vendor ticket"
    )

    def __init__(self, *args: Any, artifacts: Any, tickets: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["artifacts"].queryset = artifacts
        self.fields["artifacts"].label_from_instance = lambda a: f"#{a.pk} {a.original_name}"
        self.fields["artifacts"].initial = [a.pk for a in artifacts]
        if tickets is None:
            del self.fields["ticket"]
        else:
            self.fields["ticket"].queryset = tickets

    def clean_patterns(self) -> list[str]:
        return [p.strip() for p in self.cleaned_data.get("patterns", "").splitlines() if p.strip()]


class PostMortemForm(forms.Form):
    body = forms.CharField(required=False, strip=False, widget=forms.Textarea(attrs={"rows": 30}))
    revision = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    message = forms.CharField(required=False, max_length=300, label="Revision message")
    status = forms.ChoiceField(choices=PostMortem.Status.choices)
