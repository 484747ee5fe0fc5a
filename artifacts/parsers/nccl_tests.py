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
* rccl-tests ``-Z json`` JSON lines (one record per size and in/out-of-place).

Pure Python, no Django. Memory is bounded by the results kept (rows, ranks), never by the
size of the log: lines are read one by one with a length cap and debug lines are not kept.
"""

from __future__ import annotations

import codecs
import dataclasses
import io
import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, ClassVar

from .base import ParseError, ParseResult

KIND = "nccl_tests"
LABEL = "nccl-tests output"
VERSION = 1

HEAD_BYTES = 64 * 1024
# One nccl-tests line is ~150 characters; NCCL channel dumps for thousands of ranks reach a
# few KiB. Anything longer is cut so that one endless line cannot exhaust memory.
MAX_LINE_BYTES = 1024 * 1024
# A single JSON value (one result row, the env list...) may be buffered whole, up to this.
MAX_JSON_VALUE_CHARS = 256 * 1024 * 1024
MAX_JSON_LINE_CHARS = 64 * 1024
MAX_ROWS = 1_000_000
MAX_RUNS = 10_000
MAX_RANKS_PER_RUN = 200_000
MAX_ERRORS_PER_RUN = 200
MAX_PID_VERSIONS = 100_000
MAX_PENDING_CHARS = 8192
# Lines (of program output, debug lines excluded) within which a second parameter line
# means "another process started at the same time", not "the previous run died".
CONCURRENCY_WINDOW = 6

PARAM_KEYS = (
    "nThread",
    "nGpus",
    "minBytes",
    "maxBytes",
    "step",
    "step_kind",
    "warmup_iters",
    "iters",
    "agg_iters",
    "validation",
    "graph",
)

_COLLECTIVES = {
    "allreduce": "all_reduce",
    "allgather": "all_gather",
    "reducescatter": "reduce_scatter",
    "alltoall": "alltoall",
    "alltoallv": "alltoallv",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "sendrecv": "sendrecv",
    "gather": "gather",
    "scatter": "scatter",
    "hypercube": "hypercube",
}


# --------------------------------------------------------------------------- results


@dataclasses.dataclass(frozen=True, slots=True)  # millions of rows: keep them small
class NcclMeasurement:
    """One half of a table row: the out-of-place or the in-place numbers."""

    time_us: float | None
    algbw_gbps: float | None
    busbw_gbps: float | None
    # Count of wrong elements (int); with the old ``error`` column, the max error (float).
    wrong: int | float | None


@dataclasses.dataclass(frozen=True, slots=True)
class NcclRow:
    size_bytes: int
    count: int | None
    dtype: str | None
    redop: str | None
    root: int | None
    out_of_place: NcclMeasurement | None
    in_place: NcclMeasurement | None


@dataclasses.dataclass(frozen=True, slots=True)
class NcclRank:
    rank: int
    host: str | None
    device: int | None
    busid: str | None
    gpu: str | None


@dataclasses.dataclass(frozen=True)
class NcclRun:
    collective: str | None
    nccl_tests_version: str | None
    nccl_version: str | None
    params: dict[str, Any]
    ranks: tuple[NcclRank, ...]
    nranks: int | None
    hosts: tuple[str, ...]
    rows: tuple[NcclRow, ...]
    avg_busbw_gbps: float | None
    out_of_bounds: int | None
    complete: bool
    errors: tuple[str, ...]
    # Extras beyond the core contract (documented too).
    format: str
    command: str | None
    error_column: bool
    started_at: str | None
    ended_at: str | None


@dataclasses.dataclass(frozen=True)
class NcclTestsResult(ParseResult):
    kind: ClassVar[str] = KIND
    runs: tuple[NcclRun, ...] = ()

    def summary(self) -> dict[str, Any]:
        collectives: list[str] = []
        hosts: set[str] = set()
        busbw: list[float] = []
        for run in self.runs:
            if run.collective and run.collective not in collectives:
                collectives.append(run.collective)
            hosts.update(run.hosts)
            for row in run.rows:
                for half in (row.out_of_place, row.in_place):
                    if half is not None and half.busbw_gbps is not None:
                        busbw.append(half.busbw_gbps)
        nranks = [r.nranks for r in self.runs if r.nranks is not None]
        return {
            "runs": len(self.runs),
            "collectives": collectives,
            "max_busbw_gbps": max(busbw) if busbw else None,
            "nranks": max(nranks) if nranks else None,
            "hosts": len(hosts),
            "complete": all(r.complete for r in self.runs),
            "errors": sum(len(r.errors) for r in self.runs),
            "warnings": len(self.warnings),
        }


# --------------------------------------------------------------------------- small helpers


class _BadValue(Exception):
    """A token that should be a number is not: the line is not a table row."""


_NUM_RE = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?(?:nan|inf)$", re.I)
_INT_RE = re.compile(r"^-?\d{1,30}$")
_NA = {"N/A", "NA", "n/a", "-"}


def _num(token: str) -> float | None:
    """A printed number; N/A (and nan/inf, which JSON cannot carry) become None."""
    if token in _NA:
        return None
    if not _NUM_RE.match(token):
        raise _BadValue(token)
    value = float(token)
    return value if math.isfinite(value) else None


def _int(token: str) -> int:
    if not _INT_RE.match(token):
        raise _BadValue(token)
    return int(token)


def _json_num(value: Any) -> float | None:
    """A JSON number (or numeric string, as some writers quote them) as a finite float."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    if isinstance(value, str):
        try:
            return _num(value.strip())
        except _BadValue:
            return None
    return None


def _json_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and _INT_RE.match(value.strip()):
        return int(value.strip())
    return None


def _json_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    return None


def _wrong_value(value: float | None, *, error_column: bool) -> int | float | None:
    """#wrong is a count (printed with %g, so '1e+06' happens); the old column is an error."""
    if value is None or error_column:
        return value
    return int(value) if value.is_integer() else value


def decode_nccl_version(code: int | None) -> str | None:
    """NCCL_VERSION_CODE to "major.minor.patch" (2.9+: X*10000+Y*100+Z, before: X*1000+...)."""
    if code is None or code <= 0:
        return None
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def normalise_collective(raw: str | None) -> str | None:
    """'all_reduce_perf', './build/nccl_alltoall_perf_mpi', 'AllReduce' -> canonical name."""
    if not raw:
        return None
    name = raw.strip().strip("\"'").rsplit("/", 1)[-1]
    name = re.sub(r"_perf(?:_mpi)?$", "", name, flags=re.I)
    name = re.sub(r"^(?:nccl|rccl)_", "", name, flags=re.I)
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    if key in _COLLECTIVES:
        return _COLLECTIVES[key]
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    snake = re.sub(r"[^a-z0-9]+", "_", snake).strip("_")
    return snake[:64] or None


