"""sysinfo-snapshot archives: members listed with kinds, hostile archives contained."""

from __future__ import annotations

import contextlib
import io
import tarfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.bundles.parsers import sysinfo_snapshot
from artifacts.bundles.parsers.archive import ArchiveWalker
from artifacts.bundles.parsers.common import Limits, safe_archive_path
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.artifacts.bundles import factory as bf


def parts_of(raw: bytes, limits: Limits | None = None) -> dict[str, tuple]:
    return {
        p.title: (p, body.read() if body else None)
        for p, body in sysinfo_snapshot.iter_parts(io.BytesIO(raw), limits)
    }


def test_members_are_listed_with_their_kinds() -> None:
    r = sysinfo_snapshot.parse(io.BytesIO(bf.tar_bytes(bf.sysinfo_members())))
    assert (r.version, r.host, r.captured_at) == ("3.7.6", "gpu-node-07", "2025-02-23T16:25:01")
    kinds = {p.name: (p.kind, p.stored) for p in r.parts}
    assert kinds == {
        "ethtool_-S_ens1f0np0.txt": ("ethtool_stats", True),
        "mlxlink_-d_mlx5_0_-m_-c.txt": ("mlxlink", True),
        "mlxconfig_-d_mlx5_0_q.txt": ("mlxconfig", True),
        "ibstat.txt": ("ib_status", True),
        "gpu-node-07-20250223-162501.html": ("other", True),  # kept as an attachment
        "empty_command.txt": ("other", False),
    }
    assert r.members == 6 and r.summary()["parsed_members"] == 4


def test_iter_parts_yields_member_bytes() -> None:
    members = bf.sysinfo_members()
    got = parts_of(bf.tar_bytes(members))
    path = f"{bf.TOP}/commands_txt_output/ibstat.txt"
    assert got[path][1] == members[path]
    assert got[f"{bf.TOP}/commands_txt_output/empty_command.txt"][1] is None


def test_links_traversal_and_absolute_paths_are_never_stored() -> None:
    link = tarfile.TarInfo(f"{bf.TOP}/etc_shadow")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
    raw = bf.tar_bytes(
        {"../../evil.txt": b"NIC statistics:\n rx_bytes: 1\n", "/etc/passwd": b"root:x:0:0\n",
         f"{bf.TOP}/ok.txt": b"hello\n"},
        extra=[link],
    )  # fmt: skip
    got = parts_of(raw)
    assert got["../../evil.txt"][0].stored is False and got["../../evil.txt"][1] is None
    assert "unsafe path" in got["../../evil.txt"][0].note
    assert got["/etc/passwd"][1] is None
    assert got[f"{bf.TOP}/etc_shadow"][0].note == "link or special file: not extracted"
    assert got[f"{bf.TOP}/ok.txt"][1] == b"hello\n"


def test_safe_archive_path() -> None:
    assert safe_archive_path("a/./b//c.txt") == "a/b/c.txt"
    assert safe_archive_path("a/../../b") is None
    assert safe_archive_path("C:/x") is None and safe_archive_path("") is None


def test_limits_stop_a_bomb_early() -> None:
    members = {f"{bf.TOP}/f{i}.txt": b"x" * 100 for i in range(50)}
    raw = bf.tar_bytes(members)
    listed = list(sysinfo_snapshot.iter_parts(io.BytesIO(raw), Limits(max_parts=10)))
    assert len(listed) == 10
    walker = ArchiveWalker(Limits(max_total_bytes=1000), keep=False)
    for _ in walker.walk(io.BytesIO(raw)):
        pass
    assert walker.members == 10
    assert "byte limit" in walker.warnings[0]
    big = parts_of(raw, Limits(max_part_bytes=50))
    assert all(not p.stored and "larger than 50" in p.note for p, _ in big.values())


def test_truncated_archive_keeps_what_was_read() -> None:
    raw = bf.tar_bytes(bf.sysinfo_members())
    r = sysinfo_snapshot.parse(io.BytesIO(raw[: len(raw) // 2]))
    assert r.parts and any("ends early" in w for w in r.warnings)


def test_detection() -> None:
    raw = bf.tar_bytes(bf.sysinfo_members())
    assert detect_kind("upload.tgz", raw[:65536]) == "sysinfo_snapshot"  # the member name says
    other = bf.tar_bytes({"logs/app.txt": b"hi\n"}, top=False)
    assert not sysinfo_snapshot.accepts("logs.tar", other[:65536])
    assert sysinfo_snapshot.accepts("sysinfo-snapshot-v3.7.6-h-20250101-000000.tar", other)
    assert not sysinfo_snapshot.accepts("x.txt", b"NIC statistics:\n")


def test_refuses_non_archives() -> None:
    with pytest.raises(ParseError, match="tar archive"):
        sysinfo_snapshot.parse(io.BytesIO(b"NIC statistics:\n     rx_bytes: 1\n"))
    empty = io.BytesIO()
    with tarfile.open(fileobj=empty, mode="w"):
        pass
    with pytest.raises(ParseError, match="no files"):
        sysinfo_snapshot.parse(io.BytesIO(empty.getvalue()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000), st.integers(min_value=0, max_value=4000))
def test_fuzz_only_parse_error(junk: bytes, cut: int) -> None:
    raw = bf.tar_bytes({f"{bf.TOP}/a.txt": b"abc\n", f"{bf.TOP}/b.txt": junk})
    for data in (junk, raw[:cut] + junk, raw[:512] + junk):
        with contextlib.suppress(ParseError):
            sysinfo_snapshot.parse(io.BytesIO(data))


def test_members_of_later_kinds_are_picked_up_by_detection() -> None:
    gids = (
        "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n"
        "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n"
        "mlx5_0\t1\t0\tfe80:0000:0000:0000:0ac0:ebff:fe3d:ca54\t\t\tv1\tens1f0np0\n"
        "mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a6e:0021\t10.110.0.33  \tv2\tens1f0np0\n"
        "n_gids_found=2\n"
    )
    raw = bf.tar_bytes({f"{bf.TOP}/commands_txt_output/show_gids.txt": gids.encode()})
    (part,) = sysinfo_snapshot.parse(io.BytesIO(raw)).parts
    assert (part.kind, part.stored) == ("show_gids", True)
