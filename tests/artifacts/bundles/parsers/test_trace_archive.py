"""trace_archive: a tar(.gz) of PyTorch Profiler traces, one per rank, listed and unpacked.

The real archive is the DLRM step of 8 ranks in ../shared/more-samples (its members are
also stored beside it, read by tests/artifacts/traces); the synthetic ones come from the
traces' factory.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest
from django.db.models import Count

from artifacts.bundles.parsers import sysinfo_snapshot, trace_archive
from artifacts.models import Artifact
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from artifacts.parsers.streams import open_decompressed
from artifacts.services import artifact_ingest
from tests.artifacts.bundles import factory as bf
from tests.artifacts.traces.factory import kineto_trace
from tests.samples import more_sample

DLRM = "torch_profiler/param_dlrm_kineto_8rank.tar.gz"


def tar_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        folder = tarfile.TarInfo("job")
        folder.type = tarfile.DIRTYPE
        tar.addfile(folder)  # a directory entry first, as tar does
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def traces(world: int) -> dict[str, bytes]:
    return {
        f"job/rank{r}.pt.trace.json": kineto_trace(r, world, slowdowns=[1.0] * world, steps=1)
        for r in range(world)
    }


def head(data: bytes) -> bytes:
    return data[:65536]


def test_members_are_traces_with_their_ranks() -> None:
    raw = tar_of({**traces(3), "job/README.txt": b"how this job was run\n"})
    result = trace_archive.parse(io.BytesIO(raw))
    kinds = {p.name: p.kind for p in result.parts}
    assert kinds == {
        "rank0.pt.trace.json": "torch_trace",
        "rank1.pt.trace.json": "torch_trace",
        "rank2.pt.trace.json": "torch_trace",
        "README.txt": "other",
    }
    assert (result.members, result.traces, result.ranks) == (4, 3, (0, 1, 2))
    assert result.summary()["other_members"] == 1 and result.warnings == ()


def test_iter_parts_hands_over_each_trace_byte_for_byte() -> None:
    members = traces(2)
    got = {
        p.title: body.read() for p, body in trace_archive.iter_parts(io.BytesIO(tar_of(members)))
    }
    assert got == members


def test_detected_as_an_archive_of_traces_not_as_a_support_bundle() -> None:
    raw = tar_of(traces(2))
    assert trace_archive.accepts("job.tar", head(raw))
    assert detect_kind("job.tar.gz", head(raw)) == "trace_archive"
    assert detect_kind("anything.bin", head(raw)) == "trace_archive"
    # a sysinfo-snapshot is still one, and a tar of text files is neither
    snapshot = bf.tar_bytes(bf.sysinfo_members())
    assert not trace_archive.accepts("s.tgz", head(snapshot))
    assert detect_kind("s.tgz", head(snapshot)) == "sysinfo_snapshot"
    assert not trace_archive.accepts("notes.tar", head(tar_of({"job/a.txt": b"hello\n"})))
    # JSON members that are not traces (nccl-tests -J output) do not make one
    other_json = tar_of({"job/result.json": b'{"nThreads": 1, "results": []}\n'})
    assert not trace_archive.accepts("r.tar", head(other_json))


def test_an_archive_without_a_trace_is_refused_with_its_members() -> None:
    with pytest.raises(ParseError, match=r"no PyTorch Profiler trace.*a\.txt"):
        trace_archive.parse(io.BytesIO(tar_of({"job/a.txt": b"hello\n"})))
    with pytest.raises(ParseError, match="tar archive"):
        trace_archive.parse(io.BytesIO(b"\x00" * 10 + b"not a tar" * 80))


def test_two_traces_of_one_rank_are_said() -> None:
    members = traces(2)
    members["job/rank1_step2.pt.trace.json"] = members["job/rank1.pt.trace.json"]
    result = trace_archive.parse(io.BytesIO(tar_of(members)))
    assert result.traces == 3 and result.ranks == (0, 1)
    assert "3 traces but 2 distinct ranks" in result.warnings[0]


def test_the_real_dlrm_archive_of_eight_ranks() -> None:
    path = more_sample(DLRM)
    with path.open("rb") as raw:
        stream = open_decompressed(raw, compressed_size=path.stat().st_size)
        assert detect_kind(path.name, stream.read(65536)) == "trace_archive"
    with gzip.open(path) as stream:
        result = trace_archive.parse(stream)
    assert (result.members, result.traces, result.ranks) == (8, 8, tuple(range(8)))
    # the members are the files stored beside the archive (MANIFEST.tsv), byte for byte
    beside = path.with_suffix("").with_suffix("")
    with gzip.open(path) as stream:
        for part, body in trace_archive.iter_parts(stream):
            assert part.kind == "torch_trace"
            assert body.read() == (beside / part.name).read_bytes()
    assert sysinfo_snapshot.accepts(path.name, b"") is False


@pytest.mark.django_db
def test_uploaded_archive_becomes_one_parsed_trace_per_rank(
    tmp_path: Path, eager_tasks, django_capture_on_commit_callbacks
) -> None:
    path = tmp_path / "job-a.tar.gz"
    path.write_bytes(gzip.compress(tar_of(traces(2))))
    with django_capture_on_commit_callbacks(execute=True), path.open("rb") as stream:
        bundle = artifact_ingest(stream=stream, name=path.name, label="job-a").artifact
    bundle.refresh_from_db()
    assert (bundle.kind, bundle.status) == ("trace_archive", "parsed")
    children = {a.original_name: a for a in bundle.children.all()}
    assert set(children) == {"rank0.pt.trace.json", "rank1.pt.trace.json"}
    assert {(a.kind, a.status) for a in children.values()} == {("torch_trace", "parsed")}
    listing = bundle.bundle_members.values_list("name", flat=True)
    assert sorted(listing) == ["job/rank0.pt.trace.json", "job/rank1.pt.trace.json"]
    assert Artifact.objects.filter(kind="torch_trace").aggregate(n=Count("id"))["n"] == 2
