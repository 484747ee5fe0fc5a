"""Writes of sweeps: made from picked runs, or from an uploaded folder's artifacts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from artifacts.models import Artifact, BenchmarkRun
from baselines.models import HardwareProfile, RunContext, Sweep

MAX_NAME = 200


@transaction.atomic
def sweep_create(
    *,
    name: str,
    run_ids: Iterable[int] = (),
    artifact_ids: Iterable[int] = (),
    user: Any = None,
    notes: str = "",
    profile: HardwareProfile | None = None,
) -> Sweep:
    """A sweep of picked runs (all on one profile: that is what makes them comparable) or
    of uploaded artifacts (their runs may not be parsed yet; the page reads them later)."""
    run_ids = sorted({int(r) for r in run_ids})
    artifact_ids = sorted({int(a) for a in artifact_ids})
    name = " ".join((name or "").split())[:MAX_NAME]
    if not run_ids and not artifact_ids:
        raise ValidationError("pick at least two runs (or upload a folder) to make a sweep")
    runs = list(BenchmarkRun.objects.filter(pk__in=run_ids))
    if len(runs) != len(run_ids):
        missing = sorted(set(run_ids) - {r.pk for r in runs})
        raise ValidationError(f"no such runs: {', '.join(map(str, missing))}")
    artifacts = list(Artifact.objects.filter(pk__in=artifact_ids))
    if len(artifacts) != len(artifact_ids):
        raise ValidationError("some of the artifacts do not exist")
    if run_ids and not artifact_ids:
        if len(runs) < 2:
            raise ValidationError("a sweep compares runs: pick at least two")
        profiles = set(
            RunContext.objects.filter(run_id__in=run_ids).values_list("profile_id", flat=True)
        )
        if len(profiles) > 1:
            raise ValidationError(
                "the runs are on different hardware profiles; a sweep is on one profile"
            )
        if profile is None and profiles:
            profile = HardwareProfile.objects.get(pk=next(iter(profiles)))
    sweep = Sweep.objects.create(
        name=name or _default_name(runs, artifacts),
        profile=profile,
        source=Sweep.Source.UPLOAD if artifact_ids else Sweep.Source.PICKED,
        notes=notes[:5000],
        created_by=user if getattr(user, "is_authenticated", False) else None,
        run_keys=sorted([r.artifact_id, r.index] for r in runs),
    )
    sweep.artifacts.set(artifacts)
    return sweep


def _default_name(runs: list[BenchmarkRun], artifacts: list[Artifact]) -> str:
    collectives = sorted({r.collective for r in runs if r.collective})
    what = ", ".join(collectives) or f"{len(artifacts)} uploaded files"
    return f"sweep of {what}"[:MAX_NAME]
