"""Queue Celery tasks by name once the current transaction commits.

Services enqueue through here instead of importing their task modules: tasks call services,
so a service importing its task would close an import cycle, and a process that only
enqueues (the web server, ``manage.py ingest``) need not import every task's code.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction


def enqueue(name: str, *args: Any) -> None:
    """Send task ``name`` after commit (at once when no transaction is open)."""
    transaction.on_commit(lambda: send(name, *args))


def send(name: str, *args: Any) -> None:
    from perfhub.celery import app

    if app.conf.task_always_eager:
        # send_task ignores task_always_eager: in-process runs (tests, PERFHUB_TASKS_EAGER)
        # need the task object, which autodiscovery registers.
        app.loader.import_default_modules()
        app.tasks[name].delay(*args)
    else:
        app.send_task(name, args=args)
