from django.contrib import admin

from .models import Artifact, BenchmarkRun


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ["id", "original_name", "kind", "status", "size", "label", "host", "uploaded_at"]
    list_filter = ["kind", "status"]
    search_fields = ["original_name", "sha256", "label", "host"]
    readonly_fields = ["sha256", "size", "file", "summary", "warnings", "parser_version"]


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(admin.ModelAdmin):
    list_display = ["id", "collective", "nranks", "gpu", "nccl_version", "avg_busbw_gbps"]
    list_filter = ["collective", "nccl_version"]
    raw_id_fields = ["artifact"]
