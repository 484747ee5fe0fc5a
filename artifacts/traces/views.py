"""Pages for PyTorch Profiler traces: list, trace, jobs, job, diff. Adapters: read through
querysets.py / jobs.py / exports.py, build figures, render (or export)."""

from __future__ import annotations

from typing import Any

import pandas as pd
from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_POST

from artifacts import exports
from artifacts.models import TraceSummary
from artifacts.traces import exports as tx
from artifacts.traces.analysis.breakdown import TYPE_NAMES
from artifacts.traces.forms import DiffPickForm, JobFilterForm, TraceFilterForm
from artifacts.traces.jobs import (
    RANK_COLUMNS,
    STEP_COLUMNS,
    STRAGGLER_COLUMNS,
    build_diff,
    build_job_view,
    default_per_step,
    diff_payload,
    job_payload,
    records,
)
from artifacts.traces.models import WINDOWS
from artifacts.traces.querysets import (
    SelectionError,
    diff_selections,
    job_selection,
    jobs_filtered,
    parse_ids,
    trace_filter_options,
    trace_jobs,
    traces_filtered,
)
from artifacts.traces.services import TraceJobError, trace_job_assign
from charts import figures
from perfhub.roles import can_edit

KERNELS_SHOWN = 50
COLLECTIVES_SHOWN = 200
DIFF_KERNELS_SHOWN = 50
JOB_LIST_COLUMNS = (
    "title", "label", "trace_ids", "traces", "ranks", "world_size", "hosts", "first_recorded",
    "last_uploaded",
)  # fmt: skip
DIFF_BREAKDOWN_COLUMNS = ("metric", "label", "a", "b", "delta", "delta_pct")
DIFF_KERNEL_COLUMNS = (
    "name", "type", "a_count", "b_count", "a_sum_us", "b_sum_us", "delta_us", "delta_pct",
    "change",
)  # fmt: skip
DIFF_TYPE_COLUMNS = ("type", "a_sum_us", "b_sum_us", "delta_us", "delta_pct")


def _window(request: HttpRequest) -> str:
    window = request.GET.get("window") or "trace"
    return window if window in WINDOWS else "trace"


def trace_list(request: HttpRequest) -> HttpResponse:
    options = trace_filter_options()
    form = TraceFilterForm(request.GET, options=options)
    traces = traces_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return exports.csv_response("traces.csv", tx.TRACE_LIST_COLUMNS, tx.trace_list_rows(traces))
    page = Paginator(traces, settings.PERFHUB_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "traces/trace_list.html", {"form": form, "page": page})


