"""Parses whose worker died are found, re-queued once and said so; the rules without
processes here, a real SIGKILL in tests/test_worker_stall.py."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.utils import timezone

from artifacts.models import Artifact
from artifacts.services import artifact_ingest, artifact_request_parse
from artifacts.stalls import stalled_requeue

pytestmark = pytest.mark.django_db

TABLE = b"""#       size         count      type   redop    root     time   algbw   busbw #wrong
        1024           256     float     sum      -1    35.00    0.03    0.05      0
"""


@pytest.fixture
def parsing(settings):  # type: ignore[no-untyped-def]
    """An artifact a worker started parsing ten minutes ago and never moved since."""
    settings.PERFHUB_PARSE_STALL_SECONDS = 180
    artifact = artifact_ingest(stream=io.BytesIO(TABLE), name="t.txt", enqueue=False).artifact
    then = timezone.now() - timedelta(minutes=10)
    Artifact.objects.filter(pk=artifact.pk).update(
        status=Artifact.Status.PARSING, parse_worker="celery@gpu-a", progress_at=then
    )
    return artifact


@pytest.fixture
def captured(monkeypatch):  # type: ignore[no-untyped-def]
    """What was queued (by name), in place of the broker."""
    sent: list[tuple] = []
    monkeypatch.setattr(
        "artifacts.stalls.dispatch.enqueue", lambda name, *args, **_: sent.append((name, *args))
    )
    return sent


def test_a_quiet_parse_no_live_worker_runs_is_requeued_once(parsing, captured):
    assert stalled_requeue(live={}) == [parsing.pk]
    parsing.refresh_from_db()
    assert parsing.status == Artifact.Status.PENDING and parsing.requeued_at is not None
    assert captured == [("artifacts.parse", parsing.pk)]
    # stalled again: failed with the reason, not re-queued forever
    Artifact.objects.filter(pk=parsing.pk).update(status=Artifact.Status.PARSING)
    assert stalled_requeue(live={}) == []
    parsing.refresh_from_db()
    assert parsing.status == Artifact.Status.FAILED and "stalled twice" in parsing.error
    assert "celery@gpu-a" in parsing.error and len(captured) == 1
    # a person's re-parse may be re-queued again
    artifact_request_parse(artifact=parsing)
    parsing.refresh_from_db()
    assert parsing.requeued_at is None and parsing.status == Artifact.Status.PENDING


def test_a_parse_a_live_worker_runs_or_that_moved_lately_is_left_alone(parsing, captured):
    assert stalled_requeue(live={parsing.pk: "celery@gpu-a"}) == []
    Artifact.objects.filter(pk=parsing.pk).update(progress_at=timezone.now())
    assert stalled_requeue(live={}) == []
    assert stalled_requeue(live=None, now=timezone.now() + timedelta(hours=1)) == []  # can't tell
    parsing.refresh_from_db()
    assert parsing.status == Artifact.Status.PARSING and captured == []


def test_a_worker_starting_under_the_dead_ones_name_requeues_its_parses_at_once(parsing, captured):
    Artifact.objects.filter(pk=parsing.pk).update(progress_at=timezone.now())
    assert stalled_requeue(live={}, dead_worker="celery@gpu-b") == []
    assert stalled_requeue(live={}, dead_worker="celery@gpu-a") == [parsing.pk]
    assert captured == [("artifacts.parse", parsing.pk)]


def test_the_page_and_the_api_say_stalled_requeued(parsing, captured, viewer_client):
    stalled_requeue(live={})
    html = viewer_client.get(f"/artifacts/{parsing.pk}/").content.decode()
    assert "Stalled, re-queued" in html and "celery@gpu-a" in html
    body = viewer_client.get(f"/api/v1/artifacts/{parsing.pk}/").json()
    assert body["requeued_at"] and body["status"] == "pending"
