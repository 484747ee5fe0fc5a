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
read in bulk, and every other line goes through the line-by-line reading (``_State.feed``),
which ``parse_by_line`` keeps as the reference the block reading must equal.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any, BinaryIO, Literal

from artifacts.fabric.parsers.line_blocks import BlockReader
from artifacts.fabric.parsers.nccl_debug import ibverbs
from artifacts.fabric.parsers.nccl_debug.hosts import (
    HostState,
    damaged_form,
    has_partial_header,
    host_of_pid,
    looks_glued,
    ofi_line,
    plugin_line,
)
from artifacts.fabric.parsers.nccl_debug.info_kinds import InfoKind, info_kind
from artifacts.fabric.parsers.nccl_debug.model import (
    AlgoChoice,
    CollectiveCalls,
    CollectiveTimeout,
    CommRank,
    EnvSetting,
    GraphSearch,
    IbCompletion,
    NcclDebugResult,
    NcclEvent,
    NcclVersion,
    PathGroup,
    RingNeighbor,
    RingOrder,
    SocketDevice,
    TreeLink,
    TuningEntry,
)
from artifacts.fabric.parsers.nccl_debug.versions import read_detail, read_version
from artifacts.fabric.parsers.torch_nccl_errors import MARKERS as TORCH_MARKERS
from artifacts.fabric.parsers.torch_nccl_errors import TorchError, recognise
from artifacts.fabric.parsers.torch_nccl_errors import launcher_rank as launcher_rank_of
from artifacts.parsers.base import ParseError
from artifacts.parsers.textutil import LineReader, find_timestamp, head_text

KIND = "nccl_debug"
VERSION = 1

# A block's bytes, its text and its lines are read while they are still in the CPU's cache:
# 256 KiB blocks read the TRACE log 5 to 9 % faster than 1 MiB ones (issue 27, measured from
# 64 KiB to 1 MiB); tests make it small, so that lines fall across many block ends.
BLOCK_BYTES = 256 * 1024

# Bounds on what one file may add to the result, so memory stays flat on huge logs.
MAX_EVENTS = 10_000
MAX_ITEMS = 50_000
MAX_ENV = 2_000
# A memo's answer for a key it does not hold (None is an answer: "no kind").
_UNSEEN = object()
# Bounds on the block reading's memos (plain headers, lines that change nothing).
MAX_MEMO = 4_096

_HEADER = re.compile(
    # A host starts at a word boundary (not after a letter, digit, "_" or "."): besides being
    # right, this keeps the scan linear instead of retrying every suffix of every word.
    # A clock time ("10:05:33 " of a journald or syslog stamp) is not a host:pid:tid.
    r"(?<![\w.])(?!\d{1,2}:\d{2}:\d{2}[ \t])"
    r"(?P<host>[A-Za-z0-9][\w.\-]*):(?P<pid>\d+):(?P<tid>\d+)[ \t]+"
    r"(?:\[(?P<dev>\d+)\][ \t]+)?"
    # Patched builds print "func, 123 " here, WARN lines "file.cc:123 ", TRACE "12.3 f:1 ".
    # A token that is itself a host:pid:tid is never part of it (timestamps like 12:00:00).
    r"(?P<mid>(?:(?![\w.\-]+:\d+:\d+\s)\S+[ \t]+){0,4}?)"
    r"NCCL (?P<level>INFO|WARN|TRACE|CALL|ABORT|ERROR)\b ?"
)
# A line whose "host:pid:tid [dev]" was already removed (a cleaning step, a paste): the
# level word still says it is NCCL's, after at most a few words of prefix.
_BARE = re.compile(
    r"^\s*(?P<prefix>(?:\S+\s+){0,6}?)NCCL (?P<level>INFO|WARN|ERROR|ABORT) (?P<msg>.*)$"
)
_PREFIX_RANK = re.compile(r"\[rank ?(\d+)\]", re.IGNORECASE)
_ENV_NCCL = re.compile(r"^(?P<name>NCCL_[A-Z0-9_]+) set (?:by environment )?to (?P<value>.*?)\s*$")
_ENV_COMMAND = re.compile(r"(?<![\w$\"'])(?P<name>NCCL_[A-Z0-9_]+)=(?P<value>[^\s'\"\\;,]*)")
_COMM_STATE = re.compile(
    r"comm (?P<comm>0x[0-9a-fA-F]+) rank (?P<rank>\d+) nranks (?P<nranks>\d+)"
    r"(?: cudaDev (?P<cuda>-?\d+))?(?: nvmlDev (?P<nvml>-?\d+))?(?: busId (?P<bus>[0-9a-fA-F]+))?"
    r"(?P<rest>.*?) - (?P<what>Init|Destroy|Abort) (?P<state>COMPLETE|START)"
)
_COMM_TOPO = re.compile(
    r"comm (?P<comm>0x[0-9a-fA-F]+) rank (?P<rank>\d+) nRanks (?P<nranks>\d+)"
    r" nNodes (?P<nnodes>\d+) localRanks (?P<lranks>\d+) localRank (?P<lrank>\d+)"
    r"(?: MNNVL (?P<mnnvl>\d+))?"
)
_AFFINITY = re.compile(r"^Setting affinity for GPU (?P<gpu>\d+) to (?P<cpus>\S+)")
_KERNEL = re.compile(r"^Kernel version: (?P<v>\S+)")
_SUPPORT = re.compile(r"^(?P<what>DMA-BUF|NVLS multicast support) is (?P<not>not )?available")
_COMM_ID = re.compile(r"commId (0x[0-9a-fA-F]+)")
_INIT_TIMINGS = re.compile(
    r"Init timings(?: - \w+)?: rank (?P<rank>\d+) nranks (?P<nranks>\d+) total (?P<total>[\d.]+)"
    r"(?: \((?P<phases>[^)]*)\))?"
)
_PHASE = re.compile(r"(\w+) ([\d.]+)")
_CHANNEL_COUNTS = re.compile(
    r"(?P<coll>\d+) coll channels, (?:(?P<collnet>\d+) collnet channels, )?"
    r"(?:(?P<nvls>\d+) nvls channels, )?(?P<p2p>\d+) p2p channels, "
    r"(?P<peer>\d+) p2p channels per peer"
)
_PATH = re.compile(
    r"^(?:Channel|Ring) (?P<ch>\d+)(?:/\d+)? : (?P<src>\d+)(?:\[(?P<sdev>\d+)\])? -> "
    r"(?P<dst>\d+)(?:\[(?P<ddev>\d+)\])?(?: \[(?P<dir>send|receive)\])? via (?P<via>.+?)\s*$"
)
_RING_ORDER = re.compile(
    r"^(?:Channel|Ring) (?P<ch>\d+)(?:/(?P<n>\d+))? :(?P<ranks>(?: +\d+)+)\s*$"
)
_RING_NEIGHBOR = re.compile(
    r"^Ring (?P<ch>\d+) : (?P<prev>-?\d+) -> (?P<rank>\d+) -> (?P<next>-?\d+)\s*$"
)
_TREES = re.compile(r"\[(?P<ch>\d+)\] (?P<down>-?\d+(?:/-?\d+)*)->(?P<rank>\d+)->(?P<up>-?\d+)")
_TREE = re.compile(
    r"^Tree (?P<ch>\d+) : (?P<up>-?\d+) -> (?P<rank>\d+) -> (?P<down>-?\d+(?:/-?\d+)*)\s*$"
)
_GRAPH = re.compile(
    r"^Pattern (?P<pattern>\d+), crossNic (?P<cross>\d+), nChannels (?P<n>\d+), "
    r"bw (?P<intra>[\d.]+)/(?P<inter>[\d.]+), type (?P<ti>[^/\s]+)/(?P<te>\S+?), "
    r"sameChannels (?P<same>\d+)"
)
_ALGO = re.compile(
    r"^(?:(?P<coll>\w+): )?(?P<bytes>\d+) Bytes -> Algo (?P<algo>\w+) proto (?P<proto>\w+)"
    r"(?: channel\{Lo\.\.Hi\}=\{(?P<lo>\d+)\.\.(?P<hi>\d+)\})?"
)
# Possessive (``++``): what follows each run (":", a space, the end) is what the run cannot
# take, so giving characters back never leads to a match; not trying spares the bulk
# reading of the collective calls a tenth of its time (issue 27).
_COLL = re.compile(
    r"^(?P<coll>\w++): opCount \w++ sendbuff \S++ recvbuff \S++ count (?P<count>\d++) "
    r"datatype (?P<dt>\d++)"
)
# The same pattern run over many messages joined by newlines (none of its parts can match a
# newline, so each match is one message's ``_COLL.match``).
# The rest of each line is taken too, so that the search does not step through it.
_COLL_LINES = re.compile(_COLL.pattern + r"[^\n]*+", re.MULTILINE)
_IB_USING = re.compile(r"\[(?P<i>\d+)\](?P<name>[^:\s\[]+):(?P<port>\d+)/(?P<ll>\w+)")
_IB_DEVICE = re.compile(
    r"^NET/IB ?: \[(?P<i>\d+)\] (?P<name>[^:\s]+):[^:\s]*:(?P<port>\d+)/(?P<ll>\w+)"
    r"(?: provider=\S+)? speed=(?P<speed>\d+)"
)
_OOB = re.compile(r"OOB (\S+?)(?:<\d+>)?(?:\s|$)")
_VDEV = re.compile(r"Made virtual device \[\d+\] name=(?P<name>\S+) speed=(?P<speed>\d+)")
_SOCKET_USING = re.compile(r"\[(?P<i>\d+)\](?P<ifc>[^:\s\[]+):(?P<addr>\S+?)(?:<\d+>)?(?=\s|$)")
_GDR = re.compile(
    r"GPU Direct RDMA (?P<state>Enabled|Disabled) for (?:GPU \S+ / )?HCA (?P<i>\d+)"
    r"(?: '(?P<name>[^']+)')?"
)
_SOURCE = re.compile(r"[\w/.\-]+\.(?:cc|c|h|cu|cpp|hpp):\d+")

