"""Editors' corrections of where facts came from: detach a source from a run's file,
re-attach it, and the repair of everything filed before facts were scoped."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from artifacts.models import BenchmarkRun
from baselines.models import FactDetachment
from baselines.provenance.detaching import DetachError, fact_detach, fact_reattach
from baselines.views import editor_only
from perfhub import dispatch


@require_POST
@editor_only
def run_fact_detach(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(BenchmarkRun.objects.select_related("artifact"), pk=run_id)
    try:
        source_id = int(request.POST.get("source", ""))
        fact_detach(
            run=run, source_id=source_id, key=request.POST.get("key", ""), user=request.user
        )
    except (ValueError, DetachError) as exc:
        messages.error(request, str(exc) if isinstance(exc, DetachError) else "Which source?")
        return redirect(run)
    messages.success(
        request,
        f"{request.POST.get('key')} of artifact #{source_id} no longer reaches the runs of "
        f"this file; they were re-filed.",
    )
    return redirect(f"{run.get_absolute_url()}#provenance")


@require_POST
@editor_only
def run_fact_reattach(request: HttpRequest, pk: int) -> HttpResponse:
    detachment = get_object_or_404(FactDetachment, pk=pk)
    run = BenchmarkRun.objects.filter(artifact_id=detachment.artifact_id).order_by("index").first()
    fact_reattach(detachment=detachment)
    messages.success(request, "Re-attached; the runs of the file were re-filed.")
    return redirect(f"{run.get_absolute_url()}#provenance" if run else reverse("baselines:home"))


@require_POST
@editor_only
def facts_repair_start(request: HttpRequest) -> HttpResponse:
    """Queue the repair (``manage.py repair_facts``): it re-files every run under the scoped
    rules, which may take minutes on a large history."""
    dispatch.enqueue("baselines.repair_facts")
    messages.success(
        request,
        "Repair queued: every run's stack and profile are derived again from the facts that "
        "describe it; changed runs are re-filed. `manage.py repair_facts --dry-run` lists "
        "what would move.",
    )
    return redirect("baselines:home")