# --------------------------------------------------------------------------- line cleaning

# Launcher prefixes, tried repeatedly because they stack (kubectl timestamps + mpirun tags).
_PREFIXES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Open MPI --tag-output '[1,0]<stdout>:'", re.compile(r"^\[\d+,\d+\]<(?:stdout|stderr)>:\s?")),
    ("rank prefix '0: ' (srun -l, pdsh)", re.compile(r"^\d{1,6}:\s")),
    ("kubectl --prefix '[pod/...]'", re.compile(r"^\[pod/[^\]\s]+\]\s")),
    (
        "timestamp prefix",
        re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s"),
    ),
)
# Some patched builds print "func(), file.cu:123, " before every printf, even mid-row.
_FUNC_PREFIX_RE = re.compile(r"[A-Za-z_]\w*\(\), [\w./-]+\.(?:cu|cc|cpp|c|h):\d+, ?")
_NA_GLUED_RE = re.compile(r"N/A(?=[A-Za-z_]\w*\(\), )")  # "N/ABenchTime()": keep the N/A
# The part of an NCCL debug line after "host": ":pid:tid [dev] [time func:line] NCCL LEVEL"
# (NCCL_DEBUG=TRACE API tracing prints "host:pid:tid NCCL CALL ..." without the device).
_DEBUG_TAIL_RE = re.compile(
    r":(?P<pid>\d+):(?P<tid>\d+) (?:\[(?P<dev>-?\d+)\] )?(?:\S+ ){0,3}?"
    r"NCCL (?P<level>INFO|WARN|TRACE|ERROR|ABORT|CALL)\b ?(?P<msg>.*)$"
)
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def _strip_func_prefixes(line: str) -> str:
    return _FUNC_PREFIX_RE.sub(" ", _NA_GLUED_RE.sub("N/A ", line))


def _strip_prefixes(line: str, seen: dict[str, int] | None = None) -> str:
    for _ in range(4):
        for label, pattern in _PREFIXES:
            match = pattern.match(line)
            if match:
                line = line[match.end() :]
                if seen is not None:
                    seen[label] = seen.get(label, 0) + 1
                break
        else:
            return line
    return line


# --------------------------------------------------------------------------- text patterns

_RANK_RE = re.compile(
    r"^#\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)"
    r"\s+device\s+(?P<device>\d+)\s+\[(?P<busid>[^\]]*)\]\s*(?P<gpu>.*?)\s*$"
)
_PARAMS_RE = re.compile(r"^#\s*nThread\s+\d+")
_PARAM_PAIR_RE = re.compile(r"([A-Za-z][A-Za-z ]*?)\s*:?\s+(-?\d{1,30})(?:\((\w+)\))?")
_VERSION_RE = re.compile(
    r"^#\s*nccl-tests version\s+(?P<version>\S+)"
    r"(?:\s+nccl-headers=(?P<headers>\d+))?(?:\s+nccl-library=(?P<library>\d+))?"
)
_STARTING_RE = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_CONCLUDED_RE = re.compile(r"^#\s*Collective test concluded:\s*(\S+)")
_HEADER_RE = re.compile(r"^#\s*size\s+count\s+type\b")
_OOB_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d{1,30})")
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_REDUCING_RE = re.compile(r"^#\s*Reducing maxBytes to\s+(\d{1,30})")
_HASH_ERROR_RE = re.compile(r"^#\s*error:\s*(\S.*)$")
_ROW_RE = re.compile(r"^(\d+)\s+(\d+)\s+([A-Za-z_]\w*)(?:\s+(.*))?$")
_PLAIN_VERSION_RE = re.compile(r"^NCCL version (\d+\.\d+\.\d+)")
_COMMAND_RE = re.compile(r"(?:^|[\s/=\"'])([A-Za-z]\w*?_perf)(?:_mpi)?(?=[\s\"']|$)")
_PROMPT_RE = re.compile(r"^(?:\[[^\]]*\]|[^\s#$]+)?[#$]\s+")
_DATE_RE = re.compile(r"^\d{4}-\d\d-\d\d$")
_FATAL_RES = (
    re.compile(r"\bTest (?:NCCL |CUDA )?failure\b"),
    re.compile(r"\bInvalid number of GPUs\b"),
    re.compile(r"\bMPI_ABORT was invoked\b"),
    re.compile(r"\bmpirun noticed that process\b"),
    re.compile(r"^srun: error:"),
    re.compile(r"\bProcess received signal\b"),
    re.compile(r"\bSegmentation fault\b"),
)
_NONFATAL_RES = (re.compile(r"\bNet : Connect to .* failed\b"),)

_TEXT_MARKER_RE = re.compile(
    r"^#\s*(?:nThread\s+\d+\s+nGpus\s+\d+"
    r"|Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s"
    r"|Collective test (?:starting|concluded):"
    r"|nccl-tests version\s"
    r"|size\s+count\s+type\b"
    r"|Avg bus bandwidth\s*:"
    r"|Out of bounds values\s*:"
    r"|.*out-of-place\s+in-place)"
)
_MODERN_ROW_RE = re.compile(
    r"^\d+\s+\d+\s+(?:float|double|half|bfloat16|int8|uint8|int32|uint32|int64|uint64|"
    r"fp8_e4m3|fp8_e5m2|f8e4m3|f8e5m2)\s+\w+\s+-?\d+(?:\s+\S+){8}$"
)

_COLUMN_KEYS = {
    "time": "time_us",
    "cputime": "time_us",
    "algbw": "algbw_gbps",
    "busbw": "busbw_gbps",
    "#wrong": "wrong",
    "wrong": "wrong",
    "error": "wrong",
    "#error": "wrong",
}


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Column layout of a results table, read from its ``#  size  count  type ...`` line."""

    lead: tuple[str, ...]  # which of "redop"/"root" follow size/count/type, in order
    groups: tuple[tuple[str, ...], ...]  # out-of-place columns, then in-place columns
    timestamp: bool
    error_column: bool
    cputime: bool
    extra_columns: bool

    @classmethod
    def from_header(cls, line: str) -> _Layout | None:
        tokens = [t.lower() for t in line.lstrip("#").split()]
        starts = [i for i, t in enumerate(tokens) if t in ("time", "cputime")]
        if not starts:
            return None
        timestamp = "timestamp" in tokens
        lead = tuple(t for t in tokens[3 : starts[0]] if t in ("redop", "root"))
        ends = [*starts[1:], len(tokens)]
        groups = tuple(
            tuple(t for t in tokens[a:b] if t != "timestamp")
            for a, b in zip(starts, ends, strict=True)
        )[:2]
        names = {t for g in groups for t in g}
        return cls(
            lead=lead,
            groups=groups,
            timestamp=timestamp,
            error_column="error" in names or "#error" in names,
            cputime="cputime" in names,
            extra_columns=bool(names - set(_COLUMN_KEYS)),
        )


