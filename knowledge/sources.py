"""Incidents, post-mortems and vendor tickets as search sources, and "used in incidents".

The incidents app owns these models; the knowledge app only reads them. Models are looked up
lazily (``apps.get_model``) so that this module imports nothing from incidents at load time
and does nothing when that app is not installed. ``connect()`` is called once from
``KnowledgeConfig.ready``: it registers the three sources, the backlink provider, and the
signals that keep the index current whenever a row is saved or deleted, whichever code path
(service, admin, merge) wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.apps import apps
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model, Q
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.urls import reverse

from knowledge.applicability import gpu_model
from knowledge.citations import Backlink, register_backlinks
from knowledge.models import Page
from knowledge.search import (
    SearchDocument,
    index_document,
    markdown_text,
    register_source,
    remove_document,
)

# {{chart run=1 pin=2}} shortcodes say nothing a reader searches for.
_SHORTCODE = re.compile(r"\{\{[^{}]*\}\}")
MAX_TIMELINE_EVENTS = 500  # per incident document; enough for any real incident
MAX_BACKLINKS = 50


def _model(name: str) -> type[Model] | None:
    try:
        return apps.get_model("incidents", name)
    except LookupError:
        return None


def _text(markdown: str) -> str:
    return markdown_text(_SHORTCODE.sub(" ", markdown or ""))


def _generations(*texts: str) -> list[str]:
    return sorted({g for g in (gpu_model(t) for t in texts if t) if g})


# --- documents -------------------------------------------------------------------------------


def incident_document(incident: Any) -> SearchDocument:
    events = incident.events.order_by("at", "id").values_list("text", flat=True)
    parts = [
        _text(incident.summary),
        _text(incident.impact),
        " ".join(filter(None, [incident.cluster, incident.hardware_profile])),
        " ".join(incident.hardware_generation.split()),
        " ".join(map(str, incident.affected_hosts or [])),
        " ".join(map(str, incident.affected_jobs or [])),
        " ".join(incident.tags.values_list("name", flat=True)),
        *(_text(t) for t in events[:MAX_TIMELINE_EVENTS]),
    ]
    return SearchDocument(
        source="incident",
        key=str(incident.pk),
        title=f"{incident.reference}: {incident.title}",
        body="\n".join(p for p in parts if p),
        url=incident.get_absolute_url(),
        subtype=incident.severity,
        generations=_generations(incident.hardware_generation, incident.hardware_profile),
        updated_at=incident.updated_at,
    )


def postmortem_document(postmortem: Any) -> SearchDocument:
    incident = postmortem.incident
    return SearchDocument(
        source="postmortem",
        key=str(postmortem.pk),
        title=f"Post-mortem {incident.reference}: {incident.title}",
        body=_text(postmortem.body),
        url=reverse("postmortem", args=[incident.pk]),
        subtype=postmortem.status,
        generations=_generations(incident.hardware_generation, incident.hardware_profile),
        updated_at=postmortem.updated_at,
    )


def ticket_document(ticket: Any) -> SearchDocument:
    # Contacts (names, e-mail addresses at the vendor) are deliberately not indexed.
    messages = ticket.messages.order_by("at", "id").values_list("text", flat=True)
    incidents = ticket.incidents.values_list("id", "title", "hardware_generation")
    parts = [
        ticket.vendor_label,
        ticket.case_number,
        ticket.fixed_in_version and f"fixed in {ticket.fixed_in_version}",
        " ".join(f"INC-{pk} {title}" for pk, title, _g in incidents),
        *(_text(t) for t in messages[:MAX_TIMELINE_EVENTS]),
    ]
    case = f" {ticket.case_number}" if ticket.case_number else ""
    return SearchDocument(
        source="vendor_ticket",
        key=str(ticket.pk),
        title=f"{ticket.vendor_label}{case}: {ticket.title}",
        body="\n".join(p for p in parts if p),
        url=ticket.get_absolute_url(),
        subtype=ticket.status,
        generations=_generations(*(g for _pk, _t, g in incidents)),
        updated_at=ticket.updated_at,
    )


class _ModelSource:
    """A search source over one incidents model (iterated for ``search_reindex``)."""

    def __init__(
        self, name: str, label: str, model: str, document: Any, related: str, subtype: str
    ) -> None:
        self.name, self.label, self._model, self._document = name, label, model, document
        self._related, self._subtype = related, subtype

    @property
    def subtype_labels(self) -> dict[str, str]:
        """Display names of the subtype values (the choices of the model field)."""
        model = _model(self._model)
        if model is None:
            return {}
        return {str(k): str(v) for k, v in model._meta.get_field(self._subtype).flatchoices}

    def documents(self) -> Iterable[SearchDocument]:
        model = _model(self._model)
        if model is None:
            return
        rows = model._default_manager.all()
        if self._related:  # select_related() without fields would fetch every FK (deprecated)
            rows = rows.select_related(self._related)
        for row in rows.order_by("pk").iterator(chunk_size=200):
            yield self._document(row)


SOURCES = (
    _ModelSource("incident", "Incident", "Incident", incident_document, "", "severity"),
    _ModelSource(
        "postmortem", "Post-mortem", "PostMortem", postmortem_document, "incident", "status"
    ),
    _ModelSource("vendor_ticket", "Vendor ticket", "VendorTicket", ticket_document, "", "status"),
)


# --- keeping the index current ---------------------------------------------------------------


def _reindex_incident(incident_id: Any) -> None:
    incident = _model("Incident")._default_manager.filter(pk=incident_id).first()  # type: ignore[union-attr]
    if incident is None:
        return
    index_document(incident_document(incident))
    if _has_postmortem(incident):  # the post-mortem's title carries the incident's title
        index_document(postmortem_document(incident.postmortem))


def _has_postmortem(incident: Any) -> bool:
    try:
        incident.postmortem  # noqa: B018 - a reverse one-to-one raises when there is none
    except ObjectDoesNotExist:
        return False
    return True


def _reindex_ticket(ticket_id: Any) -> None:
    ticket = _model("VendorTicket")._default_manager.filter(pk=ticket_id).first()  # type: ignore[union-attr]
    if ticket is not None:
        index_document(ticket_document(ticket))


def _incident_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    index_document(incident_document(instance))
    if _has_postmortem(instance):
        index_document(postmortem_document(instance.postmortem))


def _incident_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    remove_document("incident", str(instance.pk))


def _event_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    _reindex_incident(instance.incident_id)


def _postmortem_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    index_document(postmortem_document(instance))


def _postmortem_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    remove_document("postmortem", str(instance.pk))


def _ticket_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    _reindex_ticket(instance.pk)


def _ticket_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    remove_document("vendor_ticket", str(instance.pk))


def _message_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    _reindex_ticket(instance.ticket_id)


def _incident_tags_changed(sender: Any, instance: Any, action: str, **kwargs: Any) -> None:
    if action in {"post_add", "post_remove", "post_clear"}:
        _reindex_incident(instance.pk)


def _ticket_incidents_changed(
    sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, **kwargs: Any
) -> None:
    if action not in {"post_add", "post_remove", "post_clear"}:
        return
    for ticket_id in (pk_set or ()) if reverse else (instance.pk,):
        _reindex_ticket(ticket_id)


# --- "used in incidents" ---------------------------------------------------------------------


def _link_pattern(page: Page) -> re.Pattern[str]:
    # /kb/xid-triage/ or /kb/xid-triage) but not /kb/xid-triage-old/
    return re.compile(rf"/kb/{re.escape(page.slug)}(?![A-Za-z0-9_-])")


def incidents_using_page(page: Page) -> list[Backlink]:
    """Incidents whose summary, impact, timeline or post-mortem links to the page."""
    incident_model = _model("Incident")
    if incident_model is None:
        return []
    needle = f"/kb/{page.slug}"
    condition = (
        Q(summary__contains=needle)
        | Q(impact__contains=needle)
        | Q(events__text__contains=needle)
        | Q(events__link_url__contains=needle)
        | Q(postmortem__body__contains=needle)
    )
    pattern = _link_pattern(page)
    links: list[Backlink] = []
    candidates = (
        incident_model._default_manager.filter(condition)
        .distinct()
        .order_by("-created_at", "-id")
        .prefetch_related("events")
        .select_related("postmortem")[: MAX_BACKLINKS * 2]
    )
    for incident in candidates:
        where = _where_linked(incident, pattern)
        if where:
            links.append(
                Backlink(
                    title=f"{incident.reference}: {incident.title}",
                    url=incident.get_absolute_url(),
                    detail=f"{incident.get_status_display()} · linked from {', '.join(where)}",
                )
            )
    return links[:MAX_BACKLINKS]


def _where_linked(incident: Any, pattern: re.Pattern[str]) -> list[str]:
    where = []
    if pattern.search(incident.summary or "") or pattern.search(incident.impact or ""):
        where.append("summary")
    if any(pattern.search(f"{e.text}\n{e.link_url}") for e in incident.events.all()):
        where.append("timeline")
    if _has_postmortem(incident) and pattern.search(incident.postmortem.body or ""):
        where.append("post-mortem")
    return where


# --- wiring ----------------------------------------------------------------------------------


def connect() -> None:
    """Register sources, backlinks and index signals (once; dispatch_uids make it idempotent)."""
    if _model("Incident") is None:
        return
    for source in SOURCES:
        register_source(source)
    register_backlinks("Used in incidents", incidents_using_page)
    incident, event = _model("Incident"), _model("TimelineEvent")
    postmortem, ticket, message = (
        _model("PostMortem"),
        _model("VendorTicket"),
        _model("Correspondence"),
    )
    for sender, saved, deleted, uid in (
        (incident, _incident_saved, _incident_deleted, "incident"),
        (event, _event_changed, _event_changed, "incident-event"),
        (postmortem, _postmortem_saved, _postmortem_deleted, "postmortem"),
        (ticket, _ticket_saved, _ticket_deleted, "vendor-ticket"),
        (message, _message_changed, _message_changed, "vendor-ticket-message"),
    ):
        if sender is None:
            continue
        post_save.connect(saved, sender=sender, dispatch_uid=f"kb-index-{uid}")
        post_delete.connect(deleted, sender=sender, dispatch_uid=f"kb-unindex-{uid}")
    if incident is not None:
        m2m_changed.connect(
            _incident_tags_changed, sender=incident.tags.through, dispatch_uid="kb-index-tags"
        )
    if ticket is not None:
        m2m_changed.connect(
            _ticket_incidents_changed,
            sender=ticket.incidents.through,
            dispatch_uid="kb-index-ticket-incidents",
        )
