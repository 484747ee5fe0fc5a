"""A stream read in 1 MiB blocks of whole lines, for parsers whose lines are too short for a
Python loop per line (issue 27: ``ethtool -S`` lines are 23 bytes; 100 MB/s is 4.5 M lines a
second).

``BlockReader`` gives what ``textutil.LineReader`` gives, in bigger pieces: a ``bytes`` piece
is a run of whole lines, each ending in ``\\n``, that hold no ``\\r``, no line of
``max_line_bytes`` or more and only valid UTF-8, so ``piece.split(b"\\n")`` (less its last,
empty item), each line decoded, is exactly what ``LineReader`` yields for those bytes. Where a
block holds anything ``LineReader`` repairs (a ``\\r``, an over-long line, bytes that are not
UTF-8, a last line without its newline), its lines come one by one as the ``str`` that
``LineReader`` yields, and its counters (``truncated``, ``decode_errors``) count them the
same way, so ``repair_warnings()`` says the same.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import BinaryIO

from artifacts.parsers.textutil import MAX_LINE_BYTES, LineReader, read_or_fail, repair_notes

BLOCK_BYTES = 1 << 20


class BlockReader:
    def __init__(
        self,
        stream: BinaryIO,
        *,
        block_bytes: int = BLOCK_BYTES,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self._stream = stream
        self._block = block_bytes
        self._max = max_line_bytes
        self.truncated = 0
        self.decode_errors = 0

    def __iter__(self) -> Iterator[bytes | str]:
        carry = b""
        skipping = False  # the rest of a line cut at max_line_bytes is skipped
        while data := self._read():
            if skipping:
                newline = data.find(b"\n")
                if newline < 0:
                    continue
                data = data[newline + 1 :]
                skipping = False
            buf = carry + data if carry else data
            end = buf.rfind(b"\n") + 1
            carry = buf[end:]
            if end:
                yield from self._whole_lines(buf[:end] if carry else buf)
            if len(carry) >= self._max:
                # a line longer than the limit: LineReader yields its first max bytes, cut
                yield from self._repaired(carry[: self._max])
                carry = b""
                skipping = True
        if carry:
            yield from self._repaired(carry)  # the last line, without its newline

    def _read(self) -> bytes:
        return read_or_fail(self._stream.read, self._block)

    def _whole_lines(self, chunk: bytes) -> Iterator[bytes | str]:
        if self._has_long_line(chunk) or not _utf8(chunk):
            yield from self._repaired(chunk)
        elif b"\r" not in chunk:
            yield chunk
        elif chunk.count(b"\r") == chunk.count(b"\r\n"):
            # every \r ends its line (a Windows file): LineReader strips it
            yield chunk.replace(b"\r\n", b"\n")
        else:
            yield from self._repaired(chunk)

    def _has_long_line(self, chunk: bytes) -> bool:
        """Whether a line of ``chunk`` (whole lines) holds ``max_line_bytes`` or more before
        its newline: from each line start, a newline must come within the limit."""
        start, size, limit = 0, len(chunk), self._max
        while size - start > limit:
            newline = chunk.rfind(b"\n", start, start + limit)
            if newline < 0:
                return True
            start = newline + 1
        return False

    def _repaired(self, raw: bytes) -> Iterator[str]:
        for _, line in self._numbered(raw):
            yield line

    def _numbered(self, raw: bytes) -> Iterator[tuple[int, str]]:
        """The lines ``LineReader`` makes of ``raw``, each with how many physical lines it
        advanced (0 for the second piece of a line split at a lone ``\\r``): for a parser
        that keeps ``LineReader``'s line numbers (an event's line)."""
        reader = LineReader(io.BytesIO(raw), max_line_bytes=self._max)
        seen = 0
        for line in reader:
            yield reader.line_no - seen, line
            seen = reader.line_no
        self.truncated += reader.truncated
        self.decode_errors += reader.decode_errors

    def repair_warnings(self) -> list[str]:
        """The same warnings as ``LineReader.repair_warnings``."""
        return repair_notes(self.truncated, self.decode_errors, self._max)


def _utf8(chunk: bytes) -> bool:
    if chunk.isascii():
        return True
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class NumberedBlocks(BlockReader):
    """``BlockReader`` whose repaired lines come as (physical lines advanced, line): an event
    keeps its line number, and a line split at a lone ``\\r`` is one physical line."""

    def _repaired(self, raw: bytes) -> Iterator[tuple[int, str]]:  # type: ignore[override]
        return self._numbered(raw)


def feed_numbered(
    reader: NumberedBlocks,
    feed_block: Callable[[str, int], int],
    feed_line: Callable[[str, int], object],
) -> None:
    """Hand a parser a ``NumberedBlocks`` reading: each whole block decoded, with the number
    of the last line read before it (``feed_block`` answers the number of its own last
    line), and each repaired line with its physical line number."""
    line_no = 0
    for piece in reader:
        if isinstance(piece, bytes):
            line_no = feed_block(piece.decode("utf-8"), line_no)
        else:  # a line LineReader repaired (a \r, bytes not UTF-8, cut, no newline)
            advanced, line = piece
            line_no += advanced
            feed_line(line, line_no)
