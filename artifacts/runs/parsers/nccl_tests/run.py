"""The mutable state of nccl-tests parsing: one RunBuilder per run, one Collector per file.

Package-private to ``artifacts.runs.parsers.nccl_tests``. The text reader and the JSON readers
both write into a Collector; results.py turns it into the frozen result. The limits
here bound memory by what is kept (runs, rows, ranks, errors), never by the file's size.
"""

from __future__ import annotations

from typing import Any

from artifacts.runs.parsers.nccl_tests.env import MAX_ENV
from artifacts.runs.parsers.nccl_tests.model import NcclRank, NcclRow
from artifacts.runs.parsers.nccl_tests.table import Layout
from artifacts.runs.parsers.nccl_tests.values import normalise_collective

# One nccl-tests line is ~150 characters; NCCL channel dumps for thousands of ranks reach a
# few KiB. Anything longer is cut so that one endless line cannot exhaust memory.
MAX_LINE_BYTES = 1024 * 1024
MAX_ROWS = 1_000_000
MAX_RUNS = 10_000
MAX_RANKS_PER_RUN = 200_000
MAX_ERRORS_PER_RUN = 200
MAX_PID_VERSIONS = 100_000


class RunBuilder:
    """Mutable state of one run while its lines arrive."""

    # No __dict__ per run: a long log keeps 10,000 of them until its result is built.
    __slots__ = (
        "avg",
        "avg_seen",
        "collective_concluded",
        "collective_named",
        "collective_started",
        "command_collective",
        "command_line",
        "duplicate_ranks",
        "elided",
        "ended_at",
        "env",
        "error_keys",
        "errors",
        "errors_dropped",
        "failed",
        "footer",
        "format",
        "implicit",
        "in_place_only_rows",
        "inherited_errors",
        "json_problem",
        "json_truncated",
        "last_size",
        "layout",
        "library_code",
        "listed_ranks",
        "nccl_tests_version",
        "nccl_version",
        "nranks_hint",
        "oob",
        "params",
        "preamble_level",
        "rank_numbers",
        "rank_pids",
        "ranks",
        "row_slots",
        "rows",
        "started_at",
    )

    def __init__(self, fmt: str, command: tuple[str, str] | None) -> None:
        self.format = fmt
        self.command_line = command[0] if command else None
        self.command_collective = command[1] if command else None
        self.nccl_tests_version: str | None = None
        self.library_code: int | None = None
        self.nccl_version: str | None = None
        self.collective_started: str | None = None
        self.collective_concluded: str | None = None
        self.collective_named: str | None = None  # from JSON
        self.params: dict[str, Any] = {}
        self.ranks: list[NcclRank] = []
        # The device list's own tuple when ``ranks`` was filled from it whole (bulk.py), the
        # result's ranks for every run that lists it while no rank is added after it.
        self.listed_ranks: tuple[NcclRank, ...] | None = None
        # A frozenset shared with other runs that list the same devices (bulk.py: 4 KB a run
        # of 80 ranks), made a set of its own before a rank is added.
        self.rank_numbers: set[int] | frozenset[int] = set()
        self.rank_pids: list[tuple[str, int]] = []
        self.duplicate_ranks = 0
        self.elided = False
        self.layout: Layout | None = None
        self.rows: list[NcclRow] = []
        self.row_slots: dict[int, int] = {}  # rccl JSON lines: size -> row index
        self.last_size = -1
        self.in_place_only_rows = 0
        self.avg: float | None = None
        self.avg_seen = False
        self.oob: int | None = None
        self.footer = False
        self.failed = False
        self.errors: list[str] = []
        self.error_keys: set[str] = set()
        self.errors_dropped = 0
        self.inherited_errors = 0
        self.implicit = False
        self.preamble_level = -1
        self.json_truncated = False
        self.json_problem: str | None = None
        self.started_at: str | None = None
        self.ended_at: str | None = None
        self.nranks_hint: int | None = None
        # NCCL_* settings (env.py): the command's and exports' at the start, NCCL's echoes on top
        self.env: dict[str, str] = {}

    def preamble_only(self) -> bool:
        """Nothing but version/collective/parameter lines yet (inherited errors aside)."""
        own_errors = len(self.errors) > self.inherited_errors
        return not (self.ranks or self.layout or self.rows or self.footer or own_errors) and (
            self.oob is None
        )

    def add_error(self, message: str, key: str, *, fatal: bool) -> None:
        if fatal and not self.footer:
            self.failed = True
        if key in self.error_keys:
            return
        if len(self.errors) >= MAX_ERRORS_PER_RUN:
            self.errors_dropped += 1
            return
        self.error_keys.add(key)
        self.errors.append(message[:2000])

    def add_rank(self, rank: NcclRank, pid: int | None) -> None:
        if rank.rank in self.rank_numbers:
            self.duplicate_ranks += 1
            return
        if len(self.ranks) >= MAX_RANKS_PER_RUN:
            return
        numbers = self.rank_numbers
        if not isinstance(numbers, set):
            numbers = self.rank_numbers = set(numbers)
        numbers.add(rank.rank)
        self.ranks.append(rank)
        if rank.host is not None and pid is not None:
            self.rank_pids.append((rank.host, pid))

    def collective(self) -> str | None:
        return self.named_collective()[0]

    def named_collective(self) -> tuple[str | None, str | None]:
        """(collective, where the file named it): "header", "json" or "command line"."""
        for raw, source in (
            (self.collective_started, "header"),
            (self.collective_concluded, "header"),
            (self.collective_named, "json"),
            (self.command_collective, "command line"),
        ):
            name = normalise_collective(raw)
            if name:
                return name, source
        return None, None

    def nranks(self) -> int | None:
        if self.ranks:
            return max(len(self.rank_numbers), max(self.rank_numbers) + 1)
        return self.nranks_hint


