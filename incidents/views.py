"""Incident pages: list, create/edit, detail (lifecycle, timeline, evidence, suggestions,
action items, tickets, bundles), metrics, and the cross-incident action-item list.

Adapters: parse a form, call a service or a queryset, render. Post-mortem pages are in
postmortem_views.py, vendor tickets in ticket_views.py, bundles in bundle_views.py.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

import pandas as pd
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page, Paginator
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from artifacts import exports
from artifacts.models import Artifact
from incidents import metrics
from incidents.bundles.docs import human_duration, iso
from incidents.facts import environment_rows
from incidents.facts import propose as propose_facts
from incidents.figures import duration_bars, timeline_figure
from incidents.forms import (
    ActionItemCloseForm,
    ActionItemForm,
    AttachForm,
    BundleForm,
    IncidentFilterForm,
    IncidentForm,
    MilestoneForm,
    StatusForm,
    TimelineEventForm,
)
from incidents.grouping import grouped_for
from incidents.models import (
    ALL_MILESTONES,
    MILESTONE_LABELS,
    ActionItem,
    Incident,
    TimelineEvent,
)
from incidents.postmortems import postmortem_state
from incidents.querysets import (
    action_items_filtered,
    bundles_of,
    incident_for_detail,
    incident_timeline,
    incidents_filtered,
    metrics_frames,
    milestone_provenance,
)
from incidents.services import (
    IncidentError,
    action_item_create,
    action_item_update,
    incident_accept_fact,
    incident_attach_artifacts,
    incident_create,
    incident_detach_artifact,
    incident_set_milestone,
    incident_set_status,
    incident_update,
    suggestion_accept,
    suggestion_reject,
    timeline_event_create,
    timeline_event_update,
)
from perfhub.roles import can_edit

INCIDENT_CSV_COLUMNS = (
    "id", "reference", "title", "severity", "status", "owner", "tags", "cluster",
    "hardware_generation", *[f"{m}_at" for m in ALL_MILESTONES],
    "time_to_detect_s", "time_to_acknowledge_s", "time_to_mitigate_s", "time_to_resolve_s",
)  # fmt: skip


def editor_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Writes need the editor role; viewers get 403 with the reason."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not can_edit(request.user):
            raise PermissionDenied("Writing needs the editor role; ask an admin.")
        return view(request, *args, **kwargs)

    return wrapped


def page_of(request: HttpRequest, queryset: QuerySet | list) -> Page:
    return Paginator(queryset, settings.PERFHUB_PAGE_SIZE).get_page(request.GET.get("page"))


# --- list, create, edit -------------------------------------------------------------------


def incident_list(request: HttpRequest) -> HttpResponse:
    form = IncidentFilterForm(request.GET)
    incidents = incidents_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "incidents.csv", INCIDENT_CSV_COLUMNS, (_csv_row(i) for i in incidents)
        )
    return render(
        request, "incidents/incident_list.html", {"form": form, "page": page_of(request, incidents)}
    )


def _csv_row(incident: Incident) -> list[Any]:
    durations = incident.durations
    return [
        incident.pk, incident.reference, incident.title, incident.severity, incident.status,
        incident.owner.get_username() if incident.owner else "",
        " ".join(t.name for t in incident.tags.all()), incident.cluster,
        incident.hardware_generation, *[iso(incident.milestone(m)) for m in ALL_MILESTONES],
        *[d.total_seconds() if d is not None else "" for d in durations.values()],
    ]  # fmt: skip


@editor_required
def incident_create_view(request: HttpRequest) -> HttpResponse:
    """New incident; ``?artifact=ID`` (the artifact page's "open an incident from it")
    attaches that evidence on creation, so its suggestions and facts are there at once."""
    source = _source_artifact(request.POST.get("attach_artifact") or request.GET.get("artifact"))
    initial = {"title": f"Investigate {source.original_name}"} if source else {}
    form = IncidentForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        milestones = {
            "impact_started": data.pop("impact_started_at"),
            "detected": data.pop("detected_at"),
        }
        try:
            with transaction.atomic():
                incident = incident_create(
                    by=request.user, tags=data.pop("tags"),
                    participants=data.pop("participants"), milestones=milestones,
                    override=data.pop("override"), **data,
                )  # fmt: skip
                if source is not None:
                    incident_attach_artifacts(
                        incident=incident, artifact_ids=[source.pk], by=request.user,
                        note="opened from this artifact",
                    )  # fmt: skip
        except IncidentError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"{incident.reference} opened.")
            return redirect(incident)
    return render(
        request,
        "incidents/incident_form.html",
        {"form": form, "incident": None, "source_artifact": source},
    )


def _source_artifact(raw: str | None) -> Artifact | None:
    return Artifact.objects.filter(pk=int(raw)).first() if raw and raw.isdigit() else None


@editor_required
def incident_edit(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    initial = {
        **{f: getattr(incident, f) for f in ("title", "severity", "summary", "impact", "cluster")},
        "affected_hosts": incident.affected_hosts,
        "affected_jobs": incident.affected_jobs,
        "hardware_profile": incident.hardware_profile,
        "hardware_generation": incident.hardware_generation,
        "owner": incident.owner_id,
        "participants": list(incident.participants.all()),
        "tags": ", ".join(t.name for t in incident.tags.all()),
    }
    form = IncidentForm(request.POST or None, initial=initial, creating=False)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        try:
            incident_update(
                incident=incident, by=request.user, tags=data.pop("tags"),
                participants=data.pop("participants"), **data,
            )  # fmt: skip
        except IncidentError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Saved.")
            return redirect(incident)
    return render(request, "incidents/incident_form.html", {"form": form, "incident": incident})


# --- detail -------------------------------------------------------------------------------


def incident_detail(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        incident = incident_for_detail(pk)
    except Incident.DoesNotExist:
        return render(request, "incidents/not_found.html", {"what": f"INC-{pk}"}, status=404)
    kinds = [k for k in request.GET.getlist("kind") if k in TimelineEvent.Kind.values]
    key_only = request.GET.get("key") == "1"
    timeline = incident_timeline(incident, kinds=kinds or None, key_only=key_only)
    fmt = request.GET.get("format")
    if fmt == "csv":
        return exports.csv_response(
            f"{incident.reference}-timeline.csv",
            ["at", "kind", "key", "source", "author", "text"],
            ([iso(i.at), i.kind, int(i.key), i.source, i.author, i.text] for i in timeline),
        )
    if fmt == "json":
        return exports.json_response(
            f"{incident.reference}.json", _incident_json(incident, timeline)
        )
    provenance = milestone_provenance(incident)
    milestone_rows = [
        {
            "name": m,
            "label": MILESTONE_LABELS[m],
            "at": incident.milestone(m),
            "record": provenance.get(m),
        }
        for m in ALL_MILESTONES
    ]
    events = pd.DataFrame(
        [{"at": i.at, "kind": i.kind, "text": i.text, "key": i.key} for i in timeline],
        columns=["at", "kind", "text", "key"],
    )
    chart_milestones = [(r["label"], r["at"]) for r in milestone_rows if r["at"]]
    chart = (
        timeline_figure(events, chart_milestones).to_json()
        if len(events) or chart_milestones
        else None
    )
    evidence = list(incident.evidence.all())
    editor = can_edit(request.user)
    context = {
        "incident": incident,
        "milestones": milestone_rows,
        "durations": [(name, human_duration(d)) for name, d in incident.durations.items()],
        "timeline": timeline,
        "timeline_chart": chart,
        "kinds": TimelineEvent.Kind.choices,
        "selected_kinds": kinds,
        "key_only": key_only,
        "evidence": evidence,
        "suggestions": grouped_for(incident),
        "fact_proposals": propose_facts(incident) if editor else [],
        "environment_rows": environment_rows(incident),
        "action_items": incident.action_items.select_related(
            "owner", "ticket", "verification_artifact"
        ),
        "tickets": incident.vendor_tickets.all(),
        "bundles": bundles_of(incident=incident),
        "postmortem": postmortem_state(incident),
    }
    if editor:
        context.update(
            status_form=StatusForm(initial={"status": incident.status}),
            milestone_form=MilestoneForm(incident=incident),
            event_form=TimelineEventForm(initial={"kind": TimelineEvent.Kind.OBSERVATION}),
            attach_form=AttachForm(incident=incident),
            item_form=ActionItemForm(),
            bundle_form=BundleForm(
                artifacts=incident.artifacts.order_by("pk"), tickets=incident.vendor_tickets.all()
            )
            if evidence
            else None,
        )
    return render(request, "incidents/incident_detail.html", context)


def _incident_json(incident: Incident, timeline: list[Any]) -> dict[str, Any]:
    durations = incident.durations
    return {
        "id": incident.pk,
        "reference": incident.reference,
        "title": incident.title,
        "severity": incident.severity,
        "status": incident.status,
        "lifecycle": {m: iso(incident.milestone(m)) or None for m in ALL_MILESTONES},
        "durations_s": {k: v.total_seconds() if v else None for k, v in durations.items()},
        "timeline": [
            {"at": iso(i.at), "kind": i.kind, "key": i.key, "source": i.source, "text": i.text}
            for i in timeline
        ],
        "evidence": [
            {
                "artifact_id": e.artifact_id,
                "name": e.artifact.original_name,
                "sha256": e.artifact.sha256,
            }
            for e in incident.evidence.all()
        ],
    }


def _back(incident: Incident, anchor: str = "") -> HttpResponse:
    return redirect(incident.get_absolute_url() + (f"#{anchor}" if anchor else ""))


@require_POST
@editor_required
def incident_status(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    form = StatusForm(request.POST)
    if form.is_valid():
        incident_set_status(incident=incident, status=form.cleaned_data["status"], by=request.user)
        messages.success(request, f"Status: {incident.get_status_display()}.")
    else:
        messages.error(request, "Choose a valid status.")
    return _back(incident, "lifecycle")


@require_POST
@editor_required
def incident_milestone(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    form = MilestoneForm(request.POST, incident=incident)
    if not form.is_valid():
        messages.error(request, f"Not saved: {_errors(form)}")
        return _back(incident, "lifecycle")
    data = form.cleaned_data
    try:
        incident_set_milestone(
            incident=incident, milestone=data["milestone"], at=data["at"], by=request.user,
            artifact=data["artifact"], override=data["override"], note=data["note"],
        )  # fmt: skip
    except IncidentError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{MILESTONE_LABELS[data['milestone']]} saved.")
    return _back(incident, "lifecycle")


@require_POST
@editor_required
def evidence_attach(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    form = AttachForm(request.POST, incident=incident)
    if not form.is_valid():
        messages.error(request, f"Nothing attached: {_errors(form)}")
        return _back(incident, "evidence")
    try:
        added = incident_attach_artifacts(
            incident=incident, artifact_ids=form.cleaned_data["ids"], by=request.user,
            note=form.cleaned_data["note"],
        )  # fmt: skip
    except IncidentError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{len(added)} artifact(s) attached; see the suggested events.")
    return _back(incident, "evidence")


@require_POST
@editor_required
def evidence_detach(request: HttpRequest, pk: int, artifact_id: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    incident_detach_artifact(incident=incident, artifact_id=artifact_id)
    messages.success(request, f"Artifact #{artifact_id} detached (the artifact itself is kept).")
    return _back(incident, "evidence")


@require_POST
@editor_required
def suggestion_decide(request: HttpRequest, pk: int, decision: str) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    key = request.POST.get("key", "")
    try:
        if decision == "accept":
            suggestion_accept(
                incident=incident,
                key=key,
                by=request.user,
                key_event=request.POST.get("key_event") == "1",
            )
            messages.success(request, "Added to the timeline.")
        else:
            suggestion_reject(incident=incident, key=key, by=request.user)
            messages.success(request, "Suggestion rejected.")
    except IncidentError as exc:
        messages.error(request, str(exc))
    return _back(incident, "suggestions")


@require_POST
@editor_required
def fact_accept(request: HttpRequest, pk: int) -> HttpResponse:
    """Accept a fact proposed from the evidence, as proposed or as the editor changed it."""
    incident = get_object_or_404(Incident, pk=pk)
    field, value = request.POST.get("field", ""), request.POST.get("value", "")
    artifact_id = request.POST.get("artifact_id", "")
    try:
        incident_accept_fact(
            incident=incident, field=field, value=value, by=request.user,
            source=request.POST.get("source", ""),
            artifact_id=int(artifact_id) if artifact_id.isdigit() else None,
            edited=value.strip() != request.POST.get("proposed", "").strip(),
        )  # fmt: skip
    except IncidentError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{field.replace('_', ' ').capitalize()} saved.")
    return _back(incident, "facts")


@require_POST
@editor_required
def event_add(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    form = TimelineEventForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Not added: {_errors(form)}")
        return _back(incident, "timeline")
    try:
        timeline_event_create(incident=incident, by=request.user, **form.cleaned_data)
    except IncidentError as exc:
        messages.error(request, str(exc))
    return _back(incident, "timeline")


@require_POST
@editor_required
def event_change(request: HttpRequest, pk: int, event_id: int) -> HttpResponse:
    event = get_object_or_404(TimelineEvent, pk=event_id, incident_id=pk)
    if request.POST.get("action") == "delete":
        event.delete()
        messages.success(request, "Timeline event deleted.")
    else:
        timeline_event_update(event=event, key=not event.key)
    return _back(event.incident, "timeline")


@require_POST
@editor_required
def action_item_add(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=pk)
    form = ActionItemForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Not added: {_errors(form)}")
        return _back(incident, "action-items")
    data = dict(form.cleaned_data)
    try:
        action_item_create(incident=incident, title=data.pop("title"), by=request.user, **data)
    except IncidentError as exc:
        messages.error(request, str(exc))
    return _back(incident, "action-items")


@require_POST
@editor_required
def action_item_close(request: HttpRequest, item_id: int) -> HttpResponse:
    item = get_object_or_404(ActionItem, pk=item_id)
    form = ActionItemCloseForm(request.POST)
    if form.is_valid():
        changes = {k: v for k, v in form.cleaned_data.items() if v not in (None, "")}
        try:
            action_item_update(item=item, **changes)
        except IncidentError as exc:
            messages.error(request, f"{item.title}: {exc}")
        else:
            messages.success(request, f"{item.title}: {item.get_status_display()}.")
    else:
        messages.error(request, f"Not saved: {_errors(form)}")
    return redirect(request.POST.get("next") or item.incident.get_absolute_url() + "#action-items")


def action_item_list(request: HttpRequest) -> HttpResponse:
    items = action_items_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "action-items.csv", ACTION_ITEM_CSV_COLUMNS, (_item_row(i) for i in items)
        )
    return render(
        request,
        "incidents/action_item_list.html",
        {
            "page": page_of(request, items),
            "statuses": [("open", "open"), *ActionItem.Status.choices[1:], ("any", "any")],
            "types": ActionItem.Type.choices,
            "status": request.GET.get("status", "open"),
            "close_form": ActionItemCloseForm(),
        },
    )


ACTION_ITEM_CSV_COLUMNS = (
    "id", "incident", "title", "type", "owner", "due_date", "status", "ticket",
    "requires_verification", "verified", "created_at", "closed_at",
)  # fmt: skip


def _item_row(item: ActionItem) -> list[Any]:
    return [
        item.pk, item.incident.reference, item.title, item.type,
        item.owner.get_username() if item.owner else "", item.due_date or "", item.status,
        item.ticket_id or "", int(item.requires_verification), int(item.is_verified),
        iso(item.created_at), iso(item.closed_at),
    ]  # fmt: skip


# --- metrics ------------------------------------------------------------------------------


def incident_metrics(request: HttpRequest) -> HttpResponse:
    incidents, items = metrics_frames()
    tables = metrics.all_splits(incidents)
    ages = metrics.open_item_ages(items)
    fmt = request.GET.get("format")
    if fmt == "csv":
        frames = [t.assign(split=name) for name, t in tables.items()]
        combined = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        columns = ["split", *[c for c in combined.columns if c != "split"]]
        return exports.csv_response(
            "incident-metrics.csv",
            columns,
            combined[columns].astype(object).where(combined[columns].notna(), "").values.tolist(),
        )
    records = {name: _records(t) for name, t in tables.items()}
    if fmt == "json":
        return exports.json_response(
            "incident-metrics.json",
            {
                "unit": "hours",
                "durations": metrics.DURATION_LABELS,
                "splits": records,
                "open_action_items": ages.to_dict("records"),
            },
        )
    return render(
        request,
        "incidents/metrics.html",
        {
            "tables": records,
            "charts": {
                name: duration_bars(t, metrics.DURATION_LABELS, split=name).to_json()
                for name, t in tables.items()
                if not t.empty and len(t) > 1
            },
            "ages": ages.to_dict("records"),
            "durations": metrics.DURATIONS,
            "labels": metrics.DURATION_LABELS,
        },
    )


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    # NaN (a group where no incident has that milestone) prints as "—", not "nan"
    return table.astype(object).where(table.notna(), None).to_dict("records")


def _errors(form: Any) -> str:
    return "; ".join(
        f"{field}: {' '.join(errs)}" if field != "__all__" else " ".join(errs)
        for field, errs in form.errors.items()
    )
