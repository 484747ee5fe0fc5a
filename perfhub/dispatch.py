"""Queue Celery tasks by name once the current transaction commits.

Services enqueue through here instead of importing their task modules: tasks call services,
so a service importing its task would close an import cycle, and a process that only
enqueues (the web server, ``manage.py ingest``) need not import every task's code.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction

log = logging.getLogger(__name__)

# Told why a task could not be queued (the broker is down or refuses), after the commit: what
# the request saved stays saved and the caller marks it so a person can retry.
OnFailure = Callable[[str], None]


def enqueue(name: str, *args: Any, on_failure: OnFailure | None = None) -> None:
    """Send task ``name`` after commit (at once when no transaction is open)."""
    transaction.on_commit(lambda: send(name, *args, on_failure=on_failure))


def send(name: str, *args: Any, on_failure: OnFailure | None = None) -> None:
    from kombu.exceptions import KombuError

    from perfhub.celery import app

    try:
        if app.conf.task_always_eager:
            # send_task ignores task_always_eager: in-process runs (tests, PERFHUB_TASKS_EAGER)
            # need the task object, which autodiscovery registers.
            app.loader.import_default_modules()
            app.tasks[name].delay(*args)
        else:
            app.send_task(name, args=args)
    except (KombuError, OSError) as exc:
        # After the commit an exception would turn a saved upload into an error page (500).
        log.error("task %s%r not queued: %s", name, args, exc)
        if on_failure is not None:
            on_failure(f"the task queue could not be reached ({exc})")
