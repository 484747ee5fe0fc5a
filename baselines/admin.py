from django.contrib import admin

from baselines.models import (
    Alert,
    AlertSummary,
    Baseline,
    Comparison,
    Delivery,
    HardwareProfile,
    HostProfileMapping,
    RunContext,
    Series,
    SoftwareStack,
    Subscription,
)


class HostMappingInline(admin.TabularInline):
    model = HostProfileMapping
    extra = 1


@admin.register(HardwareProfile)
class HardwareProfileAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "gpu_model", "gpus_per_node", "nic_model", "fabric"]
    search_fields = ["slug", "name", "gpu_model"]
    inlines = [HostMappingInline]


@admin.register(SoftwareStack)
class SoftwareStackAdmin(admin.ModelAdmin):
    list_display = ["id", "nccl", "cuda", "driver", "kernel", "pytorch", "ofed", "nic_firmware"]
    search_fields = ["nccl", "cuda", "driver", "kernel"]


@admin.register(Series)
class SeriesAdmin(admin.ModelAdmin):
    list_display = ["id", "profile", "collective", "dtype", "nranks", "size_bytes", "metric"]
    list_filter = ["profile", "collective", "metric"]
    list_select_related = ["profile"]


@admin.register(Baseline)
class BaselineAdmin(admin.ModelAdmin):
    list_display = ["name", "profile", "collective", "nranks", "tolerance_pct", "active"]
    list_filter = ["active", "profile"]
    raw_id_fields = ["runs"]


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "status", "magnitude_pct", "series", "measured_at"]
    list_filter = ["status", "kind", "source"]
    raw_id_fields = ["series", "run", "previous_run", "summary"]


@admin.register(AlertSummary)
class AlertSummaryAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "profile", "regressions", "open_alerts", "created_at"]
    raw_id_fields = ["first_run"]


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["name", "channel", "target", "profile", "collective", "digest", "active"]


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["id", "subscription", "summary", "state", "attempts", "sent_at"]
    list_filter = ["state"]


@admin.register(RunContext)
class RunContextAdmin(admin.ModelAdmin):
    list_display = ["run", "profile", "stack", "matched_by"]
    raw_id_fields = ["run"]


@admin.register(Comparison)
class ComparisonAdmin(admin.ModelAdmin):
    list_display = ["run", "profile", "reference", "verdict", "worst_delta_pct"]
    list_filter = ["verdict", "reference"]
    raw_id_fields = ["run"]
