"""Writes on incidents, their lifecycle, evidence, timeline, action items and vendor tickets.

Post-mortem writes are in postmortems.py, bundle building in bundles.py. Every function is
keyword-only, atomic, and raises ``IncidentError`` (a clear message) on bad input.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from artifacts.models import Artifact, BenchmarkRun
from incidents.facts import ENVIRONMENT_FIELDS as FACT_ENVIRONMENT_FIELDS
from incidents.facts import FIELDS as FACT_FIELDS
from incidents.facts import LIST_FIELDS as FACT_LIST_FIELDS
from incidents.grouping import SuggestionGroup, find_open
from incidents.models import (
    ALL_MILESTONES,
    MILESTONE_LABELS,
    MILESTONES,
    VENDOR_ENGAGED,
    ActionItem,
    Correspondence,
    EvidenceBundle,
    FactRecord,
    Incident,
    IncidentArtifact,
    MilestoneRecord,
    Severity,
    SuggestionDecision,
    Tag,
    TimelineEvent,
    VendorTicket,
)
from incidents.suggestions import Suggestion


class IncidentError(Exception):
    """Refused write with a message meant for the user (API 400, page message)."""


# Plain fields an incident update may change (the rest have their own services).
INCIDENT_FIELDS = (
    "title", "summary", "severity", "impact", "cluster", "affected_hosts", "affected_jobs",
    "hardware_profile", "hardware_generation", "owner",
)  # fmt: skip

# Entering a status stamps the milestone it implies, if that milestone is still unset.
STATUS_MILESTONES: dict[str, tuple[str, ...]] = {
    Incident.Status.INVESTIGATING: (),
    Incident.Status.IDENTIFIED: ("acknowledged",),
    Incident.Status.MITIGATED: ("acknowledged", "mitigated"),
    Incident.Status.RESOLVED: ("acknowledged", "mitigated", "resolved"),
    Incident.Status.POSTMORTEM: ("acknowledged", "mitigated", "resolved"),
    Incident.Status.CLOSED: ("acknowledged", "mitigated", "resolved", "closed"),
}


# --- incidents and their lifecycle ----------------------------------------------------------


@transaction.atomic
def incident_create(
    *,
    title: str,
    severity: str,
    by: Any,
    tags: Iterable[str] = (),
    participants: Iterable[Any] = (),
    milestones: Mapping[str, datetime | None] | None = None,
    override: bool = False,
    **fields: Any,
) -> Incident:
    """A new incident, status investigating, detected now unless ``milestones`` says when."""
    title = (title or "").strip()
    if not title:
        raise IncidentError("an incident needs a title")
    _check_fields(fields)
    _check_severity(severity)
    incident = Incident(title=title, severity=severity, created_by=_user(by), **fields)
    stamps = {"detected": timezone.now(), **{k: v for k, v in (milestones or {}).items() if v}}
    _check_milestone_names(stamps)
    for name, at in stamps.items():
        setattr(incident, f"{name}_at", at)
    _check_order(incident, override=override)
    incident.save()
    _set_tags(incident, tags)
    incident.participants.set(list(participants))
    for name, at in stamps.items():
        source = MilestoneRecord.Source.MANUAL
        if name == "detected" and not (milestones or {}).get("detected"):
            source = MilestoneRecord.Source.STATUS
        _record(incident, name, at, by=by, source=source, override=override)
    return incident


@transaction.atomic
def incident_update(
    *,
    incident: Incident,
    by: Any,
    tags: Iterable[str] | None = None,
    participants: Iterable[Any] | None = None,
    **fields: Any,
) -> Incident:
    _check_fields(fields)
    if "severity" in fields:
        _check_severity(fields["severity"])
    if "title" in fields and not str(fields["title"]).strip():
        raise IncidentError("an incident needs a title")
    for name, value in fields.items():
        setattr(incident, name, value)
    incident.save()
    if tags is not None:
        _set_tags(incident, tags)
    if participants is not None:
        incident.participants.set(list(participants))
    return incident


@transaction.atomic
def incident_set_status(
    *, incident: Incident, status: str, by: Any, at: datetime | None = None
) -> Incident:
    """Move to ``status`` and stamp the milestones it implies that are still unset.

    Going back (a fix did not hold) is allowed; stamped milestones stay as they were.
    """
    if status not in Incident.Status.values:
        raise IncidentError(
            f"unknown status {status!r}; one of: {', '.join(Incident.Status.values)}"
        )
    when = at or timezone.now()
    stamped = [m for m in STATUS_MILESTONES[status] if incident.milestone(m) is None]
    # Not order-checked: a status change stamps "now", the best time known, and refusing it
    # because someone back-dated a later milestone would only block the status change.
    for name in stamped:
        setattr(incident, f"{name}_at", when)
    incident.status = status
    incident.save()
    for name in stamped:
        _record(incident, name, when, by=by, source=MilestoneRecord.Source.STATUS)
    return incident


@transaction.atomic
def incident_set_milestone(
    *,
    incident: Incident,
    milestone: str,
    at: datetime | None,
    by: Any,
    artifact: Artifact | None = None,
    override: bool = False,
    note: str = "",
) -> Incident:
    """Set (or clear, with ``at=None``) one lifecycle timestamp.

    With an artifact and no ``at``, the time is the artifact's evidence time (see
    ``artifact_evidence_time``). Out-of-order times are refused unless ``override``.
    """
    _check_milestone_names({milestone: at})
    if artifact is not None and at is None:
        at = artifact_evidence_time(artifact)
    values = {m: incident.milestone(m) for m in ALL_MILESTONES} | {milestone: at}
    _check_order_of(values, override=override)  # before touching the instance
    setattr(incident, f"{milestone}_at", at)
    incident.save()
    source = MilestoneRecord.Source.ARTIFACT if artifact else MilestoneRecord.Source.MANUAL
    _record(
        incident, milestone, at, by=by, source=source, artifact=artifact, override=override,
        note=note,
    )  # fmt: skip
    return incident


def milestone_problems(values: Mapping[str, datetime | None]) -> list[str]:
    """Why these lifecycle times are out of order (empty list: they are fine)."""
    problems = []
    known = [(m, values.get(m)) for m in MILESTONES if values.get(m)]
    for (earlier, a), (later, b) in itertools.pairwise(known):
        if a and b and b < a:
            problems.append(
                f"{MILESTONE_LABELS[later]} ({b:%Y-%m-%d %H:%M:%S}) is before "
                f"{MILESTONE_LABELS[earlier]} ({a:%Y-%m-%d %H:%M:%S})"
            )
    vendor, start = values.get(VENDOR_ENGAGED), values.get("impact_started")
    if vendor and start and vendor < start:
        problems.append("Vendor engaged is before Impact started")
    return problems


def artifact_evidence_time(artifact: Artifact) -> datetime:
    """When the evidence was produced: capture time, else its first run, else the upload."""
    if artifact.captured_at:
        return artifact.captured_at
    first = artifact.runs.order_by("measured_at").values_list("measured_at", flat=True).first()
    return first or artifact.uploaded_at


def _check_order(incident: Incident, *, override: bool) -> None:
    _check_order_of({m: incident.milestone(m) for m in ALL_MILESTONES}, override=override)


def _check_order_of(values: Mapping[str, datetime | None], *, override: bool) -> None:
    problems = milestone_problems(values)
    if problems and not override:
        raise IncidentError(
            "lifecycle times out of order: " + "; ".join(problems) + " (override to keep them)"
        )


def _check_milestone_names(values: Mapping[str, Any]) -> None:
    unknown = sorted(set(values) - set(ALL_MILESTONES))
    if unknown:
        raise IncidentError(
            f"unknown milestone {', '.join(unknown)}; one of: {', '.join(ALL_MILESTONES)}"
        )


def _check_fields(fields: Mapping[str, Any]) -> None:
    unknown = sorted(set(fields) - set(INCIDENT_FIELDS))
    if unknown:
        raise IncidentError(f"unknown incident field(s): {', '.join(unknown)}")
    for name in ("affected_hosts", "affected_jobs"):
        value = fields.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise IncidentError(f"{name} must be a list of strings")


def _check_severity(severity: str) -> None:
    if severity not in Severity.values:
        raise IncidentError(f"severity must be one of {', '.join(Severity.values)}")


def _set_tags(incident: Incident, names: Iterable[str]) -> None:
    clean = sorted({n.strip().lower()[:60] for n in names if n and n.strip()})
    tags = [Tag.objects.get_or_create(name=n)[0] for n in clean]
    incident.tags.set(tags)


def _record(
    incident: Incident,
    milestone: str,
    at: datetime | None,
    *,
    by: Any,
    source: str,
    artifact: Artifact | None = None,
    override: bool = False,
    note: str = "",
) -> None:
    MilestoneRecord.objects.create(
        incident=incident, milestone=milestone, at=at, source=source, artifact=artifact,
        override=override, note=note[:300], set_by=_user(by),
    )  # fmt: skip


def _user(by: Any) -> Any:
    return by if getattr(by, "pk", None) else None


# --- evidence ------------------------------------------------------------------------------


@transaction.atomic
def incident_attach_artifacts(
    *, incident: Incident, artifact_ids: Sequence[int], by: Any, note: str = ""
) -> list[IncidentArtifact]:
    """Attach artifacts as evidence. Already attached ones are skipped; unknown ids refused."""
    wanted = list(dict.fromkeys(int(i) for i in artifact_ids))
    if not wanted:
        raise IncidentError("give at least one artifact id")
    found = set(Artifact.objects.filter(pk__in=wanted).values_list("pk", flat=True))
    missing = [i for i in wanted if i not in found]
    if missing:
        raise IncidentError(f"no artifact with id {', '.join(map(str, missing))}")
    present = set(incident.evidence.values_list("artifact_id", flat=True))
    rows = [
        IncidentArtifact(incident=incident, artifact_id=i, added_by=_user(by), note=note[:300])
        for i in wanted
        if i not in present
    ]
    IncidentArtifact.objects.bulk_create(rows)
    return rows


@transaction.atomic
def incident_detach_artifact(*, incident: Incident, artifact_id: int) -> None:
    incident.evidence.filter(artifact_id=artifact_id).delete()


# --- facts proposed from the evidence -----------------------------------------------------


@transaction.atomic
def incident_accept_fact(
    *,
    incident: Incident,
    field: str,
    value: Any,
    by: Any,
    source: str = "",
    artifact_id: int | None = None,
    edited: bool = False,
) -> FactRecord:
    """Write one fact proposed by incidents/facts.py (as proposed, or as the editor changed
    it) and record where it came from. Lists are merged with what the incident already has;
    the impact window sets "impact started" to its first symptom when that is earlier or
    unset."""
    if field not in FACT_FIELDS:
        raise IncidentError(f"unknown fact {field!r}; one of: {', '.join(FACT_FIELDS)}")
    if field in FACT_LIST_FIELDS:
        items = value if isinstance(value, list) else str(value or "").split(",")
        value = [str(v).strip() for v in items if str(v).strip()]
        value = list(dict.fromkeys([*(_fact_value(incident, field) or []), *value]))
    elif field == "impact_window":
        value = _impact_window(value)
    else:
        value = str(value or "").strip()
    if not value:
        raise IncidentError(f"{field}: give a value")
    artifact = Artifact.objects.filter(pk=artifact_id).first() if artifact_id else None
    if field in FACT_ENVIRONMENT_FIELDS:
        incident.environment = {**(incident.environment or {}), field: value}
        incident.save(update_fields=["environment", "updated_at"])
    else:
        incident_update(incident=incident, by=by, **{field: value})
    if field == "impact_window":
        first = datetime.fromisoformat(value["first"])
        if incident.impact_started_at is None or first < incident.impact_started_at:
            incident_set_milestone(
                incident=incident, milestone="impact_started", at=first, by=by,
                artifact=artifact, override=True, note=f"first symptom: {source}"[:300],
            )  # fmt: skip
    return FactRecord.objects.create(
        incident=incident, field=field, value=str(value)[:5000], source=source[:300],
        artifact=artifact, edited=edited, set_by=_user(by),
    )  # fmt: skip


def _fact_value(incident: Incident, field: str) -> Any:
    if field in FACT_ENVIRONMENT_FIELDS:
        return (incident.environment or {}).get(field)
    return getattr(incident, field)


def _impact_window(value: Any) -> dict[str, str]:
    """{"first", "last"} ISO times, from the proposal's dict or an edited "a to b" text."""
    if isinstance(value, dict):
        parts = [str(value.get("first") or ""), str(value.get("last") or "")]
    else:
        parts = [p.strip() for p in re.split(r"\s+to\s+", str(value or ""), maxsplit=1)]
    try:
        first, last = (datetime.fromisoformat(p) for p in [*parts, parts[0]][:2])
    except ValueError:
        raise IncidentError("impact window: two ISO times, 'first to last'") from None
    if timezone.is_naive(first) or timezone.is_naive(last):
        raise IncidentError("impact window: times need a zone (…Z or +00:00)")
    if last < first:
        raise IncidentError("impact window: the last symptom is before the first")
    return {"first": first.isoformat(), "last": last.isoformat()}


