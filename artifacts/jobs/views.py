"""Job pages: the list, one job (evidence, hosts, time range, facts), a person's changes."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from artifacts.jobs.models import Job, JobMember
from artifacts.jobs.querysets import job_facts, job_members, jobs_filtered
from artifacts.jobs.services import job_member_place
from artifacts.models.core import Artifact
from perfhub import dispatch
from perfhub.paging import page_of
from perfhub.roles import can_edit


def job_list(request: HttpRequest) -> HttpResponse:
    jobs = jobs_filtered(request.GET)
    return render(
        request,
        "jobs/job_list.html",
        {"page": page_of(request, jobs), "host": request.GET.get("host", ""), "hows": Job.How},
    )


def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=pk)
    facts = job_facts(job)
    return render(
        request,
        "jobs/job_detail.html",
        {
            "job": job,
            "members": job_members(job),
            "facts": facts,
            "disagreeing": sum(not f.agree for f in facts),
        },
    )


@require_POST
def job_member_change(request: HttpRequest, pk: int) -> HttpResponse:
    """Editors: ``add`` an artifact (by id) to this job, or ``remove`` one (it then stands
    alone, in a job of its own that re-assignment keeps)."""
    job = get_object_or_404(Job, pk=pk)
    if not can_edit(request.user):
        messages.error(request, "Changing a job needs the editor role.")
        return redirect(job)
    try:
        artifact_id = int(request.POST.get("artifact", ""))
    except ValueError:
        messages.error(request, "Give the artifact's number.")
        return redirect(job)
    artifact = Artifact.objects.filter(pk=artifact_id).first()
    if artifact is None:
        messages.error(request, f"There is no artifact #{artifact_id}.")
        return redirect(job)
    # The runs of the job it leaves lose its facts: re-file one of theirs too.
    left = (
        JobMember.objects.filter(job__members__artifact=artifact)
        .exclude(artifact=artifact)
        .values_list("artifact_id", flat=True)
        .first()
    )
    if request.POST.get("action") == "remove":
        alone = job_member_place(artifact=artifact, job=None, user=request.user)
        messages.success(request, f"Artifact #{artifact.pk} now stands alone in {alone}.")
    else:
        job_member_place(artifact=artifact, job=job, user=request.user)
        messages.success(request, f"Artifact #{artifact.pk} is now part of this job.")
    # The runs of the moved file and of both jobs see other facts now: baselines re-files
    # them (queued by name: the artifacts app does not import baselines).
    for artifact_id in {artifact.pk, left} - {None}:
        dispatch.enqueue("baselines.after_parse", artifact_id)
    return redirect(job)
