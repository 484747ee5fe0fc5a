from __future__ import annotations

from typing import Any

from django import forms


def _choices(values: list[str], empty: str) -> list[tuple[str, str]]:
    return [("", empty)] + [(v, v) for v in values]


class TraceFilterForm(forms.Form):
    job = forms.ChoiceField(required=False)
    rank = forms.IntegerField(required=False, min_value=0)
    host = forms.CharField(required=False)
    label = forms.ChoiceField(required=False)
    gpu = forms.CharField(required=False, label="GPU")
    q = forms.CharField(required=False, label="File name")
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: Any, options: dict[str, list[str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["job"].choices = _choices(options["jobs"], "any job")
        self.fields["label"].choices = _choices(options["labels"], "any label")


class JobFilterForm(forms.Form):
    """Filters of the jobs list (the CSV export applies the same ones)."""

    q = forms.CharField(required=False, label="Job")
    kind = forms.ChoiceField(
        required=False,
        choices=[("", "labelled and batches"), ("labelled", "labelled"), ("batch", "batches")],
    )
    min_ranks = forms.IntegerField(required=False, min_value=1, label="Ranks ≥")
    since = forms.DateField(
        required=False, label="Uploaded since", widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        required=False, label="until", widget=forms.DateInput(attrs={"type": "date"})
    )


class DiffPickForm(forms.Form):
    """Each side: one trace id, or a job."""

    a = forms.IntegerField(required=False, min_value=1, label="A: trace id")
    a_job = forms.ChoiceField(required=False, label="or A: job")
    b = forms.IntegerField(required=False, min_value=1, label="B: trace id")
    b_job = forms.ChoiceField(required=False, label="or B: job")

    def __init__(self, *args: Any, jobs: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["a_job"].choices = _choices(jobs, "—")
        self.fields["b_job"].choices = _choices(jobs, "—")
