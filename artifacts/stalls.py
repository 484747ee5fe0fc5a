"""Parses whose worker died: found, re-queued once, and said so on the artifact's page.

A worker killed mid-parse (SIGKILL, the OOM killer) loses nothing: the parse's rows are
written in one transaction at its end, and the broker keeps the unacknowledged message
(``CELERY_TASK_ACKS_LATE``). But Redis hands the message back only after its visibility
timeout, an hour by default, and until then the artifact says "parsing". So:

* a parse is *stalled* when it has not moved (``Artifact.progress_at``) for
  ``PERFHUB_PARSE_STALL_SECONDS`` and no live worker says it is running it (Celery's
  remote control, ``inspect().active()``), checked every minute by celery beat;
* a worker that starts under the name of the one that was parsing (the same worker,
  restarted) knows that worker's parses are dead at once;
* a stalled parse is re-queued once (``requeued_at``; the page says "stalled, re-queued");
  stalled again, it is marked failed with the reason, and one click re-parses it. A late
  redelivery of the old message parses it again, which replaces the same rows.

With the filesystem broker (``make run``) workers cannot be asked what they run, so only
the restart rule applies there.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from artifacts.models.core import Artifact
from perfhub import dispatch

PARSE_TASK = "artifacts.parse"


def live_parses(timeout: float = 2.0) -> dict[int, str] | None:
    """Artifact id -> worker name of every parse a live worker is running; None when the
    broker cannot ask its workers (then nobody can tell a slow parse from a dead one)."""
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        return None
    from perfhub.celery import app

    try:
        replies = app.control.inspect(timeout=timeout).active() or {}
    except Exception:  # broker unreachable: no verdict rather than a wrong one
        return None
    running: dict[int, str] = {}
    for worker, tasks in replies.items():
        for task in tasks or ():
            args = task.get("args") or ()
            if task.get("name") == PARSE_TASK and args and str(args[0]).isdigit():
                running[int(args[0])] = worker
    return running


def stalled_requeue(
    *, live: dict[int, str] | None, dead_worker: str = "", now: datetime | None = None
) -> list[int]:
    """Re-queue (once) the stalled parses; returns the ids re-queued. ``dead_worker``: the
    name of a worker known dead (it is starting again), whose parses are stalled at once."""
    now = now or timezone.now()
    parsing = Artifact.objects.filter(status=Artifact.Status.PARSING)
    if dead_worker:
        stalled = parsing.filter(parse_worker=dead_worker)
    elif live is None:
        return []
    else:
        quiet_since = now - timedelta(seconds=settings.PERFHUB_PARSE_STALL_SECONDS)
        stalled = parsing.filter(progress_at__lt=quiet_since).exclude(pk__in=list(live))
    requeued = []
    for artifact in stalled.only("pk", "requeued_at", "parse_worker"):
        if _requeue(artifact, now):
            requeued.append(artifact.pk)
    return requeued


def _requeue(artifact: Artifact, now: datetime) -> bool:
    still = Artifact.objects.filter(pk=artifact.pk, status=Artifact.Status.PARSING)
    worker = artifact.parse_worker or "its worker"
    with transaction.atomic():
        if artifact.requeued_at is not None:  # it stalled once already: don't loop
            still.update(
                status=Artifact.Status.FAILED,
                error=f"the parse stalled twice ({worker} stopped without finishing); "
                "re-parse to try again",
                parsed_at=now,
            )
            return False
        # Conditional on the status: two checkers (beat and a starting worker) re-queue once.
        if not still.filter(requeued_at__isnull=True).update(
            status=Artifact.Status.PENDING, requeued_at=now, progress_bytes=0
        ):
            return False
        dispatch.enqueue(PARSE_TASK, artifact.pk)
    return True
