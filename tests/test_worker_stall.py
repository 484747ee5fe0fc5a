"""A real worker killed with SIGKILL mid-parse: the parse is found stalled, re-queued once,
parsed by the next worker, with the same rows as a clean re-parse and nothing duplicated
(filesystem broker: the restarted worker's rule; Redis in CI: no live worker runs it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings
from django.utils import timezone

from artifacts.models import Artifact
from artifacts.parsing import artifact_parse
from artifacts.stalls import live_parses, stalled_requeue
from perfhub.queues import queue_names, task_routes
from tests.test_worker import ROOT, database_url

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def nccl_log(path: Path, megabytes: int) -> Path:
    """An NCCL_DEBUG=INFO log of eight hosts, long enough to be caught mid-parse."""
    lines = ["NCCL version 2.21.5+cuda12.4"]
    for i in range(8):
        head = f"gpu{i:02d}:{2000 + i}:{2000 + i} [0] NCCL INFO"
        lines += [
            f"{head} Bootstrap : Using eth0:10.0.0.{i + 1}<0>",
            f"{head} NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0",
            f"{head} Channel 00/0 : {i}[0] -> {(i + 1) % 8}[0] [send] via NET/IB/0",
        ]
    block = ("\n".join(lines) + "\n").encode()
    path.write_bytes(block * (megabytes * 1024 * 1024 // len(block)))
    return path


def start_worker(env: dict[str, str], name: str, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "perfhub", "worker", "--concurrency", "1",
         "--hostname", name, "--loglevel", "info",
         "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: SIGKILL reaches the pool child too
    )  # fmt: skip


@contextmanager
def routed_to(app: Celery, base: str) -> Iterator[None]:
    """This process's tasks sent to the test's private queues (the workers' base name)."""

    def route(routes: dict[str, dict[str, str]]) -> None:
        app.conf.task_routes = routes
        app.amqp.flush_routes()
        app.amqp.router = app.amqp.Router()  # a router keeps the routes it was made with

    saved = app.conf.task_routes
    route(task_routes(base))
    try:
        yield
    finally:
        route(saved)
        for name in queue_names(base):  # the router declared them as it sent to them
            app.amqp.queues.pop(name, None)


def wait_for(check: Callable[[], bool], seconds: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"not {what} within {seconds} s; worker log:\n{log.read_text()[-3000:]}")


def stop(worker: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, sig)
        worker.wait(timeout=30)


def test_a_parse_whose_worker_was_killed_is_requeued_and_parsed_once(_isolated_storage, tmp_path):
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "PERFHUB_MEDIA_ROOT": str(_isolated_storage),
        "PERFHUB_TASK_QUEUE": queue,  # no other worker on this machine takes the message
    }
    log = tmp_path / "worker.log"
    first = start_worker(env, f"stall-{queue}@localhost", log)
    second = None
    try:
        done = subprocess.run(
            [sys.executable, "manage.py", "ingest", str(nccl_log(tmp_path / "big.log", 24))],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        artifact = Artifact.objects.get()

        def moving() -> bool:
            artifact.refresh_from_db()
            return artifact.status == Artifact.Status.PARSING and artifact.progress_bytes > 0

        wait_for(moving, 120, "parsing", log)
        stop(first, signal.SIGKILL)  # mid-parse, as the OOM killer would
        artifact.refresh_from_db()
        assert artifact.status == Artifact.Status.PARSING  # nothing else would ever move it
        assert artifact.parse_worker == f"stall-{queue}@localhost"

        if settings.CELERY_BROKER_URL.startswith("filesystem://"):
            # The same worker, restarted: its parses are stalled at once.
            second = start_worker(env, f"stall-{queue}@localhost", log)
        else:
            # No live worker runs it and it has not moved: the periodic check re-queues it.
            from perfhub.celery import app

            live = live_parses()
            assert live is not None and artifact.pk not in live
            later = timezone.now() + timedelta(seconds=settings.PERFHUB_PARSE_STALL_SECONDS + 1)
            with routed_to(app, queue):
                assert stalled_requeue(live=live, now=later) == [artifact.pk]
            second = start_worker(env, f"other-{queue}@localhost", log)

        def parsed() -> bool:
            artifact.refresh_from_db()
            return artifact.status in (Artifact.Status.PARSED, Artifact.Status.FAILED)

        wait_for(parsed, 180, "parsed again", log)
    finally:
        stop(first, signal.SIGKILL)
        if second is not None:
            stop(second)
    assert artifact.status == Artifact.Status.PARSED, artifact.error
    assert artifact.requeued_at is not None
    rows = (artifact.host_facts.count(), artifact.summary)
    # One more parse gives the same rows: nothing was duplicated by the dead one.
    again = artifact_parse(artifact_id=artifact.pk)
    assert (again.host_facts.count(), again.summary) == rows
    assert rows[0] > 0
