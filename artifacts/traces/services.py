"""Writes on traces: grouping traces into a job after the fact."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from artifacts.models import Artifact, TraceSummary
from artifacts.traces.loaders import job_label_of


class TraceJobError(ValueError):
    """The grouping request names nothing usable; nothing was changed."""


@transaction.atomic
def trace_job_assign(*, trace_ids: Sequence[int], job: str) -> int:
    """Put traces into job ``job`` (or take them out with ``""``); returns how many changed.

    The job is written to each artifact's metadata (``job``), the source the loader reads,
    so a later re-parse keeps the grouping.
    """
    job = job.strip()
    if len(job) > 120:
        raise TraceJobError("a job label has at most 120 characters")
    ids = list(dict.fromkeys(int(i) for i in trace_ids))
    if not ids:
        raise TraceJobError("no trace given")
    artifacts = list(Artifact.objects.select_for_update().filter(pk__in=ids, trace__isnull=False))
    missing = sorted(set(ids) - {a.pk for a in artifacts})
    if missing:
        raise TraceJobError(f"no trace with id {', '.join(map(str, missing[:10]))}")
    for artifact in artifacts:
        metadata = dict(artifact.metadata or {})
        if job:
            metadata["job"] = job
        else:
            metadata.pop("job", None)
        artifact.metadata = metadata
    Artifact.objects.bulk_update(artifacts, ["metadata"])
    changed = 0
    for artifact in artifacts:
        changed += TraceSummary.objects.filter(pk=artifact.pk).update(
            job_label=job_label_of(artifact)
        )
    return changed