_MODERN = _Layout(
    lead=("redop", "root"),
    groups=(("time", "algbw", "busbw", "#wrong"),) * 2,
    timestamp=False,
    error_column=False,
    cputime=False,
    extra_columns=False,
)


def _measure(names: tuple[str, ...], tokens: list[str], error_column: bool) -> NcclMeasurement:
    values: dict[str, float | None] = {}
    for name, token in zip(names, tokens, strict=True):
        number = _num(token)  # every column must be numeric, even the ones not reported
        key = _COLUMN_KEYS.get(name)
        if key is not None:
            values[key] = number
    return NcclMeasurement(
        time_us=values.get("time_us"),
        algbw_gbps=values.get("algbw_gbps"),
        busbw_gbps=values.get("busbw_gbps"),
        wrong=_wrong_value(values.get("wrong"), error_column=error_column),
    )


def _parse_row(tokens: list[str], layout: _Layout) -> NcclRow:
    """One data row; raises _BadValue when the tokens do not fit the layout."""
    size, count, dtype, rest = _int(tokens[0]), _int(tokens[1]), tokens[2], tokens[3:]
    if layout.timestamp and len(rest) >= 2 and _DATE_RE.match(rest[-2]):
        rest = rest[:-2]
    widths = [len(g) for g in layout.groups]
    total = sum(widths)
    halves: list[NcclMeasurement | None]
    if len(rest) >= total:
        lead, metrics = rest[: len(rest) - total], rest[len(rest) - total :]
        halves, offset = [], 0
        for names in layout.groups:
            halves.append(
                _measure(names, metrics[offset : offset + len(names)], layout.error_column)
            )
            offset += len(names)
    elif len(layout.groups) == 2 and len(rest) >= widths[1]:
        # nccl-tests prints a blank out-of-place half when it only runs in place.
        lead, metrics = rest[: len(rest) - widths[1]], rest[len(rest) - widths[1] :]
        halves = [None, _measure(layout.groups[1], metrics, layout.error_column)]
    else:
        raise _BadValue("too few columns")
    redop, root = _assign_lead(lead, layout.lead)
    return NcclRow(
        size_bytes=size,
        count=count,
        dtype=dtype,
        redop=redop,
        root=root,
        out_of_place=halves[0],
        in_place=halves[1] if len(halves) > 1 else None,
    )


def _assign_lead(lead: list[str], names: tuple[str, ...]) -> tuple[str | None, int | None]:
    """redop/root values; old alltoall prints the redop column blank, so fewer tokens occur."""
    if len(lead) > len(names):
        raise _BadValue("too many columns")
    pairs: dict[str, str] = {}
    if len(lead) == len(names):
        pairs = dict(zip(names, lead, strict=True))
    else:
        for token in lead:
            slot = "root" if _INT_RE.match(token) and "root" in names else "redop"
            if slot not in names or slot in pairs:
                raise _BadValue("ambiguous columns")
            pairs[slot] = token
    root = pairs.get("root")
    redop = pairs.get("redop")
    if redop is not None and _NUM_RE.match(redop):
        raise _BadValue("numeric redop")
    return redop, _int(root) if root is not None else None


# --------------------------------------------------------------------------- run builder


class _RunBuilder:
    """Mutable state of one run while its lines arrive."""

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
        self.rank_numbers: set[int] = set()
        self.rank_pids: list[tuple[str, int]] = []
        self.duplicate_ranks = 0
        self.elided = False
        self.layout: _Layout | None = None
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
        self.rank_numbers.add(rank.rank)
        self.ranks.append(rank)
        if rank.host is not None and pid is not None:
            self.rank_pids.append((rank.host, pid))

    def collective(self) -> str | None:
        for raw in (
            self.collective_started,
            self.collective_concluded,
            self.collective_named,
            self.command_collective,
        ):
            name = normalise_collective(raw)
            if name:
                return name
        return None

    def nranks(self) -> int | None:
        if self.ranks:
            return max(len(self.rank_numbers), max(self.rank_numbers) + 1)
        return self.nranks_hint


# --------------------------------------------------------------------------- JSON cursor


class _Truncated(Exception):
    """The JSON text ended in the middle of a value."""


class _BadJson(Exception):
    """The JSON text is malformed at the current position."""


class _JsonCursor:
    """Walks a (possibly huge, possibly truncated) JSON document value by value.

    Only one value is buffered at a time (plus one read chunk), so the ``results`` list of
    a big -J file is streamed element by element, and a cut file still yields every element
    that was complete.
    """

    def __init__(self, read: Callable[[int], bytes], initial: str) -> None:
        self._read = read
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._json = json.JSONDecoder()
        self._buf = initial
        self._pos = 0
        self._eof = False

    def _more(self) -> bool:
        if self._eof:
            return False
        pending = len(self._buf) - self._pos
        if pending > MAX_JSON_VALUE_CHARS:
            raise ParseError(
                f"a JSON value is larger than {MAX_JSON_VALUE_CHARS // (1024 * 1024)} MiB; "
                "refusing to buffer it"
            )
        # Read at least as much as is pending, so re-decoding a long value stays linear.
        chunk = self._read(max(1024 * 1024, pending))
        text = self._decoder.decode(chunk, final=not chunk)
        if not chunk:
            self._eof = True
        self._buf = self._buf[self._pos :] + text
        self._pos = 0
        return bool(chunk) or bool(text)

    def peek(self) -> str:
        while True:
            buf, pos, end = self._buf, self._pos, len(self._buf)
            while pos < end and buf[pos] in " \t\r\n":
                pos += 1
            self._pos = pos
            if pos < end:
                return buf[pos]
            if not self._more():
                return ""

    def expect(self, char: str) -> None:
        found = self.peek()
        if not found:
            raise _Truncated
        if found != char:
            raise _BadJson(f"expected {char!r}, found {found!r}")
        self._pos += 1

    def value(self) -> Any:
        if not self.peek():
            raise _Truncated
        while True:
            try:
                value, end = self._json.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(self._buf) - 64
                if not near_end and not exc.msg.startswith("Unterminated string"):
                    raise _BadJson(exc.msg) from None
            except RecursionError:
                raise _BadJson("JSON nested too deeply") from None
            else:
                # A number that touches the end of the buffer may continue in the next chunk.
                if end < len(self._buf) or self._eof:
                    self._pos = end
                    return value
            if not self._more():
                raise _Truncated

    def members(self) -> Iterator[str]:
        """Keys of an object; the caller must consume each value before asking for the next."""
        self.expect("{")
        if self.peek() == "}":
            self._pos += 1
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                raise _BadJson("object key is not a string")
            self.expect(":")
            yield key
            if self._after_item("}"):
                return

    def elements(self) -> Iterator[None]:
        self.expect("[")
        if self.peek() == "]":
            self._pos += 1
            return
        while True:
            yield None
            if self._after_item("]"):
                return

    def _after_item(self, closer: str) -> bool:
        """Consume the separator after an item; True when it closed the container."""
        found = self.peek()
        if found in (",", closer):
            self._pos += 1
            return found == closer
        if not found:
            raise _Truncated
        raise _BadJson(f"expected ',' or {closer!r}, found {found!r}")

    def skip_value(self) -> None:
        """Consume a value without keeping it: big containers are walked, not buffered."""
        first = self.peek()
        if first == "{":
            for _ in self.members():
                self.skip_value()
        elif first == "[":
            for _ in self.elements():
                self.skip_value()
        else:
            self.value()


