"""Sweep pages: the list, one sweep (per size: each value's busbw and spread, the winner, the
crossovers, a chart; CSV/JSON), and "make a sweep" from runs picked on the runs list."""

from __future__ import annotations

import math
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from artifacts import exports
from baselines.models import HardwareProfile, SoftwareStack, Sweep
from baselines.sweeps import reads, services
from baselines.sweeps.hooks import sweep_recipes
from baselines.sweeps.winners import SweepAnalysis
from perfhub.paging import page_of
from perfhub.roles import can_edit

MAX_CHARTS = 6


def sweep_list(request: HttpRequest) -> HttpResponse:
    sweeps = Sweep.objects.select_related("profile", "created_by").order_by("-created_at", "-id")
    return render(request, "baselines/sweep_list.html", {"page": page_of(request, sweeps)})


def sweep_detail(request: HttpRequest, pk: int) -> HttpResponse:
    sweep = get_object_or_404(Sweep.objects.select_related("profile"), pk=pk)
    view = reads.sweep_view(sweep)
    fmt = request.GET.get("format")
    if fmt == "csv":
        rows = reads.sweep_rows(view)
        header = list(rows[0]) if rows else ["collective", "nranks", "size_bytes", "value"]
        return exports.csv_response(
            f"sweep-{sweep.pk}.csv", header, [[r.get(h) for h in header] for r in rows]
        )
    if fmt == "json":
        return exports.json_response(f"sweep-{sweep.pk}.json", sweep_payload(view))
    context = {
        "sweep": sweep,
        "view": view,
        "analysis": view.analysis,
        "sections": _sections(view.analysis),
        "noise": NOISE_TEXT,
        "can_edit": can_edit(request.user),
        **sweep_recipes(sweep, request),
    }
    return render(request, "baselines/sweep_detail.html", context)


def sweep_new(request: HttpRequest) -> HttpResponse:
    """From the runs list (GET with the ticked ``run`` ids): what the sweep would compare,
    and a name; its POST makes it."""
    if request.method == "POST":
        return sweep_create(request)
    try:
        run_ids = sorted({int(r) for r in request.GET.getlist("run")})
    except ValueError:
        run_ids = []
    runs = list(reads.runs_by_id(run_ids))
    preview = reads.preview(runs)
    return render(
        request,
        "baselines/sweep_new.html",
        {"runs": runs, "preview": preview, "can_edit": can_edit(request.user)},
    )


@require_POST
def sweep_create(request: HttpRequest) -> HttpResponse:
    """The ticked runs become a sweep (editors)."""
    if not can_edit(request.user):
        messages.error(request, "Making a sweep needs the editor role.")
        return redirect(request.META.get("HTTP_REFERER") or reverse("run-list"))
    try:
        run_ids = [int(r) for r in request.POST.getlist("run")]
        sweep = services.sweep_create(
            name=request.POST.get("name", ""), run_ids=run_ids, user=request.user
        )
    except (ValueError, ValidationError) as exc:
        text = "; ".join(exc.messages) if isinstance(exc, ValidationError) else "bad run id"
        messages.error(request, f"No sweep made: {text}")
        return redirect(request.META.get("HTTP_REFERER") or reverse("run-list"))
    messages.success(request, f"Sweep “{sweep.name}” made of {len(run_ids)} runs.")
    return redirect(sweep)


def sweep_payload(view: reads.SweepView) -> dict[str, Any]:
    """The sweep as JSON (the page's export and the API's detail)."""
    analysis = view.analysis
    return {
        "id": view.sweep.pk,
        "name": view.sweep.name,
        "profile": view.profile.slug if view.profile else None,
        "settings": list(analysis.settings),
        "values": [
            {
                "value": v,
                "settings": analysis.value_settings.get(v, {}),
                "runs": analysis.runs_per_value.get(v, 0),
            }
            for v in analysis.values
        ],
        "replicated": analysis.replicated,
        "run_ids": [r.pk for r in view.runs],
        "left_out": list(view.left_out),
        "noise": NOISE_TEXT,
        "benchmarks": [
            {
                "collective": b.collective,
                "nranks": b.nranks,
                "sizes": [
                    {
                        "size_bytes": s.size_bytes,
                        "best": s.best,
                        "winner": s.winner,
                        "margin_pct": s.margin_pct,
                        "p_value": s.p_value,
                        "verdict": s.verdict,
                        "values": [
                            {
                                "value": v.value,
                                "runs": v.n,
                                "mean_busbw_gbps": v.mean,
                                "sd_gbps": v.sd,
                                "low_gbps": v.low,
                                "high_gbps": v.high,
                                "run_ids": list(v.run_ids),
                            }
                            for v in s.values
                        ],
                    }
                    for s in b.sizes
                ],
                "crossovers": [
                    {
                        "below_bytes": c.below_bytes,
                        "above_bytes": c.above_bytes,
                        "from": c.before,
                        "to": c.after,
                    }
                    for c in b.crossovers
                ],
            }
            for b in analysis.benchmarks
        ],
    }