class Collector:
    """Everything read from one file so far: its runs and what had to be repaired on the way.

    Text runs stay "open" until their footer or the next run; errors seen before any run
    wait in ``pending_errors`` for the run that follows them.
    """

    def __init__(self) -> None:
        self.runs: list[RunBuilder] = []
        self.open: list[RunBuilder] = []
        self.warnings: list[str] = []
        self.pending_errors: list[tuple[str, str, bool]] = []
        self.command: tuple[str, str] | None = None
        # NCCL_* of `export` lines and of the latest launch command (env.py); echoes seen
        # before any run opened wait in ``pending_echoes`` for the run that follows them.
        self.exported: dict[str, str] = {}
        self.command_env: dict[str, str] = {}
        self.pending_echoes: dict[str, str] = {}
        # NCCL versions from debug lines, per (host, pid) and in the order first seen.
        self.pid_versions: dict[tuple[str, int], str] = {}
        self.versions_seen: dict[str, None] = {}
        # Counters behind the file-level warnings.
        self.prefixes: dict[str, int] = {}
        self.func_prefixed = 0
        self.debug_lines = 0
        self.malformed = 0
        self.overlong = 0
        self.orphan_footers = 0
        self.interleaved_runs: set[int] = set()
        self.rows_total = 0
        self.rows_dropped = 0
        self.runs_dropped = 0
        # The upload's name: the last resort for a table that names no collective.
        self.file_name: str | None = None

    def new_run(self, fmt: str = "text", *, implicit: bool = False) -> RunBuilder | None:
        if len(self.runs) >= MAX_RUNS:
            self.runs_dropped += 1
            return None
        run = RunBuilder(fmt, self.command)
        run.implicit = implicit
        run.env = {**self.exported, **self.command_env, **self.pending_echoes}
        self.pending_echoes = {}
        for message, key, fatal in self.pending_errors:
            run.add_error(message, key, fatal=fatal)
        run.inherited_errors = len(run.errors)
        self.pending_errors.clear()
        self.runs.append(run)
        if fmt == "text":
            self.open.append(run)
        return run

    def full(self) -> bool:
        """No run can be added any more (``new_run`` gives None from now on)."""
        return len(self.runs) >= MAX_RUNS

    def add_echo(self, name: str, value: str) -> None:
        """An NCCL environment echo belongs to the runs being printed (their NCCL init)."""
        targets = self.open or []
        if not targets:
            if len(self.pending_echoes) < MAX_ENV:
                self.pending_echoes[name] = value
            return
        for run in targets:
            if name in run.env or len(run.env) < MAX_ENV:
                run.env[name] = value

    def close(self, run: RunBuilder) -> None:
        if run in self.open:
            self.open.remove(run)

    def close_all(self) -> None:
        self.open.clear()

    def row_allowed(self) -> bool:
        """Count one more row; False (and counted as dropped) beyond MAX_ROWS."""
        if self.rows_total >= MAX_ROWS:
            self.rows_dropped += 1
            return False
        self.rows_total += 1
        return True

    def rows_allowed(self, count: int) -> int:
        """``row_allowed`` for ``count`` rows at once: how many of them (the first ones) are
        kept, the others counted as dropped."""
        kept = max(0, min(count, MAX_ROWS - self.rows_total))
        self.rows_total += kept
        self.rows_dropped += count - kept
        return kept

    def append_row(self, run: RunBuilder, row: NcclRow) -> None:
        if self.row_allowed():
            run.rows.append(row)

    def add_error(self, message: str, *, key: str, fatal: bool) -> None:
        """An error line goes to the run being printed, else the last text run, else waits."""
        if self.open:
            target: RunBuilder | None = self.open[-1]
        else:
            target = next((r for r in reversed(self.runs) if r.format == "text"), None)
        if target is None:
            if len(self.pending_errors) < MAX_ERRORS_PER_RUN:
                self.pending_errors.append((message, key, fatal))
            return
        target.add_error(message, key, fatal=fatal)
