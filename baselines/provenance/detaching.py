"""A person's correction of where a run's facts came from: detach a source, re-file.

A detachment is stored per (the run's artifact, the source artifact, the key), so it holds
for every run of that file and survives re-parses of either file (artifact ids stay).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from artifacts.models import Artifact, BenchmarkRun
from baselines.models import FactDetachment
from baselines.services import runs_evaluate


class DetachError(ValueError):
    """A detachment that cannot be made (the run's own output, an unknown source)."""


def fact_detach(*, run: BenchmarkRun, source_id: int, key: str, user: Any) -> FactDetachment:
    """Take ``key`` (a component, an ``NCCL_*`` variable, a profile field, ``*``) stated by
    artifact ``source_id`` away from the runs of ``run``'s file, and re-file them."""
    key = (key or "").strip()[:120]
    if not key:
        raise DetachError("say which fact to detach")
    if source_id == run.artifact_id:
        raise DetachError("a run's own file is its own evidence; re-parse it as another kind")
    source = Artifact.objects.filter(pk=source_id).first()
    if source is None:
        raise DetachError(f"no artifact #{source_id}")
    with transaction.atomic():
        detachment, _ = FactDetachment.objects.get_or_create(
            artifact_id=run.artifact_id,
            source=source,
            key=key,
            defaults={"by": user if getattr(user, "is_authenticated", False) else None},
        )
    _refile(run.artifact_id)
    return detachment


def fact_reattach(*, detachment: FactDetachment) -> None:
    artifact_id = detachment.artifact_id
    detachment.delete()
    _refile(artifact_id)


def _refile(artifact_id: int) -> None:
    runs = list(
        BenchmarkRun.objects.filter(artifact_id=artifact_id)
        .select_related("artifact")
        .prefetch_related("ranks", "measurements")
        .order_by("index")
    )
    runs_evaluate(runs=runs)