# --------------------------------------------------------------------------- the parser


class _Parser:
    """Line-driven state machine; runs stay "open" until their footer or the next run."""

    def __init__(self) -> None:
        self.runs: list[_RunBuilder] = []
        self.open: list[_RunBuilder] = []
        self.warnings: list[str] = []
        self.pending_errors: list[tuple[str, str, bool]] = []
        self.command: tuple[str, str] | None = None
        self.continuation = ""
        self.pid_versions: dict[tuple[str, int], str] = {}
        self.versions_seen: dict[str, None] = {}
        self.known_hosts: set[str] = set()
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
        self.pending_fragment = ""
        self.lineno = 0
        self.last_preamble_line = -(10**9)
        self.jsonl_run: _RunBuilder | None = None

    # ----------------------------------------------------------------- run bookkeeping

    def _new_run(self, fmt: str = "text", *, implicit: bool = False) -> _RunBuilder | None:
        if len(self.runs) >= MAX_RUNS:
            self.runs_dropped += 1
            return None
        run = _RunBuilder(fmt, self.command)
        run.implicit = implicit
        for message, key, fatal in self.pending_errors:
            run.add_error(message, key, fatal=fatal)
        run.inherited_errors = len(run.errors)
        self.pending_errors.clear()
        self.runs.append(run)
        if fmt == "text":
            self.open.append(run)
        return run

    def _close(self, run: _RunBuilder) -> None:
        if run in self.open:
            self.open.remove(run)

    def _close_all(self) -> None:
        self.open.clear()

    def _table_runs(self) -> list[_RunBuilder]:
        """Open runs still before their column header."""
        return [r for r in self.open if r.layout is None and not r.rows and not r.footer]

    # ----------------------------------------------------------------- line intake

    def iter_lines(self, stream: io.BufferedReader) -> Iterator[str]:
        """Decoded lines, each cut at MAX_LINE_BYTES (base.iter_text_lines has no such cap)."""
        while True:
            chunk = stream.readline(MAX_LINE_BYTES)
            if not chunk:
                return
            if len(chunk) >= MAX_LINE_BYTES and not chunk.endswith(b"\n"):
                self.overlong += 1
                while True:  # drop the rest of the over-long line
                    more = stream.readline(MAX_LINE_BYTES)
                    if not more or more.endswith(b"\n"):
                        break
            yield chunk.decode("utf-8", "replace").rstrip("\r\n")

    def feed(self, raw: str) -> None:
        line = _strip_prefixes(raw, self.prefixes)
        if "(), " in line:
            cleaned = _strip_func_prefixes(line)
            if cleaned != line:
                self.func_prefixed += 1
                line = cleaned
        fragment, debug = self._split_glued(line)
        if debug is not None:
            self._on_debug(debug)
            if fragment.strip():
                # Program output cut by a debug line: the rest comes on a later line.
                self.pending_fragment += fragment
                if len(self.pending_fragment) > MAX_PENDING_CHARS:
                    self.pending_fragment = ""
                    self.malformed += 1
            return
        if self.pending_fragment:
            pending, self.pending_fragment = self.pending_fragment, ""
            if line.lstrip().startswith("#"):
                self._on_output(pending)
            else:
                line = pending + line
        self._on_output(line)

    def _split_glued(self, line: str) -> tuple[str, str | None]:
        """Split "<program output><host>:<pid>:<tid> [d] NCCL ..." into its two parts."""
        if "NCCL " not in line:
            return line, None
        match = _DEBUG_TAIL_RE.search(line)
        if match is None:
            return line, None
        start = match.start()
        begin = start
        while begin > 0 and line[begin - 1] in _HOST_CHARS:
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
        return line[:begin] + token[:cut], token[cut:] + line[start:]

    def _on_debug(self, line: str) -> None:
        self.debug_lines += 1
        match = _DEBUG_TAIL_RE.search(line)
        if match is None:
            return
        host = line[: match.start()]
        level, message = match.group("level"), match.group("msg").strip()
        if level in ("WARN", "ERROR", "ABORT"):
            self._on_error(line.strip(), key=f"{level} {message}", fatal=False)
            return
        version = _PLAIN_VERSION_RE.match(message)
        if version:
            self.versions_seen.setdefault(version.group(1), None)
            if len(self.pid_versions) < MAX_PID_VERSIONS:
                self.pid_versions[(host, int(match.group("pid")))] = version.group(1)

    def _on_output(self, line: str) -> None:
        text = line.strip()
        if not text:
            return
        self.lineno += 1
        if self.continuation:
            text, self.continuation = self.continuation + text, ""
        if text[0] == "#":
            self._on_hash(text)
            return
        if text[0] == "{" and self._on_json_line(text):
            return
        row = _ROW_RE.match(text)
        if row:
            self._on_row(text)
            return
        if text in ("...", "\u2026"):
            self._on_elision()
            return
        for pattern in _FATAL_RES:
            if pattern.search(text):
                self._on_error(text, key=text, fatal=True)
                return
        for pattern in _NONFATAL_RES:
            if pattern.search(text):
                self._on_error(text, key=text, fatal=False)
                return
        version = _PLAIN_VERSION_RE.match(text)
        if version:
            self.versions_seen.setdefault(version.group(1), None)
            return
        if text.endswith("\\") and len(self.continuation) < MAX_PENDING_CHARS:
            self.continuation = text[:-1].rstrip() + " "  # a shell command continues
            return
        command = _COMMAND_RE.search(text)
        if command:
            command_line = " ".join(_PROMPT_RE.sub("", text, count=1).split())
            self.command = (command_line[:2000], command.group(1))

    # ----------------------------------------------------------------- '#' lines

    def _on_hash(self, text: str) -> None:
        rank = _RANK_RE.match(text)
        if rank:
            self._on_rank(rank)
            return
        if _PARAMS_RE.match(text):
            self._on_preamble(2, lambda run: self._set_params(run, text))
            return
        version = _VERSION_RE.match(text)
        if version:
            self._on_preamble(0, lambda run: self._set_version(run, version))
            return
        starting = _STARTING_RE.match(text)
        if starting:
            self._on_preamble(1, lambda run: setattr(run, "collective_started", starting[1]))
            return
        if _HEADER_RE.match(text):
            self._on_header(text)
            return
        oob = _OOB_RE.match(text)
        if oob:
            self._on_oob(int(oob.group(1)))
            return
        avg = _AVG_RE.match(text)
        if avg:
            self._on_avg(avg.group(1))
            return
        concluded = _CONCLUDED_RE.match(text)
        if concluded:
            self._on_concluded(concluded.group(1))
            return
        reducing = _REDUCING_RE.match(text)
        if reducing:
            target = next(iter(self._table_runs()), self.open[-1] if self.open else None)
            if target is not None:
                target.params["maxBytes_effective"] = int(reducing.group(1))
            return
        error = _HASH_ERROR_RE.match(text)
        if error:
            self._on_error(text, key=text, fatal=False)

    def _set_params(self, run: _RunBuilder, text: str) -> None:
        for key, value, unit in _PARAM_PAIR_RE.findall(text.lstrip("#")):
            name = "_".join(key.split())
            if len(run.params) >= 64:
                break
            run.params[name] = int(value)
            if name == "step" and unit:
                run.params["step_kind"] = unit

    @staticmethod
    def _set_version(run: _RunBuilder, match: re.Match[str]) -> None:
        run.nccl_tests_version = match.group("version")
        library = match.group("library") or match.group("headers")
        if library and len(library) <= 9:
            run.library_code = int(library)

    def _on_preamble(self, level: int, apply: Callable[[_RunBuilder], None]) -> None:
        # Runs that printed only their preamble, the last of it a moment ago, form a group of
        # processes starting at once (each printing its own parameter line).
        recent = (
            [r for r in self.open if r.preamble_only()]
            if self.lineno - self.last_preamble_line <= CONCURRENCY_WINDOW
            else []
        )
        target = next((r for r in recent if r.preamble_level < level), None)
        if target is None:
            # A run that got further than its preamble is over; one that only printed its
            # preamble a moment ago belongs to a process running at the same time.
            for run in list(self.open):
                if run not in recent:
                    self._close(run)
            target = self._new_run()
            if target is None:
                return
        apply(target)
        target.preamble_level = level
        self.last_preamble_line = self.lineno

    def _on_rank(self, match: re.Match[str]) -> None:
        rank = NcclRank(
            rank=int(match.group("rank")),
            host=match.group("host"),
            device=int(match.group("device")),
            busid=match.group("busid").strip() or None,
            gpu=match.group("gpu") or None,
        )
        candidates = self._table_runs()
        target = next((r for r in candidates if rank.rank not in r.rank_numbers), None)
        if target is None and candidates:
            target = candidates[0]
        if target is None:
            self._close_all()
            target = self._new_run(implicit=True)
            if target is None:
                return
        target.add_rank(rank, int(match.group("pid")))
        if rank.host and len(self.known_hosts) < 10_000:
            self.known_hosts.add(rank.host)

    def _on_elision(self) -> None:
        if self.open and self.open[-1].ranks and self.open[-1].layout is None:
            self.open[-1].elided = True

    def _on_header(self, text: str) -> None:
        layout = _Layout.from_header(text)
        if layout is None:
            return
        candidates = self._table_runs()
        if candidates:
            target = candidates[0]
        elif self.open and not self.open[-1].rows and not self.open[-1].footer:
            target = self.open[-1]  # the same header printed again
        else:
            self._close_all()
            made = self._new_run(implicit=True)
            if made is None:
                return
            target = made
        target.layout = layout

    def _on_row(self, text: str) -> None:
        tokens = text.split()
        candidates = [r for r in self.open if r.layout is not None and not r.footer]
        if not candidates:
            if not _MODERN_ROW_RE.match(" ".join(tokens)):
                self.malformed += 1
                return
            # A fragment that starts inside a table: assume today's column layout.
            self._close_all()
            made = self._new_run(implicit=True)
            if made is None:
                return
            made.layout = _MODERN
            candidates = [made]
        target = candidates[0] if len(candidates) == 1 else self._best_fit(candidates, tokens)
        assert target.layout is not None
        try:
            row = _parse_row(tokens, target.layout)
        except _BadValue:
            self.malformed += 1
            return
        if self.rows_total >= MAX_ROWS:
            self.rows_dropped += 1
            return
        self.rows_total += 1
        target.rows.append(row)
        target.last_size = row.size_bytes
        if row.out_of_place is None:
            target.in_place_only_rows += 1

    def _best_fit(self, candidates: list[_RunBuilder], tokens: list[str]) -> _RunBuilder:
        """Rows of processes printing at once: give each row to the run it continues.

        Every run sweeps sizes upwards, so a row belongs to the run whose last size is the
        largest one below it; a row smaller than all of them starts a run without rows.
        """
        for run in candidates:
            self.interleaved_runs.add(self.runs.index(run))
        size = int(tokens[0]) if _INT_RE.match(tokens[0]) else 0
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
            (r for r in self.open if r.oob is None and (r.layout or r.rows) and not r.footer),
            None,
        )
        if target is None:
            self.orphan_footers += 1
            return
        target.oob = count
        target.footer = True

    def _on_avg(self, token: str) -> None:
        target = next((r for r in self.open if r.oob is not None and not r.avg_seen), None)
        if target is None:
            target = next((r for r in self.open if (r.layout or r.rows) and not r.avg_seen), None)
        if target is None:
            self.orphan_footers += 1
            return
        try:
            target.avg = _num(token)
        except _BadValue:
            target.avg = None
        target.avg_seen = True
        target.footer = True
        self._close(target)

    def _on_concluded(self, name: str) -> None:
        for run in reversed(self.runs):
            if run.format == "text" and run.footer:
                if run.collective_concluded is None:
                    run.collective_concluded = name
                break

    def _on_error(self, message: str, *, key: str, fatal: bool) -> None:
        if self.open:
            target: _RunBuilder | None = self.open[-1]
        else:
            target = next((r for r in reversed(self.runs) if r.format == "text"), None)
        if target is None:
            if len(self.pending_errors) < MAX_ERRORS_PER_RUN:
                self.pending_errors.append((message, key, fatal))
            return
        target.add_error(message, key, fatal=fatal)

    # ----------------------------------------------------------------- rccl JSON lines

    def _on_json_line(self, text: str) -> bool:
        if len(text) > MAX_JSON_LINE_CHARS or '"busBw"' not in text:
            return False
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            return False
        if not isinstance(record, dict) or "size" not in record:
            return False
        self._on_rccl_record(record)
        return True

    def _on_rccl_record(self, record: dict[str, Any]) -> None:
        size = _json_int(record.get("size"))
        if size is None:
            self.malformed += 1
            return
        name, dtype = _json_str(record.get("name")), _json_str(record.get("type"))
        redop = _json_str(record.get("redop"))
        in_place = _json_int(record.get("inPlace")) == 1
        run = self.jsonl_run
        if run is not None:
            index = run.row_slots.get(size)
            slot_taken = index is not None and (
                (run.rows[index].in_place if in_place else run.rows[index].out_of_place) is not None
            )
            same = (run.collective_named, run.rows[0].dtype if run.rows else dtype) == (
                name,
                dtype,
            )
            if slot_taken or not same:
                run = None
        if run is None:
            run = self._new_run("rccl_jsonl")
            if run is None:
                return
            run.collective_named = name
            run.nranks_hint = _json_int(record.get("gpus"))
            self.jsonl_run = run
        half = NcclMeasurement(
            time_us=_json_num(record.get("time")),
            algbw_gbps=_json_num(record.get("algBw")),
            busbw_gbps=_json_num(record.get("busBw")),
            wrong=_wrong_value(_json_num(record.get("#wrong")), error_column=False),
        )
        index = run.row_slots.get(size)
        if index is None:
            if self.rows_total >= MAX_ROWS:
                self.rows_dropped += 1
                return
            self.rows_total += 1
            run.row_slots[size] = len(run.rows)
            run.rows.append(
                NcclRow(
                    size_bytes=size,
                    count=_json_int(record.get("count")),
                    dtype=dtype,
                    redop=redop,
                    root=_json_int(record.get("root")),
                    out_of_place=None if in_place else half,
                    in_place=half if in_place else None,
                )
            )
        else:
            field = "in_place" if in_place else "out_of_place"
            run.rows[index] = dataclasses.replace(run.rows[index], **{field: half})

    # ----------------------------------------------------------------- JSON documents

    def parse_json_stream(self, stream: io.BufferedReader) -> None:
        """Junk lines (MPI warnings, the command) up to a line starting with '{', then JSON."""
        first = b""
        while True:
            chunk = stream.readline(MAX_LINE_BYTES)
            if not chunk:
                return
            if chunk.lstrip().startswith(b"{"):
                first = chunk
                break
            self.feed(chunk.decode("utf-8", "replace").rstrip("\r\n"))
        self.open.clear()  # nothing in the preamble is a run of its own
        cursor = _JsonCursor(stream.read, first.decode("utf-8", "replace"))
        while cursor.peek() == "{":
            if not self._json_document(cursor):
                return
        if cursor.peek():
            self.warnings.append("data after the JSON document was ignored")

    def _json_document(self, cursor: _JsonCursor) -> bool:
        """One JSON document; returns False when the rest of the input cannot be trusted."""
        run = self._new_run("nccl_tests_json")
        if run is None:
            return False
        top: dict[str, Any] = {}
        ok = True
        try:
            for key in cursor.members():
                if key == "results":
                    for _ in cursor.elements():
                        self._add_json_row(run, cursor.value())
                elif key == "benchmark":
                    run.format = "nccl_tests_fork_json"
                    self._fork_benchmark(cursor, run)
                elif key in ("env", "per_process_max_times_us"):
                    cursor.skip_value()
                else:
                    top[key] = cursor.value()
        except _Truncated:
            run.json_truncated = True
        except _BadJson as exc:
            run.json_truncated = True
            run.json_problem = str(exc)
            ok = False
        self._apply_json_top(run, top)
        known = {"identifier", "config", "results", "benchmark", "devices", "nccl_version"}
        if not run.rows and not (known & set(top)) and run.format == "nccl_tests_json":
            self.runs.remove(run)  # some other JSON document
        return ok and not run.json_truncated

    def _fork_benchmark(self, cursor: _JsonCursor, run: _RunBuilder) -> None:
        for _ in cursor.elements():
            if cursor.peek() != "{":
                cursor.skip_value()
                continue
            for size in cursor.members():
                record = cursor.value()
                if isinstance(record, dict) and _INT_RE.match(size.strip()):
                    self._add_fork_row(run, int(size.strip()), record)

    def _add_fork_row(self, run: _RunBuilder, size: int, record: dict[str, Any]) -> None:
        def half(prefix: str) -> NcclMeasurement | None:
            if not any(k.startswith(prefix) for k in record):
                return None
            return NcclMeasurement(
                time_us=_json_num(record.get(prefix + "time")),
                algbw_gbps=_json_num(record.get(prefix + "algbw")),
                busbw_gbps=_json_num(record.get(prefix + "busbw")),
                wrong=_wrong_value(_json_num(record.get(prefix + "error")), error_column=False),
            )

        self._append_row(
            run,
            NcclRow(
                size_bytes=size,
                count=_json_int(record.get("count")),
                dtype=_json_str(record.get("type")),
                redop=_json_str(record.get("redop")),
                root=_json_int(record.get("root")),
                out_of_place=half("oop_"),
                in_place=half("ip_"),
            ),
        )

    def _add_json_row(self, run: _RunBuilder, item: Any) -> None:
        if not isinstance(item, dict):
            self.malformed += 1
            return
        size = _json_int(item.get("size"))
        if size is None:
            self.malformed += 1
            return

        def half(value: Any) -> NcclMeasurement | None:
            if not isinstance(value, dict):
                return None
            time = value.get("time", value.get("cpu_time"))
            return NcclMeasurement(
                time_us=_json_num(time),
                algbw_gbps=_json_num(value.get("alg_bw")),
                busbw_gbps=_json_num(value.get("bus_bw")),
                wrong=_wrong_value(_json_num(value.get("nwrong")), error_column=False),
            )

        self._append_row(
            run,
            NcclRow(
                size_bytes=size,
                count=_json_int(item.get("count")),
                dtype=_json_str(item.get("type")),
                redop=_json_str(item.get("redop")),
                root=_json_int(item.get("root")),
                out_of_place=half(item.get("out_of_place")),
                in_place=half(item.get("in_place")),
            ),
        )

    def _append_row(self, run: _RunBuilder, row: NcclRow) -> None:
        if self.rows_total >= MAX_ROWS:
            self.rows_dropped += 1
            return
        self.rows_total += 1
        run.rows.append(row)

    def _apply_json_top(self, run: _RunBuilder, top: dict[str, Any]) -> None:
        if "identifier" in top:
            run.format = "nccl_tests_fork_json"
            # The fork's "version" is the NCCL version it ran with (matches "NCCL version").
            run.nccl_version = _json_str(top.get("version"))
        code = top.get("nccl_version")
        if isinstance(code, int) and not isinstance(code, bool) and code < 10**9:
            run.nccl_version = decode_nccl_version(code)
        elif isinstance(code, str):
            run.nccl_version = code.strip() or None
        run.nccl_tests_version = _json_str(top.get("nccl_tests_version"))
        args = top.get("args")
        if isinstance(args, list) and args and all(isinstance(a, str) for a in args):
            run.command_line = " ".join(args)[:2000]
            run.command_collective = args[0]
        run.started_at = _json_str(top.get("start_time"))
        run.ended_at = _json_str(top.get("end_time"))
        config = top.get("config")
        devices = top.get("devices")
        if isinstance(config, dict):
            run.params.update(_json_params(config))
            devices = config.get("devices", devices)
        if isinstance(devices, list):
            for device in devices:
                self._json_rank(run, device)
        oob = top.get("out_of_bounds")
        if isinstance(oob, dict):
            oob = oob.get("count")
        run.oob = _json_int(oob)
        avg = top.get("average_bus_bandwidth")
        run.avg_seen = "average_bus_bandwidth" in top
        run.avg = _json_num(avg.get("bandwidth") if isinstance(avg, dict) else avg)
        run.footer = run.avg_seen or "out_of_bounds" in top
        if run.format == "nccl_tests_fork_json":
            run.footer = not run.json_truncated  # the fork has no footer: a closed document
        errors = top.get("errors")
        if isinstance(errors, list):
            for error in errors:
                if isinstance(error, str) and error.strip():
                    run.add_error(error.strip(), error.strip(), fatal=False)

    def _json_rank(self, run: _RunBuilder, device: Any) -> None:
        if not isinstance(device, dict):
            return
        number = _json_int(device.get("rank"))
        if number is None:
            return
        host = _json_str(device.get("hostname"))
        rank = NcclRank(
            rank=number,
            host=host,
            device=_json_int(device.get("device")),
            busid=_json_str(device.get("device_hex")),
            gpu=_json_str(device.get("device_info")),
        )
        run.add_rank(rank, _json_int(device.get("pid")))

    # ----------------------------------------------------------------- results

    def finish(self) -> NcclTestsResult:
        if self.pending_fragment:
            pending, self.pending_fragment = self.pending_fragment, ""
            self._on_output(pending)
        if not self.runs:
            raise ParseError(
                "no nccl-tests output found (no parameter line, device list, results table "
                "or nccl-tests JSON)",
                permanent=True,
            )
        warnings = self._file_warnings()
        runs = []
        for number, builder in enumerate(self.runs, start=1):
            run, run_warnings = self._build(builder, number)
            runs.append(run)
            warnings.extend(run_warnings)
        versions = list(dict.fromkeys(r.nccl_version for r in runs if r.nccl_version))
        if len(versions) > 1:
            warnings.append(
                "runs in this file report different NCCL versions: " + ", ".join(versions)
            )
        warnings.extend(self.warnings)
        return NcclTestsResult(runs=tuple(runs), warnings=tuple(warnings))

    def _file_warnings(self) -> list[str]:
        warnings = []
        if self.prefixes:
            kinds = ", ".join(f"{k} ({n} lines)" for k, n in self.prefixes.items())
            warnings.append(f"launcher prefixes were stripped: {kinds}")
        if self.func_prefixed:
            warnings.append(
                f"source-location prefixes ('func(), file.cu:N,') were stripped from "
                f"{self.func_prefixed} lines"
            )
        if self.debug_lines:
            warnings.append(
                f"{self.debug_lines} NCCL debug lines interleaved with the output were skipped "
                "(WARN lines are kept as run errors)"
            )
        if len(self.interleaved_runs) > 1:
            numbers = ", ".join(str(i + 1) for i in sorted(self.interleaved_runs))
            warnings.append(
                f"runs {numbers} were printed interleaved (several processes writing at once, "
                "e.g. mpirun of a binary built without MPI=1: each process ran its own test); "
                "rows were attributed to runs by message-size order"
            )
        if self.malformed:
            warnings.append(f"{self.malformed} table lines could not be parsed and were skipped")
        if self.overlong:
            warnings.append(f"{self.overlong} lines longer than {MAX_LINE_BYTES} bytes were cut")
        if self.orphan_footers:
            warnings.append(f"{self.orphan_footers} footer lines without a results table")
        if self.rows_dropped:
            warnings.append(f"row limit {MAX_ROWS} reached: {self.rows_dropped} rows dropped")
        if self.runs_dropped:
            warnings.append(f"run limit {MAX_RUNS} reached: later runs were dropped")
        return warnings

    def _resolve_version(self, b: _RunBuilder, label: str, warnings: list[str]) -> str | None:
        if b.nccl_version:
            return b.nccl_version
        if b.library_code:
            return decode_nccl_version(b.library_code)
        found = list(dict.fromkeys(v for v in map(self.pid_versions.get, b.rank_pids) if v))
        if len(found) > 1:
            warnings.append(f"{label}: ranks report different NCCL versions: {', '.join(found)}")
        if found:
            return found[0]
        if len(self.versions_seen) == 1:
            return next(iter(self.versions_seen))
        return None

    def _build(self, b: _RunBuilder, number: int) -> tuple[NcclRun, list[str]]:
        collective = b.collective()
        label = f"run {number} ({collective or 'unknown collective'})"
        warnings: list[str] = []
        version = self._resolve_version(b, label, warnings)
        warnings.extend(_run_warnings(b, label))
        params: dict[str, Any] = {key: b.params.get(key) for key in PARAM_KEYS}
        params.update((k, v) for k, v in b.params.items() if k not in params)
        if b.layout is not None and b.layout.cputime:
            params["cputime"] = True
        run = NcclRun(
            collective=collective,
            nccl_tests_version=b.nccl_tests_version,
            nccl_version=version,
            params=params,
            ranks=tuple(b.ranks),
            nranks=b.nranks(),
            hosts=tuple(sorted({r.host for r in b.ranks if r.host})),
            rows=tuple(b.rows),
            avg_busbw_gbps=b.avg,
            out_of_bounds=b.oob,
            complete=_is_complete(b),
            errors=tuple(b.errors),
            format=b.format,
            command=b.command_line,
            error_column=bool(b.layout and b.layout.error_column),
            started_at=b.started_at,
            ended_at=b.ended_at,
        )
        return run, warnings


