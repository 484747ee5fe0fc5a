from django.contrib import admin

from reports.models import Report


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    """Read-only: a saved report is evidence; re-build it from its page to change it."""

    list_display = ["id", "title", "kind", "version", "status", "created_by", "created_at"]
    list_filter = ["kind", "status"]
    search_fields = ["title"]
    readonly_fields = [f.name for f in Report._meta.fields if f.name != "id"] + ["artifacts"]

    def has_add_permission(self, request) -> bool:  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False
