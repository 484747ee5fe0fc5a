"""Browser forms. They only shape input; validation of content lives in services.clean_content."""

from __future__ import annotations

from typing import Any

import yaml
from django import forms

from knowledge import applicability as appl
from knowledge.citations import KINDS
from knowledge.importexport import StringLoader
from knowledge.models import DEFAULT_VERIFY_INTERVAL_DAYS, Page, PageStatus, PageType, Topic
from knowledge.search import SOURCES

_SETTINGS_HELP = (
    "YAML list, one item per setting: kind (env, sysctl, boot, command), name, value, "
    "optional note and, for commands, scope (host, nic, switch)."
)
_SETTINGS_PLACEHOLDER = """- kind: env
  name: NCCL_IB_HCA
  value: "=mlx5_0:1,mlx5_1:1"
  note: one HCA per GPU rail
- kind: command
  scope: host
  value: mlnx_qos -i eth2 --trust dscp"""


class PageFilterForm(forms.Form):
    q = forms.CharField(required=False, label="Title / tag")
    type = forms.ChoiceField(required=False, choices=[("", "any type"), *PageType.choices])
    topic = forms.ChoiceField(required=False, choices=[("", "any topic"), *Topic.choices])
    generation = forms.ChoiceField(required=False, label="GPU")
    fabric = forms.ChoiceField(required=False)
    status = forms.ChoiceField(required=False, choices=[("", "any status"), *PageStatus.choices])
    stale = forms.ChoiceField(
        required=False,
        label="Freshness",
        choices=[("", "any"), ("1", "stale"), ("0", "fresh")],
    )
    owner = forms.ChoiceField(required=False)
    tag = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(
        self, *args: Any, options: dict[str, list[tuple[str, str]]], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["generation"].choices = [("", "any GPU"), *options["generations"]]
        self.fields["fabric"].choices = [("", "any fabric"), *options["fabrics"]]
        self.fields["owner"].choices = [("", "anyone"), *options["owners"]]


class PageForm(forms.Form):
    """Create/edit. ``base_revision`` travels with the form: the no-lost-update check."""

    title = forms.CharField(max_length=200)
    type = forms.ChoiceField(choices=PageType.choices)
    topic = forms.ChoiceField(choices=Topic.choices)
    status = forms.ChoiceField(choices=PageStatus.choices, initial=PageStatus.DRAFT)
    owner = forms.CharField(required=False, help_text="username")
    tags = forms.CharField(required=False, help_text="comma-separated, e.g. nccl, roce, h100")
    body = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 22, "class": "kb-editor", "spellcheck": "true"}),
        help_text="Markdown. Raw HTML is sanitized; scripts and event handlers are removed.",
    )
    gpu = forms.CharField(
        required=False, label="GPUs", help_text="models or architectures: H100, H200, Hopper"
    )
    nic = forms.CharField(required=False, label="NICs", help_text="e.g. ConnectX-7, BlueField-3")
    fabric = forms.MultipleChoiceField(
        required=False, choices=list(appl.FABRICS.items()), widget=forms.CheckboxSelectMultiple
    )
    settings = forms.CharField(
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 8, "placeholder": _SETTINGS_PLACEHOLDER, "class": "mono"}
        ),
        help_text=_SETTINGS_HELP,
    )
    verify_interval_days = forms.IntegerField(
        min_value=0, max_value=3650, initial=DEFAULT_VERIFY_INTERVAL_DAYS,
        label="Verify every (days)", help_text="0: never expires",
    )  # fmt: skip
    aliases = forms.CharField(
        required=False, label="Also at",
        help_text="other slugs that lead here, comma-separated (e.g. a findings rule's topic)",
    )  # fmt: skip
    symptoms = forms.CharField(
        required=False, label="Symptoms",
        help_text="what this page explains, comma-separated: log:watchdog_timeout, "
        "text:NET/IB, xid:79, rule:port_down, alert:regression (see docs/knowledge.md)",
    )  # fmt: skip
    message = forms.CharField(required=False, max_length=300, label="What changed")
    base_revision = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for dim in appl.RANGE_DIMENSIONS:
            self.fields[f"range_{dim}"] = forms.CharField(
                required=False,
                label=appl.LABELS[dim],
                widget=forms.TextInput(
                    attrs={"placeholder": ">=2.19, <2.24" if dim == "nccl" else ""}
                ),
            )

    @property
    def range_fields(self) -> list[forms.BoundField]:
        return [self[f"range_{dim}"] for dim in appl.RANGE_DIMENSIONS]

    def clean_settings(self) -> list[Any]:
        text = self.cleaned_data.get("settings") or ""
        if not text.strip():
            return []
        try:
            value = yaml.load(text, Loader=StringLoader)  # a SafeLoader subclass
        except yaml.YAMLError as exc:
            raise forms.ValidationError(f"Not valid YAML: {exc}") from None
        if not isinstance(value, list):
            raise forms.ValidationError("Settings must be a YAML list (lines starting with '- ').")
        return value

    def content(self) -> dict[str, Any]:
        data = self.cleaned_data
        applies_to: dict[str, Any] = {
            "gpu": data.get("gpu") or "",
            "nic": data.get("nic") or "",
            "fabric": list(data.get("fabric") or []),
        }
        for dim in appl.RANGE_DIMENSIONS:
            applies_to[dim] = data.get(f"range_{dim}") or ""
        return {
            "title": data["title"],
            "type": data["type"],
            "topic": data["topic"],
            "status": data["status"],
            "body": data.get("body") or "",
            "tags": data.get("tags") or "",
            "applies_to": applies_to,
            "settings": data.get("settings") or [],
            "verify_interval_days": data.get("verify_interval_days") or 0,
        }

    @classmethod
    def initial_for(cls, page: Page) -> dict[str, Any]:
        spec = page.applies_to or {}
        initial: dict[str, Any] = {
            "title": page.title,
            "type": page.type,
            "topic": page.topic,
            "status": page.status,
            "owner": page.owner.get_username() if page.owner_id else "",
            "tags": ", ".join(page.tags or []),
            "body": page.body,
            "gpu": ", ".join(spec.get("gpu", [])),
            "nic": ", ".join(spec.get("nic", [])),
            "fabric": spec.get("fabric", []),
            "settings": settings_yaml(page.settings),
            "verify_interval_days": page.verify_interval_days,
            "base_revision": page.revision,
            "aliases": ", ".join(page.aliases.values_list("slug", flat=True)),
            "symptoms": ", ".join(page.symptoms or []),
        }
        for dim in appl.RANGE_DIMENSIONS:
            initial[f"range_{dim}"] = spec.get(dim, "")
        return initial


