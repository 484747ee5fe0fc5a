"""NVIDIA networking ``sysinfo-snapshot`` archives (.tgz / .tar.gz / .tar): the NIC support bundle.

``sysinfo-snapshot.py`` (Mellanox/NVIDIA) runs ethtool, mlxlink, mlxconfig, ibstat,
show_gids, mlnx_qos, rdma and sysfs counter dumps and packs their outputs into a tarball
under ``sysinfo-snapshot-v<version>-<host>-<YYYYMMDD>-<HHMMSS>/`` (plus HTML summary pages).
Each regular member is listed with the registry kind that reads it, chosen by name and
content like any upload; ``iter_parts`` hands the members' bytes to the caller, who stores
each as its own artifact (members no parser accepts become "other" attachments).

Archive hygiene: the tar is read as a stream (never extracted to disk); links, devices and
paths that climb out of the archive (``..``, absolute) are listed but never stored; member
count, member size and total bytes are capped (``Limits``), so a bomb stops early. Gzip is
removed centrally before this parser runs; bzip2/xz tarballs are opened by ``tarfile``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import lzma
import posixpath
import re
import tarfile
import zlib
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

from artifacts.bundles.parsers.common import (
    HEAD_BYTES,
    BundlePart,
    Limits,
    choose_kind_detected,
    known_kind,
    new_spool,
    safe_archive_path,
)
from artifacts.parsers.base import ParseError, ParseResult

KIND = "sysinfo_snapshot"
VERSION = 1

_CHUNK = 1024 * 1024
_TOP = re.compile(
    r"sysinfo-snapshot-v?(?P<version>\d+(?:\.\d+)*)-(?P<host>.+?)-(?P<date>\d{8})-(?P<time>\d{4,6})"
)
_ARCHIVE_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)


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
    if len(head) >= 512 and head[257:262] == b"ustar":
        return named or b"sysinfo-snapshot" in head[:100]
    # bzip2 / xz tarballs: the content is still compressed here; trust the tool's file name
    return named and (head[:3] == b"BZh" or head[:6] == b"\xfd7zXZ\x00")


def parse(stream: BinaryIO) -> SysinfoSnapshotResult:
    walker = _Walker(Limits(), keep=False)
    for _ in walker.walk(stream):
        pass
    return walker.result()


def iter_parts(
    stream: BinaryIO, limits: Limits | None = None, known: Sequence[BundlePart] = ()
) -> Iterator[tuple[BundlePart, BinaryIO | None]]:
    """Each member with its bytes (None when not stored); the bytes are closed after its turn.

    ``known``: the parts the parse listed; a member found there keeps the kind chosen then
    instead of being detected again.
    """
    yield from _Walker(limits or Limits(), keep=True, known=known).walk(stream)


class _Walker:
    def __init__(self, limits: Limits, *, keep: bool, known: Sequence[BundlePart] = ()) -> None:
        self.limits = limits
        self.keep = keep
        self.known = known
        self.parts: list[BundlePart] = []
        self.warnings: list[str] = []
        self.members = 0
        self.total = 0
        self.top: re.Match[str] | None = None
        self.entries = 0

    def walk(self, stream: BinaryIO) -> Iterator[tuple[BundlePart, BinaryIO | None]]:
        try:
            archive = tarfile.open(fileobj=stream, mode="r|*")  # noqa: SIM115 - closed below
        except _ARCHIVE_ERRORS as exc:
            raise ParseError(f"not a readable tar archive: {exc}") from exc
        try:
            yield from self._members(archive)
        except ParseError:
            raise
        except _ARCHIVE_ERRORS as exc:
            if not self.parts:
                raise ParseError(f"not a readable tar archive: {exc}") from exc
            self.warnings.append(
                f"archive ends early or is corrupt after entry {self.entries}: {exc}"
            )
        finally:
            with contextlib.suppress(*_ARCHIVE_ERRORS):
                archive.close()
        if not self.parts:
            raise ParseError("the archive holds no files")

    def _members(self, archive: tarfile.TarFile) -> Iterator[tuple[BundlePart, BinaryIO | None]]:
        for info in archive:
            self.entries += 1
            if self.top is None:
                self.top = _TOP.search(info.name)
            if info.isdir():
                continue
            if len(self.parts) >= self.limits.max_parts:
                self.warnings.append(
                    f"more than {self.limits.max_parts} members: the rest were not read"
                )
                return
            path = safe_archive_path(info.name)
            title = (path or info.name)[:500]
            if not info.isfile():
                yield self._skip(title, info.size, "link or special file: not extracted"), None
                continue
            if self.total + info.size > self.limits.max_total_bytes:
                self.warnings.append(
                    f"bundle byte limit of {self.limits.max_total_bytes} reached: the rest "
                    "were not read"
                )
                return
            self.members += 1
            if path is None:
                note = "unsafe path (absolute or '..'): not stored"
                yield self._skip(title, info.size, note), None
                continue
            if info.size == 0:
                yield self._skip(title, 0, "empty"), None
                continue
            if info.size > self.limits.max_part_bytes:
                note = f"larger than {self.limits.max_part_bytes} bytes: not stored"
                yield self._skip(title, info.size, note), None
                continue
            yield from self._read(archive, info, path)

    def _read(
        self, archive: tarfile.TarFile, info: tarfile.TarInfo, path: str
    ) -> Iterator[tuple[BundlePart, BinaryIO | None]]:
        source = archive.extractfile(info)
        if source is None:
            yield self._skip(path, info.size, "could not be read"), None
            return
        spool = new_spool() if self.keep else None
        head = bytearray()
        size = 0
        while chunk := source.read(_CHUNK):
            size += len(chunk)
            if size > self.limits.max_part_bytes:  # a header that lied about the size
                break
            if len(head) < HEAD_BYTES:
                head += chunk[: HEAD_BYTES - len(head)]
            if spool is not None:
                spool.write(chunk)
        self.total += size
        name = posixpath.basename(path)
        chosen = known_kind(self.known, len(self.parts), path[:500], size)
        kind, detected = chosen or choose_kind_detected(name, bytes(head), hints=())
        part = BundlePart(
            index=len(self.parts), name=name[:200], title=path[:500], kind=kind, size=size,
            stored=True, note="" if kind != "other" else "no parser: kept as an attachment",
            detected=detected,
        )  # fmt: skip
        self.parts.append(part)
        if spool is None:
            yield part, None
            return
        try:
            spool.seek(0)
            yield part, spool
        finally:
            spool.close()

    def _skip(self, title: str, size: int, note: str) -> BundlePart:
        part = BundlePart(
            index=len(self.parts),
            name=posixpath.basename(title)[:200] or "member",
            title=title,
            kind="other",
            size=size,
            stored=False,
            note=note,
        )
        self.parts.append(part)
        return part

    def result(self) -> SysinfoSnapshotResult:
        top = self.top
        captured = None
        if top:
            d, t = top["date"], top["time"].ljust(6, "0")
            captured = f"{d[:4]}-{d[4:6]}-{d[6:]}T{t[:2]}:{t[2:4]}:{t[4:6]}"
        return SysinfoSnapshotResult(
            version=top["version"] if top else None,
            host=top["host"] if top else None,
            captured_at=captured,
            members=self.members,
            parts=tuple(self.parts),
            warnings=tuple(self.warnings),
        )
