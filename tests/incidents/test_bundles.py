"""Evidence bundles: deterministic zips, consistent redaction (raw files too), safe names."""

import hashlib
import io
import json
import re
import zipfile

import pytest

from incidents.bundles.services import (
    bundle_build,
    bundle_preview,
    bundle_request,
    check_archive_path,
    safe_name,
    write_deterministic_zip,
)
from incidents.models import EvidenceBundle, RedactionPattern
from incidents.postmortems import postmortem_save
from incidents.services import (
    IncidentError,
    incident_attach_artifacts,
    suggestion_accept,
)
from incidents.suggestions import suggestions_for
from tests.incidents.conftest import ingest_bytes

pytestmark = pytest.mark.django_db


@pytest.fixture
def evidence(incident, editor, ok_artifact, failed_artifact, nccl_log):
    incident_attach_artifacts(
        incident=incident,
        artifact_ids=[ok_artifact.pk, failed_artifact.pk, nccl_log.pk],
        by=editor,
    )
    key = next(s.key for s in suggestions_for(incident) if s.source == "nccl_tests")
    suggestion_accept(incident=incident, key=key, by=editor, key_event=True)
    return [ok_artifact, failed_artifact, nccl_log]


def entries(bundle):
    with bundle.file.open("rb") as handle:
        archive = zipfile.ZipFile(io.BytesIO(handle.read()))
    return {info.filename: archive.read(info) for info in archive.infolist()}, archive


def test_two_builds_of_the_same_inputs_are_byte_identical(incident, editor, evidence):
    first = bundle_request(by=editor, incident=incident, redact=True)
    second = bundle_request(by=editor, incident=incident, redact=True)
    assert first.status == second.status == EvidenceBundle.Status.READY
    assert first.pk != second.pk and first.sha256 == second.sha256
    with first.file.open("rb") as a, second.file.open("rb") as b:
        assert a.read() == b.read()
    plain = bundle_request(by=editor, incident=incident, redact=False)
    assert plain.sha256 != first.sha256
    assert plain.sha256 == bundle_request(by=editor, incident=incident, redact=False).sha256


def test_the_archive_layout_manifest_and_fixed_metadata(incident, editor, evidence):
    bundle = bundle_request(by=editor, incident=incident, redact=False)
    files, archive = entries(bundle)
    root = "INC-1-evidence/" if incident.pk == 1 else f"INC-{incident.pk}-evidence/"
    names = sorted(files)
    assert names == sorted(archive.namelist()) == [i.filename for i in archive.infolist()]
    for required in ("README.md", "summary.html", "manifest.json", "timeline.csv"):
        assert root + required in files
    assert root + "raw/01-xxrjun_pair_N2_G1_ok.log" in files
    assert root + "parsed/01-xxrjun_pair_N2_G1_ok.log/measurements.csv" in files
    assert root + "parsed/01-xxrjun_pair_N2_G1_ok.log/result.json" in files
    assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in archive.infolist())
    manifest = json.loads(files[root + "manifest.json"])
    listed = {f["path"]: f for f in manifest["files"]}
    assert set(listed) == {n.removeprefix(root) for n in names} - {"manifest.json"}
    for path, data in files.items():
        if path != root + "manifest.json":
            entry = listed[path.removeprefix(root)]
            assert entry["sha256"] == hashlib.sha256(data).hexdigest()
            assert entry["size"] == len(data)
    assert manifest["parser_versions"]["nccl_tests"] == "1"
    assert "NVIDIA H100 80GB HBM3" in manifest["environment"]["gpus"]
    raw = files[root + "raw/01-xxrjun_pair_N2_G1_ok.log"]
    assert hashlib.sha256(raw).hexdigest() == evidence[0].sha256  # unredacted: as uploaded


def test_summary_html_is_self_contained(incident, editor, evidence, ok_artifact):
    run = ok_artifact.runs.get(collective="sendrecv")
    postmortem_save(
        incident=incident,
        body=f"![x](https://cdn.example/x.png)\n\n{{{{chart run={run.pk}}}}}",
        base_revision=0,
        by=editor,
        status="published",
    )
    files, _ = entries(bundle_request(by=editor, incident=incident, redact=False))
    html = next(v for k, v in files.items() if k.endswith("summary.html")).decode()
    assert "<svg" in html and "busbw out-of-place" in html and "Post-mortem" in html
    assert not re.search(r"https?://", html), "an external URL in summary.html"
    assert not re.search(r"<(script|link|img|iframe)\b", html)
    assert "remote process exited" in html  # the accepted key event


def test_redaction_uses_the_same_alias_in_every_file_raw_files_included(incident, editor, evidence):
    bundle = bundle_request(by=editor, incident=incident, redact=True)
    files, _ = entries(bundle)
    text = {k: v.decode() for k, v in files.items()}
    everything = "\n".join(text.values())
    for secret in ("cnode2-005", "cnode2-016", "gdr114", "gdr116"):
        assert secret not in everything, secret
    raw_fail = next(v for k, v in text.items() if "raw/02-" in k)
    ranks = next(
        v
        for k, v in text.items()
        if k.endswith("02-xxrjun_pair_N2_G1_FAIL_network_error.log/ranks.csv")
    )
    alias = re.search(r"Pid 340134 on (\S+) device", raw_fail).group(1)
    assert alias.startswith("host-") and alias in ranks
    assert alias in text[next(k for k in text if k.endswith("README.md"))]  # the key event text
    report = json.loads(next(v for k, v in text.items() if k.endswith("redaction-report.json")))
    assert report["categories"]["host"]["pseudonyms"] >= 4
    assert "gdr114" not in json.dumps(report)
    raw_debug = next(v for k, v in text.items() if "raw/03-" in k)
    assert re.search(r"^host-\d{3}:1766944:1766944 \[0\]", raw_debug, re.MULTILINE)


