"""Writes of jobs: which job an artifact's evidence belongs to, and a person's corrections.

``job_assign`` runs after every parse (and again once evidence runs exist, from baselines'
after-parse task); it is idempotent, and a person's placement (``JobMember.pinned``) is
never undone by it. The order of the rules is the order of how explicit the evidence is:

1. a job id the evidence states (upload metadata or API field ``job``, ``slurm_job_id``...);
2. the bundle or transcript it was cut out of (``Artifact.parent``): the parent's job;
3. the same hosts over an overlapping time range (``footprint.SLACK``): an existing job of
   exactly those hosts, else a new one, so the next artifact of that world finds it.

An upload label is never a reason: ``nightly`` spans clusters.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max, Min

from artifacts.jobs.footprint import SLACK, Footprint, artifact_footprint, hosts_key
from artifacts.jobs.models import Job, JobMember
from artifacts.models.core import Artifact
from perfhub.locks import serialize

# Metadata keys that state a job id (case-insensitive), most specific first.
JOB_ID_KEYS = (
    "job", "job_id", "slurm_job_id", "slurm_jobid", "k8s_job", "kubernetes_job", "torchrun_id",
)  # fmt: skip


class JobError(ValueError):
    """A person's job change that cannot be done (unknown artifact, ...)."""


def stated_job_id(metadata: dict[str, Any] | None) -> str:
    lowered = {str(k).strip().lower(): v for k, v in (metadata or {}).items()}
    for key in JOB_ID_KEYS:
        value = lowered.get(key)
        if value is not None and not isinstance(value, dict | list) and str(value).strip():
            return str(value).strip()[:150]
    return ""


def job_assign(*, artifact: Artifact) -> Job | None:
    """Put the artifact in the job its evidence says (see the module docstring)."""
    with transaction.atomic():
        serialize("jobs")  # a job's members, hosts and span: one writer at a time
        current = JobMember.objects.select_related("job").filter(artifact=artifact).first()
        footprint = artifact_footprint(artifact)
        if current is not None and current.pinned:
            _member_update(current, footprint)
            job_refresh(current.job)
            return current.job
        job, reason = _job_for(artifact, footprint)
        if job is None:
            if current is not None:
                _leave(current)
            return None
        if current is not None and current.job_id != job.pk:
            _leave(current)
            current = None
        member = current or JobMember(job=job, artifact=artifact)
        member.reason = reason[:300]
        _member_update(member, footprint, save=False)
        member.save()
        if job.how == Job.How.STATED and footprint.hosts:
            _absorb_host_jobs(job, footprint)
        job_refresh(job)
        return job


def _job_for(artifact: Artifact, footprint: Footprint) -> tuple[Job | None, str]:
    if stated := stated_job_id(artifact.metadata):
        job = _job_get_or_create(f"id:{stated}", how=Job.How.STATED, name=f"job {stated}")
        return job, f"states job id {stated!r} (upload metadata)"
    if artifact.parent_id:
        parent = Artifact.objects.get(pk=artifact.parent_id)
        membership = JobMember.objects.select_related("job").filter(artifact=parent).first()
        if membership is not None:
            return membership.job, f"cut out of artifact #{parent.pk} ({parent.original_name})"
        job = _job_get_or_create(
            f"parent:{parent.pk}", how=Job.How.PARENT, name=f"parts of {parent.original_name}"
        )
        JobMember.objects.get_or_create(
            artifact=parent, defaults={"job": job, "reason": "the bundle or transcript itself"}
        )
        return job, f"cut out of artifact #{parent.pk} ({parent.original_name})"
    if not footprint.hosts:
        return None, ""
    key = footprint.hosts_key
    overlapping = Job.objects.filter(
        hosts_key=key,
        started_at__lte=footprint.end + SLACK,
        ended_at__gte=footprint.start - SLACK,
    ).order_by("started_at", "id")
    for job in overlapping:
        if job.members.exclude(artifact=artifact).exists():
            hosts = ", ".join(footprint.hosts[:4]) + (" ..." if len(footprint.hosts) > 4 else "")
            return job, f"same hosts ({hosts}) in an overlapping time range"
    job = _job_get_or_create(
        f"hosts:{key}:{artifact.pk}",
        how=Job.How.HOSTS,
        name=f"{', '.join(footprint.hosts[:2])}{' ...' if len(footprint.hosts) > 2 else ''} "
        f"at {footprint.start:%Y-%m-%d %H:%M}",
    )
    return job, "its own hosts and time (no other evidence of this world yet)"


def _absorb_host_jobs(job: Job, footprint: Footprint) -> None:
    """A stated job takes in the automatic members of same-host jobs overlapping it, so the
    result does not depend on whether the id-bearing file came first."""
    others = Job.objects.filter(
        how=Job.How.HOSTS,
        hosts_key=footprint.hosts_key,
        started_at__lte=footprint.end + SLACK,
        ended_at__gte=footprint.start - SLACK,
    ).exclude(pk=job.pk)
    for other in others:
        moved = other.members.filter(pinned=False)
        moved.update(job=job, reason=f"same hosts in an overlapping time range as job {job}")
        _delete_if_empty(other)


def _job_get_or_create(key: str, *, how: str, name: str) -> Job:
    try:
        with transaction.atomic():  # a concurrent worker may create the same key
            return Job.objects.get_or_create(key=key, defaults={"how": how, "name": name[:200]})[0]
    except IntegrityError:
        return Job.objects.get(key=key)


def _member_update(member: JobMember, footprint: Footprint, *, save: bool = True) -> None:
    member.hosts = list(footprint.hosts)
    member.started_at, member.ended_at = footprint.start, footprint.end
    if save:
        member.save(update_fields=["hosts", "started_at", "ended_at", "joined_at"])


def _leave(member: JobMember) -> None:
    job = member.job
    member.delete()
    _delete_if_empty(job)


def _delete_if_empty(job: Job) -> None:
    if job.how != Job.How.PERSON and not job.members.exists():
        job.delete()
    else:
        job_refresh(job)


def job_refresh(job: Job) -> None:
    """The job's hosts and time range: the union of its members'."""
    members = list(job.members.values_list("hosts", flat=True))
    hosts = sorted({h for hs in members for h in (hs or [])})
    span = job.members.aggregate(start=Min("started_at"), end=Max("ended_at"))
    job.hosts, job.hosts_key = hosts, hosts_key(hosts)
    job.started_at, job.ended_at = span["start"], span["end"]
    job.save(update_fields=["hosts", "hosts_key", "started_at", "ended_at"])


# ----------------------------------------------------------------------- a person's changes


def job_member_place(*, artifact: Artifact, job: Job | None, user: Any) -> Job:
    """A person puts the artifact in ``job`` (``None``: a job of its own, out of any other).
    Re-parses and re-assignment keep it there."""
    with transaction.atomic():
        serialize("jobs")
        if job is None:
            job = Job.objects.create(
                key=f"person:{uuid.uuid4().hex}",
                how=Job.How.PERSON,
                name=f"{artifact.original_name} alone",
                created_by=user if getattr(user, "is_authenticated", False) else None,
            )
        current = JobMember.objects.select_related("job").filter(artifact=artifact).first()
        if current is not None and current.job_id != job.pk:
            _leave(current)
        who = getattr(user, "username", "") or "a person"
        member, _ = JobMember.objects.update_or_create(
            artifact=artifact,
            defaults={
                "job": job,
                "reason": f"put here by {who}",
                "pinned": True,
                "placed_by": user if getattr(user, "is_authenticated", False) else None,
            },
        )
        _member_update(member, artifact_footprint(artifact))
        job_refresh(job)
        return job
