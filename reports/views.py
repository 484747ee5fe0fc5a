"""Report pages. Adapters: read a queryset or call a service, then render."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from artifacts import exports as artifact_exports
from artifacts.models import Artifact, BenchmarkRun
from artifacts.runs.forms import RunFilterForm
from artifacts.runs.querysets import run_filter_options, runs_filtered
from artifacts.traces import querysets as trace_querysets
from perfhub.roles import can_edit
from reports import exports
from reports.forms import ArtifactsReportForm, ProfilesReportForm, ReportFilterForm, RunsReportForm
from reports.kinds import KINDS, ReportInputError, get_kind
from reports.kinds.baseline_link import profile_choices
from reports.models import Report
from reports.querysets import report_versions, reports_filtered
from reports.services import report_create, report_rebuild

# The builder lists at most this many matching runs; narrower filters find the rest.
BUILDER_MAX_RUNS = 200
# How ticked artifacts make two sides, for the kinds that compare artifacts.
ARTIFACT_GROUPINGS = {
    "traces": [("artifact", "two traces"), ("job", "two jobs (by job label)")],
    "counters": [("artifact", "two counter files"), ("label", "two artifact labels")],
}
PAGE_MAX_ROWS = 1000  # rows of one table drawn on the report page (exports have them all)
LIST_COLUMNS = ("id", "title", "kind", "version", "status", "created_by", "created_at", "summary")


def report_list(request: HttpRequest) -> HttpResponse:
    form = ReportFilterForm(request.GET)
    reports = reports_filtered(request.GET)
    if request.GET.get("format") == "csv":
        rows = (
            (
                r.pk,
                r.title,
                r.kind,
                r.version,
                r.status,
                r.created_by.username if r.created_by else "",
                r.created_at.isoformat(),
                " | ".join(r.summary),
            )
            for r in reports
        )
        return artifact_exports.csv_response("reports.csv", LIST_COLUMNS, rows)
    page = Paginator(reports, settings.PERFHUB_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "reports/report_list.html", {"form": form, "page": page})


def report_builder(request: HttpRequest) -> HttpResponse:
    """GET: pick runs (filters + checkboxes) or two profiles. POST: build and go to it."""
    kind = request.POST.get("kind") or request.GET.get("kind") or "runs"
    if kind not in KINDS:
        kind = "runs"
    if request.method == "POST":
        if not can_edit(request.user):
            messages.error(request, "Saving a report needs the editor role.")
            return redirect("report-list")
        report = _create_from_form(request, kind)
        if report is not None:
            return redirect(report)
    return render(request, "reports/report_builder.html", _builder_context(request, kind))


def _create_from_form(request: HttpRequest, kind: str) -> Report | None:
    try:
        return report_create(kind=kind, created_by=request.user, **_report_input(request, kind))
    except ReportInputError as exc:
        messages.error(request, str(exc))
        return None


# Kinds built from two hardware profiles (the same builder form).
PROFILE_KINDS = ("profiles", "npi")


def _report_input(request: HttpRequest, kind: str) -> dict[str, Any]:
    """report_create's arguments from the builder form of this kind."""
    if kind in ARTIFACT_GROUPINGS:
        data = _cleaned(ArtifactsReportForm(request.POST, groupings=ARTIFACT_GROUPINGS[kind]))
        return {
            "title": data["title"],
            "artifact_ids": data["artifact"],
            "group_by": data["group_by"] or "artifact",
        }
    if kind in PROFILE_KINDS:
        data = _cleaned(ProfilesReportForm(request.POST, profiles=profile_choices()))
        return {"title": data["title"], "profile_ids": [data["profile_a"], data["profile_b"]]}
    data = _cleaned(RunsReportForm(request.POST))
    return {
        "title": data["title"],
        "run_ids": data["run"],
        "with_baseline": data["with_baseline"],
        "group_by": data["group_by"],
    }


def _cleaned(form: Any) -> dict[str, Any]:
    """The form's cleaned data, or ReportInputError naming every field's complaint."""
    if not form.is_valid():
        raise ReportInputError(_form_errors(form))
    return form.cleaned_data


def _form_errors(form: Any) -> str:
    return "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())


