"""Pages for artifacts and runs. Adapters: read a queryset or call a service, then render."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from artifacts import exports
from artifacts.bundles.services import BUNDLE_KINDS
from artifacts.bundles.transcripts import transcript_parts
from artifacts.forms import ArtifactFilterForm
from artifacts.generic import EXCERPT_BEFORE, EXCERPT_LINES, artifact_excerpt
from artifacts.models import Artifact, BenchmarkRun, JobMember
from artifacts.parsers import kind_choices
from artifacts.querysets import artifacts_filtered
from artifacts.runs.querysets import runs_filtered
from artifacts.services import IngestError, artifact_request_parse
from perfhub.roles import can_edit


def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "artifacts/home.html",
        {
            "recent_artifacts": artifacts_filtered({})[:8],
            "recent_runs": runs_filtered({})[:8],
            "counts": {
                "artifacts": Artifact.objects.count(),
                "runs": BenchmarkRun.objects.count(),
                "failed": Artifact.objects.filter(status=Artifact.Status.FAILED).count(),
            },
            "kinds": kind_choices(),
        },
    )


def artifact_list(request: HttpRequest) -> HttpResponse:
    form = ArtifactFilterForm(request.GET)
    artifacts = artifacts_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "artifacts.csv",
            ["id", "name", "kind", "status", "size", "sha256", "label", "host", "uploaded_at"],
            artifacts.values_list(
                "id",
                "original_name",
                "kind",
                "status",
                "size",
                "sha256",
                "label",
                "host",
                "uploaded_at",
            ),
        )
    return render(
        request,
        "artifacts/artifact_list.html",
        {"form": form, "page": _page(request, artifacts), "kinds": kind_choices()},
    )


def artifact_detail(request: HttpRequest, pk: int) -> HttpResponse:
    artifact = get_object_or_404(Artifact.objects.select_related("uploaded_by", "parent"), pk=pk)
    # Support bundles list their parts; a part names the bundle(s) it was found in.
    members = (
        artifact.bundle_members.select_related("artifact").order_by("position")
        if artifact.kind in BUNDLE_KINDS or transcript_parts(artifact)
        else []
    )
    memberships = artifact.bundle_memberships.select_related("bundle").order_by("bundle_id")
    return render(
        request,
        "artifacts/artifact_detail.html",
        {
            "artifact": artifact,
            "runs": artifact.runs.order_by("index"),
            "kinds": kind_choices(),
            "bundle_members": members,
            "memberships": memberships,
            "job_member": JobMember.objects.select_related("job").filter(artifact=artifact).first(),
        },
    )


def artifact_download(request: HttpRequest, pk: int) -> FileResponse:
    """Always an attachment with nosniff: an uploaded HTML file must never render in our origin."""
    artifact = get_object_or_404(Artifact, pk=pk)
    response = FileResponse(
        artifact.file.open("rb"),
        as_attachment=True,
        filename=artifact.original_name,
        content_type="application/octet-stream",
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response


def artifact_lines(request: HttpRequest, pk: int) -> HttpResponse:
    """The file's lines around ``?line=N``, each with its anchor ``#L<n>``: what a generic
    reading's items (and anyone citing a line) link to. Shown as text, never rendered."""
    artifact = get_object_or_404(Artifact, pk=pk)
    try:
        line = max(1, int(request.GET.get("line") or 1))
    except ValueError:
        line = 1
    start = max(1, line - EXCERPT_BEFORE)
    lines = artifact_excerpt(artifact, start, start + EXCERPT_LINES - 1)
    return render(
        request,
        "artifacts/artifact_lines.html",
        {
            "artifact": artifact,
            "lines": lines,
            "line": line,
            "earlier": max(1, start - EXCERPT_LINES + EXCERPT_BEFORE) if start > 1 else None,
            "later": start + EXCERPT_LINES + EXCERPT_BEFORE
            if len(lines) == EXCERPT_LINES
            else None,
        },
    )


@require_POST
def artifact_reparse(request: HttpRequest, pk: int) -> HttpResponse:
    artifact = get_object_or_404(Artifact, pk=pk)
    if not can_edit(request.user):
        messages.error(request, "Re-parsing needs the editor role.")
        return redirect(artifact)
    try:
        artifact_request_parse(
            artifact=artifact, kind=request.POST.get("kind") or None, by=request.user
        )
    except IngestError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Parse queued; this page updates when it finishes.")
    return redirect(artifact)


def _page(request: HttpRequest, queryset: QuerySet) -> Page:
    paginator = Paginator(queryset, settings.PERFHUB_PAGE_SIZE)
    return paginator.get_page(request.GET.get("page"))
