"""Explicit input and output shapes of the baselines API."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework import serializers

from artifacts.models import BenchmarkRun
from baselines.models import (
    Alert,
    AlertSummary,
    Baseline,
    Comparison,
    HardwareProfile,
    HostProfileMapping,
    Series,
    SoftwareStack,
    Subscription,
)
from hardware.model import override_errors


def _absolute(serializer: serializers.Serializer, path: str) -> str:
    request = serializer.context.get("request")
    return request.build_absolute_uri(path) if request else path


class PageUrlMixin(serializers.Serializer):
    page_url = serializers.SerializerMethodField()

    def get_page_url(self, obj: Any) -> str:
        return _absolute(self, obj.get_absolute_url())


class HostMappingSerializer(serializers.ModelSerializer):
    profile = serializers.SlugRelatedField(
        slug_field="slug", queryset=HardwareProfile.objects.all()
    )

    class Meta:
        model = HostProfileMapping
        fields = ["id", "pattern", "profile", "priority", "created_at"]
        read_only_fields = ["created_at"]


class ProfileSerializer(PageUrlMixin, serializers.ModelSerializer):
    hosts = serializers.SlugRelatedField(slug_field="pattern", many=True, read_only=True)

    class Meta:
        model = HardwareProfile
        fields = [
            "id", "slug", "name", "page_url", "gpu_model", "gpu_generation", "gpu_match",
            "gpus_per_node", "nvlink", "nvswitch", "nic_model", "nic_speed_gbps", "nics_per_node",
            "fabric", "topology_notes", "limits", "auto_created", "hosts", "created_at",
        ]  # fmt: skip
        read_only_fields = ["auto_created", "created_at"]

    def validate_limits(self, value: Any) -> Any:
        if errors := override_errors(value or {}):
            raise serializers.ValidationError(errors)
        return value or {}


class StackSerializer(PageUrlMixin, serializers.ModelSerializer):
    class Meta:
        model = SoftwareStack
        fields = [
            "id", "page_url", "nccl", "cuda", "driver", "kernel", "pytorch", "ofed",
            "nic_firmware", "nccl_tests", "nccl_env", "notes", "nccl_key", "fingerprint",
            "created_at",
        ]  # fmt: skip
        read_only_fields = ["nccl_key", "fingerprint", "created_at"]

    def validate_nccl_env(self, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise serializers.ValidationError("a JSON object of NCCL_* variables is expected")
        bad = sorted(str(k) for k in value if not str(k).startswith("NCCL_"))
        if bad:
            raise serializers.ValidationError(f"only NCCL_* variables belong here, not {bad}")
        return {str(k): str(v) for k, v in sorted(value.items())}


class SeriesSerializer(PageUrlMixin, serializers.ModelSerializer):
    profile = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Series
        fields = [
            "id", "page_url", "profile", "benchmark", "collective", "dtype", "redop", "nranks",
            "nnodes", "size_bytes", "metric", "unit", "direction", "point_count", "last_value",
            "last_measured_at",
        ]  # fmt: skip


class SeriesPointSerializer(serializers.Serializer):
    run_id = serializers.IntegerField()
    measured_at = serializers.DateTimeField()
    value = serializers.FloatField()
    stack_id = serializers.IntegerField()
    nccl = serializers.CharField(source="stack__nccl")
    cuda = serializers.CharField(source="stack__cuda")
    driver = serializers.CharField(source="stack__driver")


class BaselineSerializer(PageUrlMixin, serializers.ModelSerializer):
    profile = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    runs = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    created_by = serializers.StringRelatedField()

    class Meta:
        model = Baseline
        fields = [
            "id", "page_url", "name", "profile", "benchmark", "collective", "dtype", "nranks",
            "stack", "runs", "tolerance_pct", "active", "notes", "created_by", "created_at",
        ]  # fmt: skip
        read_only_fields = [
            "benchmark", "collective", "dtype", "nranks", "stack", "created_at",
        ]  # fmt: skip


class BaselineCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
    runs = serializers.PrimaryKeyRelatedField(
        many=True, queryset=BenchmarkRun.objects.all(), help_text="ids of the runs to pin"
    )
    tolerance_pct = serializers.FloatField(min_value=0, max_value=100, default=3.0)
    notes = serializers.CharField(required=False, allow_blank=True, default="")


class BaselineUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=120, required=False)
    tolerance_pct = serializers.FloatField(min_value=0, max_value=100, required=False)
    active = serializers.BooleanField(required=False)
    notes = serializers.CharField(required=False, allow_blank=True)


class AlertSerializer(PageUrlMixin, serializers.ModelSerializer):
    series = SeriesSerializer(read_only=True)
    assignee = serializers.SlugRelatedField(slug_field="username", read_only=True)
    stack_before = serializers.PrimaryKeyRelatedField(read_only=True)
    stack_after = serializers.PrimaryKeyRelatedField(read_only=True)

    class Meta:
        model = Alert
        fields = [
            "id", "page_url", "summary", "series", "run", "previous_run", "kind", "source",
            "magnitude_pct", "low_pct", "high_pct", "value_before", "value_after",
            "stack_before", "stack_after", "status", "assignee", "notes", "link_url",
            "link_label", "measured_at", "created_at", "updated_at", "details",
        ]  # fmt: skip


class AlertUpdateSerializer(serializers.Serializer):
    """Triage. ``assignee``: a user name, or null to unassign."""

    status = serializers.ChoiceField(choices=Alert.Status.choices, required=False)
    assignee = serializers.SlugRelatedField(
        slug_field="username",
        queryset=get_user_model().objects.all(),
        required=False,
        allow_null=True,
    )
    notes = serializers.CharField(required=False, allow_blank=True)
    link_url = serializers.URLField(required=False, allow_blank=True, max_length=500)
    link_label = serializers.CharField(required=False, allow_blank=True, max_length=120)


class AlertSummarySerializer(PageUrlMixin, serializers.ModelSerializer):
    profile = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    alerts = serializers.SerializerMethodField()

    class Meta:
        model = AlertSummary
        fields = [
            "id", "page_url", "title", "profile", "change_text", "stack_before", "stack_after",
            "first_run", "regressions", "improvements", "variance_changes", "open_alerts",
            "created_at", "updated_at", "alerts",
        ]  # fmt: skip

    def get_alerts(self, summary: AlertSummary) -> str:
        return _absolute(self, reverse("api-alert-list") + f"?summary={summary.pk}&status=")


class SubscriptionSerializer(serializers.ModelSerializer):
    profile = serializers.SlugRelatedField(
        slug_field="slug", queryset=HardwareProfile.objects.all(), required=False, allow_null=True
    )
    owner = serializers.StringRelatedField()

    class Meta:
        model = Subscription
        fields = [
            "id", "name", "owner", "profile", "collective", "channel", "target", "digest",
            "include_improvements", "active", "created_at",
        ]  # fmt: skip
        read_only_fields = ["created_at"]


class ComparisonSizeSerializer(serializers.Serializer):
    size_bytes = serializers.IntegerField()
    reference = serializers.FloatField(allow_null=True)
    candidate = serializers.FloatField(allow_null=True)
    delta_pct = serializers.FloatField(allow_null=True)
    low_pct = serializers.FloatField(allow_null=True)
    high_pct = serializers.FloatField(allow_null=True)
    change = serializers.ChoiceField(choices=["improved", "regressed", "unchanged"])
    n_reference = serializers.IntegerField()
    n_candidate = serializers.IntegerField()
    method = serializers.CharField()


class ComparisonRangeSerializer(serializers.Serializer):
    low_bytes = serializers.IntegerField()
    high_bytes = serializers.IntegerField()
    direction = serializers.ChoiceField(choices=["improved", "regressed"])
    delta_pct = serializers.FloatField(allow_null=True)
    sizes = serializers.IntegerField()
    label = serializers.CharField()


class StackChangeSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    before = serializers.CharField()
    after = serializers.CharField()
    is_env = serializers.BooleanField()


class ProvenanceEntrySerializer(serializers.Serializer):
    """One value a source stated about the run (baselines/provenance/entries.py)."""

    kind = serializers.ChoiceField(choices=["stack", "env", "hardware"])
    key = serializers.CharField()
    label = serializers.CharField()
    value = serializers.CharField(allow_null=True)
    source = serializers.CharField(help_text="'nvidia_smi artifact #12', 'benchmark output'")
    artifact = serializers.IntegerField(allow_null=True)
    line = serializers.IntegerField(allow_null=True)
    why = serializers.CharField(help_text="'this file', 'same job #3', 'same host n1'")
    used = serializers.BooleanField()


class RunComparisonSerializer(serializers.Serializer):
    """``GET /api/v1/runs/{id}/comparison/``: the run's per-size comparison with its reference."""

    run = serializers.IntegerField()
    stored = serializers.BooleanField(help_text="false: computed now (not yet evaluated)")
    profile = serializers.CharField(allow_null=True)
    reference = serializers.ChoiceField(choices=Comparison.Reference.choices)
    baseline = serializers.IntegerField(allow_null=True)
    reference_run_ids = serializers.ListField(child=serializers.IntegerField())
    reference_stack = serializers.IntegerField(allow_null=True)
    stack = serializers.IntegerField(allow_null=True)
    verdict = serializers.ChoiceField(choices=Comparison.Verdict.choices)
    summary = serializers.CharField()
    method = serializers.CharField()
    noise_pct = serializers.FloatField(allow_null=True)
    tolerance_pct = serializers.FloatField()
    sizes = ComparisonSizeSerializer(many=True)
    ranges = ComparisonRangeSerializer(many=True)
    what_changed = StackChangeSerializer(many=True)
    provenance = ProvenanceEntrySerializer(many=True)