def trace_detail(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_object_or_404(TraceSummary.objects.select_related("artifact"), pk=pk)
    kernel_type = request.GET.get("type") or ""
    if kernel_type not in TYPE_NAMES:
        kernel_type = ""
    fmt = request.GET.get("format")
    if fmt == "json":
        return exports.json_response(f"trace-{trace.pk}.json", tx.trace_as_json(trace))
    if fmt == "csv":
        table = request.GET.get("table") or "kernels"
        if table not in tx.TRACE_TABLES:
            return HttpResponse(
                f"unknown table {table!r}; one of {', '.join(tx.TRACE_TABLES)}", status=400
            )
        columns, rows = (
            tx.kernel_table(trace, kernel_type)
            if table == "kernels"
            else tx.TRACE_TABLES[table](trace)
        )
        return exports.csv_response(f"trace-{trace.pk}-{table}.csv", columns, rows)
    top = request.GET.get("top") or str(KERNELS_SHOWN)
    kernels = tx.kernels_of(trace, kernel_type)
    shown = list(kernels if top == "all" else kernels[: _int(top, KERNELS_SHOWN)])
    by_type = trace.kernels.order_by().values("kernel_type").annotate(n=Count("id"))
    type_counts = {row["kernel_type"]: row["n"] for row in by_type}
    steps = list(trace.steps.order_by("index"))
    collectives = list(trace.collectives.order_by("index")[:COLLECTIVES_SHOWN])
    windows = {w: trace.breakdown(w) for w in WINDOWS}
    chart_rows = pd.DataFrame(
        [
            {"label": "whole trace", **windows["trace"]},
            {"label": "HTA window (last step dropped)", **windows["steps"]},
        ]
    )
    charts = {}
    if not trace.cpu_only:
        charts["breakdown"] = figures.trace_breakdown_bars(chart_rows).to_json()
    if steps:
        frame = pd.DataFrame(
            [{"step": s.step if s.step is not None else s.index, "dur_us": s.dur_us,
              "gpu_busy_us": s.gpu_busy_us} for s in steps]
        )  # fmt: skip
        charts["steps"] = figures.step_bars(frame).to_json()
    return render(
        request,
        "traces/trace_detail.html",
        {
            "trace": trace,
            "artifact": trace.artifact,
            "windows": windows,
            "kernels": shown,
            "kernel_total": sum(type_counts.values()),
            "kernel_filtered_total": type_counts.get(kernel_type, 0)
            if kernel_type
            else sum(type_counts.values()),
            "type_counts": [(t, type_counts.get(t, 0)) for t in TYPE_NAMES],
            "kernel_type": kernel_type,
            "top": top,
            "steps": steps,
            "collectives": collectives,
            "collectives_shown": COLLECTIVES_SHOWN,
            "collectives_summary": trace.extra.get("collectives_summary") or [],
            "kernel_types": trace.extra.get("kernel_types") or [],
            "steps_kernel_types": trace.extra.get("steps_kernel_types") or [],
            "idle_streams": trace.extra.get("idle_streams") or [],
            "launch": trace.extra.get("launch") or {},
            "process_groups": trace.extra.get("process_groups") or [],
            "annotation_domains": trace.extra.get("annotation_domains") or [],
            "annotations": trace.extra.get("annotations") or [],
            "charts": charts,
        },
    )


def job_list(request: HttpRequest) -> HttpResponse:
    jobs = jobs_filtered(trace_jobs(), request.GET)
    if request.GET.get("format") == "csv":
        rows = [
            [
                getattr(j, c) if c != "trace_ids" else " ".join(map(str, j.trace_ids))
                for c in JOB_LIST_COLUMNS
            ]
            for j in jobs
        ]
        return exports.csv_response("trace-jobs.csv", JOB_LIST_COLUMNS, rows)
    page = Paginator(jobs, settings.PERFHUB_PAGE_SIZE).get_page(request.GET.get("page"))
    form = JobFilterForm(request.GET)
    return render(request, "traces/job_list.html", {"page": page, "form": form})


def job_detail(request: HttpRequest) -> HttpResponse:
    try:
        selection = job_selection(request.GET)
    except SelectionError as exc:
        messages.error(request, str(exc))
        return redirect("trace-job-list")
    window = _window(request)
    view = build_job_view(selection, window=window)
    fmt = request.GET.get("format")
    if fmt == "json":
        return exports.json_response("trace-job.json", job_payload(view))
    if fmt == "csv":
        table = request.GET.get("table") or "ranks"
        tables = {
            "ranks": (RANK_COLUMNS, view.rank_rows),
            "steps": (STEP_COLUMNS, view.step_rows),
            "stragglers": (STRAGGLER_COLUMNS, view.straggler_rows()),
        }
        if table not in tables:
            return HttpResponse(f"unknown table {table!r}; one of {', '.join(tables)}", status=400)
        columns, rows = tables[table]
        return exports.csv_response(
            f"trace-job-{table}.csv", columns, [[r[c] for c in columns] for r in rows]
        )
    ranks = view.rank_frame()
    charts: dict[str, Any] = {}
    if len(view.traces):
        charts["breakdown"] = figures.trace_breakdown_bars(
            view.breakdown_frame(), orientation="v"
        ).to_json()
        if view.step_rows:
            charts["steps"] = figures.step_time_box(view.step_frame()).to_json()
        if ranks["comm_wait_us"].notna().any():
            charts["wait"] = figures.rank_bars(
                ranks, value="comm_wait_us", axis_title="communication wait ms", scale=1e-3
            ).to_json()
        if ranks["lateness_us"].notna().any():
            charts["lateness"] = figures.rank_bars(
                ranks, value="lateness_us", axis_title="median arrival lateness ms", scale=1e-3
            ).to_json()
    return render(
        request,
        "traces/job_detail.html",
        {
            "view": view,
            "selection": selection,
            "rows": [
                {"trace": t, **row} for t, row in zip(view.traces, view.rank_rows, strict=True)
            ],
            "analysis": view.analysis,
            "window": window,
            "charts": charts,
        },
    )


def trace_diff(request: HttpRequest) -> HttpResponse:
    options = trace_filter_options()
    asked = any(request.GET.get(k) for k in ("a", "b", "a_job", "b_job", "a_ids", "b_ids"))
    asked = asked or bool(request.GET.getlist("trace"))
    form = DiffPickForm(request.GET if asked else None, jobs=options["jobs"])
    context: dict[str, Any] = {"form": form, "window": _window(request)}
    if not asked:
        return render(request, "traces/diff.html", context)
    try:
        a, b = diff_selections(request.GET)
    except SelectionError as exc:
        context["error"] = str(exc)
        return render(request, "traces/diff.html", context, status=400)
    per = request.GET.get("per")
    per_step = default_per_step(a, b) if per not in ("step", "trace") else per == "step"
    view = build_diff(a, b, window=context["window"], per_step=per_step)
    fmt = request.GET.get("format")
    if fmt == "json":
        return exports.json_response("trace-diff.json", diff_payload(view))
    if fmt == "csv":
        table = request.GET.get("table") or "kernels"
        tables = {
            "breakdown": (DIFF_BREAKDOWN_COLUMNS, view.breakdown),
            "kernels": (DIFF_KERNEL_COLUMNS, view.kernels),
            "types": (DIFF_TYPE_COLUMNS, view.types),
        }
        if table not in tables:
            return HttpResponse(f"unknown table {table!r}; one of {', '.join(tables)}", status=400)
        columns, frame = tables[table]
        rows = [[r[c] for c in columns] for r in records(frame)]
        return exports.csv_response(f"trace-diff-{table}.csv", columns, rows)
    charts = {"breakdown": figures.trace_breakdown_bars(view.breakdown_frame()).to_json()}
    if len(view.kernels):
        charts["kernels"] = figures.kernel_delta_bars(view.kernels).to_json()
    context |= {
        "view": view,
        "per_step": per_step,
        "breakdown_rows": records(view.breakdown),
        "kernel_rows": records(view.kernels.head(DIFF_KERNELS_SHOWN)),
        "kernel_total": len(view.kernels),
        "type_rows": records(view.types),
        "charts": charts,
    }
    return render(request, "traces/diff.html", context)


@require_POST
def trace_assign_job(request: HttpRequest) -> HttpResponse:
    back = request.POST.get("next") or reverse("trace-list")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("trace-list")
    if not can_edit(request.user):
        messages.error(request, "Grouping traces into a job needs the editor role.")
        return redirect(back)
    try:
        ids = parse_ids(request.POST.getlist("trace"))
        job = request.POST.get("job", "")
        changed = trace_job_assign(trace_ids=ids, job=job)
    except (SelectionError, TraceJobError) as exc:
        messages.error(request, str(exc))
        return redirect(back)
    if job.strip():
        messages.success(request, f"{changed} trace(s) are now job {job.strip()!r}.")
        return redirect(f"{reverse('trace-job')}?{urlencode({'job': job.strip()})}")
    messages.success(request, f"{changed} trace(s) taken out of their job.")
    return redirect(back)


def _int(value: str, default: int) -> int:
    try:
        return max(1, int(value))
    except ValueError:
        return default
