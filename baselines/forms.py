"""Forms of the baselines pages: filters (GET) and edits (POST, editors only)."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib.auth import get_user_model

from baselines.facts import COMPONENT_LABELS
from baselines.models import (
    VERSION_FIELDS,
    Alert,
    Baseline,
    HardwareProfile,
    HostProfileMapping,
    SoftwareStack,
    Subscription,
)
from hardware.model import override_errors

COMPONENT_CHOICES = [(name, COMPONENT_LABELS[name]) for name in VERSION_FIELDS]


def _choices(values: list[Any], empty: str = "any") -> list[tuple[Any, Any]]:
    return [("", empty), *((v, v) for v in values)]


class ProfileForm(forms.ModelForm):
    class Meta:
        model = HardwareProfile
        fields = [
            "slug", "name", "gpu_model", "gpu_generation", "gpu_match", "gpus_per_node", "nvlink",
            "nvswitch", "nic_model", "nic_speed_gbps", "nics_per_node", "fabric", "topology_notes",
            "limits",
        ]  # fmt: skip
        widgets = {"topology_notes": forms.Textarea(attrs={"rows": 3})}
        help_texts = {
            "limits": 'hardware limit overrides (docs/efficiency.md), e.g. {"nvlink_busbw_gbps": '
            '450, "nics_per_node": 8}; a value here wins over evidence and the datasheet',
        }

    def clean_limits(self) -> dict[str, Any]:
        limits = self.cleaned_data.get("limits") or {}
        if errors := override_errors(limits):
            raise forms.ValidationError(errors)
        return dict(limits)


class MappingForm(forms.ModelForm):
    class Meta:
        model = HostProfileMapping
        fields = ["pattern", "priority"]
        help_texts = {"pattern": "shell pattern: h200-r07n*, ib-h100-n0[0-9]*"}


class NcclEnvField(forms.CharField):
    """``NCCL_X=value`` lines (or a JSON object) <-> a dict of NCCL_* variables."""

    widget = forms.Textarea(attrs={"rows": 4, "placeholder": "NCCL_IB_HCA=mlx5\nNCCL_ALGO=Ring"})

    def prepare_value(self, value: Any) -> str:
        if isinstance(value, dict):
            return "\n".join(f"{k}={v}" for k, v in sorted(value.items()))
        return str(value or "")

    def to_python(self, value: Any) -> dict[str, str]:
        text = str(value or "").strip()
        if not text:
            return {}
        if text.startswith("{"):
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise forms.ValidationError(f"not valid JSON: {exc}") from exc
            if not isinstance(data, dict):
                raise forms.ValidationError("a JSON object of NCCL_* variables is expected")
            items = [(str(k), str(v)) for k, v in data.items()]
        else:
            items = []
            for number, line in enumerate(text.splitlines(), start=1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                key, sep, val = line.strip().partition("=")
                if not sep:
                    raise forms.ValidationError(f"line {number}: expected NAME=value, got {line!r}")
                items.append((key.strip(), val.strip()))
        bad = [k for k, _ in items if not k.startswith("NCCL_")]
        if bad:
            raise forms.ValidationError(f"only NCCL_* variables belong here, not {bad}")
        return dict(sorted(items))


class StackForm(forms.ModelForm):
    nccl_env = NcclEnvField(required=False, label="NCCL_* environment")

    class Meta:
        model = SoftwareStack
        fields = [*VERSION_FIELDS, "nccl_tests", "nccl_env", "notes"]
        widgets = {"notes": forms.Textarea(attrs={"rows": 2})}


class BaselineForm(forms.ModelForm):
    class Meta:
        model = Baseline
        fields = ["name", "tolerance_pct", "active", "notes"]
        widgets = {"notes": forms.Textarea(attrs={"rows": 2})}


class PromoteForm(forms.Form):
    name = forms.CharField(required=False, max_length=120, help_text="empty: a generated name")
    tolerance_pct = forms.FloatField(initial=3.0, min_value=0, max_value=100, label="Tolerance %")
    include_recent = forms.BooleanField(
        required=False,
        initial=True,
        label="with the runs just before it on the same stack",
    )
    add_to = forms.ModelChoiceField(
        queryset=Baseline.objects.none(), required=False, label="or add to baseline"
    )

    def __init__(self, *args: Any, baselines: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if baselines is not None:
            self.fields["add_to"].queryset = baselines


class TriageForm(forms.ModelForm):
    assignee = forms.ModelChoiceField(
        queryset=get_user_model().objects.order_by("username"), required=False
    )
    # Declared to pick the scheme a bare "jira.example/T-1" gets (Django's default changes).
    link_url = forms.URLField(
        max_length=500,
        required=False,
        assume_scheme="https",
        label="Link (incident, vendor ticket)",
    )

    class Meta:
        model = Alert
        fields = ["status", "assignee", "notes", "link_url", "link_label"]
        widgets = {"notes": forms.Textarea(attrs={"rows": 4})}
        labels = {"link_label": "Link text"}


class SummaryStatusForm(forms.Form):
    status = forms.ChoiceField(choices=Alert.Status.choices)
    assignee = forms.ModelChoiceField(
        queryset=get_user_model().objects.order_by("username"), required=False
    )


class SubscriptionForm(forms.ModelForm):
    class Meta:
        model = Subscription
        fields = [
            "name", "profile", "collective", "channel", "target", "digest",
            "include_improvements", "active",
        ]  # fmt: skip


# ------------------------------------------------------------------------------ filters


class SeriesFilterForm(forms.Form):
    profile = forms.ChoiceField(required=False)
    benchmark = forms.ChoiceField(required=False, help_text="nccl-tests, perftest, metrics")
    collective = forms.ChoiceField(required=False, label="Collective / metric")
    nranks = forms.ChoiceField(required=False, label="Ranks")
    size_bytes = forms.ChoiceField(required=False, label="Size")
    alerts = forms.ChoiceField(
        required=False, choices=[("", "any"), ("open", "with open alerts")], label="Alerts"
    )

    def __init__(self, *args: Any, options: dict[str, list[Any]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from perfhub.units import human_bytes

        self.fields["profile"].choices = _choices(options["profiles"])
        self.fields["benchmark"].choices = _choices(options.get("benchmarks", []))
        self.fields["collective"].choices = _choices(options["collectives"])
        self.fields["nranks"].choices = _choices(options["nranks"])
        self.fields["size_bytes"].choices = [
            ("", "any"),
            *((s, human_bytes(s)) for s in options["sizes"]),
        ]


class AlertFilterForm(forms.Form):
    status = forms.ChoiceField(
        required=False, choices=[("", "any"), ("open", "open (not closed)"), *Alert.Status.choices]
    )
    kind = forms.ChoiceField(required=False, choices=[("", "any"), *Alert.Kind.choices])
    profile = forms.ChoiceField(required=False)
    collective = forms.ChoiceField(required=False)
    assignee = forms.CharField(required=False, help_text="user name, or 'none'")
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: Any, options: dict[str, list[Any]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["profile"].choices = _choices(options["profiles"])
        self.fields["collective"].choices = _choices(options["collectives"])


class MatrixForm(forms.Form):
    profile = forms.ChoiceField()
    component = forms.ChoiceField(choices=COMPONENT_CHOICES, initial="nccl")
    # the cell value: Δ% against the reference, or % of the hardware's peak (efficiency.md)
    value = forms.ChoiceField(
        choices=[("delta", "Δ % against the reference"), ("efficiency", "% of hardware peak")],
        initial="delta",
        required=False,
    )

    def __init__(self, *args: Any, profiles: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["profile"].choices = [(p, p) for p in profiles]
