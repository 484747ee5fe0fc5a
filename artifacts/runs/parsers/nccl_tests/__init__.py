"""nccl-tests results: the text tables of the ``*_perf`` binaries and their JSON variants.

Inputs understood (the output shape is documented in docs/formats.md, "## nccl_tests"):

* text output of NVIDIA/nccl-tests and ROCm/rccl-tests, from the old 2.x layout (``error``
  column, no ``root``/``redop`` for some collectives, ``Rank N Pid`` without ``Group``) to
  the current one (``#wrong``, ``Collective test starting``, per-iteration ``i_*`` columns),
  several runs per file, behind launcher prefixes, mixed with NCCL debug lines (even when a
  debug line is glued into the middle of a table row), truncated or failed;
* upstream ``-J/--output_file`` JSON (JSON_FILE_VERSION 2/3), read incrementally;
* the ``--json`` console line of the nccl-tests PR #318 fork (``"identifier": "nccl-tests
  structured output"``), with or without junk lines before it, possibly cut short;
* rccl-tests ``-Z json`` JSON lines (one record per size and in/out-of-place);
* fragments: a results table without its preamble, even with its header's ``#`` lost.

This module is the registry entry point; the work is done by the package's modules: blocks
(the text read in 1 MiB blocks of whole lines), text (text tables, line by line), bulk (the
same, a block at a time, with rows (a table's rows by one pattern) and hashlines ('#' lines
read once per distinct line)), json (JSON and JSON lines, on jsoncursor), table (column
layouts and rows), lines (prefix stripping, markers),
run (mutable per-run and per-file state), results (the frozen result and its warnings),
infer (the collective of a table that names none, from its busbw/algbw ratio, its columns
and the file name), model (the dataclasses) and values (tokens to values).

Pure Python, no Django. Memory is bounded by the results kept (rows, ranks), never by the
size of the log: lines are read in blocks with a length cap and debug lines are not kept.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator
from typing import BinaryIO

from artifacts.parsers.base import ParseError
from artifacts.parsers.textutil import head_text, peek
from artifacts.runs.parsers.nccl_tests.blocks import iter_pieces
from artifacts.runs.parsers.nccl_tests.bulk import BulkTextReader
from artifacts.runs.parsers.nccl_tests.json import (
    MAX_JSON_LINE_CHARS,
    JsonDocuments,
    RcclLines,
    is_rccl_record,
)
from artifacts.runs.parsers.nccl_tests.json import looks_like_json_doc as _looks_like_json_doc
from artifacts.runs.parsers.nccl_tests.jsoncursor import MAX_JSON_VALUE_CHARS
from artifacts.runs.parsers.nccl_tests.lines import (
    MODERN_ROW_RE,
    TEXT_MARKER_RE,
    strip_func_prefixes,
    strip_prefixes,
)
from artifacts.runs.parsers.nccl_tests.model import (
    KIND,
    NcclMeasurement,
    NcclRank,
    NcclRow,
    NcclRun,
    NcclTestsResult,
)
from artifacts.runs.parsers.nccl_tests.results import PARAM_KEYS, build_result
from artifacts.runs.parsers.nccl_tests.run import (
    MAX_ERRORS_PER_RUN,
    MAX_LINE_BYTES,
    MAX_PID_VERSIONS,
    MAX_RANKS_PER_RUN,
    MAX_ROWS,
    MAX_RUNS,
    Collector,
)
from artifacts.runs.parsers.nccl_tests.table import Layout, parse_row
from artifacts.runs.parsers.nccl_tests.text import (
    BARE_HEADER_RE,
    CONCURRENCY_WINDOW,
    MAX_PENDING_CHARS,
)
from artifacts.runs.parsers.nccl_tests.values import (
    BadValue,
    decode_nccl_version,
    normalise_collective,
)

__all__ = [
    "CONCURRENCY_WINDOW",
    "HEAD_BYTES",
    "KIND",
    "MAX_ERRORS_PER_RUN",
    "MAX_JSON_LINE_CHARS",
    "MAX_JSON_VALUE_CHARS",
    "MAX_LINE_BYTES",
    "MAX_PENDING_CHARS",
    "MAX_PID_VERSIONS",
    "MAX_RANKS_PER_RUN",
    "MAX_ROWS",
    "MAX_RUNS",
    "PARAM_KEYS",
    "VERSION",
    "NcclMeasurement",
    "NcclRank",
    "NcclRow",
    "NcclRun",
    "NcclTestsResult",
    "accepts",
    "decode_nccl_version",
    "normalise_collective",
    "parse",
]

VERSION = 1

HEAD_BYTES = 64 * 1024
# A piece of every data type name MODERN_ROW_RE accepts (float, bfloat16, half, double,
# [u]int8..64, fp8_*, f8e*): a line without one cannot be a result row.
_ROW_TYPE = re.compile(r"float|double|half|int|fp8|f8e")


_RUN_BANNER = re.compile(
    r"^\s*(?:\S+\s+)?#\s*(?:nThread\b|Collective test starting|nccl-tests version)", re.M
)


def score(name: str, head: bytes) -> tuple[float, str] | None:
    """How sure detection may be (detection.py): a run's own banner is certain, a results
    table alone (or an NCCL log that quotes one) a little less."""
    if not accepts(name, head):
        return None
    if _RUN_BANNER.search(head_text(head[:HEAD_BYTES])):
        return 0.95, "an nccl-tests run banner (# nThread / # Collective test starting)"
    return 0.8, "nccl-tests results (a results table, its rows or a JSON document)"


def accepts(name: str, head: bytes) -> bool:
    """Content sniffing of the (decompressed) first bytes; the file name is not used."""
    text = head_text(head[:HEAD_BYTES]).lstrip("\ufeff")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        first = stripped.split("\n", 1)[0]
        if _looks_like_json_doc(text) or is_rccl_record(first):
            return True
        # Not JSON after all: text lines behind a bracketed launcher prefix ("[1,0]<stdout>:").
    elif _looks_like_json_doc(text):
        return True
    rows = 0
    layout: Layout | None = None  # of a column header that lost its '#'
    for raw in text.splitlines():
        # A marker starts "#", an RCCL record holds "busBw", a bare column header holds
        # "busbw", a result row names its data type; prefix stripping only removes text,
        # so a line with none of them is skipped.
        if (
            "#" not in raw
            and "busBw" not in raw
            and "busbw" not in raw
            and not _ROW_TYPE.search(raw)
        ):
            continue
        line = strip_prefixes(raw.lstrip())
        if "(), " in line:
            line = strip_func_prefixes(line)
        line = line.strip()
        if TEXT_MARKER_RE.match(line):
            return True
        if line.startswith("{") and is_rccl_record(line):
            return True
        if BARE_HEADER_RE.match(line):
            layout = Layout.from_header(line)
            continue
        tokens = line.split()
        if layout is not None and _fits(tokens, layout):
            return True  # a fragment: the bare header and a numeric row in its layout
        if MODERN_ROW_RE.match(" ".join(tokens)):
            rows += 1
            if rows >= 3:
                return True
    return False


def _fits(tokens: list[str], layout: Layout) -> bool:
    """A results row that reads under ``layout``: integers, a type name, numeric columns."""
    if len(tokens) < 4 or not (tokens[0].isdigit() and tokens[1].isdigit()):
        return False
    try:
        parse_row(tokens, layout)
    except BadValue:
        return False
    return True


def parse(stream: BinaryIO, name: str | None = None) -> NcclTestsResult:
    """Parse nccl-tests output; ParseError (and nothing else) when it cannot be read.

    ``name`` is the upload's file name: a table that names no collective is matched to one
    by its numbers first and by this name second (``all_reduce``, ``ar_``, ``bcast``...).
    """
    try:
        with _cyclic_gc_paused():
            return _parse(stream, name)
    except ParseError:
        raise
    except OSError as exc:  # storage trouble, not the file's fault: worth a retry
        raise ParseError(f"could not read the file: {exc}", permanent=False) from exc
    except Exception as exc:  # a bug must not take the worker down with an odd exception
        raise ParseError(f"internal nccl_tests parser error: {type(exc).__name__}: {exc}") from exc


@contextlib.contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Python's cycle collector off while a file is read, back on after (issue 27).

    A long log keeps up to a million rows, each three small objects that reference no
    cycle; every few thousand allocations the collector walks the young objects, and as the
    kept ones pile up it walks all of them again and again: a fifth of the time of a
    10,000-run log. Reference counting still frees everything that is dropped; any cycle
    made meanwhile is collected once the collector is back. Left as it was when another
    caller turned it off.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _parse(stream: BinaryIO, name: str | None) -> NcclTestsResult:
    # The whole head, even from a raw stream that trickles: it decides text versus JSON.
    head, buffered = peek(stream, HEAD_BYTES, buffer_size=64 * 1024)
    collector = Collector()
    collector.file_name = name
    text = BulkTextReader(collector, on_json_line=RcclLines(collector).feed)
    if _looks_like_json_doc(head.decode("utf-8", "replace").lstrip("\ufeff")):
        JsonDocuments(collector, feed=text.feed).read(buffered)
    else:
        for piece in iter_pieces(buffered, collector):
            if isinstance(piece, bytes):
                text.feed_block(piece)
            else:
                text.feed(piece)
    text.flush()
    return build_result(collector)