# --- timeline -----------------------------------------------------------------------------


@transaction.atomic
def timeline_event_create(
    *,
    incident: Incident,
    at: datetime,
    text: str,
    by: Any,
    kind: str = TimelineEvent.Kind.OBSERVATION,
    key: bool = False,
    artifact: Artifact | None = None,
    run: BenchmarkRun | None = None,
    ref_kind: str = "",
    ref_id: str = "",
    link_url: str = "",
    suggestion_key: str = "",
) -> TimelineEvent:
    if kind not in TimelineEvent.Kind.values:
        raise IncidentError(f"kind must be one of {', '.join(TimelineEvent.Kind.values)}")
    if not (text or "").strip():
        raise IncidentError("a timeline event needs a text")
    if at is None or timezone.is_naive(at):
        raise IncidentError("a timeline event needs a timezone-aware time")
    _check_link(link_url)
    return TimelineEvent.objects.create(
        incident=incident, at=at, kind=kind, text=text.strip(), key=key, author=_user(by),
        artifact=artifact, run=run, ref_kind=ref_kind, ref_id=str(ref_id), link_url=link_url,
        suggestion_key=suggestion_key,
    )  # fmt: skip


def _check_link(url: str) -> None:
    """The link is drawn as an href: only a page of this site or an http(s) URL, never
    ``javascript:`` or ``data:`` (the Markdown sanitizer does not see this field)."""
    if not url:
        return
    if any(c.isspace() or c == "\\" for c in url):  # "/\\host" is protocol-relative in browsers
        raise IncidentError("link_url must not contain spaces or backslashes")
    if url.startswith("/") and not url.startswith("//"):
        return
    if re.match(r"https?://[^/]", url, re.IGNORECASE):
        return
    raise IncidentError("link_url must be a path on this site (/...) or an http(s) URL")


