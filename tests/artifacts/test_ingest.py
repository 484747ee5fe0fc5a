"""The ingest service and the parse pipeline, against the real database and storage."""

import gzip
import io

import pytest

from artifacts import loaders
from artifacts.models import Artifact, BenchmarkRun, Measurement
from artifacts.parsers import OTHER
from artifacts.parsing import artifact_parse
from artifacts.services import IngestError, artifact_ingest, artifact_request_parse
from tests.samples import sample

pytestmark = pytest.mark.django_db

PAIR_OK = "nccl_tests/xxrjun_pair_N2_G1_ok.log"


def ingest_bytes(data: bytes, name: str = "run.log", **kwargs):
    return artifact_ingest(stream=io.BytesIO(data), name=name, **kwargs)


def ingest_sample(relative: str, **kwargs):
    path = sample(relative)
    with path.open("rb") as stream:
        return artifact_ingest(stream=stream, name=path.name, **kwargs)


def test_ingest_stores_the_raw_file_with_hash_size_and_detected_kind(editor):
    outcome = ingest_sample(PAIR_OK, uploaded_by=editor, label="nightly", metadata={"job": 7})
    artifact = outcome.artifact
    raw = sample(PAIR_OK).read_bytes()
    assert outcome.created
    assert artifact.kind == "nccl_tests" == artifact.kind_detected
    assert artifact.size == len(raw)
    assert artifact.status == Artifact.Status.PENDING
    assert (artifact.label, artifact.metadata, artifact.uploaded_by) == (
        "nightly",
        {"job": 7},
        editor,
    )
    with artifact.file.open("rb") as stored:
        assert stored.read() == raw
    assert artifact.sha256 in artifact.file.name  # stored by hash, not by the user's file name


def test_same_bytes_twice_return_the_existing_artifact_and_say_so():
    first = ingest_sample(PAIR_OK)
    second = ingest_bytes(sample(PAIR_OK).read_bytes(), name="renamed.log")
    assert not second.created
    assert second.artifact.pk == first.artifact.pk
    assert "already uploaded" in second.message
    assert Artifact.objects.count() == 1


def test_kind_is_detected_inside_gzip():
    packed = gzip.compress(sample(PAIR_OK).read_bytes())
    assert ingest_bytes(packed, name="x.gz").artifact.kind == "nccl_tests"


def test_unknown_files_are_kept_as_other_attachments_not_rejected():
    artifact = ingest_bytes(b"rack 7 photo notes\n", name="notes.txt").artifact
    assert artifact.kind == OTHER
    assert artifact.status == Artifact.Status.STORED


def test_manual_kind_override_wins_over_detection():
    artifact = ingest_bytes(b"rack notes\n", kind="nccl_tests").artifact
    assert (artifact.kind, artifact.kind_detected) == ("nccl_tests", OTHER)


def test_size_limit_and_empty_files_are_refused_with_a_clear_message(settings):
    settings.PERFHUB_MAX_UPLOAD_BYTES = 100
    with pytest.raises(IngestError, match="upload limit of 100 bytes"):
        ingest_bytes(b"x" * 101)
    with pytest.raises(IngestError, match="empty"):
        ingest_bytes(b"")
    with pytest.raises(IngestError, match="unknown kind"):
        ingest_bytes(b"abc", kind="pcap")
    assert Artifact.objects.count() == 0


def test_path_components_of_the_name_are_dropped():
    artifact = ingest_bytes(b"notes\n", name="C:\\Users\\x\\..\\evil/../../etc/passwd").artifact
    assert artifact.original_name == "passwd"


