"""What a person sees of detection: ranked candidates with reasons and one-click "parse as"
on the artifact page and in the API, the chosen kind remembered over re-parses, cleaning
applied to the stored file, and a transcript's other commands stored as their own evidence."""

from __future__ import annotations

import io
from typing import Any

import pytest

from artifacts.models import Artifact, BundleMember
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from tests.artifacts.parsers.test_detection import NCCL_TESTS

pytestmark = pytest.mark.django_db

ETHTOOL = b"NIC statistics:\n     rx_packets: 845320277\n     rx_prio3_pause: 12\n"


def ingest(data: bytes, name: str, **kwargs: Any) -> Artifact:
    return artifact_ingest(stream=io.BytesIO(data), name=name, enqueue=False, **kwargs).artifact


def test_detection_is_stored_with_ranked_candidates_and_shown(editor_client) -> None:
    artifact = ingest(NCCL_TESTS, "all_reduce.log")
    assert artifact.kind == "nccl_tests"
    assert artifact.detection["candidates"][0]["kind"] == "nccl_tests"
    assert artifact.detection["candidates"][0]["reasons"]
    page = editor_client.get(artifact.get_absolute_url()).content.decode()
    assert "How the kind was chosen" in page
    assert "the file name mentions" in page


def test_an_unknown_file_offers_parse_as_and_the_choice_is_remembered(editor, editor_client):
    artifact = ingest(b"counters, as a colleague pasted them\n" + ETHTOOL[16:], "paste.txt")
    page = editor_client.get(artifact.get_absolute_url()).content.decode()
    assert 'name="kind"' in page  # every kind can be chosen
    response = editor_client.post(f"/artifacts/{artifact.pk}/reparse/", {"kind": "ethtool_stats"})
    assert response.status_code == 302
    artifact.refresh_from_db()
    assert artifact.kind == "ethtool_stats"
    assert artifact.detection["chosen_kind"] == "ethtool_stats"
    assert artifact.detection["chosen_by"] == editor.username
    artifact_parse(artifact_id=artifact.pk)
    artifact_parse(artifact_id=artifact.pk)  # a later re-parse keeps the person's choice
    artifact.refresh_from_db()
    assert artifact.kind == "ethtool_stats" and artifact.status == Artifact.Status.PARSED
    assert artifact.detection["chosen_by"] == editor.username
    page = editor_client.get(artifact.get_absolute_url()).content.decode()
    assert f"chosen by {editor.username}" in page


def test_the_api_shows_detection_and_reparses_as_a_chosen_kind(editor_api) -> None:
    artifact = ingest(NCCL_TESTS, "run.log")
    body = editor_api.get(f"/api/v1/artifacts/{artifact.pk}/").json()
    assert body["detection"]["kind"] == "nccl_tests"
    assert {"kind", "score", "reasons"} <= set(body["detection"]["candidates"][0])
    reply = editor_api.post(f"/api/v1/artifacts/{artifact.pk}/reparse/", {"kind": "nccl_debug"})
    assert reply.status_code == 202
    assert reply.json()["detection"]["chosen_kind"] == "nccl_debug"


def test_a_prefixed_utf16_upload_is_cleaned_before_parsing() -> None:
    lines = NCCL_TESTS.decode().splitlines(keepends=True)
    data = "".join(f"[1,0]<stdout>:{line}" for line in lines).encode("utf-16")
    artifact = ingest(data, "run.log")
    assert artifact.kind == "nccl_tests"
    parsed = artifact_parse(artifact_id=artifact.pk)
    assert parsed.status == Artifact.Status.PARSED
    assert parsed.runs.get().measurements.count() == 5
    assert any("decoded from UTF-16" in w for w in parsed.warnings)


def test_a_transcripts_other_commands_become_their_own_artifacts(editor_client) -> None:
    data = b"$ cat all_reduce.log\n" + NCCL_TESTS + b"$ ethtool -S ens1f0\n" + ETHTOOL
    artifact = ingest(data, "session.txt")
    assert artifact.kind == "nccl_tests"
    parsed = artifact_parse(artifact_id=artifact.pk)
    assert parsed.runs.get().measurements.count() == 5
    member = BundleMember.objects.get(bundle=artifact)
    assert member.name == "ethtool -S ens1f0" and member.kind == "ethtool_stats"
    child = member.artifact
    assert child.parent_id == artifact.pk and child.kind == "ethtool_stats"
    assert child.file.open("rb").read().startswith(b"$ ethtool -S ens1f0\nNIC statistics:")
    artifact_parse(artifact_id=artifact.pk)  # idempotent: listed once, stored once
    assert BundleMember.objects.filter(bundle=artifact).count() == 1
    page = editor_client.get(artifact.get_absolute_url()).content.decode()
    assert "Commands in this transcript" in page
