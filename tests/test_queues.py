"""Celery queues by kind of work (perfhub/queues.py): every task has its queue, each queue its
own exchange and key, and a worker started without -Q reads them all."""

from __future__ import annotations

import pytest

from perfhub.celery import app
from perfhub.queues import KINDS, TASK_QUEUES, queue_names


@pytest.fixture(scope="module")
def tasks() -> list[str]:
    app.loader.import_default_modules()
    return sorted(name for name in app.tasks if not name.startswith("celery."))


def test_every_task_of_the_project_has_a_kind_of_work(tasks):
    assert tasks, "autodiscovery found no task"
    assert set(tasks) == set(TASK_QUEUES), "a new task needs its line in perfhub/queues.py"
    assert set(TASK_QUEUES.values()) == set(KINDS)


def test_tasks_are_routed_to_their_kinds_queue(tasks):
    base = app.conf.task_default_queue
    for name in tasks:
        queue = app.amqp.router.route({}, name)["queue"]
        assert queue.name == f"{base}.{TASK_QUEUES[name]}"
    assert app.amqp.router.route({}, "artifacts.parse")["queue"].name == f"{base}.parse"
    assert app.amqp.router.route({}, "celery.backend_cleanup")["queue"].name == base


def test_a_worker_without_q_reads_every_queue_and_no_message_is_copied():
    declared = app.amqp.queues
    assert list(declared) == queue_names(app.conf.task_default_queue)
    bindings = {(q.exchange.name, q.routing_key) for q in declared.values()}
    # one exchange and key per queue: a shared binding would deliver each message to several
    assert len(bindings) == len(declared)
