"""Timeline suggestions from evidence; accepting one creates a linked timeline event."""

from datetime import UTC, datetime

import pytest

from artifacts.models import Artifact
from artifacts.parsing import artifact_parse
from incidents import suggestions
from incidents.models import SuggestionDecision, TimelineEvent
from incidents.services import (
    IncidentError,
    incident_attach_artifacts,
    suggestion_accept,
    suggestion_reject,
)
from incidents.suggestions import suggestions_for
from tests.incidents.conftest import ingest_bytes

pytestmark = pytest.mark.django_db


def attach(incident, editor, *artifacts):
    incident_attach_artifacts(incident=incident, artifact_ids=[a.pk for a in artifacts], by=editor)


def test_capture_and_upload_times_are_suggested_as_evidence(incident, editor, ok_artifact):
    attach(incident, editor, ok_artifact)
    found = suggestions_for(incident)
    assert [s.key.rsplit(":", 1)[-1] for s in found] == ["captured", "uploaded"]
    assert found[0].at == datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
    assert found[0].kind == "evidence" and "xxrjun_pair_N2_G1_ok.log" in found[0].text


def test_a_failed_nccl_tests_run_is_suggested_with_its_error(incident, editor, failed_artifact):
    attach(incident, editor, failed_artifact)
    failed = [s for s in suggestions_for(incident) if s.source == "nccl_tests"]
    assert len(failed) == 1
    assert "remote process exited or there was a network error" in failed[0].text
    assert failed[0].run_id == failed_artifact.runs.get().pk


def test_accepting_links_the_event_to_its_source_and_hides_the_suggestion(
    incident, editor, failed_artifact
):
    attach(incident, editor, failed_artifact)
    key = next(s.key for s in suggestions_for(incident) if s.source == "nccl_tests")
    event = suggestion_accept(incident=incident, key=key, by=editor, key_event=True)
    assert event.artifact == failed_artifact and event.run == failed_artifact.runs.get()
    assert event.kind == TimelineEvent.Kind.OBSERVATION and event.key and event.author == editor
    assert key not in {s.key for s in suggestions_for(incident)}
    with pytest.raises(IncidentError, match="already decided"):
        suggestion_accept(incident=incident, key=key, by=editor)
    assert incident.events.count() == 1


def test_rejected_suggestions_stay_hidden_after_a_reparse(incident, editor, failed_artifact):
    attach(incident, editor, failed_artifact)
    key = next(s.key for s in suggestions_for(incident) if s.source == "nccl_tests")
    suggestion_reject(incident=incident, key=key, by=editor)
    artifact_parse(artifact_id=failed_artifact.pk)  # new run rows, same keys
    assert key not in {s.key for s in suggestions_for(incident)}
    assert SuggestionDecision.objects.get(key=key).decision == "rejected"


def test_unknown_suggestions_are_refused(incident, editor):
    with pytest.raises(IncidentError, match="no suggestion"):
        suggestion_accept(incident=incident, key="run:nope:0:failed", by=editor)


def test_nccl_debug_events_from_the_stored_summary(incident, editor):
    artifact = ingest_bytes("debug.log", b"gdr114:1:1 [0] NCCL INFO hello\n", kind="other")
    Artifact.objects.filter(pk=artifact.pk).update(
        kind="nccl_debug",
        summary={
            "events": [
                {"kind": "comm_init", "time": None, "host": "gdr114", "rank": 0, "text": "init"},
                {
                    "kind": "nccl_warn",
                    "time": "2025-03-01T10:07:08.408271+00:00",
                    "host": "gdr114",
                    "rank": 3,
                    "text": "NET/IB : Got completion with error 12",
                    "line": 41,
                    "details": {"repeats": 5},
                },
            ]
        },
    )
    attach(incident, editor, Artifact.objects.get(pk=artifact.pk))
    warn = [s for s in suggestions_for(incident) if s.source == "nccl_debug"]
    assert len(warn) == 1  # communicator init is routine, not suggested
    assert warn[0].kind == "alert" and not warn[0].approximate_time
    assert warn[0].at == datetime(2025, 3, 1, 10, 7, 8, 408271, tzinfo=UTC)  # sub-second kept
    assert "on gdr114 rank 3" in warn[0].text and "repeated 5 times" in warn[0].text
    event = suggestion_accept(incident=incident, key=warn[0].key, by=editor)
    assert event.at.microsecond == 408271 and event.ref_kind == "nccl_debug"


def test_more_evidence_kinds_plug_in_through_the_registry(
    incident, editor, ok_artifact, monkeypatch
):
    def finding(artifact):
        yield suggestions.Suggestion(
            key=f"finding:{artifact.pk}",
            at=artifact.uploaded_at,
            kind="alert",
            text="PFC pause storm",
            source="finding",
            artifact_id=artifact.pk,
        )

    monkeypatch.setitem(suggestions.SUGGESTERS, "nccl_tests", [finding])
    attach(incident, editor, ok_artifact)
    assert "PFC pause storm" in [s.text for s in suggestions_for(incident)]
