"""A support bundle's members are sniffed once: the parse chooses each kind, the unpack walk
and ingest reuse it, and every member ends up with the kind and kind_detected it had when
each step detected it again."""

from __future__ import annotations

import gzip
import io
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from artifacts import parsers
from artifacts.bundles.parsers import nvidia_bug_report, sysinfo_snapshot
from artifacts.bundles.parsers.common import HEAD_BYTES, choose_kind
from artifacts.models import Artifact, BundleMember
from artifacts.parsers import detection
from artifacts.services import artifact_ingest
from tests.artifacts.bundles import factory as bf

pytestmark = pytest.mark.django_db

REAL_DETECT = parsers.detect_kind
REAL_DETECTION = detection.detect  # bound before any test swaps in the counting one
GZ_MEMBER = f"{bf.TOP}/commands_txt_output/ethtool_-S_ens2f0np0.txt.gz"


@pytest.fixture
def detections(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names handed to detect_kind, wherever it is called from."""
    calls: list[str] = []

    def counting(name: str, head: bytes, **sample: Any) -> Any:
        calls.append(name)
        return REAL_DETECTION(name, head, **sample)

    # every entry point (detect_kind, ingest's detect_file) goes through detection.detect
    monkeypatch.setattr(detection, "detect", counting)
    return calls


def ingest(path: Path, capture: Any) -> Artifact:
    with capture(execute=True), path.open("rb") as stream:
        artifact = artifact_ingest(stream=stream, name=path.name).artifact
    artifact.refresh_from_db()
    return artifact


def sysinfo_members() -> dict[str, bytes]:
    members = bf.sysinfo_members()
    plain = members[f"{bf.TOP}/commands_txt_output/ethtool_-S_ens1f0np0.txt"]
    members[GZ_MEMBER] = gzip.compress(plain)
    return members


def test_sysinfo_members_are_detected_once_with_the_same_results(
    tmp_path: Path, eager_tasks: Any, django_capture_on_commit_callbacks: Any,
    detections: list[str],
) -> None:  # fmt: skip
    members = sysinfo_members()
    path = tmp_path / f"{bf.TOP}.tgz"
    path.write_bytes(gzip.compress(bf.tar_bytes(members)))
    bundle = ingest(path, django_capture_on_commit_callbacks)
    assert bundle.kind == "sysinfo_snapshot"
    calls = Counter(detections)
    assert calls[path.name] == 1  # the upload itself
    stored = BundleMember.objects.filter(bundle=bundle, artifact__isnull=False)
    assert stored.count() == 6
    for member in stored:
        name = member.name.rsplit("/", 1)[-1]
        # once by the parse; the gzip member once more, decompressed, by ingest
        assert calls[name] == (2 if member.name == GZ_MEMBER else 1), name
        data = members[member.name]
        plain = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        child = member.artifact
        assert child.kind == choose_kind(name, data[:HEAD_BYTES])
        assert child.kind_detected == REAL_DETECT(name, plain[:HEAD_BYTES])
    assert {m.artifact.kind for m in stored} >= {"ethtool_stats", "mlxlink", "ib_status"}


def test_the_unpack_walk_reuses_the_parse_kinds() -> None:
    raw = bf.tar_bytes(sysinfo_members())
    parsed = sysinfo_snapshot.parse(io.BytesIO(raw))
    again = [p for p, _ in sysinfo_snapshot.iter_parts(io.BytesIO(raw), known=parsed.parts)]
    fresh = [p for p, _ in sysinfo_snapshot.iter_parts(io.BytesIO(raw))]
    assert again == fresh == list(parsed.parts)
    # a listing that does not line up is not trusted: the member is detected afresh
    wrong = [p.__class__(**{**p.__dict__, "kind": "dmesg"}) for p in parsed.parts]
    shifted = [p for p, _ in sysinfo_snapshot.iter_parts(io.BytesIO(raw), known=wrong[1:])]
    assert shifted == fresh


def test_bug_report_sections_are_never_sniffed_twice(
    tmp_path: Path, eager_tasks: Any, django_capture_on_commit_callbacks: Any,
    detections: list[str],
) -> None:  # fmt: skip
    bundle = ingest(bf.bug_report_gz(tmp_path), django_capture_on_commit_callbacks)
    assert bundle.kind == "nvidia_bug_report" and bundle.children.count() == 5
    calls = Counter(detections)
    assert calls.pop("nvidia-bug-report.log.gz") == 1
    assert max(calls.values()) == 1, calls
    text = bf.bug_report_text().encode()
    parts = {p.name: p for p in nvidia_bug_report.parse(io.BytesIO(text)).parts}
    bodies = {p.name: b.read() for p, b in nvidia_bug_report.iter_parts(io.BytesIO(text)) if b}
    for child in bundle.children.all():
        assert child.kind == parts[child.original_name].kind
        head = bodies[child.original_name][:HEAD_BYTES]
        assert child.kind_detected == REAL_DETECT(child.original_name, head)