_ALGO_NAMES = {
    "0": "TREE",
    "1": "RING",
    "2": "COLLNET_DIRECT",
    "3": "COLLNET_CHAIN",
    "4": "NVLS",
    "5": "NVLS_TREE",
    "6": "PAT",
}
_PROTO_NAMES = {"0": "LL", "1": "LL128", "2": "SIMPLE"}
_DATATYPES = {
    "0": "int8",
    "1": "uint8",
    "2": "int32",
    "3": "uint32",
    "4": "int64",
    "5": "uint64",
    "6": "float16",
    "7": "float32",
    "8": "float64",
    "9": "bfloat16",
    "10": "float8e4m3",
    "11": "float8e5m2",
}
_TABLE_ALGOS = {
    "Tree": "TREE",
    "Ring": "RING",
    "CollNetDirect": "COLLNET_DIRECT",
    "CollNetChain": "COLLNET_CHAIN",
    "NVLS": "NVLS",
    "NVLSTree": "NVLS_TREE",
    "PAT": "PAT",
}
_TUNING_COLLECTIVES = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"}
_STATUS_ORDER = {"started": 0, "complete": 1, "destroyed": 2, "aborted": 2}


def accepts(name: str, head: bytes) -> bool:
    """Sniff for NCCL debug headers or PyTorch NCCL watchdog/backend errors."""
    text = head_text(head)
    if text.lstrip("\ufeff \t\r\n").startswith(("{", "[{", "<")):
        return False  # JSON traces and XML dumps are other kinds, even if they quote NCCL lines
    for line in text.splitlines()[:5000]:
        if "NCCL " in line and _HEADER.search(line):
            return True
        if "WorkNCCL(" in line or "DistBackendError" in line or "ProcessGroupNCCL" in line:
            return True
    return False


def parse(stream: BinaryIO) -> NcclDebugResult:
    """Read blocks of whole lines; a block ``BlockReader`` repairs comes line by line."""
    reader = _Blocks(stream, block_bytes=BLOCK_BYTES)
    state = _State()
    line_no = 0
    for piece in reader:
        if isinstance(piece, bytes):
            lines = piece.decode("utf-8").split("\n")
            lines.pop()  # the empty text after the block's last newline
            state.feed_lines(lines, line_no + 1)
            line_no += len(lines)
        else:
            line_no += not isinstance(piece, _SameLine)
            state.feed(piece, line_no)
    return _finish(state, reader.repair_warnings())


def parse_by_line(stream: BinaryIO) -> NcclDebugResult:
    """The reading ``parse`` must equal: every line through ``_State.feed`` (for tests)."""
    reader = LineReader(stream)
    state = _State()
    for text in reader:
        state.feed(text, reader.line_no)
    return _finish(state, reader.repair_warnings())


def _finish(state: _State, reader_warnings: list[str]) -> NcclDebugResult:
    if not state.nccl_lines and not state.events:
        raise ParseError(
            "no NCCL_DEBUG lines (host:pid:tid [dev] NCCL INFO ...) nor PyTorch NCCL errors found"
        )
    return state.result(reader_warnings)


class _SameLine(str):
    """A piece of the physical line before it: LineReader splits a line at a lone ``\\r``
    and numbers both pieces alike."""

    __slots__ = ()


class _Blocks(BlockReader):
    """``BlockReader`` whose repaired lines say when they continue the line before them, so
    that events keep the line numbers ``LineReader`` gives."""

    def _repaired(self, raw: bytes) -> Iterator[str]:
        for advanced, text in self._numbered(raw):
            yield text if advanced else _SameLine(text)


def _line_time(line: str) -> str | None:
    """The time a line's prefix gives (a log shipper's or collector's stamp), if any."""
    stamp = find_timestamp(line[:80])
    return stamp[0] if stamp else None


class _Segment:
    """One ``host:pid:tid [dev] ... NCCL LEVEL message`` piece of a physical line."""

    __slots__ = ("dev", "host", "level", "mid", "msg", "pid", "tid")

    def __init__(
        self, host: str, pid: int, tid: int, dev: int | None, level: str, mid: str, msg: str
    ):
        self.host = host
        self.pid = pid
        self.tid = tid
        self.dev = dev
        self.level = level
        self.mid = mid
        self.msg = msg