def _is_complete(b: _RunBuilder) -> bool:
    if b.failed or b.json_truncated:
        return False
    if b.format == "rccl_jsonl":
        # No footer in this format: complete when every size has both halves.
        return bool(b.rows) and all(r.out_of_place and r.in_place for r in b.rows)
    return b.footer


def _run_warnings(b: _RunBuilder, label: str) -> list[str]:
    warnings = []
    if b.implicit:
        warnings.append(f"{label}: starts without its parameter line (a fragment of a log?)")
    if b.failed:
        first = next(iter(b.errors), "")
        warnings.append(f"{label}: failed: {first}")
    elif b.json_truncated:
        problem = f" ({b.json_problem})" if b.json_problem else ""
        warnings.append(f"{label}: JSON ends early{problem}; kept {len(b.rows)} rows")
    elif b.format == "rccl_jsonl" and not _is_complete(b):
        warnings.append(
            f"{label}: some sizes lack their in-place or out-of-place record (output cut?)"
        )
    elif b.format == "text" and not b.footer:
        where = f"after {len(b.rows)} rows" if b.rows else _truncation_point(b)
        warnings.append(f"{label}: no footer, output truncated {where}")
    if b.format == "text" and b.footer and not b.avg_seen:
        warnings.append(f"{label}: no 'Avg bus bandwidth' line")
    nranks = b.nranks()
    if b.ranks and b.elided:
        warnings.append(
            f"{label}: device list elided with '...' ({len(b.ranks)} ranks listed; nranks "
            "counts only those)"
        )
    elif b.ranks and (nranks or 0) > len(b.ranks):
        warnings.append(
            f"{label}: device list incomplete ({len(b.ranks)} of at least {nranks} ranks "
            "listed; nranks comes from the highest rank number)"
        )
    if b.duplicate_ranks:
        warnings.append(f"{label}: {b.duplicate_ranks} duplicate rank lines ignored")
    if b.layout is not None and b.layout.extra_columns:
        warnings.append(f"{label}: extra columns (per-iteration i_*, #bitdiff...) are not reported")
    if b.in_place_only_rows:
        warnings.append(f"{label}: {b.in_place_only_rows} rows have no out-of-place result")
    if b.errors_dropped:
        warnings.append(f"{label}: {b.errors_dropped} further error messages dropped")
    return warnings