def settings_yaml(settings: list[dict[str, Any]]) -> str:
    if not settings:
        return ""
    return yaml.safe_dump(settings, sort_keys=False, allow_unicode=True, width=100)


class VerifyForm(forms.Form):
    note = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), help_text="what was run, where, the result"
    )
    verified_at = forms.DateField(
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        label="Verified on (default today)",
    )

    def __init__(self, *args: Any, dimensions: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dimensions = dimensions
        for dim in dimensions:
            self.fields[f"version_{dim}"] = forms.CharField(
                required=False, label=f"{appl.LABELS[dim]} version"
            )

    @property
    def version_fields(self) -> list[forms.BoundField]:
        return [self[f"version_{d}"] for d in self.dimensions]

    def versions(self) -> dict[str, str]:
        return {d: self.cleaned_data.get(f"version_{d}") or "" for d in self.dimensions}


class CiteForm(forms.Form):
    kind = forms.ChoiceField(choices=lambda: [(k, v.label) for k, v in sorted(KINDS.items())])
    object_id = forms.CharField(max_length=64, label="Id")
    note = forms.CharField(max_length=300, required=False)


class ImportForm(forms.Form):
    """The files themselves come from ``request.FILES.getlist("files")`` (several at once)."""

    mode = forms.ChoiceField(
        choices=[
            ("update", "update changed pages (new revision)"),
            ("skip", "skip pages that exist"),
        ],
        initial="update",
    )


class SearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=400)
    type = forms.MultipleChoiceField(
        required=False, choices=lambda: [(k, s.label) for k, s in SOURCES.items()]
    )
    topic = forms.CharField(required=False)
    generation = forms.CharField(required=False)
