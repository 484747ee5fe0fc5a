"""Celery queues by kind of work, so a parse backlog cannot delay alerts, bundles or upkeep.

Every task goes to one of four queues named after the base queue (``PERFHUB_TASK_QUEUE``,
``celery`` by default): ``celery.parse``, ``celery.evaluate``, ``celery.bundles`` and
``celery.maintenance``. A worker started without ``-Q`` reads all of them (``make run``, the
tests); a deployment runs a pool per queue (README, "Deploying"; docs/scale.md, "Celery
queues"). A test's private base name keeps all four private.

Kept free of Celery imports: settings read the routes, and ``manage.py parse`` must not load
Celery.
"""

from __future__ import annotations

# task name -> kind of work
TASK_QUEUES: dict[str, str] = {
    # CPU-heavy, minutes for a large file: its own workers, as many as there are spare cores
    "artifacts.parse": "parse",
    # short, database-bound steps after a parse: alerts stay minutes behind the uploads
    "artifacts.findings": "evaluate",
    "baselines.after_parse": "evaluate",
    "baselines.profile_efficiency": "evaluate",
    "baselines.refile_hosts": "evaluate",
    # large and bursty outputs: one worker with a memory cap
    "incidents.build_bundle": "bundles",
    "reports.build": "bundles",
    # periodic upkeep (celery beat): never waits behind a parse
    "artifacts.requeue_stalled": "maintenance",
    "artifacts.runs.ensure_partitions": "maintenance",
    "baselines.notify_summary": "maintenance",
    "baselines.repair_facts": "maintenance",
    "baselines.send_digests": "maintenance",
}
KINDS = ("parse", "evaluate", "bundles", "maintenance")


def queue_name(base: str, kind: str) -> str:
    return f"{base}.{kind}"


def queue_names(base: str) -> list[str]:
    """Every queue a worker of this deployment may read: the kinds, then the base queue (tasks
    without a route, such as Celery's own)."""
    return [queue_name(base, kind) for kind in KINDS] + [base]


def task_routes(base: str) -> dict[str, dict[str, str]]:
    return {task: {"queue": queue_name(base, kind)} for task, kind in TASK_QUEUES.items()}