class EfficiencySizeSerializer(serializers.Serializer):
    size_bytes = serializers.IntegerField()
    busbw_gbps = serializers.FloatField(allow_null=True)
    pct_of_peak = serializers.FloatField(allow_null=True)


class RunEfficiencySerializer(serializers.Serializer):
    """``GET /api/v1/runs/{id}/efficiency/`` (docs/efficiency.md)."""

    run = serializers.IntegerField()
    assumed = serializers.BooleanField(
        help_text="false: the limits are stated (profile, evidence, datasheet); true: the "
        "network is a reference design assumed (candidates)"
    )
    peak_busbw_gbps = serializers.FloatField(help_text="GB/s the bottleneck allows")
    bottleneck = serializers.ChoiceField(
        choices=["nvlink", "network", "pcie", "nic_line_rate", "override"]
    )
    model = serializers.JSONField(
        help_text="every input of the model: name -> {value, unit, source} (GPU model, NVLink "
        "links and rate, PCIe, NICs and line rate, per-node network per host, ranks, nodes)"
    )
    bottleneck_label = serializers.CharField()
    explanation = serializers.CharField(allow_blank=True)
    bounds_gbps = serializers.DictField(child=serializers.FloatField())
    notes = serializers.ListField(child=serializers.CharField())
    profile = serializers.CharField(allow_null=True)
    metric = serializers.CharField()
    large_message = EfficiencySizeSerializer(allow_null=True)
    threshold_pct = serializers.FloatField()
    sizes = EfficiencySizeSerializer(many=True)


