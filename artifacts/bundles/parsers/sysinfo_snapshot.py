"""NVIDIA networking ``sysinfo-snapshot`` archives (.tgz / .tar.gz / .tar): the NIC support bundle.

``sysinfo-snapshot.py`` (Mellanox/NVIDIA) runs ethtool, mlxlink, mlxconfig, ibstat,
show_gids, mlnx_qos, rdma and sysfs counter dumps and packs their outputs into a tarball
under ``sysinfo-snapshot-v<version>-<host>-<YYYYMMDD>-<HHMMSS>/`` (plus HTML summary pages).
Each regular member is listed with the registry kind that reads it, chosen by name and
content like any upload; ``iter_parts`` hands the members' bytes to the caller, who stores
each as its own artifact (members no parser accepts become "other" attachments).

Archive hygiene (never extracted, links and climbing paths not stored, limits) is the shared
walk's: ``archive.py``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

from artifacts.bundles.parsers.archive import ArchiveWalker, is_tar
from artifacts.bundles.parsers.common import BundlePart, Limits
from artifacts.parsers.base import ParseResult

KIND = "sysinfo_snapshot"
VERSION = 1

_TOP = re.compile(
    r"sysinfo-snapshot-v?(?P<version>\d+(?:\.\d+)*)-(?P<host>.+?)-(?P<date>\d{8})-(?P<time>\d{4,6})"
)


@dataclasses.dataclass(frozen=True)
class SysinfoSnapshotResult(ParseResult):
    kind = KIND
    version: str | None = None
    host: str | None = None
    captured_at: str | None = None  # from the top directory's -YYYYMMDD-HHMMSS (host-local)
    members: int = 0  # regular files seen
    parts: tuple[BundlePart, ...] = ()

    def summary(self) -> dict[str, Any]:
        stored = [p for p in self.parts if p.stored]
        parsed = [p for p in stored if p.kind != "other"]
        return {
            "host": self.host,
            "version": self.version,
            "members": self.members,
            "stored_members": len(stored),
            "parsed_members": len(parsed),
            "member_kinds": sorted({p.kind for p in parsed}),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    lowered = name.lower()
    named = "sysinfo-snapshot" in lowered or "sysinfo_snapshot" in lowered
    if is_tar(head):
        return named or b"sysinfo-snapshot" in head[:100]
    # bzip2 / xz tarballs: the content is still compressed here; trust the tool's file name
    return named and (head[:3] == b"BZh" or head[:6] == b"\xfd7zXZ\x00")


def parse(stream: BinaryIO) -> SysinfoSnapshotResult:
    walker = ArchiveWalker(Limits(), keep=False, watch=_TOP)
    for _ in walker.walk(stream):
        pass
    return _result(walker)


def iter_parts(
    stream: BinaryIO, limits: Limits | None = None, known: Sequence[BundlePart] = ()
) -> Iterator[tuple[BundlePart, BinaryIO | None]]:
    """Each member with its bytes (None when not stored); the bytes are closed after its turn.

    ``known``: the parts the parse listed; a member found there keeps the kind chosen then
    instead of being detected again.
    """
    yield from ArchiveWalker(limits or Limits(), keep=True, known=known, watch=_TOP).walk(stream)


def _result(walker: ArchiveWalker) -> SysinfoSnapshotResult:
    top = walker.top
    captured = None
    if top:
        d, t = top["date"], top["time"].ljust(6, "0")
        captured = f"{d[:4]}-{d[4:6]}-{d[6:]}T{t[:2]}:{t[2:4]}:{t[4:6]}"
    return SysinfoSnapshotResult(
        version=top["version"] if top else None,
        host=top["host"] if top else None,
        captured_at=captured,
        members=walker.members,
        parts=tuple(walker.parts),
        warnings=tuple(walker.warnings),
    )
