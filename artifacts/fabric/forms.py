from __future__ import annotations

from typing import Any

from django import forms

from artifacts.fabric import querysets
from artifacts.fabric.fleet import RATIO_METRICS, RUN_METRICS
from artifacts.models import Finding


class FindingFilterForm(forms.Form):
    severity = forms.ChoiceField(
        required=False, choices=[("", "any severity"), *Finding.Severity.choices]
    )
    rule = forms.ChoiceField(
        required=False, choices=lambda: [("", "any rule"), *querysets.finding_rule_choices()]
    )
    host = forms.CharField(required=False)
    acknowledged = forms.ChoiceField(required=False, choices=querysets.ACK_CHOICES)
    q = forms.CharField(required=False, label="Title")
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))


class AcknowledgeForm(forms.Form):
    note = forms.CharField(required=False, max_length=500)


class RateFilterForm(forms.Form):
    counter = forms.CharField(required=False, label="Counter contains")
    derived = forms.ChoiceField(
        required=False, choices=[("", "raw and derived"), ("1", "derived only"), ("0", "raw only")]
    )
    nonzero = forms.BooleanField(required=False, label="Non-zero only")


class FleetForm(forms.Form):
    mode = forms.ChoiceField(
        choices=[
            ("counter", "counter rate per host"),
            ("ratio", "counter ratio per host (CNP ratio...)"),
            ("fact", "fact per host (versions, settings...)"),
            ("pairwise", "nccl-tests node pairs"),
        ],
        required=False,
    )
    ratio = forms.ChoiceField(
        required=False, choices=[(k, r.label) for k, r in RATIO_METRICS.items()]
    )
    counter = forms.ChoiceField(required=False)
    direction = forms.ChoiceField(
        required=False,
        choices=[("high", "high is bad"), ("low", "low is bad"), ("both", "either way")],
    )
    fact = forms.ChoiceField(required=False)
    collective = forms.CharField(
        required=False,
        initial="all_reduce",
        widget=forms.TextInput(attrs={"placeholder": "empty: every collective"}),
    )
    metric = forms.ChoiceField(required=False, choices=list(RUN_METRICS.items()))
    label = forms.CharField(required=False)
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(
        self, *args: Any, counters: list[str], facts: list[str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["counter"].choices = [("", "pick a counter"), *((c, c) for c in counters)]
        self.fields["fact"].choices = [("", "pick a fact"), *((f, f) for f in facts or ())]
