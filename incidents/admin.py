from django.contrib import admin

from incidents.models import (
    ActionItem,
    Correspondence,
    EvidenceBundle,
    Incident,
    PostMortem,
    PostMortemRevision,
    RedactionPattern,
    Tag,
    TimelineEvent,
    VendorTicket,
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
