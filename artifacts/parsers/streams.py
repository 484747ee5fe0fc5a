"""Opening raw uploads: transparent gzip with a guard against decompression bombs.

Gzip is handled here, once, so that no parser ever sees compressed bytes.
"""

from __future__ import annotations

import gzip
import io
import zlib
from typing import BinaryIO

from artifacts.parsers.base import ParseError

GZIP_MAGIC = b"\x1f\x8b"
HEAD_BYTES = 64 * 1024


class _ReadAdapter(io.RawIOBase):
    """Makes anything with ``read(n)`` (Django File, S3 object, socket file) bufferable."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._inner.read(len(buffer))  # type: ignore[attr-defined]
        n = len(data)
        buffer[:n] = data
        return n


class _BombGuard(io.RawIOBase):
    """Reads a decompressing stream and fails once output exceeds the allowed size."""

    def __init__(self, inner: BinaryIO, limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self._seen = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        try:
            # read1: on a truncated file, read(n) would discard what it had already inflated
            data = self._inner.read1(len(buffer))  # type: ignore[attr-defined]
        except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
            raise ParseError(f"corrupt gzip data: {exc}") from exc
        n = len(data)
        self._seen += n
        if self._seen > self._limit:
            raise ParseError(
                f"decompressed size exceeds the limit of {self._limit} bytes "
                "(possible decompression bomb)"
            )
        buffer[:n] = data
        return n


def decompressed_limit(compressed_size: int, *, max_ratio: int, max_bytes: int) -> int:
    """Largest decompressed size accepted for a file of ``compressed_size`` bytes.

    A floor of 64 MiB keeps tiny files with a high (harmless) ratio parseable.
    """
    return min(max_bytes, max(64 * 1024 * 1024, compressed_size * max_ratio))


def open_decompressed(
    raw: BinaryIO,
    *,
    compressed_size: int,
    max_ratio: int = 200,
    max_bytes: int = 32 * 1024**3,
) -> BinaryIO:
    """Return a buffered binary stream of the file's content, gunzipped when needed.

    ``raw`` must be positioned at the start; it is peeked, not consumed, when possible.
    """
    buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(_ReadAdapter(raw))
    if buffered.peek(2)[:2] != GZIP_MAGIC:
        return buffered
    limit = decompressed_limit(compressed_size, max_ratio=max_ratio, max_bytes=max_bytes)
    gz = gzip.GzipFile(fileobj=buffered, mode="rb")
    return io.BufferedReader(_BombGuard(gz, limit), buffer_size=1024 * 1024)  # type: ignore[arg-type]


def read_head(raw: BinaryIO, *, compressed_size: int) -> bytes:
    """First bytes of the (decompressed) content, for kind detection."""
    stream = open_decompressed(raw, compressed_size=compressed_size)
    try:
        return stream.read(HEAD_BYTES)
    except ParseError:
        return b""
