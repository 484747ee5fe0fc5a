import secrets

from django import forms
from django.contrib import admin, messages

from incidents.alerting.labels import effective
from incidents.models import (
    ActionItem,
    AlertLink,
    Correspondence,
    EvidenceBundle,
    FactRecord,
    Incident,
    PostMortem,
    PostMortemReview,
    PostMortemRevision,
    RedactionPattern,
    Tag,
    TimelineEvent,
    VendorTicket,
    WebhookCall,
    WebhookReceiver,
)


class TimelineInline(admin.TabularInline):
    model = TimelineEvent
    extra = 0
    raw_id_fields = ["artifact", "run", "author"]


@admin.register(Incident)
class IncidentAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "severity", "status", "owner", "detected_at"]
    list_filter = ["severity", "status", "tags"]
    search_fields = ["title", "summary"]
    raw_id_fields = ["owner", "created_by"]
    inlines = [TimelineInline]


@admin.register(VendorTicket)
class VendorTicketAdmin(admin.ModelAdmin):
    list_display = ["id", "vendor", "case_number", "title", "status"]
    list_filter = ["vendor", "status"]
    search_fields = ["title", "case_number"]
    filter_horizontal = ["incidents"]
    raw_id_fields = ["artifacts"]


@admin.register(ActionItem)
class ActionItemAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "incident", "type", "status", "owner", "due_date"]
    list_filter = ["type", "status"]
    raw_id_fields = ["incident", "ticket", "verification_artifact"]


@admin.register(EvidenceBundle)
class EvidenceBundleAdmin(admin.ModelAdmin):
    list_display = ["id", "incident", "ticket", "status", "redact", "sha256", "created_at"]
    readonly_fields = ["sha256", "size", "file", "report"]
    raw_id_fields = ["incident", "ticket", "artifacts"]


@admin.register(RedactionPattern)
class RedactionPatternAdmin(admin.ModelAdmin):
    list_display = ["name", "regex", "enabled"]


admin.site.register([Tag, PostMortem, PostMortemRevision, Correspondence])


class WebhookReceiverForm(forms.ModelForm):
    """The token is write-only: type one (or leave empty on creation to get a random one,
    shown once); only its sha256 is stored."""

    new_token = forms.CharField(
        required=False, help_text="set a new token (leave empty to keep the current one)"
    )

    class Meta:
        model = WebhookReceiver
        fields = ["name", "kind", "enabled", "label_map"]

    def clean_label_map(self) -> dict:
        value = self.cleaned_data.get("label_map") or {}
        try:
            effective(value)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return value


@admin.register(WebhookReceiver)
class WebhookReceiverAdmin(admin.ModelAdmin):
    form = WebhookReceiverForm
    list_display = ["name", "kind", "enabled", "created_at"]

    def save_model(self, request, obj, form, change):  # type: ignore[no-untyped-def]
        # Imported here: admin modules load at every start-up (the command line included),
        # and the webhook services bring incidents.services, fabric and pandas with them.
        from incidents.alerting.services import token_digest

        token = form.cleaned_data.get("new_token") or ("" if change else secrets.token_urlsafe(32))
        if token:
            obj.token_sha256 = token_digest(token)
            if not form.cleaned_data.get("new_token"):
                messages.warning(request, f"Token of {obj.name} (shown once): {token}")
        super().save_model(request, obj, form, change)


@admin.register(WebhookCall)
class WebhookCallAdmin(admin.ModelAdmin):
    list_display = ["id", "received_at", "kind", "receiver", "status_code", "outcome"]
    list_filter = ["kind", "status_code"]
    readonly_fields = ["received_at"]


admin.site.register([AlertLink, FactRecord, PostMortemReview])