class NodeDesignSerializer(serializers.Serializer):
    key = serializers.CharField()
    name = serializers.CharField()
    gpus_per_node = serializers.IntegerField()
    nics_per_node = serializers.IntegerField()
    nic_line_rate_gbit = serializers.FloatField()
    nic_model = serializers.CharField()
    fabric = serializers.CharField()
    network_gbit = serializers.FloatField()
    source = serializers.CharField()


class CandidateEfficiencySerializer(RunEfficiencySerializer):
    design = NodeDesignSerializer()


class AssumedEfficiencySerializer(serializers.Serializer):
    """The efficiency answer when nothing states a multi-node run's network."""

    run = serializers.IntegerField()
    assumed = serializers.BooleanField(help_text="always true here")
    peak_busbw_gbps = serializers.FloatField(allow_null=True, help_text="null: not stated")
    detail = serializers.CharField(help_text="what is missing")
    profile = serializers.CharField(allow_null=True)
    candidates = CandidateEfficiencySerializer(
        many=True, help_text="the run under each reference design of its GPU (assumed)"
    )


class ProfileNetworkSerializer(serializers.Serializer):
    """``POST /api/v1/profiles/{slug}/network/``: a design key, or NICs and their rate."""

    design = serializers.CharField(required=False, allow_blank=True)
    nics_per_node = serializers.IntegerField(required=False, min_value=1)
    nic_speed_gbps = serializers.IntegerField(required=False, min_value=1)
