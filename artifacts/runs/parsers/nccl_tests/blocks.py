"""nccl-tests text output in 1 MiB blocks of whole lines, and the line shapes a block is cut
by (issue 27: text logs at disk speed).

Package-private to ``artifacts.runs.parsers.nccl_tests``. ``iter_pieces`` gives what
``iter_lines`` (the line-by-line reading) gives, in bigger pieces: a ``bytes`` piece is a
run of whole lines, each ending in ``\\n``, holding valid UTF-8, no ``\\r`` and no line of
``MAX_LINE_BYTES`` or more, so its lines, decoded, are exactly the lines ``iter_lines``
yields for those bytes. A block
holding anything ``iter_lines`` repairs (a ``\\r`` that does not end its line, an over-long
line, bytes that are not UTF-8, a last line without its newline) comes line by line, as the
``str`` ``iter_lines`` yields, counted in ``collector.overlong`` the same way.

This is not ``fabric.parsers.line_blocks.BlockReader``: that one repairs like
``textutil.LineReader`` (a lone ``\\r`` ends a line there, not here).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import BinaryIO

from artifacts.runs.parsers.nccl_tests.run import MAX_LINE_BYTES, Collector

BLOCK_BYTES = 1 << 20  # tests make it small, so that lines fall across many block ends

# Both patterns are searched in "\n" + block: a match starts with the newline before its
# first line and ends before the newline of its last line.
#
# An NCCL debug line whose only effect is to be counted (TextReader._on_debug): the whole
# line is "host:pid:tid [dev] ... NCCL INFO|TRACE|CALL msg", the host starting with a letter
# (nothing to cut off: no launcher prefix, no program output glued before it), no "(), "
# (no function prefix to strip) and a message that does not start with "NCCL" (no environment
# echo or version). The tail is lines.DEBUG_TAIL_RE in bytes, its variable part in an atomic
# group so that it settles on the same level as the str pattern's first match does; its
# classes are ASCII-only (a non-ASCII byte makes the line go the line-by-line way), so that
# they match a subset of what the str pattern's \S and \d match.
_NOT_SPACE = rb"[\x00-\x08\x0e-\x1b\x21-\x7f]"  # str \S, restricted to ASCII
_SPACE = rb"[ \t\x0b\x0c\x1c-\x1f]"  # what str.strip() removes, in ASCII (no \r, \n here)
QUIET_DEBUG_RE = re.compile(
    rb"\n[A-Za-z][A-Za-z0-9._-]*:\d+:\d+ (?![^\n]*\(\), )"
    rb"(?>(?:\[-?\d+\] )?(?:" + _NOT_SPACE + rb"+ ){0,3}?"
    rb"NCCL (?:INFO|WARN|TRACE|ERROR|ABORT|CALL)\b)"
    rb"(?<=[OEL])"  # INFO, TRACE or CALL: WARN, ERROR and ABORT are errors
    rb" ?(?!" + _SPACE + rb"*(?:NCCL|[\x80-\xff]))[^\n]*(?=\n)"
)
# Consecutive device lines ("#  Rank  3 Group  0 Pid 123 on host device  3 [0x..] GPU").
_RANK_LINE = rb"\n[ \t]*#[ \t]*Rank[ \t][^\n]*"
RANK_RUN_RE = re.compile(_RANK_LINE + rb"(?:" + _RANK_LINE + rb")*(?=\n)")  # "\n" first: fast


def iter_pieces(stream: BinaryIO, collector: Collector) -> Iterator[bytes | str]:
    """The stream as clean blocks of whole lines (bytes) and repaired lines (str)."""
    limit = MAX_LINE_BYTES
    carry = b""
    skipping = False  # the rest of a line cut at MAX_LINE_BYTES is dropped
    while data := stream.read(BLOCK_BYTES):
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
            yield from _whole_lines(buf[:end] if carry else buf, collector)
        if len(carry) >= limit:
            # iter_lines reads the first MAX_LINE_BYTES of it, counts it and skips the rest
            collector.overlong += 1
            yield _text(carry[:limit])
            carry = b""
            skipping = True
    if carry:
        yield _text(carry)  # the last line, without its newline


def _text(raw: bytes) -> str:
    """One line as iter_lines decodes it."""
    return raw.decode("utf-8", "replace").rstrip("\r\n")


def _whole_lines(chunk: bytes, collector: Collector) -> Iterator[bytes | str]:
    if _has_long_line(chunk) or not _utf8(chunk):
        yield from _line_by_line(chunk, collector)
    elif b"\r" not in chunk:
        yield chunk
    elif chunk.count(b"\r") == chunk.count(b"\r\n"):
        yield chunk.replace(b"\r\n", b"\n")  # every \r ends its line: iter_lines strips it
    else:
        yield from _line_by_line(chunk, collector)  # "\r\r\n", a \r inside a line


def _line_by_line(chunk: bytes, collector: Collector) -> Iterator[str]:
    yield from iter_lines(io.BytesIO(chunk), collector)


def iter_lines(stream: BinaryIO, collector: Collector) -> Iterator[str]:
    """Decoded lines, each cut at MAX_LINE_BYTES (base.iter_text_lines has no such cap)."""
    while True:
        chunk = stream.readline(MAX_LINE_BYTES)
        if not chunk:
            return
        if len(chunk) >= MAX_LINE_BYTES and not chunk.endswith(b"\n"):
            collector.overlong += 1
            while True:  # drop the rest of the over-long line
                more = stream.readline(MAX_LINE_BYTES)
                if not more or more.endswith(b"\n"):
                    break
        yield chunk.decode("utf-8", "replace").rstrip("\r\n")


def _has_long_line(chunk: bytes) -> bool:
    """Whether a line of ``chunk`` (whole lines) holds MAX_LINE_BYTES or more before its
    newline: from each line start, a newline must come within the limit."""
    start, size, limit = 0, len(chunk), MAX_LINE_BYTES
    while size - start > limit:
        newline = chunk.rfind(b"\n", start, start + limit)
        if newline < 0:
            return True
        start = newline + 1
    return False


def _utf8(chunk: bytes) -> bool:
    if chunk.isascii():
        return True
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