def _builder_context(request: HttpRequest, kind: str) -> dict[str, Any]:
    params = request.POST if request.method == "POST" else request.GET
    chosen = _ints(params.getlist("run"))
    options = run_filter_options()
    matches = runs_filtered(request.GET)
    listed = list(matches[:BUILDER_MAX_RUNS])
    listed_ids = {r.pk for r in listed}
    ticked_elsewhere = list(
        BenchmarkRun.objects.select_related("artifact").filter(pk__in=set(chosen) - listed_ids)
    )
    unavailable = {k: get_kind(k, require_available=False).unavailable_reason() for k in KINDS}
    return {
        "kind": kind,
        "kinds": [(k, get_kind(k, require_available=False).LABEL, unavailable[k]) for k in KINDS],
        "filter_form": RunFilterForm(request.GET, options=options),
        "runs": ticked_elsewhere + listed,
        "more": matches.count() > BUILDER_MAX_RUNS,
        "max_runs": BUILDER_MAX_RUNS,
        "chosen": set(chosen),
        "runs_form": RunsReportForm(
            initial={
                "title": params.get("title", ""),
                "group_by": params.get("group_by", "artifact"),
                "with_baseline": params.get("with_baseline") in ("1", "on", "true"),
            }
        ),
        "profiles_form": ProfilesReportForm(
            params if request.method == "POST" and kind in PROFILE_KINDS else None,
            profiles=profile_choices(),
        ),
        "profiles_unavailable": unavailable["profiles"],
        **_artifact_choices(kind, params),
    }


def _artifact_choices(kind: str, params: Any) -> dict[str, Any]:
    """The traces or counter files to tick (newest first), for the artifact-based kinds."""
    if kind not in ARTIFACT_GROUPINGS:
        return {}
    chosen = set(_ints(params.getlist("artifact")))
    if kind == "traces":
        rows = [
            {
                "id": t.pk,
                "name": t.artifact.original_name,
                "label": t.job_label,
                "detail": f"{t.rank_label} · {t.gpu}",
                "when": t.recorded_at,
            }
            for t in trace_querysets.traces_filtered(params)[:BUILDER_MAX_RUNS]
        ]
    else:
        files = (
            Artifact.objects.filter(counter_snapshots__isnull=False)
            .distinct()
            .order_by("-uploaded_at", "-id")[:BUILDER_MAX_RUNS]
        )
        rows = [
            {
                "id": a.pk,
                "name": a.original_name,
                "label": a.label,
                "detail": a.host,
                "when": a.captured_at or a.uploaded_at,
            }
            for a in files
        ]
    return {
        "artifact_rows": rows,
        "chosen_artifacts": chosen,
        "artifacts_form": ArtifactsReportForm(
            initial={
                "title": params.get("title", ""),
                "group_by": params.get("group_by", "artifact"),
            },
            groupings=ARTIFACT_GROUPINGS[kind],
        ),
    }


def report_detail(request: HttpRequest, pk: int) -> HttpResponse:
    report = get_object_or_404(Report.objects.select_related("created_by"), pk=pk)
    versions = list(report_versions(report))
    context = exports.render_context(report)
    for table in context["tables"]:
        # a long table (every run x size) is for the CSV; the page shows its start
        table["total_rows"] = len(table["rows"])
        table["rows"] = table["rows"][:PAGE_MAX_ROWS]
    chart_names = [c["name"] for c in context["charts"]]
    return render(
        request,
        "reports/report_detail.html",
        {
            **context,
            "links": True,
            "versions": versions,
            "latest": versions[-1] if versions else report,
            "images_unavailable": exports.images_unavailable(),
            "embed_examples": _embed_examples(report, chart_names),
        },
    )


def _embed_examples(report: Report, chart_names: list[str]) -> list[str]:
    examples = [f"{{{{report id={report.pk}}}}}"]
    examples += [f"{{{{report id={report.pk} chart={name}}}}}" for name in chart_names[:3]]
    if report.table("deltas") or report.table("summary"):
        name = "deltas" if report.table("deltas") else "summary"
        examples.append(f"{{{{report id={report.pk} table={name}}}}}")
    return examples


def report_export(request: HttpRequest, pk: int) -> HttpResponse:
    report = get_object_or_404(Report.objects.select_related("created_by"), pk=pk)
    try:
        content, content_type, name = exports.export_file(
            report,
            request.GET.get("format", "html"),
            table=request.GET.get("table", ""),
            chart=request.GET.get("chart", ""),
            url=request.build_absolute_uri(report.get_absolute_url()),
        )
    except exports.ExportError as exc:
        return HttpResponse(str(exc), status=exc.status, content_type="text/plain; charset=utf-8")
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_POST
def report_rebuild_view(request: HttpRequest, pk: int) -> HttpResponse:
    report = get_object_or_404(Report, pk=pk)
    if not can_edit(request.user):
        messages.error(request, "Re-building a report needs the editor role.")
        return redirect(report)
    try:
        new = report_rebuild(report=report, created_by=request.user)
    except ReportInputError as exc:
        messages.error(request, f"Could not re-build: {exc}")
        return redirect(report)
    messages.success(request, f"Version {new.version} built from the data as it is now.")
    return redirect(new)


def _ints(values: list[str]) -> list[int]:
    out = []
    for value in values:
        try:
            out.append(int(value))
        except ValueError:
            continue
    return out
