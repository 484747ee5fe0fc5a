from django.contrib import admin

from knowledge.models import Citation, Page, PageRevision, Verification


class RevisionInline(admin.TabularInline):
    model = PageRevision
    fields = ["number", "message", "author", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    """View only: edits belong in the app, where revisions, the conflict check and the
    search index are kept."""

    list_display = ["title", "slug", "type", "topic", "status", "owner", "revision", "verified_at"]
    list_filter = ["type", "topic", "status"]
    search_fields = ["title", "slug", "tag_index"]
    raw_id_fields = ["owner", "created_by", "updated_by"]
    readonly_fields = [
        "revision", "gpu_index", "tag_index", "nic_index", "fabric_index", "verified_at",
        "verified_versions", "evidence_count", "evidence_newest_at",
    ]  # fmt: skip
    inlines = [RevisionInline]

    def has_add_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False


@admin.register(Citation)
class CitationAdmin(admin.ModelAdmin):
    list_display = ["page", "kind", "object_id", "added_by", "added_at"]
    list_filter = ["kind"]
    raw_id_fields = ["page", "added_by"]


@admin.register(Verification)
class VerificationAdmin(admin.ModelAdmin):
    list_display = ["page", "verified_at", "verified_by", "revision"]
    raw_id_fields = ["page", "verified_by"]