def test_upload_enqueues_a_parse_on_commit_and_the_task_loads_runs(
    eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        artifact = ingest_sample(PAIR_OK).artifact
    assert callbacks  # the parse (and what runs after it) waited for the commit
    artifact.refresh_from_db()
    assert artifact.status == Artifact.Status.PARSED, artifact.error
    assert artifact.parser_version == "1"
    runs = list(artifact.runs.order_by("index"))
    assert [r.collective for r in runs] == ["alltoall", "sendrecv"]
    assert all(r.nranks == 2 and r.nhosts == 2 for r in runs)
    assert runs[0].measurements.count() == 10
    # 16 GiB sendrecv row: out-of-place busbw 13.59, in-place 13.61 (read from the file)
    last = runs[1].measurements.get(size_bytes=17179869184)
    assert (last.oop_busbw_gbps, last.ip_busbw_gbps, last.ip_wrong) == (13.59, 13.61, None)
    assert runs[1].avg_busbw_gbps == pytest.approx(13.5405)
    assert set(runs[0].ranks.values_list("host", flat=True)) == {"cnode2-001", "cnode2-002"}


def test_reparse_replaces_derived_rows_instead_of_adding_to_them():
    artifact = ingest_sample(PAIR_OK).artifact
    artifact_parse(artifact_id=artifact.pk)
    counts = (BenchmarkRun.objects.count(), Measurement.objects.count())
    artifact_parse(artifact_id=artifact.pk)
    assert (BenchmarkRun.objects.count(), Measurement.objects.count()) == counts == (2, 20)


def test_a_crash_while_loading_leaves_the_previous_rows_intact(monkeypatch):
    artifact = ingest_sample(PAIR_OK).artifact
    artifact_parse(artifact_id=artifact.pk)
    before = Measurement.objects.count()

    def half_load(artifact, result):
        artifact.runs.all().delete()  # the real loader's first step...
        raise RuntimeError("worker killed")  # ...then the process dies

    monkeypatch.setitem(loaders.LOADERS, "nccl_tests", half_load)
    with pytest.raises(RuntimeError):
        artifact_parse(artifact_id=artifact.pk)
    assert Measurement.objects.count() == before  # rolled back, never half loaded
    artifact_request_parse(artifact=Artifact.objects.get(pk=artifact.pk))  # still re-parseable
    monkeypatch.undo()
    assert artifact_parse(artifact_id=artifact.pk).status == Artifact.Status.PARSED


def test_a_file_of_the_wrong_kind_fails_with_the_parsers_message_and_keeps_the_file():
    artifact = ingest_bytes(b"hello\nthis is not a benchmark\n", kind="nccl_tests").artifact
    artifact = artifact_parse(artifact_id=artifact.pk)
    assert artifact.status == Artifact.Status.FAILED
    assert "nccl-tests" in artifact.error
    assert artifact.file.size == len(b"hello\nthis is not a benchmark\n")


def test_reparse_as_another_kind_is_possible_after_a_failure():
    artifact = ingest_bytes(sample(PAIR_OK).read_bytes(), kind=OTHER).artifact
    assert artifact.status == Artifact.Status.STORED
    artifact = artifact_request_parse(artifact=artifact, kind="nccl_tests")
    assert artifact.status == Artifact.Status.PENDING
    assert artifact_parse(artifact_id=artifact.pk).runs.count() == 2


def test_failed_nccl_run_becomes_an_error_on_the_run():
    artifact = ingest_sample("nccl_tests/xxrjun_pair_N2_G1_FAIL_network_error.log").artifact
    artifact = artifact_parse(artifact_id=artifact.pk)
    assert artifact.status == Artifact.Status.PARSED
    run = artifact.runs.get()
    assert not run.complete
    assert any("network error" in e for e in run.errors)


def test_captured_at_metadata_dates_the_runs_and_bad_values_are_refused():
    artifact = ingest_sample(PAIR_OK, metadata={"captured_at": "2026-10-01T02:00:00"}).artifact
    artifact = artifact_parse(artifact_id=artifact.pk)
    measured = {run.measured_at.isoformat() for run in artifact.runs.all()}
    assert measured == {"2026-10-01T02:00:00+00:00"}  # no zone given: taken as UTC
    with pytest.raises(IngestError, match="captured_at"):
        ingest_bytes(b"other bytes\n", metadata={"captured_at": "last tuesday"})


def test_runs_without_any_time_are_dated_by_the_upload():
    artifact = artifact_parse(artifact_id=ingest_sample(PAIR_OK).artifact.pk)
    assert {run.measured_at for run in artifact.runs.all()} == {artifact.uploaded_at}
