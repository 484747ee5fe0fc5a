"""The run list's filter form."""

from __future__ import annotations

from django import forms


class RunFilterForm(forms.Form):
    collective = forms.ChoiceField(required=False)
    nranks = forms.ChoiceField(required=False, label="Ranks")
    host = forms.CharField(required=False)
    label = forms.ChoiceField(required=False)
    nccl_version = forms.ChoiceField(required=False, label="NCCL")
    gpu = forms.CharField(required=False, label="GPU")
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    status = forms.ChoiceField(
        required=False,
        choices=[("", "any"), ("failed", "failed"), ("incomplete", "incomplete")],
    )

    def __init__(self, *args, options: dict, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.fields["collective"].choices = [("", "any")] + [(c, c) for c in options["collectives"]]
        self.fields["nranks"].choices = [("", "any")] + [(n, n) for n in options["nranks"]]
        self.fields["label"].choices = [("", "any")] + [(v, v) for v in options["labels"]]
        self.fields["nccl_version"].choices = [("", "any")] + [
            (v, v) for v in options["nccl_versions"]
        ]
