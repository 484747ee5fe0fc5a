"""Run pages: the run list with filters and exports, and one run with its busbw chart."""

from __future__ import annotations

import pandas as pd
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from artifacts.exports import csv_response, json_response
from artifacts.runs import exports
from artifacts.runs.forms import RunFilterForm
from artifacts.runs.hooks import run_limits
from artifacts.runs.models import BenchmarkRun
from artifacts.runs.querysets import run_filter_options, run_findings, runs_filtered
from charts.figures import bandwidth_curve_spec, figure_json
from perfhub.paging import page_of
from perfhub.roles import can_edit


def run_list(request: HttpRequest) -> HttpResponse:
    options = run_filter_options()
    form = RunFilterForm(request.GET, options=options)
    runs = runs_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return csv_response(
            "runs.csv",
            exports.RUN_COLUMNS,
            runs.values_list(
                *[c if c != "artifact_id" else "artifact" for c in exports.RUN_COLUMNS]
            ),
        )
    return render(request, "runs/run_list.html", {"form": form, "page": page_of(request, runs)})


def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(BenchmarkRun.objects.select_related("artifact"), pk=pk)
    fmt = request.GET.get("format")
    if fmt == "csv":
        return csv_response(
            f"run-{run.pk}.csv", exports.MEASUREMENT_COLUMNS, exports.run_measurement_rows(run)
        )
    if fmt == "json":
        return json_response(f"run-{run.pk}.json", exports.run_as_json(run))
    rows = pd.DataFrame(exports.run_measurement_rows(run), columns=exports.MEASUREMENT_COLUMNS)
    title = f"{run.collective or run.benchmark} · {run.nranks or '?'} ranks"
    limits = run_limits(run)
    measurements = list(run.measurements.all())
    findings = run_findings(run)
    return render(
        request,
        "runs/run_detail.html",
        {
            "run": run,
            "ranks": run.ranks.all(),
            "measurements": measurements,
            "rows": [(m, limits.pct_by_size.get(m.size_bytes)) for m in measurements],
            "efficiency": limits.efficiency,
            "efficiency_reason": limits.reason,
            "findings": findings,
            "candidates": limits.candidates,
            "profile_slug": limits.profile_slug,
            "can_edit": can_edit(request.user),
            "chart": figure_json(
                bandwidth_curve_spec(rows, peak_gbps=limits.peak_gbps, peak_label=limits.peak_label)
            )
            if len(rows)
            else None,
            "title": title,
        },
    )
