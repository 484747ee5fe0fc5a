from __future__ import annotations

from typing import Any

from django import forms

from reports.comparisons import GROUPINGS
from reports.kinds import kind_choices
from reports.models import Report


class ReportFilterForm(forms.Form):
    q = forms.CharField(required=False, label="Title or verdict")
    kind = forms.ChoiceField(required=False, choices=lambda: [("", "any kind"), *kind_choices()])
    status = forms.ChoiceField(required=False, choices=[("", "any status"), *Report.Status.choices])
    created_by = forms.CharField(required=False, label="Author")
    versions = forms.ChoiceField(
        required=False, choices=[("", "latest versions"), ("all", "all versions")]
    )


class IdListField(forms.Field):
    """Ticked checkboxes (``run=3&run=5``) as a list of ints; the service checks they exist."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[int]:
        values = value if isinstance(value, list | tuple) else ([value] if value else [])
        try:
            return [int(v) for v in values if str(v).strip()]
        except ValueError:
            raise forms.ValidationError("run ids are numbers") from None

    def validate(self, value: list[int]) -> None:
        if self.required and not value:
            raise forms.ValidationError("tick at least one")


class RunsReportForm(forms.Form):
    """Builder, "runs": the ticked runs, how to put them on sides, or each vs its baseline."""

    title = forms.CharField(max_length=200)
    run = IdListField(label="Runs")
    group_by = forms.ChoiceField(
        choices=[(k, f"{k}: {v}") for k, v in GROUPINGS.items()],
        initial="artifact",
        required=False,
        label="Sides",
    )
    with_baseline = forms.BooleanField(required=False, label="Compare each run with its baseline")


class ProfilesReportForm(forms.Form):
    """Builder, "profiles" (NPI): reference profile A against new profile B."""

    title = forms.CharField(max_length=200)
    profile_a = forms.TypedChoiceField(coerce=int, label="Reference profile (A)")
    profile_b = forms.TypedChoiceField(coerce=int, label="New profile (B)")

    def __init__(self, *args: Any, profiles: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["profile_a"].choices = profiles
        self.fields["profile_b"].choices = profiles


class ArtifactsReportForm(forms.Form):
    """Builder, "traces" and "counters": ticked artifacts and how they make two sides."""

    title = forms.CharField(max_length=200)
    artifact = IdListField(label="Artifacts")
    group_by = forms.ChoiceField(required=False, label="Sides")

    def __init__(self, *args: Any, groupings: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["group_by"].choices = groupings
