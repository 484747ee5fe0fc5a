"""Nothing refused silently: a file no parser takes is read generically by the parse task,
and its page, the API and the search show what was read, each item citing its line, with
the nearest kinds, why each declined and one-click "parse as" (issue 22)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from artifacts.models import Artifact
from artifacts.parsers import OTHER
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest, artifact_request_parse
from documents.embeds import EMBED_KINDS, EmbedError
from knowledge.search import search
from tests.samples import more_sample

pytestmark = pytest.mark.django_db

CONFIG = b"""# rack notes, typed by hand
cluster: r07
fabric:
  link_speed: 400 Gb/s
  switch_model = QM9790

host,gpus,bw_gbps
n1,8,371.2
n2,8,12.5

The all_reduce reached 12.5 GB/s on n2 after the reboot.
"""


def ingest(data: bytes, name: str, **kwargs: Any) -> Artifact:
    return artifact_ingest(stream=io.BytesIO(data), name=name, enqueue=False, **kwargs).artifact


def read(data: bytes = CONFIG, name: str = "rack-notes.txt", **kwargs: Any) -> Artifact:
    artifact = ingest(data, name, **kwargs)
    return artifact_parse(artifact_id=artifact.pk)


def test_an_unknown_upload_is_queued_and_read_generically(
    eager_tasks: None, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        artifact = artifact_ingest(stream=io.BytesIO(CONFIG), name="rack-notes.txt").artifact
    artifact.refresh_from_db()
    assert (artifact.kind, artifact.status) == (OTHER, Artifact.Status.STORED)
    pairs = {p["key"]: p for p in artifact.generic["pairs"]}
    assert (pairs["cluster"]["value"], pairs["cluster"]["line"]) == ("r07", 2)
    assert (pairs["link_speed"]["section"], pairs["link_speed"]["line"]) == ("fabric", 4)
    (table,) = artifact.generic["tables"]
    assert (table["line"], table["header"]) == (7, ["host", "gpus", "bw_gbps"])
    assert table["rows"][1] == {"line": 9, "cells": ["n2", "8", "12.5"]}
    (number,) = artifact.generic["numbers"]
    assert (number["line"], number["value"], number["unit"]) == (11, 12.5, "GB/s")
    assert artifact.generic["nearest"], "the nearest kinds are listed"


def test_the_page_shows_the_reading_each_item_linking_its_line(editor_client: Any) -> None:
    artifact = read()
    page = editor_client.get(artifact.get_absolute_url()).content.decode()
    assert "What could be read without a parser" in page
    lines_url = f"/artifacts/{artifact.pk}/lines/"
    assert f'href="{lines_url}?line=4#L4"' in page  # link_speed
    assert "QM9790" in page and "bw_gbps" in page and "GB/s" in page
    assert f'href="{lines_url}?line=11#L11"' in page  # the number in prose
    assert "Nearest kinds, and why each declined" in page
    first = artifact.generic["nearest"][0]
    assert first["reasons"][0] in page
    assert f'<input type="hidden" name="kind" value="{first["kind"]}">' in page
    assert f"Parse as {first['kind']}" in page


def test_a_viewer_sees_the_reading_but_no_parse_as_button(viewer_client: Any) -> None:
    artifact = read()
    page = viewer_client.get(artifact.get_absolute_url()).content.decode()
    assert "Nearest kinds, and why each declined" in page
    assert "Parse as " not in page


def test_a_cited_line_is_shown_with_its_anchor(editor_client: Any) -> None:
    artifact = read()
    page = editor_client.get(f"/artifacts/{artifact.pk}/lines/?line=4").content.decode()
    assert '<tr id="L4" class="current">' in page
    assert "link_speed: 400 Gb/s" in page
    assert 'id="L1"' in page and 'id="L11"' in page
    past = editor_client.get(f"/artifacts/{artifact.pk}/lines/?line=900").content.decode()
    assert "The file has no line 900" in past
    assert editor_client.get(f"/artifacts/{artifact.pk}/lines/?line=x").status_code == 200


def test_the_api_returns_the_reading_and_the_ranked_reasons(editor_api: Any) -> None:
    artifact = read()
    body = editor_api.get(f"/api/v1/artifacts/{artifact.pk}/").json()
    assert body["generic"]["pairs"] == artifact.generic["pairs"]
    assert body["generic"]["tables"][0]["header"] == ["host", "gpus", "bw_gbps"]
    nearest = body["generic"]["nearest"]
    assert nearest and all(k["reasons"] for k in nearest)
    assert "detection" in body  # how the kind was (not) chosen, as before


def test_unauthenticated_requests_are_refused(client: Any) -> None:
    artifact = read()
    assert APIClient().get(f"/api/v1/artifacts/{artifact.pk}/").status_code == 401
    page = client.get(f"/artifacts/{artifact.pk}/lines/?line=4")
    assert page.status_code == 302 and "/login" in page["Location"]
    assert "QM9790" not in client.get(artifact.get_absolute_url()).content.decode()


def test_search_finds_the_file_by_what_was_read() -> None:
    artifact = read()
    hits = search("QM9790").hits
    assert [(h.source, h.key) for h in hits] == [("artifact", str(artifact.pk))]


def test_a_refused_parse_keeps_its_message_and_gets_the_reading_then_a_parse_clears_it(
    editor_client: Any,
) -> None:
    artifact = read(kind="nccl_tests")
    assert artifact.status == Artifact.Status.FAILED
    assert "nccl-tests" in artifact.error
    assert {p["key"] for p in artifact.generic["pairs"]} >= {"cluster", "link_speed"}
    assert "nccl_tests" not in {k["kind"] for k in artifact.generic["nearest"]}
    page = editor_client.get(artifact.get_absolute_url()).content.decode()
    assert "The nccl_tests parser refused this file" in page
    # the person says what it is: parsed, and the generic reading no longer applies
    ethtool = b"counters, as pasted\nrx_packets: 845320277\nrx_prio3_pause: 12\n"
    other = read(ethtool, "paste.txt")
    assert other.kind == OTHER and other.generic["pairs"]
    artifact_request_parse(artifact=other, kind="ethtool_stats")
    parsed = artifact_parse(artifact_id=other.pk)
    assert parsed.status == Artifact.Status.PARSED and parsed.generic == {}


def test_a_real_file_no_parser_takes_is_read_and_shown(editor_client: Any) -> None:
    path = more_sample("counters/alcf_polaris_mpich_mpi_profile_rank0.txt")
    artifact = read(path.read_bytes(), path.name)
    assert artifact.kind == OTHER
    routines = artifact.generic["tables"][0]
    assert routines["header"] == ["MPI Routine", "#calls", "avg. bytes", "time(sec)"]
    page = editor_client.get(artifact.get_absolute_url()).content.decode()
    assert "MPI_Allreduce" in page and "total elapsed time" in page
    assert "nsys_stats" in {k["kind"] for k in artifact.generic["nearest"]}
    assert "no nsys stats report found" in page
    assert "Parse as nsys_stats" in page


def test_a_line_is_cited_in_a_document_with_the_artifact_embed() -> None:
    artifact = read()
    kind = EMBED_KINDS["artifact"]
    pinned = kind.pin({"id": str(artifact.pk), "line": "4"})
    assert pinned.pinned["artifact_sha256"] == artifact.sha256
    assert (pinned.snapshot["line"], pinned.snapshot["line_text"]) == (4, "  link_speed: 400 Gb/s")
    page = kind.render(pinned, interactive=True, dom_id="e1")
    assert f'href="/artifacts/{artifact.pk}/lines/?line=4#L4"' in page
    assert "<code>  link_speed: 400 Gb/s</code>" in page
    static = kind.render(pinned, interactive=False, dom_id="e1")
    assert "line 4" in static and "<a " not in static
    with pytest.raises(EmbedError, match="no such line"):
        kind.pin({"id": str(artifact.pk), "line": "400"})


def test_the_page_waits_for_the_reading_of_a_file_no_parser_took(editor_client: Any) -> None:
    artifact = ingest(CONFIG, "rack-notes.txt")  # stored; the reading is still queued
    page = editor_client.get(artifact.get_absolute_url()).content.decode()
    assert 'data-awaiting="generic"' in page  # artifact_status.js polls until it lands
    artifact = artifact_parse(artifact_id=artifact.pk)
    assert (
        'data-awaiting="generic"'
        not in editor_client.get(artifact.get_absolute_url()).content.decode()
    )


def test_the_parse_command_prints_the_generic_reading_on_request(tmp_path: Any) -> None:
    path = tmp_path / "rack-notes.txt"
    path.write_bytes(CONFIG)
    out = io.StringIO()
    call_command("parse", str(path), "--generic", stdout=out)
    body = json.loads(out.getvalue())
    assert body["kind"] == OTHER
    assert {"line": 2, "key": "cluster", "value": "r07"} in body["pairs"]
    assert body["tables"][0]["header"] == ["host", "gpus", "bw_gbps"]
    assert body["nearest"] and body["nearest"][0]["reasons"]
    # the same reading an upload of the file gets
    stored = read(CONFIG).generic
    assert {k: v for k, v in body.items() if k != "kind"} == stored


def test_a_stored_file_that_cannot_be_read_says_so_and_the_page_stops_waiting(
    editor_client: Any,
) -> None:
    artifact = ingest(CONFIG, "rack-notes.txt")
    artifact.file.delete(save=False)  # the storage lost it
    artifact = artifact_parse(artifact_id=artifact.pk)
    assert artifact.generic["unreadable"]
    page = editor_client.get(artifact.get_absolute_url()).content.decode()
    assert 'data-awaiting="generic"' not in page
    assert "could not be read" in page


@pytest.mark.django_db(transaction=True)  # the queued reading runs when the upload commits
def test_ingest_wait_waits_for_the_generic_reading_of_a_file_no_parser_took(
    tmp_path: Any, eager_tasks: None
) -> None:
    path = tmp_path / "rack-notes.txt"
    path.write_bytes(CONFIG)
    out = io.StringIO()
    call_command("ingest", str(path), "--wait", "--timeout", "5", stdout=out)
    artifact = Artifact.objects.get()
    assert artifact.generic["pairs"] and f"#{artifact.pk} rack-notes.txt: stored" in out.getvalue()


def test_ingest_wait_without_a_worker_does_not_call_a_queued_reading_done(tmp_path: Any) -> None:
    path = tmp_path / "rack-notes.txt"
    path.write_bytes(CONFIG)
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match="not parsed"):
        call_command("ingest", str(path), "--wait", "--timeout", "1", stdout=out, stderr=err)
    assert "timed out waiting for 1 parse(s)" in err.getvalue()
    artifact = Artifact.objects.get()
    assert f"#{artifact.pk} rack-notes.txt" not in out.getvalue()  # what --wait prints when done
