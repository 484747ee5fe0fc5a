"""Helpers of the baselines pipeline tests: load the demo generator's files through the real
ingest -> parse -> ``baselines.after_parse`` path (on-commit callbacks run, Celery eager)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

from artifacts.models import Artifact
from artifacts.parsing import artifact_parse
from artifacts.runs.demo import DemoFile, demo_files
from artifacts.services import artifact_ingest


def ingest_and_parse(demo: DemoFile, **overrides: Any) -> Artifact:
    outcome = artifact_ingest(
        stream=io.BytesIO(overrides.pop("content", demo.content)),
        name=demo.name,
        label=demo.label,
        host=demo.host,
        metadata=overrides.pop("metadata", demo.metadata),
        enqueue=False,
    )
    return artifact_parse(artifact_id=outcome.artifact.pk)


def load_demo(
    capture: Callable[..., Any],
    *,
    days: int = 6,
    profiles: Iterable[str] | None = None,
    collectives: Iterable[str] | None = ("all_reduce",),
    order: Callable[[list[DemoFile]], list[DemoFile]] | None = None,
) -> list[Artifact]:
    """Ingest and parse demo files, running what commits trigger (the after-parse hook).

    ``capture`` is pytest-django's ``django_capture_on_commit_callbacks`` fixture; use it
    together with the ``eager_tasks`` fixture so ``baselines.after_parse`` runs in-process.
    """
    files = [
        f
        for f in demo_files(days=days)
        if (profiles is None or f.metadata["profile"] in profiles)
        and (collectives is None or f.metadata["collective"] in collectives)
    ]
    if order is not None:
        files = order(files)
    loaded = []
    for demo in files:
        with capture(execute=True):
            loaded.append(ingest_and_parse(demo))
    return loaded
