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

The blocks are ``fabric.parsers.line_blocks.BlockReader``'s; only what it repairs is read
here the nccl-tests way (``textutil.LineReader`` ends a line at a lone ``\\r``, this parser
does not).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import BinaryIO

from artifacts.fabric.parsers.line_blocks import BlockReader
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
# Consecutive lines starting with a digit after spaces: maybe result rows
# (bulk.BulkTextReader._feed_rows). Written as RANK_RUN_RE is, a line and then more: a
# pattern that starts with a repeated group gives the regex engine no literal to scan for
# (20 times slower).
_ROW_LINE = rb"\n[ \t]*[0-9][^\n]*"
ROW_RUN_RE = re.compile(_ROW_LINE + rb"(?:" + _ROW_LINE + rb")*(?=\n)")
# Whole lines, each a row that text.ROW_RE reads and whose tokens, joined by spaces,
# lines.MODERN_ROW_RE reads: its pattern with ASCII classes for \d, \w, \S and \s (a line
# with anything else goes line by line).
_TODAYS_ROW = (
    rb"[ \t]*[0-9]+[ \t]+[0-9]+[ \t]+(?:float|double|half|bfloat16|int8|uint8|int32|uint32|"
    rb"int64|uint64|fp8_e4m3|fp8_e5m2|f8e4m3|f8e5m2)[ \t]+[A-Za-z0-9_]+[ \t]+-?[0-9]+"
    rb"(?:[ \t]+[!-~]+){8}[ \t]*\n"
)
TODAYS_ROWS_RE = re.compile(rb"(?:" + _TODAYS_ROW + rb")+")


def holds(block: bytes, needle: bytes, probe: int, budget: int = 1000) -> bool:
    """``needle in block``, found from the places of its byte at ``probe`` (one byte is
    found by memchr, 100 times faster than ``in``, which reads about 1 GB/s): pick a byte that
    is rare in nccl-tests output (no "L" or "," in its tables). Past ``budget`` places that
    are not the needle, ``in`` answers."""
    byte = needle[probe : probe + 1]
    at = block.find(byte)
    for _ in range(budget):
        if at < 0:
            return False
        if at >= probe and block.startswith(needle, at - probe):
            return True
        at = block.find(byte, at + 1)
    return needle in block


def iter_pieces(stream: BinaryIO, collector: Collector) -> Iterator[bytes | str]:
    """The stream as clean blocks of whole lines (bytes) and repaired lines (str)."""
    return iter(_Blocks(stream, collector))


class _Blocks(BlockReader):
    """``BlockReader``'s blocks, with the lines it would repair read as ``iter_lines`` reads
    them (a lone ``\\r`` stays in its line) and counted in the collector."""

    def __init__(self, stream: BinaryIO, collector: Collector) -> None:
        super().__init__(stream, block_bytes=BLOCK_BYTES, max_line_bytes=MAX_LINE_BYTES)
        self._collector = collector

    def _repaired(self, raw: bytes) -> Iterator[str]:
        return iter_lines(io.BytesIO(raw), self._collector)


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
