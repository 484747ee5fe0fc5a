"""Celery tasks: thin, named, idempotent wrappers around services."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task
from celery.signals import worker_ready

from artifacts import stalls
from artifacts.models import Artifact
from artifacts.parsers import ParseError
from artifacts.parsing import artifact_parse


@shared_task(
    name="artifacts.parse",
    bind=True,
    autoretry_for=(ParseError,),
    retry_backoff=5,
    max_retries=3,
)
def parse_artifact(self: Task, artifact_id: int) -> str:
    """Parse one artifact. Permanent parse errors are recorded and not raised, so only
    transient failures (storage unreachable) reach autoretry."""
    try:
        return artifact_parse(artifact_id=artifact_id, worker=self.request.hostname or "").status
    except Artifact.DoesNotExist:
        return "deleted"  # removed between upload and parse: nothing to do


@shared_task(name="artifacts.requeue_stalled")
def requeue_stalled() -> int:
    """Periodic (celery beat, every minute): parses whose worker died, re-queued once."""
    return len(stalls.stalled_requeue(live=stalls.live_parses()))


@worker_ready.connect
def _requeue_own_stalled(sender: Any = None, **_: Any) -> None:
    """A worker that starts under a name still parsing something is that worker restarted
    after dying mid-parse: its parses are stalled whatever their age."""
    if name := getattr(sender, "hostname", "") or "":
        stalls.stalled_requeue(live=None, dead_worker=name)