@transaction.atomic
def timeline_event_update(*, event: TimelineEvent, **fields: Any) -> TimelineEvent:
    allowed = {"at", "kind", "text", "key"}
    if unknown := set(fields) - allowed:
        raise IncidentError(f"cannot change {', '.join(sorted(unknown))} of a timeline event")
    if "kind" in fields and fields["kind"] not in TimelineEvent.Kind.values:
        raise IncidentError(f"kind must be one of {', '.join(TimelineEvent.Kind.values)}")
    for name, value in fields.items():
        setattr(event, name, value)
    event.save()
    return event


def suggestion_accept(
    *,
    incident: Incident,
    key: str,
    by: Any,
    kind: str | None = None,
    text: str | None = None,
    key_event: bool = False,
) -> TimelineEvent:
    """Turn a suggestion into a timeline event linked to its source artifact/run and, for
    findings and baseline alerts, to the finding/alert (``ref_kind``/``ref_id``/``link_url``).
    The event keeps the source's own time, microseconds included.

    A group (``group:...``, see grouping.py) becomes one event at its first report, linked to
    every member in ``sources``; each member counts as accepted, so none is suggested again.
    """
    suggestion = _open_suggestion(incident, key)
    members = list(suggestion.members) if isinstance(suggestion, SuggestionGroup) else []
    try:
        with transaction.atomic():
            event = timeline_event_create(
                incident=incident, at=suggestion.at, text=text or suggestion.text, by=by,
                kind=kind or suggestion.kind, key=key_event,
                artifact=Artifact.objects.filter(pk=suggestion.artifact_id).first(),
                run=BenchmarkRun.objects.filter(pk=suggestion.run_id).first()
                if suggestion.run_id else None,
                ref_kind=suggestion.ref_kind or suggestion.source, ref_id=suggestion.ref_id,
                link_url=suggestion.link_url, suggestion_key=suggestion.key,
            )  # fmt: skip
            if members:
                event.sources = suggestion.sources()  # type: ignore[union-attr]
                event.save(update_fields=["sources"])
            SuggestionDecision.objects.bulk_create(
                _decision(incident, k, SuggestionDecision.Decision.ACCEPTED, by, event)
                for k in [key, *(m.key for m in members)]
            )
    except IntegrityError:
        raise IncidentError(f"suggestion {key} was already decided") from None
    return event


