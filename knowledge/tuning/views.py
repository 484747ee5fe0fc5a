"""The knowledge side of a sweep page ("write a recipe", recipes it proves or disputes) and
the POST that writes the recipe (editors)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from baselines.models import Sweep
from baselines.sweeps.reads import sweep_view
from knowledge.models import Page, PageType
from knowledge.services import PageError
from knowledge.tuning import proof
from perfhub.roles import can_edit


def sweep_panel(sweep: Sweep, request: HttpRequest) -> dict[str, Any]:
    # the sweep page read the view already: sweep_view keeps it on the instance
    """Provided to the sweep page (baselines' ``sweep_recipes`` hook): the recipes this sweep
    proves, those it disputes (marked for review as it is opened) and the write form."""
    view = sweep_view(sweep)
    proved = list(
        Page.objects.filter(
            citations__kind=proof.SWEEP_KIND, citations__object_id=str(sweep.pk)
        ).distinct()
    )
    reviews = proof.reviews_record(view)
    html = render_to_string(
        "knowledge/tuning/_sweep_panel.html",
        {
            "sweep": sweep,
            "winners": proof.winning_values(view),
            "proved": proved,
            "reviews": reviews,
            "recipes": Page.objects.filter(type=PageType.TUNING_RECIPE).order_by("title")[:200],
            "can_edit": can_edit(request.user),
        },
        request=request,  # the form's CSRF token
    )
    return {"recipe_panel": html}


@require_POST
def write_recipe(request: HttpRequest, pk: int) -> HttpResponse:
    sweep = get_object_or_404(Sweep, pk=pk)
    if not can_edit(request.user):
        messages.error(request, "Writing a recipe needs the editor role.")
        return redirect(sweep)
    target = None
    if slug := request.POST.get("page"):
        target = get_object_or_404(Page, slug=slug, type=PageType.TUNING_RECIPE)
    try:
        page = proof.recipe_write(
            sweep=sweep, value=request.POST.get("value", ""), by=request.user, page=target
        )
    except PageError as exc:
        messages.error(request, f"No recipe written: {exc}")
        return redirect(sweep)
    messages.success(request, f"Recipe “{page.title}” written from sweep #{sweep.pk}.")
    return redirect(page)


def recipe_hosts(request: HttpRequest, slug: str) -> HttpResponse:
    """The recipe on every host: a per-host table (conforms / differs / unknown, with the
    evidence line), the fleet summary, and a finding per drift (recorded as it is shown)."""
    from artifacts import exports
    from baselines.models import HardwareProfile
    from knowledge.tuning.fleet import findings_record, fleet_check, profile_hosts, recipe_profile

    page = get_object_or_404(Page, slug=slug)
    # The fleet: every host, or one profile's (?profile=; "all" for every host). A recipe
    # proved by a sweep starts at its sweep's profile: that is the hardware it was proved on.
    wanted = request.GET.get("profile")
    profile = None
    if wanted and wanted != "all":
        profile = get_object_or_404(HardwareProfile, slug=wanted)
    elif wanted is None:
        profile = recipe_profile(page)
    summary = fleet_check(page, hosts=profile_hosts(profile) if profile else None)
    findings_record(page, summary)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            f"recipe-{page.slug}-hosts.csv",
            ["host", "host_verdict", "setting", "expected", "found", "verdict", "evidence"],
            [
                (
                    h.host,
                    h.verdict,
                    c.setting.name or c.setting.value,
                    c.expected,
                    c.found,
                    c.verdict,
                    c.line,
                )
                for h in summary.hosts
                for c in h.checks
            ],
        )
    return render(
        request,
        "knowledge/tuning/recipe_hosts.html",
        {
            "page": page,
            "summary": summary,
            "settings": page.parsed_settings,
            "profile": profile,
            "profiles": HardwareProfile.objects.order_by("slug").values_list("slug", flat=True),
        },
    )
