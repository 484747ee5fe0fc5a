"""The alerting integrations page: receivers, their label maps, and every webhook call with
what it did; editors replay a call from here. Adapters only (services in alerting/)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from incidents.alerting.labels import effective
from incidents.alerting.services import webhook_replay
from incidents.models import WebhookCall, WebhookReceiver
from incidents.services import IncidentError
from incidents.views import editor_required, page_of


def integrations(request: HttpRequest) -> HttpResponse:
    receivers = [
        (r, json.dumps(_map_or_error(r), indent=1, sort_keys=True))
        for r in WebhookReceiver.objects.all()
    ]
    calls = WebhookCall.objects.select_related("receiver").prefetch_related("incidents")
    if status := request.GET.get("status"):
        calls = calls.filter(status_code=status) if status.isdigit() else calls
    return render(
        request,
        "incidents/integrations.html",
        {
            "receivers": receivers,
            "page": page_of(request, calls),
            "endpoints": [
                reverse("api-alertmanager-receiver"),
                reverse("api-generic-receiver"),
            ],
        },
    )


@require_POST
@editor_required
def call_replay(request: HttpRequest, pk: int) -> HttpResponse:
    call = get_object_or_404(WebhookCall, pk=pk)
    try:
        outcome, replay = webhook_replay(call=call)
    except IncidentError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Replayed as call {replay.pk}: {outcome.detail}")
    return redirect(reverse("incident-integrations") + "#calls")


def _map_or_error(receiver: WebhookReceiver) -> dict[str, object]:
    try:
        return effective(receiver.label_map)
    except ValueError as exc:
        return {"error": str(exc)}
