"""A tar archive read as a stream, member by member: the walk shared by the archive bundles
(sysinfo-snapshot, an archive of profiler traces).

Hygiene: never extracted to disk; links, devices and paths that climb out of the archive
(``..``, absolute) are listed but never stored; member count, member size and total bytes
are capped (``Limits``), so a bomb stops early. Each stored member's kind is chosen by name
and content like any upload (``choose_kind_detected``; the bundle's ``hints`` first). Gzip
is removed centrally before a bundle parser runs; bzip2/xz tarballs are opened by
``tarfile``.
"""

from __future__ import annotations

import contextlib
import lzma
import posixpath
import re
import tarfile
import zlib
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from artifacts.bundles.parsers.common import (
    HEAD_BYTES,
    BundlePart,
    Limits,
    choose_kind_detected,
    known_kind,
    new_spool,
    safe_archive_path,
)
from artifacts.parsers.base import ParseError

_CHUNK = 1024 * 1024
ARCHIVE_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)


def is_tar(head: bytes) -> bool:
    """A POSIX/GNU tar header at the start (the "ustar" magic at offset 257)."""
    return len(head) >= 512 and head[257:262] == b"ustar"


class ArchiveWalker:
    """Reads a tar stream member by member (see the module docstring); ``parts``,
    ``warnings``, ``members`` and ``top`` (the first match of ``watch`` in an entry's path)
    are what a bundle's result is built from. ``hints``: kinds tried first for a member."""

    def __init__(
        self,
        limits: Limits,
        *,
        keep: bool,
        known: Sequence[BundlePart] = (),
        watch: re.Pattern[str] | None = None,
        hints: tuple[str, ...] = (),
    ) -> None:
        self.limits = limits
        self.keep = keep
        self.known = known
        self.parts: list[BundlePart] = []
        self.warnings: list[str] = []
        self.members = 0
        self.total = 0
        self.top: re.Match[str] | None = None
        self.entries = 0
        self.watch = watch
        self.hints = hints

    def walk(self, stream: BinaryIO) -> Iterator[tuple[BundlePart, BinaryIO | None]]:
        try:
            archive = tarfile.open(fileobj=stream, mode="r|*")  # noqa: SIM115 - closed below
        except ARCHIVE_ERRORS as exc:
            raise ParseError(f"not a readable tar archive: {exc}") from exc
        try:
            yield from self._members(archive)
        except ParseError:
            raise
        except ARCHIVE_ERRORS as exc:
            if not self.parts:
                raise ParseError(f"not a readable tar archive: {exc}") from exc
            self.warnings.append(
                f"archive ends early or is corrupt after entry {self.entries}: {exc}"
            )
        finally:
            with contextlib.suppress(*ARCHIVE_ERRORS):
                archive.close()
        if not self.parts:
            raise ParseError("the archive holds no files")

    def _members(self, archive: tarfile.TarFile) -> Iterator[tuple[BundlePart, BinaryIO | None]]:
        for info in archive:
            self.entries += 1
            if self.top is None and self.watch is not None:
                self.top = self.watch.search(info.name)
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
        kind, detected = chosen or choose_kind_detected(name, bytes(head), hints=self.hints)
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