class _State:
    """Everything collected so far; ``feed`` one physical line at a time."""

    def __init__(self) -> None:
        self.nccl_lines = 0
        self.garbled = 0
        self.error_traces = 0
        self.dropped = 0
        self.known_hosts: set[str] = set()
        self.hosts: dict[str, HostState] = {}
        # (host, library, version, build, revision) -> {"hip": ..., "rocm": ...}
        self.versions: dict[
            tuple[str | None, str, str, str | None, str | None], dict[str, str]
        ] = {}
        self.last_version: (
            tuple[tuple[str | None, str, str, str | None, str | None], int] | None
        ) = None
        self.pid_hosts: dict[int, set[str]] = {}
        self.host_lines: dict[str, int] = {}
        self.completions: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.pending_completion: tuple[dict[str, Any], int] | None = None
        self.parts: dict[str, None] = {}
        self.env: dict[tuple[str, str, str | None, str], None] = {}
        self.comms: dict[tuple[str, int, str], dict[str, Any]] = {}
        self.thread_comm: dict[tuple[str, int, int], str] = {}
        self.pending_channels: dict[tuple[str, int, int], dict[str, int]] = {}
        self.paths: dict[tuple[Any, ...], set[int]] = {}
        self.path_devs: dict[tuple[Any, ...], tuple[int | None, int | None]] = {}
        self.rings: dict[tuple[Any, ...], RingOrder] = {}
        self.neighbors: dict[tuple[Any, ...], RingNeighbor] = {}
        self.trees: dict[tuple[Any, ...], TreeLink] = {}
        self.graphs: dict[GraphSearch, None] = {}
        self.algos: dict[tuple[str | None, str, str], list[int]] = {}
        self.colls: dict[tuple[str, str], list[int]] = {}
        self.tuning: dict[tuple[str, str, str], TuningEntry] = {}
        self.tuning_source: tuple[str, int, int] | None = None
        self.tuning_columns: dict[tuple[str, int, int], tuple[list[str], list[str]]] = {}
        self.events: list[dict[str, Any]] = []
        self.event_index: dict[tuple[Any, ...], int] = {}
        self.timeouts: dict[tuple[Any, ...], dict[str, Any]] = {}
        # block reading: a line's text up to its level word -> its plain header, or False
        self.plain_headers: dict[str, _Segment | Literal[False]] = {}
        self.inert_lines: set[str] = set()
        # block reading: an INFO message's text after "NCCL INFO " -> its kind
        self.info_kinds: dict[str, InfoKind | None] = {}

    # --- block level (issue 27) -------------------------------------------------------------

    def feed_lines(self, lines: list[str], line_no: int) -> None:
        """Whole lines of a block, the first being line ``line_no``: exactly what ``feed``
        would make of them, one by one.

        Most lines of a big log are a plain header (``host:pid:tid [dev] mid NCCL LEVEL`` at
        the start, of a host already seen, no second header on the line) and TRACE/CALL
        chatter (counted only) or an INFO message. Such a header is read once per distinct
        text up to the level word (``_plain_header``) instead of being searched for on every
        line; what each such line adds to the counts is added in bulk (``_count_plain``)
        before the next line that goes through ``feed``, and the two commonest messages
        (collective calls, algorithm choices) are read together at the end. Any other INFO
        message's kind is remembered by its text (``info_kinds``): one of no kind costs a
        dict lookup, one of a kind is read by the line's header as ``_info`` reads it. Lines
        without a header that change nothing (``_inert``: "... NCCL RDMA server accept")
        are remembered and skipped. Every other line goes through ``feed``.
        """
        headers = self.plain_headers
        inert = self.inert_lines
        kinds = self.info_kinds
        plain: list[str] = []  # hosts of the plain lines not yet counted
        calls: list[str] = []  # INFO messages of collective calls
        algos: list[str] = []  # INFO messages of algorithm choices
        for number, line in enumerate(lines, line_no):
            at = line.find("NCCL ")
            if at > 0:
                key = line[: at + 11]  # up to "NCCL TRACE ", or one character after INFO/CALL
                head = headers.get(key)
                # A second "NCCL " may start another header: a line with two goes through
                # feed. Its search for the second starts where the first header ends: at + 10
                # after INFO or CALL, at + 11 after TRACE (at + 10 is then a space, where no
                # header starts).
                if head is not False and (
                    line.find("NCCL ", at + 5) < 0 or _HEADER.search(line, at + 10) is None
                ):
                    if head is None:
                        head = self._plain_header(key)
                    if head:
                        plain.append(head.host)
                        if head.level != "INFO":
                            continue  # TRACE and CALL: counted only
                        # The INFO message, read as ``_info`` reads it. The two commonest of
                        # a big log are collected, to be read in bulk; any other's kind is a
                        # function of its text, remembered (``info_kind``).
                        raw = line[at + 10 :]
                        if " opCount " in raw:
                            if " opCount " in (msg := raw.strip()):
                                calls.append(msg)
                                continue
                        elif " Bytes -> Algo " in raw and " Bytes -> Algo " in (msg := raw.strip()):
                            algos.append(msg)
                            continue
                        kind = kinds.get(raw, _UNSEEN)
                        if kind is _UNSEEN:
                            kind = info_kind(raw.strip())
                            _remember(kinds, raw, kind)
                        if kind is not None:
                            seg = _Segment(
                                head.host, head.pid, head.tid, head.dev, "INFO", head.mid, raw
                            )
                            self._read_info(kind, seg, raw, raw.strip(), number, None, None)  # type: ignore[arg-type]
                        continue
            # no completion is pending after a plain line: the line cannot continue one
            if plain or self.pending_completion is None:
                if line in inert:
                    continue
                if _inert(line):
                    _remember(inert, line)
                    continue
            if plain:
                self._count_plain(plain)
                plain = []
            self.feed(line, number)
        self._count_plain(plain)
        self._bulk_calls(calls)
        self._bulk_algos(algos)

    def _plain_header(self, key: str) -> _Segment | Literal[False] | None:
        """The header of lines that start with ``key`` (up to "NCCL TRACE ", or one character
        after "NCCL INFO " or "NCCL CALL "), where it is their only header (checked by the
        caller) and of a known host; None (not remembered) where the host is new:
        ``_segments`` may yet read it as a damaged form of another. The header pattern
        stops at the level word, so the text before "NCCL " alone decides its match."""
        if key.endswith("NCCL TRACE "):
            prefix, level = key[:-11], "TRACE"
        elif key[:-1].endswith(("NCCL INFO ", "NCCL CALL ")):
            prefix, level = key[:-11], key[-6:-2]
        else:  # a short line, or a level word this way does not take
            _remember(self.plain_headers, key, False)
            return False
        m = _HEADER.match(prefix + "NCCL INFO ")
        if m is None or m.end() != len(prefix) + 10:
            _remember(self.plain_headers, key, False)
            return False
        host = m["host"]
        if host not in self.known_hosts:
            return None
        pid, dev = int(m["pid"]), m["dev"]
        dev_no = int(dev) if dev is not None else None
        head = _Segment(host, pid, int(m["tid"]), dev_no, level, m["mid"].strip(), "")
        # what every such line adds once: its process under its host
        self.pid_hosts.setdefault(pid, set()).add(host)
        self._host(host).pids.add(pid)
        _remember(self.plain_headers, key, head)
        return head

    def _count_plain(self, hosts: list[str]) -> None:
        """What ``feed`` counts for each plain line (``hosts``: the host of each): the line,
        its host's lines, and that it ends a wrapped completion."""
        if hosts:
            self.pending_completion = None
            self.nccl_lines += len(hosts)
            lines = self.host_lines
            distinct = set(hosts)
            if len(distinct) > 8:  # many hosts' lines between two fed lines
                for host, count in Counter(hosts).items():
                    lines[host] = lines.get(host, 0) + count
                return
            # a few hosts (most often one or two): a count per host costs less than a Counter
            for host in distinct:
                lines[host] = lines.get(host, 0) + hosts.count(host)

    # --- line level -------------------------------------------------------------------------

    def feed(self, line: str, line_no: int) -> None:
        first = _HEADER.search(line) if "NCCL " in line else None
        if first is None:
            if "NCCL INFO " in line and self._headless(line):
                return
            bare = _BARE.match(line) if "NCCL " in line else None
            if bare is not None:
                time = _line_time(line)
                said = _PREFIX_RANK.search(bare["prefix"])
                rank = int(said.group(1)) if said else launcher_rank_of(line)
                self._bare(bare["level"], bare["msg"], line_no, time, rank)
                return
            # the line's time is read only if the line turns out to hold something
            self._foreign_line(line, line_no, None, lazy=True)
            return
        self.pending_completion = None
        time: str | None = None
        start = 0
        # Most lines start with their header: no prefix to read a time or a launcher from.
        stamp = find_timestamp(line[: first.end()]) if first.start() else None
        if stamp and stamp[1] < first.start():
            time = stamp[0]
            if stamp[2] > first.start():  # "...-07:00ip-10-1-2-3:79:79": the time ran into the host
                start = stamp[2]
        launcher_rank = launcher_rank_of(line) if first.start() else None
        # Slice rather than offset: the look-behind must not see the timestamp's last digit.
        segments = self._segments(line[start:], 0) if start else self._segments(line, 0, first)
        if not segments:
            self._foreign_line(line, line_no, time)
            return
        if len(segments) > 1:
            self.garbled += 1
        for segment in segments:
            self.nccl_lines += 1
            self._segment(segment, line_no, time, launcher_rank)

    def _headless(self, line: str) -> bool:
        """A piece whose header was cut off by another write: keep the host-free facts."""
        msg = line.rsplit("NCCL INFO ", 1)[1].strip()
        if " Bytes -> Algo " in msg:
            self._algo_choice(msg)
        elif " opCount " in msg:
            self._collective_call(msg)
        else:
            return False
        self.garbled += 1
        return True

    def _segments(
        self, line: str, start: int, first: re.Match[str] | None = None
    ) -> list[_Segment]:
        # ``first``: the line's first header, already found. Another header holds "NCCL "
        # after it; most lines have none, and scanning their message with the header's
        # pattern is most of the parse (issue 27).
        if first is not None and line.find("NCCL ", first.end()) < 0:
            if not first.start() and (host := first["host"]) in self.known_hosts:
                # the usual line: one header, at the start, of a host already seen
                pid, tid, dev, level, mid = first.group("pid", "tid", "dev", "level", "mid")
                self.pid_hosts.setdefault(int(pid), set()).add(host)
                dev_no = int(dev) if dev is not None else None
                msg = line[first.end() :]
                return [_Segment(host, int(pid), int(tid), dev_no, level, mid.strip(), msg)]
            matches = [first]
        else:
            matches = list(_HEADER.finditer(line, start))
        out: list[_Segment] = []
        bounds: list[tuple[int, str]] = []
        # A cut-off header before the first full one means another write was cut into.
        broken = (
            bool(matches)
            and matches[0].start() > start
            and has_partial_header(line[start : matches[0].start()])
        )
        if broken:
            self.garbled += len(matches) == 1
        for i, m in enumerate(matches):
            host, begin = m["host"], m.start()
            if host not in self.known_hosts:
                same_process = host_of_pid(
                    self.pid_hosts.get(int(m["pid"]), ()), host, self.host_lines
                )
                if same_process is not None:
                    if host.endswith(same_process):  # debris glued before it: not this piece's
                        begin += len(host) - len(same_process)
                    bounds.append((begin, same_process))
                    continue
                # Interleaved writes glue the tail of one rank's text to the next header
                # ("cudaDev 0ljm:80356..."): prefer a host we already know as a suffix.
                for known in self.known_hosts:
                    glued = host[: len(host) - len(known)]
                    if (
                        glued
                        and host.endswith(known)
                        and looks_glued(line, begin, glued, i, broken)
                    ):
                        begin += len(glued)
                        host = known
                        break
            bounds.append((begin, host))
        for i, m in enumerate(matches):
            end = bounds[i + 1][0] if i + 1 < len(matches) else len(line)
            host = bounds[i][1]
            if i == 0:
                self.known_hosts.add(host)
                self.pid_hosts.setdefault(int(m["pid"]), set()).add(host)
            dev = int(m["dev"]) if m["dev"] is not None else None
            msg = line[m.end() : end]
            out.append(
                _Segment(host, int(m["pid"]), int(m["tid"]), dev, m["level"], m["mid"].strip(), msg)
            )
        return out

    def _segment(
        self, seg: _Segment, line_no: int, time: str | None, launcher_rank: int | None
    ) -> None:
        host = self._host(seg.host)
        host.pids.add(seg.pid)
        self.host_lines[seg.host] = self.host_lines.get(seg.host, 0) + 1
        if seg.level in ("WARN", "ERROR", "ABORT"):
            source = _SOURCE.search(seg.mid)
            details = {"level": seg.level, "source": source.group(0) if source else None}
            self._warn(seg, line_no, time, seg.msg.strip(), details, launcher_rank)
            return
        if seg.level in ("CALL", "TRACE"):
            return  # API call traces: volume without facts
        self._info(seg, seg.msg, line_no, time, launcher_rank)

    def _merge_damaged_hosts(self) -> None:
        """Hosts whose name is a damaged form of another host's, and whose processes all
        printed under that host too, are that host: a process's first line (before its pid was
        known) can be garbled by another process's write. Their lines move to it."""
        lines = self.host_lines
        names = sorted(self.hosts, key=lambda h: (lines.get(h, 0), h))
        alias: dict[str, str] = {}
        for name in names:
            for real in reversed(names):
                if real == name or real in alias or lines.get(real, 0) <= lines.get(name, 0):
                    continue
                if self.hosts[name].pids <= self.hosts[real].pids and damaged_form(real, name):
                    alias[name] = real
                    break
        if not alias:
            return
        for name, real in alias.items():
            self.hosts[real].absorb(self.hosts.pop(name))
        for e in self.events:
            if e["host"] in alias:
                e["host"] = alias[e["host"]]
                thread = e["_thread"]
                e["_thread"] = (alias[thread[0]], *thread[1:]) if thread else None
        self.versions = {
            (alias.get(k[0], k[0]) if k[0] else None, *k[1:]): v  # type: ignore[misc]
            for k, v in self.versions.items()
        }
        self.env = {
            (k[0], k[1], alias.get(k[2], k[2]) if k[2] else None, k[3]): None for k in self.env
        }
        completions: dict[tuple[Any, ...], dict[str, Any]] = {}
        for key, entry in self.completions.items():
            thread = entry["_thread"]
            entry["_thread"] = (alias.get(thread[0], thread[0]), *thread[1:]) if thread else None
            completions.setdefault((alias.get(key[0], key[0]), *key[1:]), entry)
        self.completions = completions
        comms: dict[tuple[str, int, str], dict[str, Any]] = {}
        for (host, pid, address), comm in self.comms.items():
            comm["host"] = alias.get(host, host)
            comms.setdefault((comm["host"], pid, address), comm)
        self.comms = comms
        self.thread_comm = {(alias.get(t[0], t[0]), *t[1:]): c for t, c in self.thread_comm.items()}  # type: ignore[misc]

    def _host(self, name: str) -> HostState:
        host = self.hosts.get(name)
        if host is None:
            host = self.hosts[name] = HostState(name)
        return host

    # --- NCCL INFO messages -----------------------------------------------------------------

    def _info(
        self, seg: _Segment, raw: str, line_no: int, time: str | None, launcher: int | None
    ) -> None:
        msg = raw.strip()
        kind = info_kind(msg)
        if kind is not None:
            self._read_info(kind, seg, raw, msg, line_no, time, launcher)

    def _read_info(
        self,
        kind: InfoKind,
        seg: _Segment,
        raw: str,
        msg: str,
        line_no: int,
        time: str | None,
        launcher: int | None,
    ) -> None:
        """Read an INFO message (``msg``: ``raw`` stripped) as what ``info_kind`` says it is."""
        if kind == "call":
            self._collective_call(msg)
        elif kind == "algo":
            self._algo_choice(msg)
        elif kind == "channel":
            self._channel_line(seg, msg)
        elif kind == "tree":
            self._tree_line(seg, msg)
        elif kind == "tuning":
            self._tuning_row(seg, raw)
        elif kind == "network":
            self._network(seg, msg)
        elif kind == "comm":
            self._comm_line(seg, msg, line_no, time, launcher)
        elif kind == "version":
            if self._version(seg.host, msg, line_no, at_start=True):
                self.parts.setdefault("version", None)
        elif kind == "env":
            self._nccl_env(seg.host, msg)
        elif kind == "init_timings":
            self._init_timings(seg, msg)
        elif kind == "cuda_driver":
            self._cuda_driver(seg.host, msg)
        elif kind == "graph":
            self._graph(seg.host, msg)
        elif kind == "host_detail":
            self._host_detail(seg, msg)
        elif kind == "channel_counts":
            self._channel_counts(seg, msg)
        else:  # "error_trace"
            self.error_traces += 1

    def _version(self, host: str | None, msg: str, line_no: int, at_start: bool) -> bool:
        found = read_version(msg)
        if found is None or (at_start and found[4] > 0):
            return False
        library, version, build, revision, _ = found
        key = (host, library, version, build, revision)
        self.versions.setdefault(key, {})
        self.last_version = (key, line_no)
        return True

    def _version_detail(self, line: str, line_no: int) -> bool:
        """RCCL's ``HIP version  : ...`` lines under its version line (no NCCL header)."""
        if self.last_version is None or line_no - self.last_version[1] > 8:
            return False
        detail = read_detail(line)
        if detail is None:
            return False
        key, value = detail
        version_key = self.last_version[0]
        if key == "hostname" and version_key[0] is None:
            # a bare banner (NCCL_DEBUG=VERSION) names its host on this line
            details = self.versions.pop(version_key)
            version_key = (value, *version_key[1:])
            self.versions.setdefault(version_key, {}).update(details)
            self.last_version = (version_key, self.last_version[1])
        elif key in ("hip", "rocm"):
            self.versions[version_key][key] = value
        return True

    def _nccl_env(self, host: str, msg: str) -> None:
        match = _ENV_NCCL.match(msg)
        if match:
            self._add_env(match["name"], _clean_env_value(match["value"]), host, "nccl")

    def _add_env(self, name: str, value: str, host: str | None, source: str) -> None:
        if len(self.env) < MAX_ENV:
            self.env.setdefault((name, value, host, source), None)
        else:
            self.dropped += 1

    def _host_detail(self, seg: _Segment, msg: str) -> None:
        host = self._host(seg.host)
        if m := _AFFINITY.match(msg):
            host.gpu_affinity[f"GPU {m['gpu']}"] = m["cpus"]
        elif m := _KERNEL.match(msg):
            host.kernel_version = m["v"]
        elif m := _SUPPORT.match(msg):  # a garbled line says neither: left as it was
            value = m["not"] is None
            if m["what"] == "DMA-BUF":
                host.dmabuf = host.dmabuf or value
            else:
                host.nvls_multicast = host.nvls_multicast or value

    def _cuda_driver(self, host: str, msg: str) -> None:
        parts = msg.split()
        if len(parts) >= 2 and parts[1].isdigit():
            self._host(host).cuda_driver = int(parts[1])

    def _network(self, seg: _Segment, msg: str) -> None:
        host = self._host(seg.host)
        if msg.startswith("Using network "):
            name = msg[len("Using network ") :].strip()
            if name and name not in host.transports:
                host.transports.append(name)
        elif msg.startswith("Bootstrap"):
            parts = msg.split("Using ", 1)
            if len(parts) == 2 and parts[1].strip():
                host.bootstrap = re.sub(r"<\d+>$", "", parts[1].split()[0])
        elif msg.startswith("NET/IB"):
            self._net_ib(host, msg)
        elif msg.startswith("NET/Socket"):
            if "Using " in msg:
                for m in _SOCKET_USING.finditer(msg.split("Using ", 1)[1]):
                    host.sockets[m["ifc"]] = SocketDevice(int(m["i"]), m["ifc"], m["addr"])
        elif msg.startswith("NET/Plugin"):
            plugin_line(host, msg)
        elif msg.startswith("NET/OFI"):
            ofi_line(host, msg)

    def _net_ib(self, host: HostState, msg: str) -> None:
        if "No device found" in msg:
            host.ib_found = False
            return
        gdr = _GDR.search(msg)
        if gdr:
            name = gdr["name"] or f"HCA {gdr['i']}"
            (host.gdr_on if gdr["state"] == "Enabled" else host.gdr_off).add(name)
            return
        vdev = _VDEV.search(msg)
        if vdev:
            host.vdev_speed.setdefault(vdev["name"], int(vdev["speed"]))
            return
        detail = _IB_DEVICE.match(msg)
        if detail:
            entry = self._ib_entry(
                host, detail["name"], int(detail["i"]), int(detail["port"]), detail["ll"]
            )
            entry["speed"] = int(detail["speed"])
            return
        if " Using " in msg or msg.startswith("NET/IB : Using"):
            body = msg.split("Using", 1)[1]
            for m in _IB_USING.finditer(body.split(";")[0]):
                self._ib_entry(host, m["name"], int(m["i"]), int(m["port"]), m["ll"])
            host.ib_found = True if host.ib_found is None else host.ib_found
            host.relaxed_ordering = "[RO]" in body
            oob = _OOB.search(body)
            if oob:
                host.oob = oob.group(1)

    @staticmethod
    def _ib_entry(
        host: HostState, name: str, index: int, port: int, link_layer: str
    ) -> dict[str, Any]:
        entry = host.ib_devices.setdefault(
            name, {"index": index, "port": port, "link_layer": link_layer, "speed": None}
        )
        entry.update(index=index, port=port, link_layer=link_layer)
        return entry

    def _comm_line(
        self, seg: _Segment, msg: str, line_no: int, time: str | None, launcher: int | None
    ) -> None:
        state = _COMM_STATE.search(msg)
        if state:
            self._comm_state(seg, state, msg, line_no, time, launcher)
            return
        topo = _COMM_TOPO.search(msg)
        if topo:
            comm = self._comm(seg, topo["comm"], int(topo["rank"]), int(topo["nranks"]))
            if comm is not None:
                comm.update(
                    nnodes=int(topo["nnodes"]),
                    local_ranks=int(topo["lranks"]),
                    local_rank=int(topo["lrank"]),
                    mnnvl=int(topo["mnnvl"]) if topo["mnnvl"] else comm.get("mnnvl"),
                )
            return
        creating = re.search(r"comm (0x[0-9a-fA-F]+) rank (\d+)", msg)
        if creating:  # "UDS: Creating service thread comm 0x... rank 2": binds the thread
            self.thread_comm[(seg.host, seg.pid, seg.tid)] = creating.group(1)

    def _comm(self, seg: _Segment, address: str, rank: int, nranks: int) -> dict[str, Any] | None:
        key = (seg.host, seg.pid, address)
        comm = self.comms.get(key)
        if comm is None:
            if len(self.comms) >= MAX_ITEMS:
                self.dropped += 1
                return None
            comm = self.comms[key] = {
                "host": seg.host,
                "pid": seg.pid,
                "comm": address,
                "comm_id": None,
                "rank": rank,
                "nranks": nranks,
                "cuda_dev": seg.dev,
                "nvml_dev": None,
                "bus_id": None,
                "status": "started",
                "nnodes": None,
                "local_rank": None,
                "local_ranks": None,
                "channels": {},
                "init_seconds": None,
                "init_phases": {},
                "mnnvl": None,
            }
        thread = (seg.host, seg.pid, seg.tid)
        self.thread_comm[thread] = address
        pending = self.pending_channels.pop(thread, None)
        if pending and not comm["channels"]:
            comm["channels"] = pending
        return comm

    def _comm_state(
        self,
        seg: _Segment,
        m: re.Match[str],
        msg: str,
        line_no: int,
        time: str | None,
        launcher: int | None,
    ) -> None:
        comm = self._comm(seg, m["comm"], int(m["rank"]), int(m["nranks"]))
        if comm is None:
            return
        if m["cuda"] is not None:
            comm["cuda_dev"] = int(m["cuda"])
        if m["nvml"] is not None:
            comm["nvml_dev"] = int(m["nvml"])
        if m["bus"] is not None:
            comm["bus_id"] = m["bus"]
        comm_id = _COMM_ID.search(m["rest"])
        if comm_id:
            comm["comm_id"] = comm_id.group(1)
        status = {"Init": "complete", "Destroy": "destroyed", "Abort": "aborted"}[m["what"]]
        if m["state"] == "START":
            status = "started"
        if _STATUS_ORDER[status] >= _STATUS_ORDER[comm["status"]]:
            comm["status"] = status
        if m["state"] == "COMPLETE":
            kind = {"Init": "comm_init", "Destroy": "comm_destroy", "Abort": "comm_abort"}[
                m["what"]
            ]
            details = {"comm": m["comm"], "nranks": int(m["nranks"])}
            self._event(kind, time, seg, line_no, msg, details, launcher, rank=int(m["rank"]))

    def _init_timings(self, seg: _Segment, msg: str) -> None:
        m = _INIT_TIMINGS.search(msg)
        if not m:
            return
        rank, nranks = int(m["rank"]), int(m["nranks"])
        address = self.thread_comm.get((seg.host, seg.pid, seg.tid))
        comm = self.comms.get((seg.host, seg.pid, address)) if address else None
        if comm is None or comm["rank"] != rank:
            comm = next(
                (
                    c
                    for c in reversed(self.comms.values())
                    if c["host"] == seg.host
                    and c["pid"] == seg.pid
                    and c["rank"] == rank
                    and c["nranks"] == nranks
                ),
                None,
            )
        if comm is None:
            return
        comm["init_seconds"] = float(m["total"])
        comm["init_phases"] = {k: float(v) for k, v in _PHASE.findall(m["phases"] or "")}

    def _channel_counts(self, seg: _Segment, msg: str) -> None:
        m = _CHANNEL_COUNTS.search(msg)
        if not m:
            return
        counts = {
            k: int(v)
            for k, v in (
                ("coll", m["coll"]),
                ("collnet", m["collnet"]),
                ("nvls", m["nvls"]),
                ("p2p", m["p2p"]),
                ("p2p_per_peer", m["peer"]),
            )
            if v is not None
        }
        thread = (seg.host, seg.pid, seg.tid)
        address = self.thread_comm.get(thread)
        comm = self.comms.get((seg.host, seg.pid, address)) if address else None
        if comm is not None:
            comm["channels"] = counts
        else:  # older NCCL prints the counts before the comm line of this thread
            self.pending_channels[thread] = counts

    def _channel_line(self, seg: _Segment, msg: str) -> None:
        path = _PATH.match(msg)
        if path:
            self._path(seg, path)
            return
        order = _RING_ORDER.match(msg)
        if order:
            comm = self.thread_comm.get((seg.host, seg.pid, seg.tid))
            ranks = tuple(int(r) for r in order["ranks"].split())
            key = (seg.host, comm, int(order["ch"]), ranks)
            nchannels = int(order["n"]) if order["n"] else None
            self._bounded_put(
                self.rings, key, RingOrder(seg.host, comm, int(order["ch"]), nchannels, ranks)
            )
            return
        neighbor = _RING_NEIGHBOR.match(msg)
        if neighbor:
            comm = self.thread_comm.get((seg.host, seg.pid, seg.tid))
            rank, channel = int(neighbor["rank"]), int(neighbor["ch"])
            item = RingNeighbor(
                seg.host, comm, rank, channel, int(neighbor["prev"]), int(neighbor["next"])
            )
            self._bounded_put(self.neighbors, (seg.host, seg.pid, comm, rank, channel), item)

    def _path(self, seg: _Segment, m: re.Match[str]) -> None:
        via = m["via"]
        key = (seg.host, int(m["src"]), int(m["dst"]), m["dir"], via)
        channels = self.paths.get(key)
        if channels is None:
            if len(self.paths) >= MAX_ITEMS:
                self.dropped += 1
                return
            channels = self.paths[key] = set()
            sdev = int(m["sdev"]) if m["sdev"] is not None else None
            ddev = int(m["ddev"]) if m["ddev"] is not None else None
            self.path_devs[key] = (sdev, ddev)
        channels.add(int(m["ch"]))
        if "GDRDMA" in via:
            self._host(seg.host).gdrdma_paths = True

    def _tree_line(self, seg: _Segment, msg: str) -> None:
        comm = self.thread_comm.get((seg.host, seg.pid, seg.tid))
        if msg.startswith("Trees"):
            for m in _TREES.finditer(msg):
                down = tuple(int(d) for d in m["down"].split("/") if int(d) >= 0)
                self._tree(seg, comm, int(m["rank"]), int(m["ch"]), int(m["up"]), down)
            return
        single = _TREE.match(msg)
        if single:
            down = tuple(int(d) for d in single["down"].split("/") if int(d) >= 0)
            self._tree(seg, comm, int(single["rank"]), int(single["ch"]), int(single["up"]), down)

    def _tree(
        self,
        seg: _Segment,
        comm: str | None,
        rank: int,
        channel: int,
        up: int,
        down: tuple[int, ...],
    ) -> None:
        key = (seg.host, seg.pid, comm, rank, channel)
        if key not in self.trees:
            self._bounded_put(self.trees, key, TreeLink(seg.host, comm, rank, channel, up, down))

    def _graph(self, host: str, msg: str) -> None:
        m = _GRAPH.match(msg)
        if m and len(self.graphs) < MAX_ITEMS:
            graph = GraphSearch(
                host,
                int(m["pattern"]),
                int(m["cross"]),
                int(m["n"]),
                float(m["intra"]),
                float(m["inter"]),
                m["ti"],
                m["te"],
                int(m["same"]),
            )
            self.graphs.setdefault(graph, None)

    def _algo_choice(self, msg: str) -> None:
        m = _ALGO.match(msg)
        if m:
            self._add_algo(m["coll"], m["algo"], m["proto"], m["bytes"], m["lo"], m["hi"], 1)

    def _add_algo(
        self,
        coll: str | None,
        algo_code: str,
        proto_code: str,
        size: str,
        lo: str | None,
        hi: str | None,
        times: int,
    ) -> None:
        """``times`` lines choosing ``algo_code``/``proto_code`` for ``size`` bytes."""
        algo = _ALGO_NAMES.get(algo_code, algo_code.upper())
        proto = _PROTO_NAMES.get(proto_code, proto_code.upper())
        nbytes = int(size)
        channels = int(hi) - int(lo) + 1 if lo is not None and hi is not None else None
        entry = self.algos.setdefault((coll, algo, proto), [0, nbytes, nbytes, -1])
        entry[0] += times
        entry[1] = min(entry[1], nbytes)
        entry[2] = max(entry[2], nbytes)
        if channels is not None:
            entry[3] = max(entry[3], channels)

    def _collective_call(self, msg: str) -> None:
        m = _COLL.match(msg)
        if m:
            self._add_calls(m["coll"], m["dt"], m["count"], 1)

    def _add_calls(self, coll: str, datatype: str, count_text: str, times: int) -> None:
        """``times`` calls of ``coll`` on ``count_text`` elements of ``datatype``."""
        count = int(count_text)
        entry = self.colls.setdefault((coll, _DATATYPES.get(datatype, datatype)), [0, count, count])
        entry[0] += times
        entry[1] = min(entry[1], count)
        entry[2] = max(entry[2], count)

    def _bulk_calls(self, msgs: list[str]) -> None:
        """``_collective_call`` for each message (stripped, one line each) at once: the
        pattern runs over them joined, and equal matches are added together."""
        if msgs:
            found = _COLL_LINES.findall("\n".join(msgs))
            for (coll, count, datatype), times in Counter(found).items():
                self._add_calls(coll, datatype, count, times)

    def _bulk_algos(self, msgs: list[str]) -> None:
        """``_algo_choice`` for each message at once: a log repeats the same few choices
        (one per size and collective), so each distinct message is matched once and its
        choice added as many times as it was printed."""
        for msg, times in Counter(msgs).items():
            if m := _ALGO.match(msg):
                self._add_algo(
                    m["coll"], m["algo"], m["proto"], m["bytes"], m["lo"], m["hi"], times
                )

    def _tuning_row(self, seg: _Segment, raw: str) -> None:
        cells = [c.strip() for c in raw.split("|")]
        if len(cells) < 2:
            return
        thread = (seg.host, seg.pid, seg.tid)
        label = cells[0]
        if label == "Algorithm":
            if self.tuning_source is None:
                self.tuning_source = thread
            algos = [_TABLE_ALGOS.get(c, c.upper()) for c in cells[1:] if c]
            self.tuning_columns[thread] = (algos, [])
        elif label == "Protocol" and thread in self.tuning_columns:
            self.tuning_columns[thread][1][:] = [c.upper() for c in cells[1:] if c]
        elif label in _TUNING_COLLECTIVES and thread == self.tuning_source:
            algos, protos = self.tuning_columns.get(thread, ([], []))
            values = [c for c in cells[1:] if c]
            for i, value in enumerate(values[: len(algos) * 3]):
                if i >= len(protos) or "/" not in value:
                    break
                lat, _, bw = value.partition("/")
                try:
                    entry = TuningEntry(
                        seg.host, label, algos[i // 3], protos[i], float(lat), float(bw)
                    )
                except ValueError:
                    continue
                self.tuning.setdefault((label, entry.algorithm, entry.protocol), entry)

    def _warn(
        self,
        seg: _Segment,
        line_no: int,
        time: str | None,
        text: str,
        details: dict[str, Any],
        launcher: int | None,
    ) -> None:
        completion = ibverbs.read_completion(text) if ibverbs.MARKER in text else None
        if completion is not None:
            details["ib_completion"] = completion
            self._completion(seg.host, seg, completion, line_no)
        elif ibverbs.ASYNC_MARKER in text and (event := ibverbs.read_async_event(text)):
            details["ib_async_event"] = event
            self.parts.setdefault("ib_errors", None)
        self._event("nccl_warn", time, seg, line_no, text, details, launcher)
        if completion is not None and ibverbs.incomplete(completion):
            self.pending_completion = (self.events[-1], line_no) if self.events else None

    def _completion(
        self, host: str | None, seg: _Segment | None, fields: dict[str, Any], line_no: int
    ) -> bool:
        """Count a failed completion by (host, peer, status, vendor err, hca); False if it
        repeats one already counted from a line without a host (PyTorch's "Last error:")."""
        self.parts.setdefault("ib_errors", None)
        key = (host, *ibverbs.identity(fields))
        if host is None and any(k[0] is not None and k[1:] == key[1:] for k in self.completions):
            return False
        entry = self.completions.get(key)
        if entry is None:
            if len(self.completions) >= MAX_ITEMS:
                self.dropped += 1
                return False
            entry = self.completions[key] = {
                "fields": fields,
                "count": 0,
                "line": line_no,
                "_thread": (seg.host, seg.pid, seg.tid) if seg else None,
                "_dev": seg.dev if seg else None,
            }
        entry["count"] += 1
        return True

    def _bare(
        self, level: str, msg: str, line_no: int, time: str | None, launcher: int | None
    ) -> None:
        """An NCCL line whose ``host:pid:tid`` header was already removed: the facts that need
        no host (versions, settings, warnings, tuning choices) are still read."""
        self.nccl_lines += 1
        msg = msg.strip()
        if level != "INFO":
            details: dict[str, Any] = {"level": level, "source": _SOURCE.search(msg[:120])}
            details["source"] = details["source"].group(0) if details["source"] else None
            completion = ibverbs.read_completion(msg) if ibverbs.MARKER in msg else None
            if completion is not None:
                details["ib_completion"] = completion
                self._completion(None, None, completion, line_no)
            self._hostless_event("nccl_warn", time, line_no, msg, details, launcher)
            return
        if " version" in msg[:16] and self._version(None, msg, line_no, at_start=True):
            self.parts.setdefault("version", None)
        elif msg.startswith("NCCL_"):
            match = _ENV_NCCL.match(msg)
            if match:
                self._add_env(match["name"], _clean_env_value(match["value"]), None, "nccl")
        elif " Bytes -> Algo " in msg:
            self._algo_choice(msg)
        elif " opCount " in msg:
            self._collective_call(msg)

    def _hostless_event(
        self,
        kind: str,
        time: str | None,
        line_no: int,
        text: str,
        details: dict[str, Any],
        launcher: int | None,
    ) -> None:
        self._record(
            (kind, None, None, launcher, text),
            {
                "kind": kind,
                "time": time,
                "host": None,
                "rank": None,
                "text": text,
                "pid": None,
                "line": line_no,
                "details": {**details, "repeats": 1},
                "_thread": None,
                "_dev": None,
                "_launcher": launcher,
            },
        )

    def _continue_completion(self, line: str) -> bool:
        """The wrapped tail of a WARN completion line (``len\n0, vendor err 129 (Recv)``)."""
        if self.pending_completion is None:
            return False
        event, line_no = self.pending_completion
        self.pending_completion = None
        stripped = line.strip()
        if not stripped or not any(
            word in stripped
            for word in ("vendor", "localGid", "remoteGid", "hca ", "len", "(Recv)", "(Send)")
        ):
            return False
        text = f"{event['text']} {stripped}"
        fields = ibverbs.read_completion(text)
        if fields is None:
            return False
        old = event["details"].get("ib_completion")
        event["text"] = text
        event["details"]["ib_completion"] = fields
        if old is not None:  # re-key the counted completion with its now complete fields
            host = event["host"]
            entry = self.completions.pop((host, *ibverbs.identity(old)), None)
            if entry is not None:
                entry["fields"] = fields
                self.completions.setdefault((host, *ibverbs.identity(fields)), entry)
        if ibverbs.incomplete(fields):
            self.pending_completion = (event, line_no)
        return True

    # --- lines without an NCCL header -------------------------------------------------------

    def _foreign_line(
        self, line: str, line_no: int, time: str | None, *, lazy: bool = False
    ) -> None:
        """A line without an NCCL header; ``lazy``: its time is not read yet."""
        if self.pending_completion is not None and self._continue_completion(line):
            return
        if "NCCL_" in line and "=" in line and "for details" not in line:
            for m in _ENV_COMMAND.finditer(line):
                self._add_env(m["name"], _clean_env_value(m["value"]), None, "command")
        if "CCL" in line and " version" in line and "error" not in line.lower():
            bare = read_version(line)
            if bare and bare[4] < 40 and self._version(None, line, line_no, at_start=False):
                self.parts.setdefault("version", None)
                return  # NCCL_DEBUG=VERSION prints the line without a header
        if " : " in line and self._version_detail(line, line_no):
            return
        if ibverbs.MARKER in line:
            completion = ibverbs.read_completion(line)
            # PyTorch quotes NCCL's last WARN after "Last error:"; a new one is kept
            if completion is not None and self._completion(None, None, completion, line_no):
                details = {"level": "WARN", "source": None, "ib_completion": completion}
                time = _line_time(line) if lazy else time
                self._hostless_event("nccl_warn", time, line_no, line.strip(), details, None)
                return
        error = recognise(line)
        if error is not None:
            self._torch_error(error, line_no, _line_time(line) if lazy else time)

    def _torch_error(self, error: TorchError, line_no: int, time: str | None) -> None:
        if error.kind == "watchdog_timeout":
            self._group_timeout(error)
        key = (error.kind, error.rank, *error.identity)
        if key in self.event_index:
            return  # PyTorch repeats the same error in the exception text and its "what():"
        if len(self.events) >= MAX_EVENTS:
            self.dropped += 1
            return
        self.event_index[key] = len(self.events)
        self.events.append(
            {
                "kind": error.kind,
                "time": time,
                "host": None,
                "rank": error.rank,
                "text": error.text,
                "pid": None,
                "line": line_no,
                "details": error.details,
                "_thread": None,
                "_dev": None,
                "_launcher": error.rank,
            }
        )

    def _group_timeout(self, error: TorchError) -> None:
        # Only some of PyTorch's lines name the process group, so group by collective and
        # sequence number and collect the PG names that were seen.
        details = error.details
        key = (details["collective"], details["seq"], details["timeout_ms"])
        group = self.timeouts.get(key)
        if group is None:
            if len(self.timeouts) >= MAX_ITEMS:
                self.dropped += 1
                return
            group = self.timeouts[key] = {**details, "ranks": set(), "pgs": set(), "max_ran_ms": 0}
        if error.rank is not None:
            group["ranks"].add(error.rank)
        if error.pg is not None:
            group["pgs"].add(error.pg)
        group["max_ran_ms"] = max(group["max_ran_ms"], details["ran_ms"])

    # --- events -----------------------------------------------------------------------------

    def _event(
        self,
        kind: str,
        time: str | None,
        seg: _Segment,
        line_no: int,
        text: str,
        details: dict[str, Any],
        launcher: int | None,
        rank: int | None = None,
    ) -> None:
        self._record(
            (kind, seg.host, seg.pid, rank, text),
            {
                "kind": kind,
                "time": time,
                "host": seg.host,
                "rank": rank,
                "text": text,
                "pid": seg.pid,
                "line": line_no,
                "details": {**details, "repeats": 1},
                "_thread": (seg.host, seg.pid, seg.tid),
                "_dev": seg.dev,
                "_launcher": launcher,
            },
        )

    def _record(self, key: tuple[Any, ...], event: dict[str, Any]) -> None:
        """Store an event once: the same WARN repeated is counted, not a new timeline entry."""
        if key in self.event_index:
            self.events[self.event_index[key]]["details"]["repeats"] += 1
        elif len(self.events) >= MAX_EVENTS:
            self.dropped += 1
        else:
            self.event_index[key] = len(self.events)
            self.events.append(event)

    def _bounded_put(self, store: dict[Any, Any], key: Any, value: Any) -> None:
        if key in store:
            return
        if len(store) >= MAX_ITEMS:
            self.dropped += 1
            return
        store[key] = value

    # --- result -----------------------------------------------------------------------------

    def result(self, reader_warnings: list[str]) -> NcclDebugResult:
        self._merge_damaged_hosts()
        only_host = next(iter(self.hosts)) if len(self.hosts) == 1 else None
        ranks = self._ranks()
        versions = tuple(
            NcclVersion(
                host if host is not None else only_host,
                version,
                build,
                library=library,
                revision=revision,
                hip_version=details.get("hip"),
                rocm_version=details.get("rocm"),
            )
            for (host, library, version, build, revision), details in self.versions.items()
        )
        versions = tuple(dict.fromkeys(versions))
        warnings = list(reader_warnings)
        if self.garbled:
            warnings.append(
                f"{self.garbled} line(s) held interleaved output of several processes; "
                "each piece was read on its own"
            )
        if self.dropped:
            warnings.append(f"{self.dropped} item(s) beyond the per-file limits were not kept")
        return NcclDebugResult(
            hosts=tuple(h.freeze() for _, h in sorted(self.hosts.items())),
            versions=tuple(
                sorted(
                    versions,
                    key=lambda v: (
                        v.host or "",
                        v.library,
                        v.version,
                        v.build or "",
                        v.revision or "",
                    ),
                )
            ),
            version_mismatch=len({(v.library, v.version) for v in versions}) > 1,
            env=tuple(
                EnvSetting(name, value, host, source)
                for name, value, host, source in sorted(
                    self.env, key=lambda k: (k[0], k[3], k[2] or "", k[1])
                )
            ),
            nranks=max((r.nranks for r in ranks), default=None),
            ranks=ranks,
            paths=self._paths(),
            rings=tuple(
                sorted(
                    self.rings.values(), key=lambda r: (r.host, r.comm or "", r.channel, r.ranks)
                )
            ),
            ring_neighbors=tuple(
                sorted(
                    self.neighbors.values(), key=lambda r: (r.host, r.comm or "", r.rank, r.channel)
                )
            ),
            trees=tuple(
                sorted(self.trees.values(), key=lambda t: (t.host, t.comm or "", t.rank, t.channel))
            ),
            graphs=tuple(self.graphs),
            algorithms=tuple(
                AlgoChoice(coll, algo, proto, v[0], v[1], v[2], v[3] if v[3] >= 0 else None)
                for (coll, algo, proto), v in sorted(
                    self.algos.items(), key=lambda kv: tuple(x or "" for x in kv[0])
                )
            ),
            collectives=tuple(
                CollectiveCalls(coll, dt, v[0], v[1], v[2])
                for (coll, dt), v in sorted(self.colls.items())
            ),
            tuning_model=tuple(self.tuning.values()),
            timeouts=self._timeouts(),
            events=self._events(only_host),
            ib_completions=self._ib_completions(only_host),
            parts=self._parts(ranks),
            stats={
                "nccl_lines": self.nccl_lines,
                "garbled_lines": self.garbled,
                "error_traces": self.error_traces,
            },
            warnings=tuple(warnings),
        )

    def _ranks(self) -> tuple[CommRank, ...]:
        out = []
        for c in self.comms.values():
            out.append(CommRank(**{**c, "pci_address": _pci_address(c["bus_id"])}))
        out.sort(key=lambda r: (-r.nranks, r.comm_id or "", r.rank, r.host, r.pid, r.comm))
        return tuple(out)

    def _paths(self) -> tuple[PathGroup, ...]:
        out = []
        for key, channels in self.paths.items():
            host, src, dst, direction, via = key
            sdev, ddev = self.path_devs[key]
            transport = via.split("/", 1)[0].upper()
            out.append(
                PathGroup(
                    host,
                    src,
                    sdev,
                    dst,
                    ddev,
                    direction,
                    transport,
                    via,
                    "GDRDMA" in via,
                    tuple(sorted(channels)),
                )
            )
        out.sort(key=lambda p: (p.host, p.src_rank, p.dst_rank, p.direction or "", p.via))
        return tuple(out)

    def _timeouts(self) -> tuple[CollectiveTimeout, ...]:
        out = [
            CollectiveTimeout(
                pgs=tuple(sorted(g["pgs"])),
                collective=g["collective"],
                seq=g["seq"],
                timeout_ms=g["timeout_ms"],
                max_ran_ms=g["max_ran_ms"],
                numel_in=g["numel_in"],
                numel_out=g["numel_out"],
                ranks=tuple(sorted(g["ranks"])),
            )
            for g in self.timeouts.values()
        ]
        out.sort(key=lambda t: (t.seq if t.seq is not None else -1, t.collective or "", t.pgs))
        return tuple(out)

    def _ib_completions(self, only_host: str | None) -> tuple[IbCompletion, ...]:
        out = []
        for (host, *_), entry in self.completions.items():
            f = entry["fields"]
            rank = self._thread_rank(entry["_thread"], entry["_dev"])
            out.append(
                IbCompletion(
                    host=host if host is not None else only_host,
                    rank=rank,
                    hca=f["hca"],
                    peer=f["peer"],
                    status=f["status"],
                    status_name=f["status_name"],
                    vendor_err=f["vendor_err"],
                    local_gid=f["local_gid"],
                    remote_gid=f["remote_gid"],
                    count=entry["count"],
                    first_line=entry["line"],
                )
            )
        return tuple(out)

    def _thread_rank(self, thread: tuple[str, int, int] | None, dev: int | None) -> int | None:
        """The rank a thread spoke for: its communicator, else its process's world rank."""
        if thread is None:
            return None
        address = self.thread_comm.get(thread)
        comm = self.comms.get((thread[0], thread[1], address)) if address else None
        if comm is not None:
            return int(comm["rank"])
        best: tuple[int, int] | None = None
        for c in self.comms.values():
            same = (c["host"], c["pid"], c["cuda_dev"]) == (thread[0], thread[1], dev)
            if same and (best is None or c["nranks"] > best[0]):
                best = (c["nranks"], c["rank"])
        return best[1] if best else None

    def _parts(self, ranks: tuple[CommRank, ...]) -> tuple[str, ...]:
        """The parts of an NCCL log this file held, in the order NCCL prints them."""
        seen = dict(self.parts)
        if self.env:
            seen["env"] = None
        if any(h.transports or h.ib_devices or h.sockets or h.plugin for h in self.hosts.values()):
            seen["network"] = None
        if ranks:
            seen["init"] = None
        if self.paths or self.rings or self.trees or self.neighbors or self.graphs:
            seen["topology"] = None
        if self.tuning:
            seen["tuning_model"] = None
        if self.algos or self.colls:
            seen["collectives"] = None
        if any(e["kind"] == "nccl_warn" for e in self.events):
            seen["warnings"] = None
        if any(e["_thread"] is None and e["kind"] != "nccl_warn" for e in self.events):
            seen["pytorch_errors"] = None
        order = (
            "version", "env", "network", "init", "topology", "tuning_model", "collectives",
            "warnings", "ib_errors", "pytorch_errors",
        )  # fmt: skip
        return tuple(p for p in order if p in seen)

    def _world_rank_hosts(self) -> dict[int | None, str]:
        """rank -> host in the largest communicator, for PyTorch lines that name only a rank."""
        largest = max((c["nranks"] for c in self.comms.values()), default=0)
        found: dict[int | None, str] = {}
        conflicting: set[int] = set()
        for c in self.comms.values():
            if c["nranks"] != largest:
                continue
            if found.setdefault(c["rank"], c["host"]) != c["host"]:
                conflicting.add(c["rank"])
        for rank in conflicting:
            del found[rank]
        return found

    def _events(self, only_host: str | None) -> tuple[NcclEvent, ...]:
        world: dict[tuple[str, int, int | None], tuple[int, int]] = {}
        for c in self.comms.values():
            key = (c["host"], c["pid"], c["cuda_dev"])
            if key not in world or c["nranks"] > world[key][0]:
                world[key] = (c["nranks"], c["rank"])
        rank_host = self._world_rank_hosts()
        out = []
        for e in self.events:
            rank = e["rank"]
            if rank is None and e["_thread"] is not None:
                address = self.thread_comm.get(e["_thread"])
                comm = (
                    self.comms.get((e["_thread"][0], e["_thread"][1], address)) if address else None
                )
                if comm is not None:
                    rank = comm["rank"]
                elif (e["host"], e["pid"], e["_dev"]) in world:
                    rank = world[(e["host"], e["pid"], e["_dev"])][1]
            if rank is None:
                rank = e["_launcher"]
            host = e["host"] if e["host"] is not None else rank_host.get(rank, only_host)
            out.append(
                NcclEvent(
                    e["kind"], e["time"], host, rank, e["text"], e["pid"], e["line"], e["details"]
                )
            )
        return tuple(out)


# --- small helpers --------------------------------------------------------------------------

# A header (``_HEADER``) or a header-less NCCL line (``_BARE``) holds one of these.
_LEVEL_WORDS = tuple(
    f"NCCL {level}" for level in ("INFO", "WARN", "TRACE", "CALL", "ABORT", "ERROR")
)


def _inert(line: str) -> bool:
    """Whether ``_State.feed`` leaves everything as it was for this line, while no wrapped
    completion is pending: no NCCL header nor level word, and none of the words the
    foreign-line readers (settings, versions, completions, PyTorch errors) start from."""
    if "NCCL " in line and any(word in line for word in _LEVEL_WORDS):
        return False
    if ("NCCL_" in line and "=" in line) or ("CCL" in line and " version" in line):
        return False
    if " : " in line or ibverbs.MARKER in line:
        return False
    return not any(marker in line for marker in TORCH_MARKERS)


def _remember(memo: dict[str, Any] | set[str], key: str, value: Any = None) -> None:
    """Add to a block-reading memo, emptied when full so that memory stays flat on files
    whose lines never repeat (a time before every header)."""
    if len(memo) >= MAX_MEMO:
        memo.clear()
    if isinstance(memo, set):
        memo.add(key)
    else:
        memo[key] = value


def _clean_env_value(value: str) -> str:
    value = value.strip().strip("'\"")
    # Some NCCL versions end the echo with a period ("... set by environment to 3.").
    if value.endswith(".") and value[:-1].replace(".", "").isdigit():
        value = value[:-1]
    return value


def _pci_address(bus_id: str | None) -> str | None:
    """NCCL prints a PCI address as hex with the separators removed: 17000 -> 0000:17:00.0."""
    if not bus_id:
        return None
    digits = bus_id.lower().zfill(9)
    return f"{digits[:-5].zfill(4)[-8:]}:{digits[-5:-3]}:{digits[-3:-1]}.{digits[-1]}"
