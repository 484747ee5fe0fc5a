"""Run pages: the run list with filters and exports, and one run with its busbw chart."""

from __future__ import annotations

import pandas as pd
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from artifacts.exports import csv_response, json_response
from artifacts.runs import exports
from artifacts.runs.forms import RunFilterForm
from artifacts.runs.models import BenchmarkRun
from artifacts.runs.querysets import run_filter_options, runs_filtered
from baselines.limits.reads import RunEfficiency, run_efficiency
from charts.figures import bandwidth_curve_spec, figure_json
from perfhub.paging import page_of


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
    efficiency = run_efficiency(run)
    known = efficiency if isinstance(efficiency, RunEfficiency) else None
    pct = known.pct_by_size() if known else {}
    measurements = list(run.measurements.all())
    peak = known.peak.peak_busbw_gbps if known else None
    label = f"peak {peak:g} GB/s ({known.bottleneck_label})" if known and peak else ""
    return render(
        request,
        "runs/run_detail.html",
        {
            "run": run,
            "ranks": run.ranks.all(),
            "measurements": measurements,
            "rows": [(m, pct.get(m.size_bytes)) for m in measurements],
            "efficiency": known,
            "efficiency_reason": None if known else getattr(efficiency, "reason", ""),
            "chart": figure_json(bandwidth_curve_spec(rows, peak_gbps=peak, peak_label=label))
            if len(rows)
            else None,
            "title": title,
        },
    )
