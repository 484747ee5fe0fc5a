"""Evidence bundle pages: build (from an incident or a ticket), redaction preview, progress,
download."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from incidents.api import bundle_file_response
from incidents.bundles.services import bundle_preview, bundle_request
from incidents.forms import BundleForm
from incidents.models import EvidenceBundle, Incident, VendorTicket
from incidents.services import IncidentError
from incidents.ticket_views import _ticket_evidence
from incidents.views import _errors, editor_required


def _owner(kind: str, pk: int) -> tuple[Incident | None, VendorTicket | None, Any]:
    if kind == "incident":
        incident = get_object_or_404(Incident, pk=pk)
        return incident, None, incident.artifacts.order_by("pk")
    ticket = get_object_or_404(VendorTicket, pk=pk)
    return None, ticket, _ticket_evidence(ticket)


@require_POST
@editor_required
def bundle_build_view(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    incident, ticket, artifacts = _owner(kind, pk)
    back = incident or ticket
    assert back is not None
    tickets = incident.vendor_tickets.all() if incident else None
    form = BundleForm(request.POST, artifacts=artifacts, tickets=tickets)
    if not form.is_valid():
        messages.error(request, f"No bundle: {_errors(form)}")
        return redirect(back.get_absolute_url() + "#bundles")
    data = form.cleaned_data
    try:
        bundle = bundle_request(
            by=request.user, incident=incident, ticket=ticket or data.get("ticket"),
            artifact_ids=[a.pk for a in data["artifacts"]], redact=data["redact"],
            patterns=data["patterns"],
        )  # fmt: skip
    except IncidentError as exc:
        messages.error(request, str(exc))
        return redirect(back.get_absolute_url() + "#bundles")
    return redirect(bundle)


@editor_required
def bundle_preview_view(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    """What redaction would replace in the chosen artifacts (POST, same fields as the build).

    A POST, not a GET: the form carries the CSRF token, which must never land in a URL (the
    browser history, proxy logs, a pasted link).
    """
    incident, ticket, artifacts = _owner(kind, pk)
    tickets = incident.vendor_tickets.all() if incident else None
    # Opened without a choice (a bookmark, the back button, a GET): start from the defaults
    # (every artifact ticked, redaction on) rather than an error and an unticked "Redact" box.
    data = request.POST if request.method == "POST" else None
    form = BundleForm(data, artifacts=artifacts, tickets=tickets)
    preview, error = None, ""
    if form.is_valid():
        try:
            preview = bundle_preview(
                incident=incident, ticket=ticket,
                artifact_ids=[a.pk for a in form.cleaned_data["artifacts"]],
                patterns=form.cleaned_data["patterns"],
            )  # fmt: skip
        except IncidentError as exc:
            error = str(exc)
    elif form.is_bound:
        error = _errors(form)
    return render(
        request,
        "incidents/bundle_preview.html",
        {
            "incident": incident,
            "ticket": ticket,
            "owner": incident or ticket,
            "kind": kind,
            "form": form,
            "preview": preview,
            "error": error,
        },
    )


def bundle_detail(request: HttpRequest, pk: int) -> HttpResponse:
    bundle = get_object_or_404(
        EvidenceBundle.objects.select_related("incident", "ticket", "created_by"), pk=pk
    )
    return render(
        request,
        "incidents/bundle_detail.html",
        {"bundle": bundle, "artifacts": bundle.artifacts.order_by("pk")},
    )


def bundle_download(request: HttpRequest, pk: int) -> HttpResponse | FileResponse:
    bundle = get_object_or_404(EvidenceBundle, pk=pk)
    if bundle.status != EvidenceBundle.Status.READY:
        messages.error(request, f"Bundle {bundle.pk} is {bundle.status}, not ready yet.")
        return redirect(bundle)
    return bundle_file_response(bundle)
