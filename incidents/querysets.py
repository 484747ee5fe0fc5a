"""Named reads for incident pages, the API, exports and metrics (filters live here)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import pandas as pd
from django.db.models import Count, Prefetch, Q, QuerySet

from incidents.metrics import DURATIONS as DURATION_NAMES
from incidents.models import (
    MILESTONES,
    ActionItem,
    Correspondence,
    EvidenceBundle,
    Incident,
    IncidentArtifact,
    MilestoneRecord,
    TimelineEvent,
    VendorTicket,
)
from perfhub.params import date_param as _date
from perfhub.params import int_param as _int


def incidents_filtered(params: Any) -> QuerySet[Incident]:
    """The incident list: status, severity, tag, owner (username), cluster, hardware
    generation, vendor of a linked ticket, detection date range, free text."""
    qs = Incident.objects.select_related("owner").prefetch_related("tags")
    joined = False  # filters across many-to-many rows need distinct()
    if status := params.get("status"):
        qs = qs.filter(status=status)
    elif params.get("open") in ("1", "true", "yes", "on"):
        qs = qs.exclude(status=Incident.Status.CLOSED)
    if severity := params.get("severity"):
        qs = qs.filter(severity=severity)
    if tag := params.get("tag"):
        qs = qs.filter(tags__name=tag)
    if owner := params.get("owner"):
        qs = qs.filter(owner__username=owner)
    if cluster := params.get("cluster"):
        qs = qs.filter(cluster__icontains=cluster)
    if generation := params.get("hardware_generation"):
        qs = qs.filter(hardware_generation__iexact=generation)
    if since := _date(params.get("since")):
        qs = qs.filter(detected_at__date__gte=since)
    if until := _date(params.get("until")):
        qs = qs.filter(detected_at__date__lte=until)
    if vendor := params.get("vendor"):
        qs = qs.filter(vendor_tickets__vendor=vendor)
        joined = True
    if q := (params.get("q") or "").strip():
        # Hosts and jobs are JSON lists: a text match on them finds "which incidents hit
        # gpu-node-07" without a join table.
        qs = qs.filter(
            Q(title__icontains=q) | Q(summary__icontains=q) | Q(impact__icontains=q)
            | Q(cluster__icontains=q) | Q(affected_hosts__icontains=q)
            | Q(affected_jobs__icontains=q) | Q(tags__name__icontains=q)
            | Q(vendor_tickets__case_number__icontains=q)
        )  # fmt: skip
        joined = True
    if tag or joined:
        qs = qs.distinct()
    return qs


def incident_for_detail(pk: int) -> Incident:
    evidence = Prefetch(
        "evidence",
        queryset=IncidentArtifact.objects.select_related("artifact", "added_by").order_by(
            "artifact__captured_at", "artifact__uploaded_at", "artifact_id"
        ),
    )
    return (
        Incident.objects.select_related("owner", "created_by")
        .prefetch_related("tags", "participants", evidence)
        .get(pk=pk)
    )


def milestone_provenance(incident: Incident) -> dict[str, MilestoneRecord]:
    """The newest record of each milestone: who set it and how."""
    latest: dict[str, MilestoneRecord] = {}
    for record in incident.milestones.select_related("set_by", "artifact"):
        latest.setdefault(record.milestone, record)  # ordered newest first
    return latest


@dataclass(frozen=True)
class TimelineItem:
    """One row of the chronological view: a timeline event or a vendor message."""

    at: datetime
    kind: str
    text: str
    author: str
    key: bool
    event: TimelineEvent | None = None
    message: Correspondence | None = None

    @property
    def source(self) -> str:
        return "event" if self.event else "vendor ticket"


def incident_timeline(
    incident: Incident, *, kinds: list[str] | None = None, key_only: bool = False
) -> list[TimelineItem]:
    """Timeline events plus the correspondence of linked vendor tickets, in time order."""
    events = incident.events.select_related("author", "artifact", "run")
    if kinds:
        events = events.filter(kind__in=kinds)
    if key_only:
        events = events.filter(key=True)
    items = [TimelineItem(e.at, e.kind, e.text, _name(e.author), e.key, event=e) for e in events]
    if not kinds or TimelineEvent.Kind.VENDOR in kinds:
        messages = Correspondence.objects.filter(ticket__incidents=incident).select_related(
            "ticket", "author", "bundle"
        )
        if key_only:
            messages = messages.exclude(direction=Correspondence.Direction.NOTE)
        items += [
            TimelineItem(
                m.at,
                TimelineEvent.Kind.VENDOR,
                f"**{m.get_direction_display()}** ({m.ticket}): {m.text}",
                _name(m.author),
                m.direction != Correspondence.Direction.NOTE,
                message=m,
            )
            for m in messages.distinct()
        ]
    return sorted(items, key=lambda item: (item.at, item.event is None, _item_id(item)))


def action_items_filtered(params: Any) -> QuerySet[ActionItem]:
    qs = ActionItem.objects.select_related("incident", "owner", "ticket")
    status = params.get("status", "open")
    if status and status != "any":
        qs = qs.filter(status=status)
    if item_type := params.get("type"):
        qs = qs.filter(type=item_type)
    if owner := params.get("owner"):
        qs = qs.filter(owner__username=owner)
    if incident := _int(params.get("incident")):
        qs = qs.filter(incident_id=incident)
    if params.get("overdue") in ("1", "true", "yes"):
        qs = qs.filter(due_date__lt=date.today(), status=ActionItem.Status.OPEN)
    return qs.order_by("due_date", "created_at", "id")


def tickets_filtered(params: Any) -> QuerySet[VendorTicket]:
    qs = VendorTicket.objects.select_related("created_by").annotate(
        incident_count=Count("incidents", distinct=True),
        message_count=Count("messages", distinct=True),
    )
    if vendor := params.get("vendor"):
        qs = qs.filter(vendor=vendor)
    if status := params.get("status"):
        qs = qs.filter(status=status)
    elif params.get("open") in ("1", "true", "yes"):
        qs = qs.exclude(status__in=[VendorTicket.Status.FIXED, VendorTicket.Status.WONT_FIX])
    if severity := params.get("severity"):
        qs = qs.filter(severity=severity)
    if incident := _int(params.get("incident")):
        qs = qs.filter(incidents=incident)
    if q := (params.get("q") or "").strip():
        qs = qs.filter(Q(title__icontains=q) | Q(case_number__icontains=q))
    return qs.order_by("-created_at", "-id")


def bundles_of(*, incident: Incident | None = None, ticket: VendorTicket | None = None) -> Any:
    qs = EvidenceBundle.objects.select_related("created_by", "ticket", "incident")
    if incident is not None:
        qs = qs.filter(incident=incident)
    if ticket is not None:
        qs = qs.filter(ticket=ticket)
    return qs.annotate(artifact_count=Count("artifacts"))


def _name(user: Any) -> str:
    return user.get_username() if user else ""


def _item_id(item: TimelineItem) -> int:
    return item.event.pk if item.event else item.message.pk if item.message else 0


def metrics_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(incidents, open action items) as DataFrames for incidents.metrics.

    The incident frame has one row per (incident, vendor) so metrics can be split by vendor;
    incidents without a vendor ticket have vendor "".
    """
    rows = list(
        Incident.objects.values(
            "id",
            "severity",
            "hardware_generation",
            "cluster",
            "created_at",
            *[f"{m}_at" for m in MILESTONES],
        )
    )
    vendors: dict[int, list[str]] = {}
    for incident_id, vendor in VendorTicket.incidents.through.objects.values_list(
        "incident_id", "vendorticket__vendor"
    ):
        vendors.setdefault(incident_id, []).append(vendor)
    labels = dict(VendorTicket.Vendor.choices)
    records = []
    for row in rows:
        stamps = {k: v for k, v in row.items() if k.endswith("_at") and k != "created_at"}
        durations = Incident(**stamps).durations
        # The month an incident counts in: when it was detected (else opened), in UTC.
        when = row["detected_at"] or row["created_at"]
        base = {
            "id": row["id"],
            "severity": row["severity"],
            "hardware_generation": (row["hardware_generation"] or "").upper(),
            "cluster": row["cluster"] or "",
            "month": when.astimezone(UTC).strftime("%Y-%m") if when else "",
            **{k: v.total_seconds() if v is not None else None for k, v in durations.items()},
        }
        for vendor in sorted(set(vendors.get(row["id"], [""]))):
            records.append({**base, "vendor": labels.get(vendor, vendor)})
    incidents = pd.DataFrame(
        records,
        columns=[
            "id",
            "severity",
            "hardware_generation",
            "cluster",
            "month",
            "vendor",
            *DURATION_NAMES,
        ],
    )
    today = date.today()
    items = pd.DataFrame(
        [
            {
                "age_days": (today - created.date()).days,
                "type": item_type,
                "overdue": bool(due and due < today),
            }
            for created, item_type, due in ActionItem.objects.filter(
                status=ActionItem.Status.OPEN
            ).values_list("created_at", "type", "due_date")
        ],
        columns=["age_days", "type", "overdue"],
    )
    return incidents, items
