"""Support bundles through the real ingest path: upload -> parse -> unpack -> members parsed.

The uploads go through ``artifact_ingest`` with the parse enqueued on commit and Celery
eager, exactly like a browser upload; bundles are built from real samples in tmp_path.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from artifacts.models import Artifact, BundleMember, HostFact, LogEvent
from artifacts.services import artifact_ingest, artifact_request_parse
from tests.artifacts.bundles import factory as bf

pytestmark = pytest.mark.django_db


def ingest(path: Path, capture: Any, **kwargs: Any) -> Artifact:
    with capture(execute=True), path.open("rb") as stream:
        artifact = artifact_ingest(stream=stream, name=path.name, **kwargs).artifact
    artifact.refresh_from_db()
    return artifact


@pytest.fixture
def bug_report(tmp_path, eager_tasks, django_capture_on_commit_callbacks) -> Artifact:
    return ingest(bf.bug_report_gz(tmp_path), django_capture_on_commit_callbacks)


def test_bug_report_sections_become_parsed_child_artifacts(bug_report: Artifact) -> None:
    assert (bug_report.kind, bug_report.status) == ("nvidia_bug_report", "parsed")
    assert bug_report.host == "gpu-node-07"  # adopted from the log's uname line
    assert bug_report.captured_at.isoformat() == "2025-02-23T16:24:30+00:00"
    children = {a.original_name: a for a in bug_report.children.all()}
    assert sorted(children) == [
        "dmesg.txt", "ibstat.txt", "nvidia-smi_--query.txt", "nvidia-smi_nvlink_--status.txt",
        "proc_interrupts.txt",
    ]  # fmt: skip
    assert {a.status for a in children.values()} == {"parsed"}
    assert children["dmesg.txt"].kind == "dmesg"
    dmesg = children["dmesg.txt"]
    assert dmesg.host == "gpu-node-07" and dmesg.captured_at == bug_report.captured_at
    assert dmesg.metadata["bundle_part"] == "dmesg" and dmesg.metadata["bundle_lines"] == "50-94"
    assert LogEvent.objects.filter(artifact=dmesg, extra__xid=119).exists()
    smi = children["nvidia-smi_--query.txt"]
    assert HostFact.objects.filter(artifact=smi, name="gpu.driver_version",
                                   value="560.35.03").exists()  # fmt: skip


def test_bug_report_lists_every_section_with_provenance(bug_report: Artifact) -> None:
    members = list(BundleMember.objects.filter(bundle=bug_report))
    assert len(members) == 16
    by_name = {m.name: m for m in members}
    assert (by_name["/proc/interrupts"].line_start, by_name["/proc/interrupts"].line_end) == (
        103, 215
    )  # fmt: skip
    assert by_name["/proc/interrupts"].artifact.kind == "proc_interrupts"
    params = by_name["/proc/driver/nvidia/params"]
    assert params.artifact is None and params.note.startswith("no parser")


def test_bug_report_facts_on_the_bundle(bug_report: Artifact) -> None:
    facts = {(f.device, f.name): f.value for f in bug_report.host_facts.all()}
    assert facts[("", "kernel.version")] == "5.15.0-131-generic"
    assert facts[("", "gpu.driver_version")] == "560.35.03"
    assert facts[("0000:18:00.0", "pcie.link_gen_current")] == "4"
    assert facts[("0000:18:00.0", "pcie.link_gen_max")] == "5"
    assert facts[("0000:18:00.0", "gpu.name")] == "NVIDIA H100 80GB HBM3"


def test_reparse_rebuilds_the_listing_without_duplicates(
    bug_report: Artifact, django_capture_on_commit_callbacks
) -> None:
    before = Artifact.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        artifact_request_parse(artifact=bug_report)
    assert Artifact.objects.count() == before
    members = BundleMember.objects.filter(bundle=bug_report)
    assert members.count() == 16
    assert members.exclude(artifact=None).count() == 5
    # the bundle's own parts are found again by their hash, still its children
    assert all(m.artifact.parent_id == bug_report.pk for m in members.exclude(artifact=None))
    assert all(m.note == "" for m in members.exclude(artifact=None))


def test_reparse_as_another_kind_drops_the_listing(
    bug_report: Artifact, django_capture_on_commit_callbacks
) -> None:
    assert bug_report.bundle_members.exists()
    with django_capture_on_commit_callbacks(execute=True):
        artifact_request_parse(artifact=bug_report, kind="dmesg")
    bug_report.refresh_from_db()
    assert bug_report.kind == "dmesg"
    assert not bug_report.bundle_members.exists()  # no stale "bundle contents" on its page


def test_second_bundle_links_identical_sections(
    bug_report: Artifact, tmp_path, django_capture_on_commit_callbacks
) -> None:
    text = bf.bug_report_text().replace(
        "Sun Feb 23 16:24:30 UTC 2025", "Mon Feb 24 09:00:00 UTC 2025"
    )
    path = tmp_path / "second" / "nvidia-bug-report.log"
    path.parent.mkdir()
    path.write_text(text)  # uncompressed .log works the same
    second = ingest(path, django_capture_on_commit_callbacks)
    assert second.kind == "nvidia_bug_report" and second.pk != bug_report.pk
    shared = BundleMember.objects.get(bundle=second, name="dmesg")
    assert shared.artifact.parent_id == bug_report.pk  # the first bundle keeps the part
    assert shared.note.startswith("same bytes as artifact")
    assert not second.children.exists()


def test_sysinfo_snapshot_members(
    tmp_path, eager_tasks, django_capture_on_commit_callbacks
) -> None:
    link = tarfile.TarInfo(f"{bf.TOP}/shadow")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
    bundle = ingest(bf.sysinfo_tgz(tmp_path, extra=[link]), django_capture_on_commit_callbacks)
    assert (bundle.kind, bundle.status, bundle.host) == ("sysinfo_snapshot", "parsed",
                                                         "gpu-node-07")  # fmt: skip
    children = {a.original_name: a for a in bundle.children.all()}
    assert children["ethtool_-S_ens1f0np0.txt"].kind == "ethtool_stats"
    assert children["ethtool_-S_ens1f0np0.txt"].status == "parsed"
    assert children["ethtool_-S_ens1f0np0.txt"].counter_snapshots.exists()
    assert children["mlxconfig_-d_mlx5_0_q.txt"].host_facts.exists()
    html = children["gpu-node-07-20250223-162501.html"]
    assert (html.kind, html.status) == ("other", "stored")  # kept as an attachment
    listing = {m.name.rsplit("/", 1)[-1]: m for m in bundle.bundle_members.all()}
    assert listing["shadow"].artifact is None and "link" in listing["shadow"].note
    assert listing["empty_command.txt"].note == "empty"


def test_member_over_the_upload_limit_is_listed_not_stored(
    tmp_path, settings, eager_tasks, django_capture_on_commit_callbacks
) -> None:
    settings.PERFHUB_MAX_UPLOAD_BYTES = 12_000  # the bundle itself (gzip) stays under it
    bundle = ingest(bf.sysinfo_tgz(tmp_path), django_capture_on_commit_callbacks)
    big = bundle.bundle_members.get(name__endswith="ethtool_-S_ens1f0np0.txt")
    assert big.artifact is None and "larger than 12000" in big.note
    assert bundle.bundle_members.get(name__endswith="ibstat.txt").artifact is not None


def test_corrupt_bundle_fails_with_a_message(
    tmp_path, eager_tasks, django_capture_on_commit_callbacks
) -> None:
    path = tmp_path / "sysinfo-snapshot-v3.7.6-h-20250101-000000.tgz"
    path.write_bytes(gzip.compress(b"\x00" * 10 + b"definitely not a tar" * 40))
    bundle = ingest(path, django_capture_on_commit_callbacks, kind="sysinfo_snapshot")
    assert bundle.status == "failed" and "tar archive" in bundle.error
    assert not bundle.bundle_members.exists()


def test_pages_link_bundle_and_members(bug_report: Artifact, viewer_client) -> None:
    page = viewer_client.get(reverse("artifact-detail", args=[bug_report.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and "Bundle contents (16)" in html
    assert "/proc/driver/nvidia/params" in html and "no parser for this section" in html
    child = bug_report.children.get(original_name="dmesg.txt")
    assert reverse("artifact-detail", args=[child.pk]) in html
    member_page = viewer_client.get(reverse("artifact-detail", args=[child.pk])).content.decode()
    assert "From a support bundle" in member_page
    assert reverse("artifact-detail", args=[bug_report.pk]) in member_page
    assert "lines 50-94" in member_page


def test_pages_need_login(bug_report: Artifact, client) -> None:
    page = client.get(reverse("artifact-detail", args=[bug_report.pk]))
    assert page.status_code in (302, 403)


def test_bundle_page_query_count_is_bounded(
    bug_report: Artifact, viewer_client, django_assert_max_num_queries
) -> None:
    with django_assert_max_num_queries(40):
        viewer_client.get(reverse("artifact-detail", args=[bug_report.pk]))


def test_api_upload_of_a_bundle(
    editor_api, eager_tasks, django_capture_on_commit_callbacks
) -> None:
    payload = io.BytesIO(gzip.compress(bf.bug_report_text().encode()))
    payload.name = "nvidia-bug-report.log.gz"
    with django_capture_on_commit_callbacks(execute=True):
        response = editor_api.post(reverse("api-artifact-list"), {"file": payload},
                                   format="multipart")  # fmt: skip
    assert response.status_code == 201, response.content
    bundle = Artifact.objects.get(kind="nvidia_bug_report")
    assert bundle.children.count() == 5
    detail = editor_api.get(reverse("api-artifact-detail", args=[bundle.pk])).json()
    members = {m["name"]: m for m in detail["bundle_members"]}
    dmesg = members["dmesg"]
    assert (dmesg["kind"], dmesg["line_start"], dmesg["line_end"]) == ("dmesg", 50, 94)
    child = editor_api.get(reverse("api-artifact-detail", args=[dmesg["artifact"]])).json()
    assert child["parent"] == bundle.pk