def suggestion_reject(*, incident: Incident, key: str, by: Any) -> SuggestionDecision:
    """Reject a suggestion; rejecting a group rejects each of its members too."""
    suggestion = _open_suggestion(incident, key)
    members = [m.key for m in suggestion.members]
    try:
        with transaction.atomic():
            decisions = SuggestionDecision.objects.bulk_create(
                _decision(incident, k, SuggestionDecision.Decision.REJECTED, by)
                for k in [key, *members]
            )
    except IntegrityError:
        raise IncidentError(f"suggestion {key} was already decided") from None
    return decisions[0]


def _decision(
    incident: Incident, key: str, decision: str, by: Any, event: TimelineEvent | None = None
) -> SuggestionDecision:
    return SuggestionDecision(
        incident=incident, key=key, decision=decision, event=event, decided_by=_user(by)
    )


def _open_suggestion(incident: Incident, key: str) -> Suggestion | SuggestionGroup:
    if incident.decisions.filter(key=key).exists():
        raise IncidentError(f"suggestion {key} was already decided")
    suggestion = find_open(incident, key)
    if suggestion is None:
        raise IncidentError(f"no suggestion {key!r} for this incident's evidence")
    return suggestion


# --- action items -------------------------------------------------------------------------

ACTION_ITEM_FIELDS = {
    "title", "type", "owner", "due_date", "status", "ticket", "tracker_url",
    "requires_verification", "verification_artifact", "verification_report",
}  # fmt: skip


