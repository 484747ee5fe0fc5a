"""Named reads of jobs: the list, one job's evidence, and the facts its evidence states,
grouped so that the page shows where they agree and where they disagree."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q, QuerySet

from artifacts.fabric.models import HostFact
from artifacts.jobs.models import Job, JobMember
from artifacts.jobs.scopes import ENV_PREFIX, HOST, JOB_FACT_NAMES, fact_scope
from artifacts.traces.models import TraceSummary

# Host facts worth comparing across a job's evidence (versions and hardware); the rest of a
# host's facts are on its artifacts' pages.
HOST_FACT_NAMES = (
    "gpu.driver_version", "gpu.cuda_version", "kernel.version", "hca.firmware",
    "nic.firmware", "link.firmware", "gpu.name", "hca.type", "port.rate_gbps",
    "port.link_layer",
)  # fmt: skip
MAX_FACT_ROWS = 5000


def jobs_filtered(params: Any) -> QuerySet[Job]:
    # A job whose files were all deleted is nobody's world any more.
    jobs = (
        Job.objects.annotate(evidence=Count("members", distinct=True))
        .filter(evidence__gt=0)
        .order_by("-started_at", "-id")
    )
    if host := (params.get("host") or "").strip():
        jobs = jobs.filter(members__hosts__icontains=host).distinct()
    if how := (params.get("how") or "").strip():
        jobs = jobs.filter(how=how)
    return jobs


def job_members(job: Job) -> list[JobMember]:
    return list(job.members.select_related("artifact", "placed_by").order_by("started_at", "pk"))


@dataclass
class FactRow:
    """One fact name (per host, for host facts) and the values the job's evidence states."""

    name: str
    host: str
    scope: str
    values: dict[str, list[int]] = field(default_factory=dict)  # value -> artifact ids

    @property
    def agree(self) -> bool:
        return len(self.values) <= 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "host": self.host,
            "scope": self.scope,
            "agree": self.agree,
            "values": [{"value": v, "artifacts": ids} for v, ids in self.values.items()],
        }


def job_facts(job: Job) -> list[FactRow]:
    """What the job's evidence states: job facts per name, host facts per host and name;
    disagreements first (they are what a person must look at)."""
    ids = list(job.members.values_list("artifact_id", flat=True))
    wanted = Q(name__startswith=ENV_PREFIX) | Q(name__in=[*JOB_FACT_NAMES, *HOST_FACT_NAMES])
    rows = (
        HostFact.objects.filter(artifact_id__in=ids)
        .filter(wanted)
        .exclude(name__in=["nccl.gpu", "nccl.gpu_count"])  # per GPU: the artifact page has them
        .order_by()
        .values_list("name", "host", "value", "artifact_id")[:MAX_FACT_ROWS]
    )
    grouped: dict[tuple[str, str], FactRow] = {}
    for name, host, value, artifact_id in rows:
        scope = fact_scope(name)
        key = (name, host if scope == HOST else "")
        row = grouped.setdefault(key, FactRow(name, key[1], scope))
        # Versions carry a PSID or build after them; an NCCL_* value is compared whole.
        text = value.strip() if name.startswith(ENV_PREFIX) else (value.split() or [""])[0]
        found = row.values.setdefault(text, [])
        if artifact_id not in found:
            found.append(artifact_id)
    for trace in TraceSummary.objects.filter(artifact_id__in=ids).exclude(nccl_version=""):
        row = grouped.setdefault(("nccl.version", ""), FactRow("nccl.version", "", "job"))
        row.values.setdefault(trace.nccl_version, []).append(trace.artifact_id)
    return sorted(grouped.values(), key=lambda r: (r.agree, r.scope, r.name, r.host))
