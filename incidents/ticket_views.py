"""Vendor ticket pages: list, create/edit, detail with the correspondence log and bundles."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from artifacts import exports
from artifacts.models import Artifact
from incidents.bundles.docs import iso
from incidents.forms import BundleForm, CorrespondenceForm, TicketForm
from incidents.models import Severity, VendorTicket
from incidents.querysets import bundles_of, tickets_filtered
from incidents.services import IncidentError, correspondence_add, ticket_create, ticket_update
from incidents.views import _errors, editor_required, page_of
from perfhub.roles import can_edit

TICKET_CSV_COLUMNS = (
    "id", "vendor", "case_number", "title", "severity", "status", "opened_at",
    "vendor_updated_at", "fixed_in_version", "incidents", "messages", "url",
)  # fmt: skip


def ticket_list(request: HttpRequest) -> HttpResponse:
    tickets = tickets_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "vendor-tickets.csv", TICKET_CSV_COLUMNS, (_csv_row(t) for t in tickets)
        )
    return render(
        request,
        "incidents/ticket_list.html",
        {
            "page": page_of(request, tickets),
            "vendors": VendorTicket.Vendor.choices,
            "statuses": VendorTicket.Status.choices,
            "severities": Severity.choices,
        },
    )


def _csv_row(ticket: VendorTicket) -> list[Any]:
    return [
        ticket.pk, ticket.vendor_label, ticket.case_number, ticket.title, ticket.severity,
        ticket.status, iso(ticket.opened_at), iso(ticket.vendor_updated_at),
        ticket.fixed_in_version, ticket.incident_count, ticket.message_count, ticket.url,
    ]  # fmt: skip


@editor_required
def ticket_create_view(request: HttpRequest) -> HttpResponse:
    initial = {}
    if incident_id := request.GET.get("incident"):
        initial["incidents"] = [incident_id]
    form = TicketForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        try:
            ticket = ticket_create(
                title=data.pop("title"), vendor=data.pop("vendor"), by=request.user,
                incident_ids=[i.pk for i in data.pop("incidents")],
                artifact_ids=data.pop("artifact_ids"), **data,
            )  # fmt: skip
        except IncidentError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Vendor ticket #{ticket.pk} recorded.")
            return redirect(ticket)
    return render(request, "incidents/ticket_form.html", {"form": form, "ticket": None})


@editor_required
def ticket_edit(request: HttpRequest, pk: int) -> HttpResponse:
    ticket = get_object_or_404(VendorTicket, pk=pk)
    initial = {
        **{f: getattr(ticket, f) for f in TicketForm.base_fields if hasattr(ticket, f)},
        "incidents": list(ticket.incidents.all()),
        "artifact_ids": " ".join(str(a.pk) for a in ticket.artifacts.all()),
    }
    form = TicketForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        try:
            ticket_update(
                ticket=ticket, by=request.user,
                incident_ids=[i.pk for i in data.pop("incidents")],
                artifact_ids=data.pop("artifact_ids"), **data,
            )  # fmt: skip
        except IncidentError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Saved.")
            return redirect(ticket)
    return render(request, "incidents/ticket_form.html", {"form": form, "ticket": ticket})


def ticket_detail(request: HttpRequest, pk: int) -> HttpResponse:
    ticket = get_object_or_404(
        VendorTicket.objects.prefetch_related("incidents", "artifacts"), pk=pk
    )
    context: dict[str, Any] = {
        "ticket": ticket,
        "correspondence": ticket.messages.select_related("author", "bundle"),
        "bundles": bundles_of(ticket=ticket),
        "items": ticket.items.select_related("incident", "owner"),
    }
    if can_edit(request.user):
        context["message_form"] = CorrespondenceForm(ticket=ticket)
        artifacts = _ticket_evidence(ticket)
        if artifacts.exists():
            context["bundle_form"] = BundleForm(artifacts=artifacts)
    return render(request, "incidents/ticket_detail.html", context)


def _ticket_evidence(ticket: VendorTicket) -> Any:
    """The ticket's own artifacts plus the evidence of its incidents."""
    incident_ids = list(ticket.incidents.values_list("pk", flat=True))
    return (
        (
            Artifact.objects.filter(vendor_tickets=ticket)
            | Artifact.objects.filter(incidents__in=incident_ids)
        )
        .distinct()
        .order_by("pk")
    )


@require_POST
@editor_required
def correspondence_add_view(request: HttpRequest, pk: int) -> HttpResponse:
    ticket = get_object_or_404(VendorTicket, pk=pk)
    form = CorrespondenceForm(request.POST, ticket=ticket)
    if not form.is_valid():
        messages.error(request, f"Not logged: {_errors(form)}")
        return redirect(ticket)
    data = form.cleaned_data
    try:
        correspondence_add(
            ticket=ticket, direction=data["direction"], text=data["text"], by=request.user,
            at=data["at"], bundle=data["bundle"],
        )  # fmt: skip
    except IncidentError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Logged; it also shows on the linked incidents' timelines.")
    return redirect(ticket.get_absolute_url() + "#correspondence")