@transaction.atomic
def action_item_create(*, incident: Incident, title: str, by: Any, **fields: Any) -> ActionItem:
    if not (title or "").strip():
        raise IncidentError("an action item needs a title")
    item = ActionItem(incident=incident, title=title.strip(), created_by=_user(by))
    return _action_item_apply(item, fields)


@transaction.atomic
def action_item_update(*, item: ActionItem, **fields: Any) -> ActionItem:
    return _action_item_apply(item, fields)


def _action_item_apply(item: ActionItem, fields: Mapping[str, Any]) -> ActionItem:
    if unknown := set(fields) - ACTION_ITEM_FIELDS:
        raise IncidentError(f"unknown action item field(s): {', '.join(sorted(unknown))}")
    was_open = item.pk is None or item.status == ActionItem.Status.OPEN
    for name, value in fields.items():
        setattr(item, name, value)
    if item.type not in ActionItem.Type.values:
        raise IncidentError(f"type must be one of {', '.join(ActionItem.Type.values)}")
    if item.status not in ActionItem.Status.values:
        raise IncidentError(f"status must be one of {', '.join(ActionItem.Status.values)}")
    needs_proof = item.requires_verification and item.type in (
        ActionItem.Type.MITIGATE,
        ActionItem.Type.PREVENT,
    )
    if item.status == ActionItem.Status.DONE and needs_proof and not item.is_verified:
        raise IncidentError(
            "this item needs a verification artifact or report before it can be done "
            "(e.g. an nccl-tests run back at baseline)"
        )
    if item.status != ActionItem.Status.OPEN and was_open:
        item.closed_at = timezone.now()
    elif item.status == ActionItem.Status.OPEN:
        item.closed_at = None
    item.save()
    return item


# --- vendor tickets -----------------------------------------------------------------------

TICKET_FIELDS = {
    "vendor", "vendor_name", "case_number", "url", "title", "severity", "status", "opened_at",
    "vendor_updated_at", "fixed_in_version", "contacts",
}  # fmt: skip