NOISE_TEXT = (
    "A value wins a size when it beats every other value there by more than the busbw print "
    "step (0.01 GB/s) and, with two or more replicates on both sides, Welch's t-test gives "
    "p < 0.05 (spread floored at rounding noise) for a gain of at least 1 % (a 5 % test "
    "over dozens of sizes alone would name a chance winner at one size in twenty); with a "
    "single run on either side the "
    "noise is unknown and the difference must exceed ±3 % (the default baseline tolerance)."
)


def _sections(analysis: SweepAnalysis) -> list[dict[str, Any]]:
    """Per benchmark: its chart (the first few) and its table rows, cells in value order."""
    from charts.figures import figure_json, sweep_curves_spec  # plotly only for this page

    out: list[dict[str, Any]] = []
    for bench in analysis.benchmarks:
        rows = [
            {"size": s, "cells": [(s.stats_of(v), s.winner == v) for v in analysis.values]}
            for s in bench.sizes
        ]
        section: dict[str, Any] = {"bench": bench, "rows": rows, "chart": None}
        out.append(section)
        if len(out) > MAX_CHARTS:
            continue
        values = []
        for value in analysis.values:
            rows = [(s, s.stats_of(value)) for s in bench.sizes]
            rows = [(s, v) for s, v in rows if v is not None]
            if rows:
                values.append(
                    {
                        "value": value,
                        "sizes": [s.size_bytes for s, _ in rows],
                        "means": [v.mean for _, v in rows],
                        "sds": [v.sd for _, v in rows],
                        "wins": [s.winner == value for s, _ in rows],
                    }
                )
        crossings = [int(math.sqrt(c.below_bytes * c.above_bytes)) for c in bench.crossovers]
        spec = sweep_curves_spec(values, crossovers=crossings)  # the section names it
        chart_id = f"sweep-chart-{len(out)}"
        section["chart"] = {
            "id": chart_id,
            "script_id": f"{chart_id}-figure",
            "json": figure_json(spec),
        }
    return out


def setting_matrix(request: HttpRequest) -> HttpResponse:
    """Rows = values of one NCCL_* setting on a profile; cells = Δ% against the default."""
    from baselines.sweeps.setting_matrix import profile_settings, setting_matrix_for

    profiles = list(HardwareProfile.objects.order_by("slug"))
    profile = next((p for p in profiles if p.slug == request.GET.get("profile")), None)
    profile = profile or (profiles[0] if profiles else None)
    names = profile_settings(profile) if profile else []
    setting = request.GET.get("setting") or (names[0] if names else "")
    view = setting_matrix_for(profile, setting) if profile and setting in names else None
    if view is not None and request.GET.get("format") == "csv":
        return exports.csv_response(
            f"setting-matrix-{profile.slug}-{setting}.csv",
            ["value", "collective", "nranks", "bucket", "delta_pct", "sizes", "runs"],
            [
                (
                    row["version"],
                    col.collective,
                    col.nranks,
                    col.bucket,
                    round(cell.delta_pct, 3),
                    cell.sizes,
                    cell.runs,
                )
                for row in view.rows
                for col, (cell, *_) in zip(view.matrix.columns, row["cells"], strict=True)
                if cell is not None
            ],
        )
    return render(
        request,
        "baselines/setting_matrix.html",
        {
            "profiles": profiles,
            "profile": profile,
            "names": names,
            "setting": setting,
            "view": view,
        },
    )


def setting_compare(request: HttpRequest) -> HttpResponse:
    """A setting-matrix cell: the runs with that value against the runs with it unset."""
    from baselines.charts import comparison_figure
    from baselines.sweeps.setting_matrix import setting_comparison

    profile = get_object_or_404(HardwareProfile, slug=request.GET.get("profile", ""))
    try:
        nranks = int(request.GET.get("nranks") or 0)
        low = int(request.GET.get("low") or 0)
        high = int(request.GET.get("high") or 2**62)
    except ValueError as exc:
        raise Http404("nranks, low and high must be integers") from exc
    setting, value = request.GET.get("setting", ""), request.GET.get("value", "")
    found = setting_comparison(
        profile=profile,
        setting=setting,
        value=value,
        collective=request.GET.get("collective", ""),
        nranks=nranks,
    )
    before = SoftwareStack.objects.filter(pk=found.reference_stack_id).first()
    after = SoftwareStack.objects.filter(pk=found.candidate_stack_id).first()
    return render(
        request,
        "baselines/setting_compare.html",
        {
            "profile": profile,
            "setting": setting,
            "value": value,
            "collective": request.GET.get("collective", ""),
            "nranks": nranks,
            "low": low,
            "high": high,
            "found": found,
            "sizes": found.result.json["sizes"] if found.result else [],
            "figure": comparison_figure(found.result.json, label=f"{setting}={value}")
            if found.result
            else None,
            "changes": before.diff(after) if before and after and before.pk != after.pk else [],
        },
    )