def _truncation_point(b: _RunBuilder) -> str:
    if b.layout is not None:
        return "after the column header"
    if b.ranks:
        return "after the device list"
    return "after the parameter line"


# --------------------------------------------------------------------------- config mapping

_CONFIG_KEYS = {
    "nthreads": "nThread",
    "ngpus": "nGpus",
    "minimum_bytes": "minBytes",
    "maximum_bytes": "maxBytes",
    "warmup_iters": "warmup_iters",
    "iterations": "iters",
    "aggregated_iterations": "agg_iters",
    "validation": "validation",
    "graph": "graph",
}


def _json_params(config: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for key, value in config.items():
        if key == "devices" or len(params) >= 64:
            continue
        if key in ("step_factor", "step_bytes"):
            params["step"] = _json_int(value)
            params["step_kind"] = "factor" if key == "step_factor" else "bytes"
            continue
        name = _CONFIG_KEYS.get(key, key)
        if isinstance(value, str) and value in ("true", "false"):
            params[name] = value == "true"  # nccl-tests writes booleans as strings
        elif isinstance(value, bool | int | float | str) or value is None:
            params[name] = value if not isinstance(value, float) else _json_num(value)
    return params


# --------------------------------------------------------------------------- detection


def _first_json_line(text: str) -> tuple[int, str] | None:
    """(offset, line) of the first line starting with '{', unless a text table comes first."""
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped.startswith("{"):
            return offset + len(line) - len(stripped), stripped
        if _TEXT_MARKER_RE.match(_strip_prefixes(stripped).strip()):
            return None
        offset += len(line)
    return None


def _is_rccl_record(line: str) -> bool:
    return bool(re.search(r'"busBw"\s*:', line) and re.search(r'"algBw"\s*:', line))


def _looks_like_json_doc(text: str) -> bool:
    found = _first_json_line(text)
    if found is None:
        return False
    offset, line = found
    if _is_rccl_record(line):
        return False
    body = text[offset:]
    if "traceEvents" in body:  # a PyTorch profiler trace may mention nccl_version too
        return False
    if re.search(r'"identifier"\s*:\s*"nccl-tests structured output"', body):
        return True
    if re.search(r'"(?:bus_bw|alg_bw)"\s*:', body):
        return True
    if re.search(r'"args"\s*:\s*\[\s*"[^"]*_perf(?:_mpi)?"', body):
        return True
    return bool(
        re.search(r'"nccl_version"\s*:\s*\d', body)
        and re.search(r'"(?:config|start_time|results)"\s*:', body)
    )


def accepts(name: str, head: bytes) -> bool:
    """Content sniffing of the (decompressed) first bytes; the file name is not used."""
    text = head[:HEAD_BYTES].decode("utf-8", "replace").lstrip("\ufeff")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        first = stripped.split("\n", 1)[0]
        return _looks_like_json_doc(text) or _is_rccl_record(first)
    if _looks_like_json_doc(text):
        return True
    rows = 0
    for raw in text.splitlines():
        line = _strip_prefixes(raw.lstrip())
        if "(), " in line:
            line = _strip_func_prefixes(line)
        line = line.strip()
        if _TEXT_MARKER_RE.match(line):
            return True
        if line.startswith("{") and _is_rccl_record(line):
            return True
        if _MODERN_ROW_RE.match(" ".join(line.split())):
            rows += 1
            if rows >= 3:
                return True
    return False


# --------------------------------------------------------------------------- entry point


class _Chain(io.RawIOBase):
    """The already-read head followed by the rest of the caller's stream."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self._head = memoryview(head)
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._stream.read(len(buffer))
        if not data:
            return 0
        n = len(data)
        buffer[:n] = data
        return n


def parse(stream: BinaryIO) -> NcclTestsResult:
    """Parse nccl-tests output; ParseError (and nothing else) when it cannot be read."""
    try:
        return _parse(stream)
    except ParseError:
        raise
    except OSError as exc:  # storage trouble, not the file's fault: worth a retry
        raise ParseError(f"could not read the file: {exc}", permanent=False) from exc
    except Exception as exc:  # a bug must not take the worker down with an odd exception
        raise ParseError(f"internal nccl_tests parser error: {type(exc).__name__}: {exc}") from exc


def _read_head(stream: BinaryIO) -> bytes:
    """Up to HEAD_BYTES: a raw stream may return fewer bytes per read than asked for."""
    parts: list[bytes] = []
    size = 0
    while size < HEAD_BYTES:
        chunk = stream.read(HEAD_BYTES - size)
        if not chunk:
            break
        if not isinstance(chunk, bytes | bytearray):
            raise ParseError("expected a binary stream")
        parts.append(bytes(chunk))
        size += len(chunk)
    return b"".join(parts)


def _parse(stream: BinaryIO) -> NcclTestsResult:
    head = _read_head(stream)
    buffered = io.BufferedReader(_Chain(head, stream), buffer_size=64 * 1024)
    parser = _Parser()
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    if _looks_like_json_doc(text):
        parser.parse_json_stream(buffered)
    else:
        for line in parser.iter_lines(buffered):
            parser.feed(line)
    return parser.finish()