@transaction.atomic
def ticket_create(
    *,
    title: str,
    vendor: str,
    by: Any,
    incident_ids: Sequence[int] = (),
    artifact_ids: Sequence[int] = (),
    **fields: Any,
) -> VendorTicket:
    if not (title or "").strip():
        raise IncidentError("a vendor ticket needs a title")
    ticket = VendorTicket(title=title.strip(), vendor=vendor, created_by=_user(by))
    ticket = _ticket_apply(ticket, fields)
    _ticket_links(ticket, incident_ids, artifact_ids, by=by)
    return ticket


@transaction.atomic
def ticket_update(
    *,
    ticket: VendorTicket,
    by: Any,
    incident_ids: Sequence[int] | None = None,
    artifact_ids: Sequence[int] | None = None,
    **fields: Any,
) -> VendorTicket:
    ticket = _ticket_apply(ticket, fields)
    _ticket_links(ticket, incident_ids, artifact_ids, by=by)
    return ticket


def _ticket_apply(ticket: VendorTicket, fields: Mapping[str, Any]) -> VendorTicket:
    if unknown := set(fields) - TICKET_FIELDS:
        raise IncidentError(f"unknown vendor ticket field(s): {', '.join(sorted(unknown))}")
    for name, value in fields.items():
        setattr(ticket, name, value)
    if ticket.vendor not in VendorTicket.Vendor.values:
        raise IncidentError(f"vendor must be one of {', '.join(VendorTicket.Vendor.values)}")
    if ticket.status not in VendorTicket.Status.values:
        raise IncidentError(f"status must be one of {', '.join(VendorTicket.Status.values)}")
    ticket.save()
    return ticket


def _ticket_links(
    ticket: VendorTicket,
    incident_ids: Sequence[int] | None,
    artifact_ids: Sequence[int] | None,
    *,
    by: Any,
) -> None:
    if incident_ids is not None:
        incidents = list(Incident.objects.filter(pk__in=incident_ids))
        if missing := set(map(int, incident_ids)) - {i.pk for i in incidents}:
            raise IncidentError(f"no incident with id {', '.join(map(str, sorted(missing)))}")
        new = [i for i in incidents if not ticket.incidents.filter(pk=i.pk).exists()]
        ticket.incidents.set(incidents)
        for incident in new:  # opening a case with a vendor is a lifecycle moment
            if incident.vendor_engaged_at is None:
                incident_set_milestone(
                    incident=incident, milestone=VENDOR_ENGAGED,
                    at=ticket.opened_at or timezone.now(), by=by, override=True,
                    note=f"vendor ticket {ticket.pk}",
                )  # fmt: skip
    if artifact_ids is not None:
        artifacts = list(Artifact.objects.filter(pk__in=artifact_ids))
        if missing := set(map(int, artifact_ids)) - {a.pk for a in artifacts}:
            raise IncidentError(f"no artifact with id {', '.join(map(str, sorted(missing)))}")
        ticket.artifacts.set(artifacts)


@transaction.atomic
def correspondence_add(
    *,
    ticket: VendorTicket,
    direction: str,
    text: str,
    by: Any,
    at: datetime | None = None,
    bundle: EvidenceBundle | None = None,
) -> Correspondence:
    """Log a message; it also shows on the timeline of every incident linked to the ticket."""
    if direction not in Correspondence.Direction.values:
        raise IncidentError(
            f"direction must be one of {', '.join(Correspondence.Direction.values)}"
        )
    if not (text or "").strip() and bundle is None:
        raise IncidentError("say what was sent or received")
    if bundle is not None and bundle.status != EvidenceBundle.Status.READY:
        raise IncidentError(f"bundle {bundle.pk} is not built yet ({bundle.status})")
    when = at or timezone.now()
    if bundle is not None:
        text = (text or "").strip() or f"Evidence bundle #{bundle.pk}"
        text += f"\n\nBundle #{bundle.pk}: `{bundle.filename}`, sha256 `{bundle.sha256}`"
        if bundle.ticket_id is None:
            bundle.ticket = ticket
            bundle.save(update_fields=["ticket"])
    message = Correspondence.objects.create(
        ticket=ticket, direction=direction, at=when, text=text.strip(), bundle=bundle,
        author=_user(by),
    )  # fmt: skip
    if direction == Correspondence.Direction.RECEIVED:
        ticket.vendor_updated_at = max(filter(None, [ticket.vendor_updated_at, when]))
        ticket.save(update_fields=["vendor_updated_at", "updated_at"])
    return message