def test_binary_files_are_left_out_only_when_redacting(incident, editor):
    blob = ingest_bytes("nsys-report.sqlite", b"SQLite format 3\x00" + bytes(range(256)) * 4)
    incident_attach_artifacts(incident=incident, artifact_ids=[blob.pk], by=editor)
    redacted, _ = entries(bundle_request(by=editor, incident=incident, redact=True))
    assert not any("/raw/" in name for name in redacted)
    manifest = json.loads(next(v for k, v in redacted.items() if k.endswith("manifest.json")))
    assert manifest["artifacts"][0]["excluded"].startswith("binary file")
    plain, _ = entries(bundle_request(by=editor, incident=incident, redact=False))
    assert [v for k, v in plain.items() if "/raw/" in k] == [blob.file.open("rb").read()]


def test_configured_and_per_bundle_patterns_are_redacted(incident, editor):
    RedactionPattern.objects.create(name="customer", regex=r"ACME-\d+")
    log = ingest_bytes("notes.txt", b"customer ACME-4411 on project Falcon-9\n")
    incident_attach_artifacts(incident=incident, artifact_ids=[log.pk], by=editor)
    bundle = bundle_request(by=editor, incident=incident, patterns=[r"Falcon-\d"])
    files, _ = entries(bundle)
    raw = next(v for k, v in files.items() if "/raw/" in k).decode()
    assert raw == "customer customer-001 on project custom1-001\n"
    with pytest.raises(IncidentError, match="not a valid regex"):
        bundle_request(by=editor, incident=incident, patterns=["(unclosed"])


def test_gzip_evidence_is_redacted_as_text(incident, editor):
    import gzip

    data = gzip.compress(b"mew7:1:1 [0] NCCL INFO hello from 10.1.2.3\n", mtime=0)
    log = ingest_bytes("debug.log.gz", data)
    incident_attach_artifacts(incident=incident, artifact_ids=[log.pk], by=editor)
    files, _ = entries(bundle_request(by=editor, incident=incident))
    raw_name, raw = next((k, v) for k, v in files.items() if "/raw/" in k)
    assert raw_name.endswith("/raw/01-debug.log")
    assert raw == b"host-001:1:1 [0] NCCL INFO hello from 198.18.0.1\n"


def test_hostile_file_names_become_safe_archive_names(incident, editor):
    log = ingest_bytes("x.log", b"hello\n")
    log.original_name = "../../etc/passwd\\..\\evil name?.log"
    log.save()
    incident_attach_artifacts(incident=incident, artifact_ids=[log.pk], by=editor)
    files, _ = entries(bundle_request(by=editor, incident=incident, redact=False))
    for name in files:
        check_archive_path(name)
    assert any(n.endswith("/raw/01-evil_name_.log") for n in files)


def test_safe_name_and_archive_path_rules():
    assert safe_name("../../a b.log") == "a_b.log"
    assert safe_name("C:\\Users\\x\\..\\trace.json") == "trace.json"
    assert safe_name(".bashrc") == "bashrc" and safe_name("///") == "file"
    assert len(safe_name("a" * 300 + ".json")) == 100 and safe_name("a" * 300 + ".json").endswith(
        ".json"
    )
    for bad in ("/etc/passwd", "a/../b", "a\\b", "C:/x", "", "a//b"):
        with pytest.raises(ValueError):
            check_archive_path(bad)


def test_the_zip_writer_refuses_unsafe_paths(tmp_path):
    source = tmp_path / "f"
    source.write_bytes(b"x")
    with pytest.raises(ValueError, match="unsafe archive path"):
        write_deterministic_zip(tmp_path / "out.zip", [("../evil", source)])


def test_only_the_incident_evidence_can_go_in(incident, editor, ok_artifact):
    with pytest.raises(IncidentError, match="at least one artifact"):
        bundle_request(by=editor, incident=incident)
    with pytest.raises(IncidentError, match="not evidence of this incident"):
        bundle_request(by=editor, incident=incident, artifact_ids=[ok_artifact.pk])


def test_large_bundles_are_built_by_the_celery_task(
    incident, editor, evidence, settings, eager_tasks, django_capture_on_commit_callbacks
):
    settings.PERFHUB_BUNDLE_INLINE_BYTES = 0
    with django_capture_on_commit_callbacks(execute=True):
        bundle = bundle_request(by=editor, incident=incident)
        assert bundle.status == EvidenceBundle.Status.PENDING and not bundle.sha256
    bundle.refresh_from_db()
    assert bundle.status == EvidenceBundle.Status.READY and len(bundle.sha256) == 64
    assert bundle.progress_done == bundle.progress_total > 0
    assert bundle_build(bundle_id=bundle.pk).sha256 == bundle.sha256  # a redelivery: no-op


def test_the_preview_shows_originals_and_pseudonyms(incident, editor, evidence):
    preview = bundle_preview(incident=incident, artifact_ids=[a.pk for a in evidence])
    hosts = {r.original: r.alias for r in preview.replacements if r.category == "host"}
    assert hosts["gdr114"].startswith("host-") and hosts["cnode2-016"].startswith("host-")
    samples = preview.samples["ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log"]
    assert any("192.168.1.10" in before and "198.18.0." in after for before, after in samples)
    assert len(samples) <= 5 and not preview.excluded
