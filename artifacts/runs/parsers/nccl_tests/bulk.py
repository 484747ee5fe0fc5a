"""nccl-tests text output fed a block of whole lines at a time (issue 27: logs at disk speed).

Package-private to ``artifacts.runs.parsers.nccl_tests``. ``BulkTextReader.feed_block``
takes the bytes pieces of ``blocks.iter_pieces`` and does what ``text.TextReader.feed`` would
do to each of their lines, in bulk where that is the same: NCCL debug lines that are only
counted (``blocks.QUIET_DEBUG_RE``), device lists read once per distinct list, runs of '#'
lines replayed from what they did (``hashlines.HashLines``), result rows read by one
pattern per table layout (``rows.RowPlan``), and past the run limit device lists, rows and
preambles counted without being read one by one. Whatever a bulk step cannot answer goes
line by line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from artifacts.runs.parsers.nccl_tests.blocks import (
    QUIET_DEBUG_RE,
    RANK_RUN_RE,
    ROW_RUN_RE,
    TODAYS_ROWS_RE,
    holds,
)
from artifacts.runs.parsers.nccl_tests.hashlines import RANK_RE
from artifacts.runs.parsers.nccl_tests.model import NcclRank
from artifacts.runs.parsers.nccl_tests.rows import RowPlans
from artifacts.runs.parsers.nccl_tests.run import MAX_RANKS_PER_RUN, Collector
from artifacts.runs.parsers.nccl_tests.text import ROW_RE, TextReader

# Device lists remembered by their bytes (a log of many runs lists the same devices for
# each), forgotten all at once past these bounds.
MAX_RANK_BLOCKS = 256
MAX_RANK_BLOCK_BYTES = 8 << 20  # of the remembered lists' lines together
_DIGITS = frozenset("0123456789")


class _RankBlock(NamedTuple):
    """A run of device lines, read: what placing it in a run without ranks adds."""

    ranks: tuple[NcclRank, ...]  # in line order
    rank_pids: tuple[int, ...]  # each rank's pid
    numbers: frozenset[int]  # as many as ranks when no rank number repeats
    host_pids: tuple[tuple[str, int], ...]  # RunBuilder.rank_pids' entries
    hosts: tuple[str, ...]  # distinct, in line order


class BulkTextReader(TextReader):
    """A TextReader that also takes blocks of whole lines (``feed_block``)."""

    def __init__(self, collector: Collector, on_json_line: Callable[[str], bool]) -> None:
        super().__init__(collector, on_json_line)
        # The ranks (and pids) of a run of device lines, by its bytes: None where a line of
        # it is not a device line after all (it then goes line by line).
        self.rank_blocks: dict[bytes, _RankBlock | None] = {}
        self.rank_block_bytes = 0
        self.last_rank_chunk = b""
        self.last_rank_block: _RankBlock | None = None
        self.row_plans = RowPlans()
        self.marked = True  # feed_block's: the block may hold "NCCL " or "(), "

    def feed_block(self, block: bytes) -> None:
        """Whole lines (iter_pieces' bytes pieces), with what ``feed`` would do to each.

        Debug lines that are only counted are counted in bulk, runs of device lines are
        read once per distinct run (``_feed_ranks``), and '#' lines and result rows skip the
        checks that cannot apply to them (``_feed_lines``).
        """
        # A newline first, so that every line starts after one: the patterns then start
        # with a literal newline, which the regex engine finds fast.
        text = b"\n" + block
        # Whether a piece of this block may hold a debug line or a function prefix (which
        # go the line-by-line way): searched once here, not in every piece.
        debug = holds(block, b"NCCL ", 3)
        self.marked = debug or holds(block, b"(), ", 2)
        if debug:
            text, quiet = QUIET_DEBUG_RE.subn(b"", text)
            self.collector.debug_lines += quiet
        done = 1
        if b"Rank" in block:
            for ranks in RANK_RUN_RE.finditer(text):
                self._feed_output(text, done, ranks.start() + 1)
                done = ranks.end() + 1
                self._feed_ranks(text[ranks.start() + 1 : done])
        self._feed_output(text, done, len(text))

    def _line_by_line(self, chunk: bytes) -> bool:
        """A piece of the block being fed must go ``feed``'s way, line by line: output
        waits for the rest of its line or command, or the piece holds an NCCL debug line or
        a function prefix."""
        return bool(
            self.pending_fragment
            or self.continuation
            or (self.marked and (b"NCCL " in chunk or b"(), " in chunk))
        )

    def _feed_output(self, text: bytes, start: int, end: int) -> None:
        """The lines of ``text[start:end]`` (whole lines, a newline before the first), each
        run of lines starting with a digit offered to ``_feed_rows``."""
        for rows in ROW_RUN_RE.finditer(text, start - 1, end):
            self._feed_lines(text[start : rows.start() + 1])
            start = rows.end() + 1
            self._feed_rows(text[rows.start() + 1 : start])
        self._feed_lines(text[start:end])

    def _feed_rows(self, chunk: bytes) -> None:
        """Lines that may all be result rows of the one table being printed: read by that
        layout's RowPlan in one step, and added as ``_on_row`` adds them one by one."""
        collector = self.collector
        if self._line_by_line(chunk):
            self._feed_lines(chunk)
            return
        candidates = [r for r in collector.open if r.layout is not None and not r.footer]
        if not candidates and collector.full() and TODAYS_ROWS_RE.fullmatch(chunk):
            # Past the run limit, rows of today's layout outside a table each close the open
            # runs and count a dropped run (_on_row): counted here, all at once.
            count = chunk.count(b"\n")
            self.lineno += count
            collector.close_all()
            collector.runs_dropped += count
            return
        if len(candidates) != 1:  # none (a fragment) or interleaved tables: row by row
            self._feed_lines(chunk)
            return
        target = candidates[0]
        assert target.layout is not None
        plan = self.row_plans.get(target.layout)
        rows = plan.read(chunk.decode("utf-8")) if plan is not None else None
        if rows is None:
            self._feed_lines(chunk)
            return
        self.lineno += len(rows)
        kept = rows[: collector.rows_allowed(len(rows))]
        if kept:
            # Every row a plan reads has both halves or only its one group: none is counted
            # in ``in_place_only_rows``.
            target.rows.extend(kept)
            target.last_size = kept[-1].size_bytes

    def _feed_lines(self, chunk: bytes) -> None:
        if not self._line_by_line(chunk):
            # Only '#' lines and blank ones (a run's preamble, the lines around its table):
            # what they do, read once per distinct run of them. Nothing a '#' line does
            # starts a pending fragment or a continued command, so the loop below would take
            # each of them to _on_hash.
            steps = self.hash_lines.run(chunk)
            if steps is not None:
                for count, line in steps:
                    self.lineno += count
                    self._act(line)
                return
        for line in chunk.decode("utf-8").split("\n")[:-1]:
            if (
                self.pending_fragment
                or self.continuation
                or "NCCL " in line  # a debug line, even glued to program output
                or "(), " in line  # a function prefix
            ):
                self.feed(line)
                continue
            text = line.strip()
            if not text:
                continue  # _on_output skips it
            first = text[0]
            # No launcher prefix starts with "#", nor is followed by a space after digits
            # (a row's first number is): ``feed`` would hand these lines on as they are.
            if first == "#":
                self.lineno += 1
                self._on_hash(text)
            elif first in _DIGITS and ROW_RE.match(text):
                self.lineno += 1
                self._on_row(text)
            else:
                self.feed(line)

    def _feed_ranks(self, chunk: bytes) -> None:
        """A run of "# Rank" lines: read by ``RANK_RE`` the first time the same bytes are
        seen, then placed as ``_on_rank`` would place them one by one."""
        if self._line_by_line(chunk):
            self._feed_each(chunk)
            return
        if chunk == self.last_rank_chunk:
            # The device list of the run before (a log of many runs on the same devices):
            # a byte comparison, where the lookup below hashes the whole list first.
            block = self.last_rank_block
        else:
            block = self.rank_blocks.get(chunk, False)
            if block is False:
                block = self._read_ranks(chunk)
                self._remember(chunk, block)
            self.last_rank_chunk, self.last_rank_block = chunk, block
        if block is None:
            self._feed_each(chunk)
            return
        self.lineno += len(block.ranks)
        candidates = self._table_runs()
        if not candidates and self.collector.full():
            # Past the run limit each device line opens nothing: _place_rank closes the open
            # runs and counts a dropped run, line after line.
            self.collector.close_all()
            self.collector.runs_dropped += len(block.ranks)
            return
        if len(candidates) != 1:
            for rank, pid in zip(block.ranks, block.rank_pids, strict=True):
                self._place_rank(rank, pid)
            return
        # The one run listing its devices takes each of them (_place_rank's choice).
        target = candidates[0]
        if not target.ranks and len(block.numbers) == len(block.ranks) <= MAX_RANKS_PER_RUN:
            target.ranks.extend(block.ranks)
            target.listed_ranks = block.ranks
            target.rank_numbers = block.numbers  # shared: a run without ranks has none
            target.rank_pids.extend(block.host_pids)
        else:
            for rank, pid in zip(block.ranks, block.rank_pids, strict=True):
                target.add_rank(rank, pid)
        for host in block.hosts:
            if len(self.known_hosts) < 10_000:
                self.known_hosts.add(host)

    def _remember(self, chunk: bytes, block: _RankBlock | None) -> None:
        if len(chunk) > MAX_RANK_BLOCK_BYTES:
            return
        if (
            len(self.rank_blocks) >= MAX_RANK_BLOCKS
            or self.rank_block_bytes + len(chunk) > MAX_RANK_BLOCK_BYTES
        ):
            self.rank_blocks.clear()
            self.rank_block_bytes = 0
        self.rank_blocks[chunk] = block
        self.rank_block_bytes += len(chunk)

    def _read_ranks(self, chunk: bytes) -> _RankBlock | None:
        """The ranks of a run of lines, or None if one of them is not a device line."""
        ranks = []
        for line in chunk.decode("utf-8").split("\n")[:-1]:
            match = RANK_RE.match(line.strip())
            if match is None:
                return None
            ranks.append((self._rank_of(match), int(match.group("pid"))))
        hosts = dict.fromkeys(rank.host for rank, _ in ranks if rank.host)
        return _RankBlock(
            ranks=tuple(rank for rank, _ in ranks),
            rank_pids=tuple(pid for _, pid in ranks),
            numbers=frozenset(rank.rank for rank, _ in ranks),
            host_pids=tuple((rank.host, pid) for rank, pid in ranks if rank.host is not None),
            hosts=tuple(hosts),
        )

    def _feed_each(self, chunk: bytes) -> None:
        for line in chunk.decode("utf-8").split("\n")[:-1]:
            self.feed(line)
