"""NCCL_DEBUG=INFO|TRACE|WARN logs, and the PyTorch ProcessGroupNCCL errors around them.

A log line looks like ``host:pid:tid [cudaDev] NCCL INFO <message>``. Real files add a lot
around that: launcher prefixes (``0: ``, ``[1,0]<stdout>:``, ``[rank3]:``), timestamps
(NCCL >= 2.26 puts ``[%F %T] `` before WARN lines; log shippers prepend ISO times), patched
NCCL builds that print ``func, line`` before ``NCCL INFO``, and lines of several ranks
garbled into one. So the parser *searches* for every ``host:pid:tid ... NCCL LEVEL`` header
on a line and reads each piece on its own.

Messages are attributed to ranks through the ``comm 0x... rank R`` lines: a thread that
printed a comm line speaks for that comm; otherwise the (host, pid, cudaDev) of the line
maps to the rank of the largest communicator seen there (the world rank).

A big log is read in blocks of whole lines (issue 27): the lines most of it is made of (a
plain header of a known host, then TRACE/CALL chatter or a collective call) are counted and
read in bulk, and every other line goes through the line-by-line reading (``LineState.feed``),
which ``parse_by_line`` keeps as the reference the block reading must equal.

The modules, bottom up (each reader subclasses the one it builds on):

- ``patterns``, ``limits``: the header pattern and shared helpers; the per-file bounds.
- ``store``: what a reading collects (``Store``) and a header's piece of a line.
- ``collectives``, ``topology``: collective calls, algorithms, tuning; communicators,
  channels, paths, rings, trees.
- ``info``: INFO messages by kind (``info_kinds``); versions, settings, hosts, network.
- ``errors``: WARN lines, IB completions (``ibverbs``), lines without a header, PyTorch errors.
- ``lines``: the line-by-line reading; ``blocks``: the block reading.
- ``result``: the collected tables as the result model (``model``).
"""

from __future__ import annotations

from typing import BinaryIO

from artifacts.fabric.parsers.nccl_debug.blocks import Blocks, BlockState, SameLine
from artifacts.fabric.parsers.nccl_debug.lines import LineState
from artifacts.fabric.parsers.nccl_debug.model import NcclDebugResult
from artifacts.fabric.parsers.nccl_debug.patterns import HEADER
from artifacts.fabric.parsers.nccl_debug.result import finish
from artifacts.parsers.textutil import LineReader, head_text

__all__ = ["KIND", "VERSION", "NcclDebugResult", "accepts", "parse", "parse_by_line"]

KIND = "nccl_debug"
VERSION = 1

# A block's bytes, its text and its lines are read while they are still in the CPU's cache:
# 256 KiB blocks read the TRACE log 5 to 9 % faster than 1 MiB ones (issue 27, measured from
# 64 KiB to 1 MiB); tests make it small, so that lines fall across many block ends.
BLOCK_BYTES = 256 * 1024


def accepts(name: str, head: bytes) -> bool:
    """Sniff for NCCL debug headers or PyTorch NCCL watchdog/backend errors."""
    text = head_text(head)
    if text.lstrip("\ufeff \t\r\n").startswith(("{", "[{", "<")):
        return False  # JSON traces and XML dumps are other kinds, even if they quote NCCL lines
    for line in text.splitlines()[:5000]:
        if "NCCL " in line and HEADER.search(line):
            return True
        if "WorkNCCL(" in line or "DistBackendError" in line or "ProcessGroupNCCL" in line:
            return True
    return False


def parse(stream: BinaryIO) -> NcclDebugResult:
    """Read blocks of whole lines; a block ``BlockReader`` repairs comes line by line."""
    reader = Blocks(stream, block_bytes=BLOCK_BYTES)
    state = BlockState()
    line_no = 0
    for piece in reader:
        if isinstance(piece, bytes):
            lines = piece.decode("utf-8").split("\n")
            lines.pop()  # the empty text after the block's last newline
            state.feed_lines(lines, line_no + 1)
            line_no += len(lines)
        else:
            line_no += not isinstance(piece, SameLine)
            state.feed(piece, line_no)
    return finish(state, reader.repair_warnings())


def parse_by_line(stream: BinaryIO) -> NcclDebugResult:
    """The reading ``parse`` must equal: every line through ``LineState.feed`` (for tests)."""
    reader = LineReader(stream)
    state = LineState()
    for text in reader:
        state.feed(text, reader.line_no)
    return finish(state, reader.repair_warnings())
