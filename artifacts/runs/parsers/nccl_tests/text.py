"""The nccl-tests text output, old and new layouts, read line by line into a Collector.

Package-private to ``artifacts.runs.parsers.nccl_tests``. A line-driven state machine: '#'
lines open runs (version, collective, parameters), list ranks, give the table layout and
close runs (out-of-bounds and bus-bandwidth footers); other lines are rows, errors, the
launch command or NCCL debug output, which may even be glued into the middle of a row.
Several processes printing at once (mpirun of a non-MPI build) give interleaved runs.

``TextReader.feed`` takes one line; ``bulk.BulkTextReader`` adds ``feed_block``, which takes
a block of whole lines and does what ``feed`` would do to each of them, in bulk where that
is the same (issue 27).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from artifacts.runs.parsers.nccl_tests import env
from artifacts.runs.parsers.nccl_tests.hashlines import HashLine, HashLines
from artifacts.runs.parsers.nccl_tests.lines import (
    DEBUG_TAIL_RE,
    HOST_CHARS,
    MODERN_ROW_RE,
    strip_func_prefixes,
    strip_prefixes,
)
from artifacts.runs.parsers.nccl_tests.model import NcclRank
from artifacts.runs.parsers.nccl_tests.run import (
    MAX_PID_VERSIONS,
    Collector,
    RunBuilder,
)
from artifacts.runs.parsers.nccl_tests.table import MODERN, Layout, parse_row
from artifacts.runs.parsers.nccl_tests.values import INT_RE, BadValue, num

MAX_PENDING_CHARS = 8192
# Lines (of program output, debug lines excluded) within which a second parameter line
# means "another process started at the same time", not "the previous run died".
CONCURRENCY_WINDOW = 6
MAX_RANKS_SEEN = 100_000  # distinct rank lines remembered; later ones are built each time

# The column header without its '#' (lost in a copy from a chat, a Markdown heading, a
# spreadsheet): only with the bandwidth columns, so prose starting "size count type" is not.
BARE_HEADER_RE = re.compile(r"^size\s+count\s+type\s.*\b(?:cpu)?time\s+algbw\s+busbw\b")
ROW_RE = re.compile(r"^(\d+)\s+(\d+)\s+([A-Za-z_]\w*)(?:\s+(.*))?$")
_PLAIN_VERSION_RE = re.compile(r"^NCCL version (\d+\.\d+\.\d+)")
_COMMAND_RE = re.compile(r"(?:^|[\s/=\"'])([A-Za-z]\w*?_perf)(?:_mpi)?(?=[\s\"']|$)")
_PROMPT_RE = re.compile(r"^(?:\[[^\]]*\]|[^\s#$]+)?[#$]\s+")
# Preamble lines that lost their '#' (a Markdown copy turns "# nThread ..." into a heading and
# drops the mark): only nccl-tests prints these shapes, so they are read as if marked.
_BARE_PREAMBLE_RE = re.compile(
    r"^(?:nThread\s+\d+\s+nGpus\s+\d+\s"
    r"|Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+\S+\s+device\s+\d+\s+\["
    r"|nccl-tests version\s)"
)
# Each with a literal part of it: a line without the literal is not searched.
_FATAL_RES = (
    ("failure", re.compile(r"\bTest (?:NCCL |CUDA )?failure\b")),
    ("Invalid number of GPUs", re.compile(r"\bInvalid number of GPUs\b")),
    ("MPI_ABORT was invoked", re.compile(r"\bMPI_ABORT was invoked\b")),
    ("mpirun noticed that process", re.compile(r"\bmpirun noticed that process\b")),
    # Open MPI 5 (PRRTE) says it so: "prterun detected that one or more processes exited ..."
    (
        "detected that one or more processes exited",
        re.compile(r"\b(?:prterun|prte|mpirun) detected that one or more processes exited\b"),
    ),
    ("srun: error:", re.compile(r"^srun: error:")),
    ("Process received signal", re.compile(r"\bProcess received signal\b")),
    ("Segmentation fault", re.compile(r"\bSegmentation fault\b")),
    # The job launcher itself failed (HPE PALS "launch failed on HOST: ...", Slurm/PMI):
    # no test ran, and the reason is the only fact the file holds.
    ("launch failed on ", re.compile(r"^launch failed on \S+:")),
    ("Couldn't allocate a port for PMI", re.compile(r"\bCouldn't allocate a port for PMI\b")),
)
_NONFATAL_RES = (
    ("Net : Connect to ", re.compile(r"\bNet : Connect to .* failed\b")),
    # Cray MPICH's end-of-job summary on Slingshot: network timeouts during the run.
    (
        "MPICH Slingshot Network Summary: ",
        re.compile(r"\bMPICH Slingshot Network Summary: [1-9]\d* network timeouts?\b"),
    ),
)


class TextReader:
    """Feeds text lines into ``collector``; lines starting with '{' are first offered to
    ``on_json_line`` (rccl-tests JSON records), which returns False when it does not want one.
    """

    def __init__(self, collector: Collector, on_json_line: Callable[[str], bool]) -> None:
        self.collector = collector
        self.on_json_line = on_json_line
        self.continuation = ""
        self.pending_fragment = ""
        self.known_hosts: set[str] = set()
        # A log of many runs lists the same ranks for each: one object per distinct rank line
        # keeps memory with the ranks, not the runs (10,000 runs x 80 ranks: -70 % of it).
        self.ranks_seen: dict[tuple[str, ...], NcclRank] = {}
        self.hash_lines = HashLines()
        self.lineno = 0
        self.last_preamble_line = -(10**9)

    def _table_runs(self) -> list[RunBuilder]:
        """Open runs still before their column header."""
        return [r for r in self.collector.open if r.layout is None and not r.rows and not r.footer]

    def feed(self, raw: str) -> None:
        line = strip_prefixes(raw, self.collector.prefixes)
        if "(), " in line:
            cleaned = strip_func_prefixes(line)
            if cleaned != line:
                self.collector.func_prefixed += 1
                line = cleaned
        fragment, debug, match = self._split_glued(line)
        if debug is not None:
            self._on_debug(debug, match)
            if fragment.strip():
                # Program output cut by a debug line: the rest comes on a later line.
                self.pending_fragment += fragment
                if len(self.pending_fragment) > MAX_PENDING_CHARS:
                    self.pending_fragment = ""
                    self.collector.malformed += 1
            return
        if self.pending_fragment:
            pending, self.pending_fragment = self.pending_fragment, ""
            if line.lstrip().startswith("#"):
                self._on_output(pending)
            else:
                line = pending + line
        self._on_output(line)

    def flush(self) -> None:
        """At the end of the input: output still waiting for the rest of its line."""
        if self.pending_fragment:
            pending, self.pending_fragment = self.pending_fragment, ""
            self._on_output(pending)

    def _split_glued(self, line: str) -> tuple[str, str | None, re.Match[str] | None]:
        """Split "<program output><host>:<pid>:<tid> [d] NCCL ..." into its two parts, with
        the debug part's match when the debug part is the line itself (most lines: it is
        not searched again)."""
        if "NCCL " not in line or ":" not in line:  # DEBUG_TAIL_RE starts ":pid:tid"
            return line, None, None
        match = DEBUG_TAIL_RE.search(line)
        if match is None:
            return line, None, None
        start = match.start()
        begin = start
        while begin > 0 and line[begin - 1] in HOST_CHARS:
            begin -= 1
        token = line[begin:start]
        cut = 0
        for host in self.known_hosts:
            if token.endswith(host) and len(host) > len(token) - cut:
                cut = len(token) - len(host)
        if cut == 0 and token and not token[0].isalpha():
            # "-1mew0": printed digits glued to a host name; hosts start with a letter.
            letters = [i for i, c in enumerate(token) if c.isalpha()]
            cut = letters[0] if letters else 0
        if begin == 0 and cut == 0:
            return "", line, match
        return line[:begin] + token[:cut], token[cut:] + line[start:], None

    def _on_debug(self, line: str, match: re.Match[str] | None = None) -> None:
        collector = self.collector
        collector.debug_lines += 1
        if match is None:
            match = DEBUG_TAIL_RE.search(line)
        if match is None:
            return
        host = line[: match.start()]
        level, message = match.group("level"), match.group("msg").strip()
        if level in ("WARN", "ERROR", "ABORT"):
            collector.add_error(line.strip(), key=f"{level} {message}", fatal=False)
            return
        if not message.startswith("NCCL"):
            return  # neither an environment echo (NCCL_X set to) nor "NCCL version"
        echo = env.echoed(message)
        if echo is not None:
            collector.add_echo(*echo)
            return
        version = _PLAIN_VERSION_RE.match(message)
        if version:
            collector.versions_seen.setdefault(version.group(1), None)
            if len(collector.pid_versions) < MAX_PID_VERSIONS:
                collector.pid_versions[(host, int(match.group("pid")))] = version.group(1)

    def _on_output(self, line: str) -> None:
        text = line.strip()
        if text.startswith("> "):
            # A Markdown or e-mail quote ("> mpirun ... \" then "> -np 16 ..."): nccl-tests
            # never prints a line starting so, and a quoted command must read as one.
            text = text[2:].strip()
        if not text:
            return
        self.lineno += 1
        if self.continuation:
            text, self.continuation = self.continuation + text, ""
        if text[0] == "#":
            self._on_hash(text)
            return
        if text[0] == "{" and self.on_json_line(text):
            return
        if text[0] == "s" and BARE_HEADER_RE.match(text):
            self._on_header(Layout.from_header(text))
            return
        if text[0] in "nR" and _BARE_PREAMBLE_RE.match(text):
            self._on_hash("# " + text)
            return
        row = ROW_RE.match(text)
        if row:
            self._on_row(text)
            return
        if text in ("...", "\u2026"):
            self._on_elision()
            return
        for word, pattern in _FATAL_RES:
            if word in text and pattern.search(text):
                self.collector.add_error(text, key=text, fatal=True)
                return
        for word, pattern in _NONFATAL_RES:
            if word in text and pattern.search(text):
                self.collector.add_error(text, key=text, fatal=False)
                return
        version = _PLAIN_VERSION_RE.match(text)
        if version:
            self.collector.versions_seen.setdefault(version.group(1), None)
            return
        if text.endswith("\\") and len(self.continuation) < MAX_PENDING_CHARS:
            self.continuation = text[:-1].rstrip() + " "  # a shell command continues
            return
        if "NCCL_" not in text and "_perf" not in text:
            return  # neither an export of NCCL_* nor a command running a *_perf binary
        unprompted = _PROMPT_RE.sub("", text, count=1)
        if env.is_export(unprompted):
            self.collector.exported.update(env.assignments(unprompted))
            return
        command = _COMMAND_RE.search(text)
        if command:
            command_line = " ".join(unprompted.split())
            self.collector.command = (command_line[:2000], command.group(1))
            self.collector.command_env = env.assignments(command_line)

    # ----------------------------------------------------------------- '#' lines

    def _on_hash(self, text: str) -> None:
        self._act(self.hash_lines.line(text))

    def _act(self, line: HashLine) -> None:
        """What a '#' line says (hashlines.read_hash_line), done."""
        kind, value = line
        if kind is None:
            return
        if kind == "rank":
            self._on_rank(value)
        elif kind == "params":
            self._on_preamble(2, lambda run: _set_params(run, value))
        elif kind == "version":
            self._on_preamble(0, lambda run: _set_version(run, value))
        elif kind == "starting":
            self._on_preamble(1, lambda run: setattr(run, "collective_started", value))
        elif kind == "header":
            self._on_header(value)
        elif kind == "oob":
            self._on_oob(value)
        elif kind == "avg":
            self._on_avg(value)
        elif kind == "concluded":
            self._on_concluded(value)
        elif kind == "reducing":
            opened = self.collector.open
            target = next(iter(self._table_runs()), opened[-1] if opened else None)
            if target is not None:
                target.params["maxBytes_effective"] = value
        elif kind == "error":
            self.collector.add_error(value, key=value, fatal=False)

    def _on_preamble(self, level: int, apply: Callable[[RunBuilder], None]) -> None:
        collector = self.collector
        if not collector.open and collector.full():
            collector.runs_dropped += 1  # what the lines below come to: no run to write to
            return
        # Runs that printed only their preamble, the last of it a moment ago, form a group of
        # processes starting at once (each printing its own parameter line).
        recent = (
            [r for r in collector.open if r.preamble_only()]
            if self.lineno - self.last_preamble_line <= CONCURRENCY_WINDOW
            else []
        )
        target = next((r for r in recent if r.preamble_level < level), None)
        if target is None:
            # A run that got further than its preamble is over; one that only printed its
            # preamble a moment ago belongs to a process running at the same time.
            for run in list(collector.open):
                if run not in recent:
                    collector.close(run)
            target = collector.new_run()
            if target is None:
                return
        apply(target)
        target.preamble_level = level
        self.last_preamble_line = self.lineno

    def _on_rank(self, match: re.Match[str]) -> None:
        self._place_rank(self._rank_of(match), int(match.group("pid")))

    def _rank_of(self, match: re.Match[str]) -> NcclRank:
        key = match.group("rank", "host", "device", "busid", "gpu")
        rank = self.ranks_seen.get(key)
        if rank is None:
            rank = NcclRank(
                rank=int(key[0]),
                host=key[1],
                device=int(key[2]),
                busid=key[3].strip() or None,
                gpu=key[4] or None,
            )
            if len(self.ranks_seen) < MAX_RANKS_SEEN:
                self.ranks_seen[key] = rank
        return rank

    def _place_rank(self, rank: NcclRank, pid: int) -> None:
        candidates = self._table_runs()
        target = next((r for r in candidates if rank.rank not in r.rank_numbers), None)
        if target is None and candidates:
            target = candidates[0]
        if target is None:
            self.collector.close_all()
            target = self.collector.new_run(implicit=True)
            if target is None:
                return
        target.add_rank(rank, pid)
        if rank.host and len(self.known_hosts) < 10_000:
            self.known_hosts.add(rank.host)

    def _on_elision(self) -> None:
        opened = self.collector.open
        if opened and opened[-1].ranks and opened[-1].layout is None:
            opened[-1].elided = True

    def _on_header(self, layout: Layout | None) -> None:
        """A column header line read (``Layout.from_header``; None: one without a time
        column); a '#' header's layout is remembered with its line (hashlines.HashLines)."""
        if layout is None:
            return
        opened = self.collector.open
        candidates = self._table_runs()
        if candidates:
            target = candidates[0]
        elif opened and not opened[-1].rows and not opened[-1].footer:
            target = opened[-1]  # the same header printed again
        else:
            self.collector.close_all()
            made = self.collector.new_run(implicit=True)
            if made is None:
                return
            target = made
        target.layout = layout

    def _on_row(self, text: str) -> None:
        collector = self.collector
        tokens = text.split()
        candidates = [r for r in collector.open if r.layout is not None and not r.footer]
        if not candidates:
            if not MODERN_ROW_RE.match(" ".join(tokens)):
                collector.malformed += 1
                return
            # A fragment that starts inside a table: assume today's column layout.
            collector.close_all()
            made = collector.new_run(implicit=True)
            if made is None:
                return
            made.layout = MODERN
            candidates = [made]
        target = candidates[0] if len(candidates) == 1 else self._best_fit(candidates, tokens)
        assert target.layout is not None
        try:
            row = parse_row(tokens, target.layout)
        except BadValue:
            collector.malformed += 1
            return
        if not collector.row_allowed():
            return
        target.rows.append(row)
        target.last_size = row.size_bytes
        if row.out_of_place is None:
            target.in_place_only_rows += 1

    def _best_fit(self, candidates: list[RunBuilder], tokens: list[str]) -> RunBuilder:
        """Rows of processes printing at once: give each row to the run it continues.

        Every run sweeps sizes upwards, so a row belongs to the run whose last size is the
        largest one below it; a row smaller than all of them starts a run without rows.
        """
        for run in candidates:
            self.collector.interleaved_runs.add(self.collector.runs.index(run))
        size = int(tokens[0]) if INT_RE.match(tokens[0]) else 0
        below = [r for r in candidates if r.rows and r.last_size < size]
        if below:
            return max(below, key=lambda r: r.last_size)
        empty = [r for r in candidates if not r.rows]
        if empty:
            return empty[0]
        equal = [r for r in candidates if r.last_size <= size]
        return max(equal, key=lambda r: r.last_size) if equal else candidates[0]

    def _on_oob(self, count: int) -> None:
        target = next(
            (
                r
                for r in self.collector.open
                if r.oob is None and (r.layout or r.rows) and not r.footer
            ),
            None,
        )
        if target is None:
            self.collector.orphan_footers += 1
            return
        target.oob = count
        target.footer = True

    def _on_avg(self, token: str) -> None:
        opened = self.collector.open
        target = next((r for r in opened if r.oob is not None and not r.avg_seen), None)
        if target is None:
            target = next((r for r in opened if (r.layout or r.rows) and not r.avg_seen), None)
        if target is None:
            self.collector.orphan_footers += 1
            return
        try:
            target.avg = num(token)
        except BadValue:
            target.avg = None
        target.avg_seen = True
        target.footer = True
        self.collector.close(target)

    def _on_concluded(self, name: str) -> None:
        for run in reversed(self.collector.runs):
            if run.format == "text" and run.footer:
                if run.collective_concluded is None:
                    run.collective_concluded = name
                break


def _set_params(run: RunBuilder, pairs: tuple[tuple[str, int, str], ...]) -> None:
    for name, value, unit in pairs:
        if len(run.params) >= 64:
            break
        run.params[name] = value
        if name == "step" and unit:
            run.params["step_kind"] = unit


def _set_version(run: RunBuilder, version: tuple[str, int | None]) -> None:
    run.nccl_tests_version = version[0]
    if version[1] is not None:
        run.library_code = version[1]
