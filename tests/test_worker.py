"""End to end with real processes: `manage.py ingest --wait` hands a file to a real
`celery worker` over the configured broker (filesystem by default, Redis in CI)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.db import connection

from artifacts.models import Artifact
from tests.samples import sample

ROOT = Path(__file__).resolve().parent.parent


def database_url() -> str:
    """URL of the test database this process uses, so the child processes share it."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_parses_a_file_ingested_from_the_cli(_isolated_storage, tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "PERFHUB_MEDIA_ROOT": str(_isolated_storage),
        # a queue of its own, so no other worker on this machine takes the message
        "PERFHUB_TASK_QUEUE": f"test-{uuid.uuid4().hex[:8]}",
    }
    log = (tmp_path / "worker.log").open("w+")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "perfhub", "worker", "--pool", "solo",
         "--loglevel", "info", "--without-heartbeat",
         "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        path = sample("nccl_tests/xxrjun_singlenode_G8_h100.log")
        done = subprocess.run(
            [sys.executable, "manage.py", "ingest", str(path), "--wait", "--timeout", "90"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=150,
        )  # fmt: skip
        log.seek(0)
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\nworker log:\n{log.read()}"
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    artifact = Artifact.objects.get()
    assert artifact.status == Artifact.Status.PARSED
    assert artifact.runs.count() == 5
    assert set(artifact.runs.values_list("nranks", flat=True)) == {8}


@pytest.mark.django_db(transaction=True)
def test_a_file_whose_parse_cannot_be_queued_is_kept_and_says_why(_isolated_storage, tmp_path):
    """The broker down (nothing listens on the port): the file is stored, the command says
    the parse was not queued and fails, and the artifact is marked so a re-parse can follow."""
    path = tmp_path / "all_reduce.log"
    path.write_text("# nccl-tests\n#       size         count      type   redop\n" * 3)
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "PERFHUB_MEDIA_ROOT": str(_isolated_storage),
        "CELERY_BROKER_URL": "redis://127.0.0.1:9/0",  # the discard port: refused
        "PERFHUB_TASKS_EAGER": "",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "ingest", str(path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "not queued: the task queue could not be reached" in done.stderr
    artifact = Artifact.objects.get()
    assert artifact.status == Artifact.Status.FAILED
    assert "Re-parse it once" in artifact.error
    assert artifact.file.read() == path.read_bytes()  # nothing lost
