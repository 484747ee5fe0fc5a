"""Workers filing evidence of one world at once: no deadlock, one job (CI runs this on
PostgreSQL, where row locks taken in different orders used to deadlock)."""

from __future__ import annotations

import io
import threading

import pytest
from django.db import connection

from artifacts.jobs.models import Job, JobMember
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from baselines.services import artifact_evaluate
from tests.artifacts.jobs.evidence import nccl_tests_text

pytestmark = pytest.mark.django_db(transaction=True)
HOSTS = ["gdr114", "gdr114", "gdr116", "gdr116"]


def test_parallel_assignments_of_one_world_share_one_job() -> None:
    ids = []
    for n in range(6):
        outcome = artifact_ingest(
            stream=io.BytesIO(nccl_tests_text(HOSTS, busbw=0.05 + n / 100, tag=f"rep {n}")),
            name=f"rep{n}.txt",
            metadata={"captured_at": "2024-10-18T10:00:00Z"},
            enqueue=False,
        )
        ids.append(outcome.artifact.pk)
    errors: list[BaseException] = []
    start = threading.Barrier(len(ids))

    def assign(pk: int) -> None:
        try:
            start.wait()
            artifact_parse(artifact_id=pk)  # assigns in the parse's transaction
            artifact_evaluate(artifact_id=pk, notify=False)  # and again after it
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=assign, args=(pk,)) for pk in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert JobMember.objects.filter(artifact_id__in=ids).count() == len(ids)
    assert Job.objects.filter(members__artifact_id__in=ids).distinct().count() == 1
    assert sorted(Job.objects.get().hosts) == ["gdr114", "gdr116"]
