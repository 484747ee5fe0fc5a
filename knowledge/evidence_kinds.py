"""Incidents, findings and reports as evidence a page can cite (citation kinds).

Runs, artifacts and pages are defined in knowledge/citations.py; the kinds here belong to
other apps, so their models are looked up lazily and a kind is only registered when its app
is installed. None of them is a *measurement*: they show on the page with what they said
when cited (pinned), but only runs and artifacts count towards "evidence: N measurements"
and freshness.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.db.models import Model

from knowledge.citations import CitationError, Cited, _int, _when, register_kind

if TYPE_CHECKING:
    from knowledge.models import Citation


def _model(label: str) -> type[Model] | None:
    try:
        return apps.get_model(label)
    except LookupError:
        return None


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


class _LazyKind:
    """A kind over one model: ``_pin_fields`` freezes an object, ``_cited`` shows it."""

    name = ""
    label = ""
    model_label = ""

    def _objects(self, ids: list[int]) -> dict[int, Any]:
        model = _model(self.model_label)
        return model._default_manager.in_bulk(ids) if model is not None else {}  # type: ignore[union-attr]

    def pin(self, object_id: str) -> dict[str, Any]:
        obj = self._objects([_int(object_id)]).get(_int(object_id))
        if obj is None:
            raise CitationError(f"no {self.label} #{object_id}")
        return self._pin_fields(obj)

    def resolve(self, citations: Sequence[Citation]) -> dict[int, Cited]:
        objects = self._objects([_int(c.object_id) for c in citations])
        result: dict[int, Cited] = {}
        for c in citations:
            obj = objects.get(_int(c.object_id))
            pinned = c.pinned or {}
            result[c.pk] = Cited(
                kind=self.name,
                object_id=c.object_id,
                title=str(pinned.get("title") or f"{self.label} {c.object_id}"),
                url=obj.get_absolute_url() if obj is not None else "",
                summary=self._summary(obj, pinned),
                measured_at=_when(pinned.get("at")),
                missing=obj is None,
                note=c.note,
                citation_id=c.pk,
            )
        return result

    def _pin_fields(self, obj: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _summary(self, obj: Any, pinned: dict[str, Any]) -> str:
        raise NotImplementedError


class IncidentCitations(_LazyKind):
    name, label, model_label = "incident", "incident", "incidents.Incident"

    def _pin_fields(self, obj: Any) -> dict[str, Any]:
        return {
            "title": f"{obj.reference}: {obj.title}",
            "severity": obj.severity,
            "status": obj.status,
            "hardware_generation": obj.hardware_generation,
            "at": _iso(obj.detected_at or obj.created_at),
        }

    def _summary(self, obj: Any, pinned: dict[str, Any]) -> str:
        status = obj.get_status_display() if obj is not None else pinned.get("status", "")
        parts = [pinned.get("severity"), status, pinned.get("hardware_generation")]
        return " · ".join(str(p) for p in parts if p)


class FindingCitations(_LazyKind):
    name, label, model_label = "finding", "finding", "artifacts.Finding"

    def _pin_fields(self, obj: Any) -> dict[str, Any]:
        return {
            "title": obj.title,
            "rule": obj.rule,
            "severity": obj.severity,
            "host": obj.host,
            "artifact_id": obj.artifact_id,
            "at": _iso(obj.observed_at),
        }

    def _summary(self, obj: Any, pinned: dict[str, Any]) -> str:
        parts = [pinned.get("severity"), pinned.get("rule"), pinned.get("host")]
        text = " · ".join(str(p) for p in parts if p)
        if obj is not None and obj.acknowledged:
            text += " · acknowledged"
        return text


class ReportCitations(_LazyKind):
    """A report id is one immutable version, so the citation is pinned by construction."""

    name, label, model_label = "report", "report", "reports.Report"

    def _pin_fields(self, obj: Any) -> dict[str, Any]:
        if not obj.is_ready:
            raise CitationError(f"report #{obj.pk} is {obj.status}, not built yet")
        return {
            "title": f"{obj.title} (v{obj.version})",
            "kind": obj.kind,
            "version": obj.version,
            "summary": [str(line) for line in (obj.summary or [])[:5]],
            "at": _iso(obj.built_at or obj.created_at),
        }

    def _summary(self, obj: Any, pinned: dict[str, Any]) -> str:
        lines = pinned.get("summary") or []
        return "; ".join(lines[:2]) or str(pinned.get("kind", ""))


def register() -> None:
    for kind in (IncidentCitations(), FindingCitations(), ReportCitations()):
        if _model(kind.model_label) is not None:
            register_kind(kind)
