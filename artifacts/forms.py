from django import forms

from artifacts.models import Artifact
from artifacts.parsers import kind_choices


class ArtifactFilterForm(forms.Form):
    q = forms.CharField(required=False, label="File name")
    kind = forms.ChoiceField(required=False, choices=lambda: [("", "any kind"), *kind_choices()])
    status = forms.ChoiceField(
        required=False, choices=[("", "any status"), *Artifact.Status.choices]
    )
    label = forms.CharField(required=False)
    host = forms.CharField(required=False)
