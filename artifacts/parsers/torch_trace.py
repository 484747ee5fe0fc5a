"""PyTorch Profiler (Kineto) Chrome-trace JSON: a streaming parser and per-rank GPU analyses.

One trace file is one rank. The file is read in ~2 MiB chunks cut at event boundaries and
each chunk is decoded by msgspec straight into small typed structs holding only the fields
the analyses need; those are appended to numpy columns (GPU events, correlated CPU calls),
so neither a dict per event nor the whole document is ever held. Chunks that do not cut
cleanly (unusual formatting, bad bytes, the end of the array) fall back to an exact scanner
that reads events one at a time. Memory is the chunk buffer plus the columns: about 40
bytes per GPU event and 25 per runtime call (69 MB peak for a 324 MB trace, 136 MB for 1 GB).

The analyses themselves live in :mod:`artifacts.analysis.trace_breakdown`; they follow HTA
0.5.0's definitions. Two windows are reported: the whole trace (``breakdown``) and HTA's
default window (``breakdown_steps``: GPU work launched before the last ProfilerStep, which
HTA drops because it is usually cut short). See docs/formats.md, section torch_trace.
"""

from __future__ import annotations

import array
import dataclasses
import json
import math
import re
from typing import Any, BinaryIO, ClassVar, Union

import msgspec
import numpy as np

from artifacts.analysis import trace_breakdown as tb

from .base import ParseError, ParseResult

KIND = "torch_trace"
LABEL = "PyTorch Profiler trace"
VERSION = 1

CHUNK_BYTES = 2 * 1024 * 1024
# Reads are modest so that a failing (truncated) gzip stream loses little decompressed data.
_READ_BYTES = 256 * 1024
# One event or one metadata value larger than this means the JSON is broken (or hostile).
MAX_VALUE_BYTES = 64 * 1024 * 1024
MAX_KERNELS = 500
MAX_COLLECTIVES = 1000
MAX_STEPS = 2000
MAX_STREAMS = 256
MAX_CATEGORIES = 100
_MAX_ABS_TS = 1e17  # µs; ~3000 years. Anything beyond is a corrupt number, not a time.

# GPU-side categories (every spelling seen in the wild) -> event kind.
_K_KERNEL, _K_MEMCPY, _K_MEMSET, _K_SYNC = 0, 1, 2, 3
_GPU_KINDS: dict[str, int] = {
    "kernel": _K_KERNEL,
    "Kernel": _K_KERNEL,
    "mtia_ccp_events": _K_KERNEL,
    "gpu_memcpy": _K_MEMCPY,
    "Memcpy": _K_MEMCPY,
    "gpu_memset": _K_MEMSET,
    "Memset": _K_MEMSET,
    "cuda_sync": _K_SYNC,
}
_GPU_ANNOTATION = "gpu_user_annotation"

# Host calls whose GPU work is a launch (HTA's list, plus the HIP and driver-API spellings).
_LAUNCH_APIS = frozenset(
    {
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cudaMemcpyAsync",
        "cudaMemsetAsync",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "hipLaunchKernel",
        "hipExtLaunchKernel",
        "hipModuleLaunchKernel",
        "hipExtModuleLaunchKernel",
        "hipMemcpyAsync",
        "hipMemsetAsync",
        "runFunction - job_prep_and_submit_for_execution",
    }
)

_STEP_RE = re.compile(r"ProfilerStep\s*#\s*(\d+)")

# Top-level keys kept (decoded at the end); everything else is skipped unread.
_META_KEYS = frozenset(
    {
        "schemaVersion",
        "deviceProperties",
        "distributedInfo",
        "baseTimeNanoseconds",
        "displayTimeUnit",
        "traceName",
        "cupti_version",
        "cuda_runtime_version",
        "cuda_driver_version",
        "host_name",
        "hostname",
    }
)
_META_MAX_BYTES = 32 * 1024 * 1024

# Keys and categories typical of Kineto (quoted, as they appear in the file).
_KINETO_MARKERS = (
    b'"schemaVersion"',
    b'"deviceProperties"',
    b'"distributedInfo"',
    b'"baseTimeNanoseconds"',
    b'"PyTorch Profiler"',
    b'"cpu_op"',
    b'"user_annotation"',
    b'"cuda_runtime"',
    b'"Runtime"',
    b'"kernel"',
    b'"Kernel"',
    b'"ac2g"',
    b'"gpu_memcpy"',
    b'"python_function"',
)


# ---------------------------------------------------------------------------------------
# Detection
# ---------------------------------------------------------------------------------------


def accepts(name: str, head: bytes) -> bool:
    """Chrome-trace JSON written by Kineto: a JSON object with Kineto's own keys/categories.

    ``traceEvents`` may start beyond the first 64 KiB when distributedInfo lists thousands
    of ranks, so schemaVersion plus deviceProperties/distributedInfo is enough on its own.
    """
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return False
    if b'"traceEvents"' in text:
        return any(marker in text for marker in _KINETO_MARKERS)
    return b'"schemaVersion"' in text and (
        b'"deviceProperties"' in text or b'"distributedInfo"' in text
    )


# ---------------------------------------------------------------------------------------
# Result
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TorchTraceResult(ParseResult):
    """One rank's trace. JSON shape documented in docs/formats.md (section torch_trace)."""

    kind: ClassVar[str] = KIND
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)
    breakdown: dict[str, Any] = dataclasses.field(default_factory=dict)
    breakdown_steps: dict[str, Any] = dataclasses.field(default_factory=dict)
    kernel_types: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    kernel_type_totals: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    kernels: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    kernels_omitted: dict[str, Any] | None = None
    idle: dict[str, Any] = dataclasses.field(default_factory=dict)
    launch: dict[str, Any] = dataclasses.field(default_factory=dict)
    steps: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    collectives: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    collectives_summary: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The public contract (issue #3): run facts at the top level, both windows under
        ``temporal_breakdown``; everything else keeps its field name."""
        body = super().to_json()
        meta = dict(body.pop("meta"))
        whole, hta = body.pop("breakdown"), body.pop("breakdown_steps")
        warnings = body.pop("warnings")
        facts = {key: meta.pop(key, None) for key in ("rank", "world_size", "backend")}
        return {
            "kind": self.kind,
            **facts,
            "nccl_version": meta.pop("nccl_version", None),
            "devices": meta.pop("devices", []),
            "meta": meta,
            "temporal_breakdown": {"whole_trace": whole, "hta_default": hta},
            "comm_comp_overlap_pct": whole.get("comm_comp_overlap_pct"),
            **body,
            "warnings": warnings,
        }

    def summary(self) -> dict[str, Any]:
        b = self.breakdown
        return {
            "warnings": len(self.warnings),
            "rank": self.meta.get("rank"),
            "world_size": self.meta.get("world_size"),
            "cpu_only": self.meta.get("cpu_only"),
            "gpu_events": b.get("gpu_events", 0),
            "kernel_time_us": b.get("kernel_time_us"),
            "idle_time_pct": b.get("idle_time_pct"),
            "compute_time_pct": b.get("compute_time_pct"),
            "communication_time_pct": b.get("communication_time_pct"),
            "comm_comp_overlap_pct": b.get("comm_comp_overlap_pct"),
            "steps": len(self.steps),
            "mean_step_us": _mean([s["dur_us"] for s in self.steps]),
        }


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


# ---------------------------------------------------------------------------------------
# Decoding: only the fields the analyses read
# ---------------------------------------------------------------------------------------


class _Args(msgspec.Struct, gc=False):
    stream: int | str | None = None
    correlation: int | None = None
    external_id: int | None = msgspec.field(default=None, name="External id")
    collective: Any = msgspec.field(default=None, name="Collective name")
    in_nelems: Any = msgspec.field(default=None, name="In msg nelems")
    out_nelems: Any = msgspec.field(default=None, name="Out msg nelems")
    group_size: Any = msgspec.field(default=None, name="Group size")
    dtype: Any = None
    pg_name: Any = msgspec.field(default=None, name="Process Group Name")
    pg_desc: Any = msgspec.field(default=None, name="Process Group Description")


class _Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str | None = None
    ts: float | None = None
    dur: float | None = None
    args: _Args | None = None


class _XEvent(msgspec.Struct, tag_field="ph", tag="X", gc=False):
    """A complete ("ph": "X") event, the only phase the analyses read."""

    cat: str = ""
    name: str = ""
    pid: int | str | None = None
    ts: float | None = None
    dur: float | None = None
    args: _Args | None = None


# Every other Chrome-trace phase decodes to an empty struct: msgspec then skips the fields
# of flows, instants, counters and metadata instead of building strings for them (~40% of
# Kineto's events). A phase not listed makes the batch fall back to the lenient path.
_OTHER_PHASES = tuple(
    msgspec.defstruct(f"_Phase{ord(ph)}", [], tag_field="ph", tag=ph, gc=False)
    for ph in "BEiICbnestfPONDMVvRc()STFp"
)
_BATCH_DECODER = msgspec.json.Decoder(list[Union[(_XEvent, *_OTHER_PHASES)]])
_ONE_DECODER = msgspec.json.Decoder(_Event)
_RAW_LIST_DECODER = msgspec.json.Decoder(list[msgspec.Raw])
_ANY_DECODER = msgspec.json.Decoder()


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            return None
    return None


def _as_count(value: Any) -> int | None:
    """A non-negative size or count small enough to do float arithmetic with."""
    number = _as_int(value)
    return number if number is not None and 0 <= number < 2**63 else None


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except (ValueError, OverflowError):  # "abc", or an integer with 400 digits
        return None


def _lenient_event(raw: bytes) -> _Event | None:
    """Slow path for one event msgspec rejected: stdlib json, then coerce field by field."""
    try:
        obj = json.loads(bytes(raw).decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    args_obj = obj.get("args")
    args = None
    if isinstance(args_obj, dict):
        stream = args_obj.get("stream")
        args = _Args(
            stream=stream
            if isinstance(stream, int | str) and not isinstance(stream, bool)
            else None,
            correlation=_as_int(args_obj.get("correlation")),
            external_id=_as_int(args_obj.get("External id")),
            collective=args_obj.get("Collective name"),
            in_nelems=args_obj.get("In msg nelems"),
            out_nelems=args_obj.get("Out msg nelems"),
            group_size=args_obj.get("Group size"),
            dtype=args_obj.get("dtype"),
            pg_name=args_obj.get("Process Group Name"),
            pg_desc=args_obj.get("Process Group Description"),
        )
    pid = obj.get("pid")
    return _Event(
        ph=str(obj.get("ph", "")),
        cat=str(obj.get("cat", "")),
        name=str(obj.get("name", "")),
        pid=pid if isinstance(pid, int | str) and not isinstance(pid, bool) else None,
        ts=_as_float(obj.get("ts")),
        dur=_as_float(obj.get("dur")),
        args=args,
    )


def _stream_id(value: int | str | None) -> int:
    """Stream number; ROCm writes hex strings ("0x0"). -1 when there is none."""
    if value is None:
        return -1
    if isinstance(value, int):
        return value
    parsed = _as_int(value)
    return -1 if parsed is None else parsed


_INT_LIMITS = {"b": 2**7 - 1, "i": 2**31 - 1, "q": 2**63 - 1}


def _typed(code: str, values: list[Any]) -> array.array:
    """A typed array of one batch (built whole, so a failure cannot misalign columns)."""
    try:
        return array.array(code, values)
    except OverflowError:
        # Huge numbers in a corrupt file: out-of-range ids become "no id" (-1).
        limit = _INT_LIMITS[code]
        return array.array(code, [v if -limit <= v <= limit else -1 for v in values])


# Column name -> (array typecode, numpy dtype). array.array grows in place (realloc), so
# the columns are held once, compactly, and become numpy arrays without a copy.
_GPU_COLUMNS = {
    "ts": ("d", np.float64),
    "dur": ("d", np.float64),
    "name_id": ("i", np.int32),
    "stream": ("i", np.int32),
    "correlation": ("q", np.int64),
    "kind": ("b", np.int8),
}
_CPU_COLUMNS = {
    "ts": ("d", np.float64),
    "dur": ("d", np.float64),
    "correlation": ("q", np.int64),
    "launch": ("B", np.bool_),
}


# ---------------------------------------------------------------------------------------
# Collecting columns
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class _CommArgs:
    """NCCL metadata of one communication kernel (or of its record_param_comms CPU op)."""

    collective: str | None = None
    in_nelems: int | None = None
    out_nelems: int | None = None
    group_size: int | None = None
    dtype: str | None = None
    pg_name: str | None = None
    pg_desc: str | None = None

    @classmethod
    def from_args(cls, a: _Args) -> _CommArgs:
        return cls(
            collective=a.collective if isinstance(a.collective, str) else None,
            in_nelems=_as_count(a.in_nelems),
            out_nelems=_as_count(a.out_nelems),
            group_size=_as_count(a.group_size),
            dtype=a.dtype if isinstance(a.dtype, str) else None,
            pg_name=str(a.pg_name) if a.pg_name is not None else None,
            pg_desc=str(a.pg_desc) if a.pg_desc is not None else None,
        )


class _Collector:
    """Turns decoded events into columns. The loop in ``add`` is the hot path."""

    def __init__(self) -> None:
        self.events = 0
        self.bad_events = 0
        self.cat_counts: dict[str, int] = {}
        self.names: list[str] = []
        self.name_ids: dict[str, int] = {}
        self.name_types: list[int] = []
        self.runtime_names: dict[str, int] = {}
        self.steps: list[tuple[str, float, float]] = []
        self.step_names: set[str] = set()
        self.step_cutoff = -math.inf
        self.comm_kernel_args: dict[int, _CommArgs] = {}
        self.comm_kernel_ext: dict[int, int] = {}
        self.cpu_comm_args: dict[int, _CommArgs] = {}
        self.gpu_devices: set[int] = set()
        self.gpu_total = 0
        self._gpu = {name: array.array(code) for name, (code, _) in _GPU_COLUMNS.items()}
        self._cpu = {name: array.array(code) for name, (code, _) in _CPU_COLUMNS.items()}

    def _new_name(self, name: str, kind: int) -> int:
        nid = len(self.names)
        self.names.append(name)
        self.name_ids[name] = nid
        if kind in (_K_MEMCPY, _K_MEMSET):
            code = tb.MEMORY
        elif kind == _K_SYNC:
            code = tb.OTHER
        else:
            code = tb.classify_kernel(name)
        self.name_types.append(code)
        return nid

    def add(self, events: list[Any]) -> None:
        g_ts: list[float] = []
        g_dur: list[float] = []
        g_nid: list[int] = []
        g_stream: list[int] = []
        g_corr: list[int] = []
        g_kind: list[int] = []
        c_ts: list[float] = []
        c_dur: list[float] = []
        c_corr: list[int] = []
        c_launch: list[bool] = []
        cat_counts = self.cat_counts
        name_ids = self.name_ids
        name_types = self.name_types
        runtime_names = self.runtime_names
        gpu_kinds = _GPU_KINDS
        launch_apis = _LAUNCH_APIS
        comm = tb.COMMUNICATION
        base = self.gpu_total
        self.events += len(events)
        for ev in events:
            cls = ev.__class__
            if cls is not _XEvent and (cls is not _Event or ev.ph != "X"):
                continue
            cat = ev.cat
            cat_counts[cat] = cat_counts.get(cat, 0) + 1
            kind = gpu_kinds.get(cat)
            a = ev.args
            if kind is not None:
                ts = ev.ts
                dur = ev.dur
                if ts is None or dur is None:
                    self.bad_events += 1
                    continue
                name = ev.name
                nid = name_ids.get(name)
                if nid is None:
                    nid = self._new_name(name, kind)
                if a is None:
                    stream = -1
                    corr = -1
                else:
                    stream = a.stream
                    if stream.__class__ is not int:
                        stream = _stream_id(stream)
                    corr = a.correlation
                    if corr is None:
                        corr = -1
                if kind == _K_SYNC and stream < 0:
                    continue  # device-wide syncs sit on no stream; HTA ignores them too
                if name_types[nid] == comm:
                    self._note_comm_kernel(base + len(g_ts), a)
                g_ts.append(ts)
                g_dur.append(dur)
                g_nid.append(nid)
                g_stream.append(stream)
                g_corr.append(corr)
                g_kind.append(kind)
                pid = ev.pid
                if pid.__class__ is int and pid not in self.gpu_devices:
                    self.gpu_devices.add(pid)
                continue
            name = ev.name
            if a is not None:
                corr = a.correlation
                if corr is not None and ev.ts is not None:
                    c_ts.append(ev.ts)
                    c_dur.append(ev.dur or 0.0)
                    c_corr.append(corr)
                    c_launch.append(name in launch_apis)
                    runtime_names[name] = runtime_names.get(name, 0) + 1
                if a.collective is not None and a.external_id is not None:
                    self.cpu_comm_args[a.external_id] = _CommArgs.from_args(a)
            if name.startswith("ProfilerStep"):
                self._note_step(cat, name, ev.ts, ev.dur)
        self.gpu_total += len(g_ts)
        if g_ts:
            _append(self._gpu, _GPU_COLUMNS, (g_ts, g_dur, g_nid, g_stream, g_corr, g_kind))
        if c_ts:
            _append(self._cpu, _CPU_COLUMNS, (c_ts, c_dur, c_corr, c_launch))

    def _note_comm_kernel(self, index: int, a: _Args | None) -> None:
        if a is None:
            return
        if a.collective is not None:
            self.comm_kernel_args[index] = _CommArgs.from_args(a)
        elif a.external_id is not None:
            self.comm_kernel_ext[index] = a.external_id

    def _note_step(self, cat: str, name: str, ts: float | None, dur: float | None) -> None:
        if ts is None or dur is None or not math.isfinite(ts + dur) or abs(ts) > _MAX_ABS_TS:
            return
        # HTA counts every non-kernel event named ProfilerStep* (GPU annotations included)
        # when deciding whether, and where, to cut the last step.
        self.step_names.add(name)
        self.step_cutoff = max(self.step_cutoff, ts)
        if cat != _GPU_ANNOTATION:
            self.steps.append((name, ts, dur))

    def gpu_columns(self) -> dict[str, np.ndarray]:
        """The GPU columns as numpy arrays (hands them over: the collector forgets them)."""
        cols = _as_numpy(self._gpu, _GPU_COLUMNS)
        cols["index"] = np.arange(cols["ts"].size, dtype=np.int32)
        return cols

    def cpu_columns(self) -> dict[str, np.ndarray]:
        return _as_numpy(self._cpu, _CPU_COLUMNS)


def _append(
    store: dict[str, array.array], spec: dict[str, tuple[str, Any]], batch: tuple[list, ...]
) -> None:
    typed = [_typed(code, values) for (code, _), values in zip(spec.values(), batch, strict=True)]
    for name, values in zip(spec, typed, strict=True):
        store[name].extend(values)


def _as_numpy(
    store: dict[str, array.array], spec: dict[str, tuple[str, Any]]
) -> dict[str, np.ndarray]:
    cols = {
        name: np.frombuffer(store[name], dtype=dtype) if len(store[name]) else np.empty(0, dtype)
        for name, (_, dtype) in spec.items()
    }
    store.clear()  # the numpy views now own the only references
    return cols


def _select(cols: dict[str, np.ndarray], index: np.ndarray) -> dict[str, np.ndarray]:
    """``cols`` reordered/filtered by ``index``, in place one column at a time."""
    for key in list(cols):
        cols[key] = cols[key].take(index)
    return cols


# ---------------------------------------------------------------------------------------
# Reading the JSON incrementally
# ---------------------------------------------------------------------------------------

_NON_WS_RE = re.compile(rb"[^ \t\r\n]")
_STRING_RE = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# A lone quote (the string alternative failed) marks a string cut by the buffer's end.
_TOKEN_RE = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|["\[\]{}]', re.DOTALL)
_SCALAR_RE = re.compile(rb"[^ \t\r\n,\]}]*")
_BOUNDARY_RE = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")

_CONTINUE, _ARRAY_END, _STOP = 0, 1, 2


class _TraceReader:
    """Walks the top-level object, skipping values it does not need, and feeds the
    ``traceEvents`` array to the collector chunk by chunk."""

    def __init__(self, stream: BinaryIO, collector: _Collector) -> None:
        self._stream = stream
        self._read_some = getattr(stream, "read1", None) or stream.read
        self._received = 0
        self.collector = collector
        self.buf = bytearray()
        self.pos = 0
        self.offset = 0  # absolute file offset of buf[0]
        self.eof = False
        self.meta_raw: dict[str, bytes] = {}
        self.warnings: list[str] = []
        self.saw_events_key = False
        self.truncated = False
        self.stopped_early = False

    # -- buffer ---------------------------------------------------------------------------

    def _fill(self, want: int) -> None:
        """Drop consumed bytes and read until ``want`` bytes follow ``pos`` (or EOF).

        One consumed byte is kept before ``pos``: the batch decoder overwrites it with '['.
        """
        if self.pos > 1:
            drop = self.pos - 1
            del self.buf[:drop]
            self.offset += drop
            self.pos = 1
        while len(self.buf) - self.pos < want and not self.eof:
            data = self._read(min(_READ_BYTES, CHUNK_BYTES))
            if not data:
                self.eof = True
                break
            self.buf += data

    def _read(self, n: int) -> bytes:
        # read1 (one underlying read) where available: when a truncated gzip member fails,
        # a plain read(n) would also throw away everything it had already decompressed.
        try:
            data = self._read_some(n)
        except ParseError as exc:
            if not self._received:
                raise
            self.warnings.append(f"stopped reading at byte {self._received}: {exc.message}")
        except (OSError, EOFError, ValueError) as exc:
            if not self._received:
                raise ParseError(f"could not read the file: {exc}", permanent=False) from exc
            self.warnings.append(f"stopped reading at byte {self._received}: {exc}")
        else:
            self._received += len(data)
            return data
        self.truncated = True
        return b""

    @property
    def bytes_read(self) -> int:
        return self.offset + len(self.buf)

    def _peek(self) -> int | None:
        """Next non-whitespace byte (positions ``pos`` on it), None at end of file."""
        while True:
            m = _NON_WS_RE.search(self.buf, self.pos)
            if m:
                self.pos = m.start()
                return self.buf[self.pos]
            self.pos = len(self.buf)
            if self.eof:
                return None
            self._fill(CHUNK_BYTES)

    def _stop(self, why: str, *, truncated: bool = False) -> None:
        if truncated:
            self.truncated = True
            self.warnings.append(
                f"file is truncated ({why}); kept everything read up to byte {self.bytes_read}"
            )
        else:
            self.stopped_early = True
            self.warnings.append(
                f"malformed JSON at byte {self.offset + self.pos} ({why}); "
                "kept the events read before it"
            )

    # -- exact scanning -----------------------------------------------------------------------

    def _value_end(self, *, keep: bool = True) -> int | None:
        """End (exclusive, in ``buf``) of the JSON value starting at ``pos``; reads more as
        needed. None when the file ends first or a kept value is implausibly large. With
        ``keep=False`` the bytes of a container are dropped as they are scanned, so skipping
        even a huge unneeded value costs no memory (``pos`` moves along)."""
        first = self.buf[self.pos]
        if first == 0x22:  # '"'
            return self._scan(_STRING_RE, container=False, keep=True)
        if first in (0x7B, 0x5B):  # '{' '['
            return self._scan(_TOKEN_RE, container=True, keep=keep)
        return self._scan(_SCALAR_RE, container=False, keep=True)

    def _scan(self, pattern: re.Pattern[bytes], *, container: bool, keep: bool) -> int | None:
        depth = 0
        scan = self.pos
        while True:
            if container:
                end, scan, depth = self._scan_tokens(scan, depth)
            else:
                m = pattern.match(self.buf, self.pos)
                end = m.end() if m and (m.end() < len(self.buf) or self.eof) else None
                if end is not None and end == self.pos:
                    return None  # nothing scalar-like here: malformed
            if end is not None:
                return end
            if self.eof or len(self.buf) - self.pos > MAX_VALUE_BYTES:
                return None
            if not keep:
                self.pos = scan
            rel = scan - self.pos
            self._fill(len(self.buf) - self.pos + CHUNK_BYTES)
            scan = self.pos + rel

    def _scan_tokens(self, scan: int, depth: int) -> tuple[int | None, int, int]:
        """Resume a bracket count at ``scan``: (end or None, where to resume, depth)."""
        for m in _TOKEN_RE.finditer(self.buf, scan):
            token = m.group()
            c = token[0]
            if c == 0x22:
                if len(token) == 1:
                    return None, m.start(), depth  # string cut by the buffer's end
                continue
            if c in (0x7B, 0x5B):
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return m.end(), m.end(), depth
        return None, len(self.buf), depth

    def _skip_value(self) -> bool:
        end = self._value_end(keep=False)
        if end is None:
            self._stop("inside a value", truncated=True)
            return False
        self.pos = end
        return True

    def _take_value(self) -> bytes | None:
        end = self._value_end()
        if end is None:
            if self.eof:
                self._stop("inside a value", truncated=True)
            else:
                self._stop("a value that never ends")
            return None
        raw = self.buf[self.pos : end]
        self.pos = end
        return raw

    # -- document structure ---------------------------------------------------------------

    def run(self) -> None:
        self._fill(CHUNK_BYTES)
        if self.buf.startswith(b"\xef\xbb\xbf"):
            self.pos = 3
        first = self._peek()
        if first is None:
            raise ParseError("empty file: not a PyTorch Profiler trace")
        if first == 0x7B:
            self.pos += 1
            self._members()
        elif first == 0x5B:  # a bare Chrome-trace event array
            self.saw_events_key = True
            self.pos += 1
            self._events()
        else:
            raise ParseError("not JSON: a PyTorch Profiler trace starts with '{'")

    def _members(self) -> None:
        while True:
            c = self._peek()
            if c is None:
                self._stop("inside the top-level object", truncated=True)
                return
            if c == 0x7D:  # '}'
                self.pos += 1
                return
            if c == 0x2C:  # ','
                self.pos += 1
                continue
            if c != 0x22:
                self._stop("expected a key")
                return
            raw_key = self._take_value()
            if raw_key is None:
                return
            if self._peek() != 0x3A:  # ':'
                self._stop("expected ':' after a key", truncated=self.eof)
                return
            self.pos += 1
            c = self._peek()
            if c is None:
                self._stop("after a key", truncated=True)
                return
            key = _decode_key(raw_key)
            if key == "traceEvents" and c == 0x5B:
                self.saw_events_key = True
                self.pos += 1
                if self._events() == _STOP:
                    return
                continue
            if key not in _META_KEYS:
                if not self._skip_value():
                    return
                continue
            raw = self._take_value()
            if raw is None:
                return
            if len(raw) <= _META_MAX_BYTES:
                self.meta_raw[key] = raw
            else:
                self.warnings.append(f"top-level {key!r} is over {_META_MAX_BYTES} bytes; ignored")

    def _events(self) -> int:
        """Consume the traceEvents array (``pos`` just after '['): fast chunks, exact
        scanning where a chunk does not decode."""
        while True:
            c = self._peek()
            if c is None:
                self._stop("inside traceEvents", truncated=True)
                return _STOP
            if c == 0x5D:  # ']'
                self.pos += 1
                return _ARRAY_END
            if c == 0x2C:
                self.pos += 1
                continue
            if c != 0x7B:
                if not self._skip_value():
                    return _STOP
                self.collector.bad_events += 1
                continue
            if len(self.buf) - self.pos < CHUNK_BYTES and not self.eof:
                self._fill(CHUNK_BYTES)
            cut = self._boundary()
            if cut is not None and self._decode_batch(self.pos, cut[0]):
                self.pos = cut[1]
                continue
            status = self._exact_events(self.offset + (cut[0] if cut else self.pos + 1))
            if status != _CONTINUE:
                return status

    def _boundary(self) -> tuple[int, int] | None:
        """Last ``}`` , ``{`` between events in the buffer: (end of the batch, next start).

        A raw newline cannot occur inside a JSON string, so a separator that spans one
        (Kineto writes ``},\n  {``) is preferred: only one-line JSON needs the blind search.
        """
        buf, lo = self.buf, self.pos + 1
        newline = len(buf)
        for _ in range(64):
            newline = buf.rfind(b"\n", lo, newline)
            if newline < 0:
                break
            i = buf.rfind(b"}", max(lo, newline - 16), newline)
            m = _BOUNDARY_RE.match(buf, i) if i >= 0 else None
            if m and m.end() > newline:
                return i + 1, m.end() - 1
        i = buf.rfind(b"}", lo)
        while i >= 0:
            m = _BOUNDARY_RE.match(buf, i)
            if m:
                return i + 1, m.end() - 1
            i = buf.rfind(b"}", lo, i)
        return None

    def _decode_batch(self, start: int, end: int) -> bool:
        """Decode the events in ``buf[start:end]`` as one JSON array, in place: the separator
        bytes around them become '[' and ']' (no copy of the chunk)."""
        buf = self.buf
        after = buf[end]
        buf[start - 1] = 0x5B  # '[' over the consumed separator before the first event
        buf[end] = 0x5D  # ']' over the separator after the last one
        with memoryview(buf) as view:
            chunk = view[start - 1 : end + 1]
            try:
                events = _BATCH_DECODER.decode(chunk)
            except msgspec.ValidationError:
                events = self._decode_leniently(bytes(chunk))
            except msgspec.DecodeError:
                events = None  # not cut at a real boundary, or bad bytes: go exact
            finally:
                chunk.release()
        if events is None:
            buf[end] = after
            return False
        self.collector.add(events)
        return True

    def _decode_leniently(self, data: bytes) -> list[_Event] | None:
        try:
            raws = _RAW_LIST_DECODER.decode(data)
        except msgspec.DecodeError:
            return None
        events = []
        for raw in raws:
            event = _decode_one(raw)
            if event is None:
                self.collector.bad_events += 1
            else:
                events.append(event)
        return events

    def _exact_events(self, stop_at: int) -> int:
        """Read events one by one until absolute offset ``stop_at``, the array's end or EOF."""
        pending: list[_Event] = []
        try:
            return self._exact_loop(stop_at, pending)
        finally:
            if pending:
                self.collector.add(pending)

    def _exact_loop(self, stop_at: int, pending: list[_Event]) -> int:
        while True:
            c = self._peek()
            if c is None:
                self._stop("inside traceEvents", truncated=True)
                return _STOP
            if c == 0x5D:
                self.pos += 1
                return _ARRAY_END
            if c == 0x2C:
                self.pos += 1
                continue
            if self.offset + self.pos >= stop_at:
                return _CONTINUE
            raw = self._take_value()
            if raw is None:
                return _STOP
            event = _decode_one(raw) if raw[:1] == b"{" else None
            if event is None:
                self.collector.bad_events += 1
                continue
            pending.append(event)
            if len(pending) >= 4096:  # columns are built per batch, not per event
                self.collector.add(pending)
                pending.clear()


def _decode_one(raw: bytes | msgspec.Raw) -> _Event | None:
    try:
        return _ONE_DECODER.decode(raw)
    except msgspec.ValidationError:
        return _lenient_event(bytes(raw))
    except msgspec.DecodeError:
        return _lenient_event(bytes(raw))


def _decode_key(raw: bytes) -> str | None:
    try:
        key = _ANY_DECODER.decode(raw)
    except msgspec.DecodeError:
        return None
    return key if isinstance(key, str) else None


# ---------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------


def parse(stream: BinaryIO) -> TorchTraceResult:
    """Parse a (decompressed) Kineto trace stream; partial results carry warnings."""
    return _guarded(lambda: analyse(_read_trace(stream)))


def _guarded(work: Any) -> Any:
    try:
        return work()
    except ParseError:
        raise
    except (MemoryError, RecursionError) as exc:
        raise ParseError(f"trace too large or too deeply nested: {type(exc).__name__}") from exc
    except Exception as exc:  # the contract: ParseError or a result, never anything else
        raise ParseError(
            f"internal error while parsing the trace ({type(exc).__name__}: {exc}); "
            "please report this file"
        ) from exc


@dataclasses.dataclass
class TraceColumns:
    """One trace reduced to what the analyses need (the output of :func:`read_trace`).

    ``gpu``: GPU events sorted by start, columns ts, dur, end, name_id, type (kernel type
    code of :mod:`trace_breakdown`), stream, correlation, kind, index (order in the file).
    ``cpu``: host events carrying a correlation id (runtime/driver calls), sorted by
    correlation: ts, dur, correlation, launch (is a kernel/memcpy/memset launch call).
    """

    gpu: dict[str, np.ndarray]
    cpu: dict[str, np.ndarray]
    names: list[str]
    name_types: np.ndarray
    meta: dict[str, Any]
    warnings: list[str]
    collector: _Collector
    bytes_read: int
    truncated: bool

    @property
    def has_step_window(self) -> bool:
        """HTA cuts the last ProfilerStep only when there are at least two of them."""
        return len(self.collector.step_names) >= 2

    def hta_window(self, keys: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
        """GPU events of HTA 0.5.0's default view, with HTA's timestamp rounding.

        HTA keeps the GPU work launched before the last ProfilerStep started (all of it when
        there are fewer than two steps) and, for traces with fractional (ns) timestamps,
        rounds each start up and each end down to whole microseconds (pytorch#122425), so
        sub-microsecond kernels shrink to nothing. Reproduced here so that the numbers match.
        ``keys`` limits the columns returned (ts, end, dur and type are always computed).
        """
        g = self.gpu
        wanted = set(keys or g) | {"ts", "end", "name_id"}
        if self.has_step_window:
            # HTA compares rounded-up starts: ceil(ts) < ceil(cutoff) <=> ts <= ceil(cutoff) - 1
            last = math.ceil(self.collector.step_cutoff) - 1
            mask = tb.hta_step_window(
                g["correlation"], g["stream"], self.cpu["correlation"], self.cpu["ts"] <= last
            )
            g = {k: v[mask] for k, v in g.items() if k in wanted}
        else:
            g = {k: v for k, v in g.items() if k in wanted}
        ts = np.ceil(g["ts"])
        end = np.floor(g["end"])
        types = self.hta_name_types[g["name_id"]] if g["name_id"].size else np.empty(0, np.int8)
        return {**g, "ts": ts, "end": end, "dur": end - ts, "type": types}

    @property
    def hta_name_types(self) -> np.ndarray:
        """Kernel type per name by name alone, as HTA types every GPU event (so that, e.g.,
        a "Stream Wait Event" sync counts as compute there)."""
        return np.array([tb.classify_kernel(n) for n in self.names], dtype=np.int8)


def read_trace(stream: BinaryIO) -> TraceColumns:
    """Stream the file into columns. Raises ParseError when nothing usable is in it."""
    return _guarded(lambda: _read_trace(stream))


def _read_trace(stream: BinaryIO) -> TraceColumns:
    collector = _Collector()
    reader = _TraceReader(stream, collector)
    reader.run()
    warnings = list(reader.warnings)
    if not reader.saw_events_key:
        raise ParseError("not a PyTorch Profiler trace: no traceEvents array")
    if collector.events == 0:
        if reader.truncated or reader.stopped_early:
            raise ParseError("no complete trace event could be read: " + "; ".join(warnings))
        raise ParseError("the trace has no events (traceEvents is empty)")
    if collector.bad_events:
        warnings.append(f"{collector.bad_events} malformed events were skipped")
    name_types = np.array(collector.name_types, dtype=np.int8)
    return TraceColumns(
        gpu=_gpu_columns(collector, name_types, warnings),
        cpu=_cpu_columns(collector),
        names=collector.names,
        name_types=name_types,
        meta=_decode_meta(reader.meta_raw, warnings),
        warnings=warnings,
        collector=collector,
        bytes_read=reader.bytes_read,
        truncated=reader.truncated or reader.stopped_early,
    )


def _gpu_columns(
    collector: _Collector, name_types: np.ndarray, warnings: list[str]
) -> dict[str, np.ndarray]:
    g = collector.gpu_columns()
    ts, dur = g["ts"], g["dur"]
    valid = np.isfinite(ts) & np.isfinite(dur) & (np.abs(ts) < _MAX_ABS_TS)
    valid &= (dur >= 0) & (dur < _MAX_ABS_TS)
    dropped = int(valid.size - np.count_nonzero(valid))
    if dropped:
        warnings.append(f"{dropped} GPU events with impossible timestamps or durations ignored")
    keep = np.flatnonzero(valid)
    g = _select(g, keep[np.argsort(ts[keep], kind="stable")])
    g["end"] = g["ts"] + g["dur"]
    g["type"] = name_types[g["name_id"]] if g["name_id"].size else np.empty(0, np.int8)
    return g


def _cpu_columns(collector: _Collector) -> dict[str, np.ndarray]:
    c = collector.cpu_columns()
    valid = np.isfinite(c["ts"]) & np.isfinite(c["dur"]) & (np.abs(c["ts"]) < _MAX_ABS_TS)
    keep = np.flatnonzero(valid)
    return _select(c, keep[np.argsort(c["correlation"][keep], kind="stable")])


def analyse(columns: TraceColumns) -> TorchTraceResult:
    """All per-rank analyses of one trace's columns."""
    return _guarded(lambda: _Analysis(columns).result())


class _Analysis:
    """Turns the collected columns into the result's sections."""

    def __init__(self, columns: TraceColumns) -> None:
        self.cols = columns
        self.c = columns.collector
        self.warnings = list(columns.warnings)
        self.meta_in = columns.meta
        self.gpu = columns.gpu
        self.cpu = columns.cpu
        self.t0 = self._origin()

    def _origin(self) -> float:
        candidates = [float(a.min()) for a in (self.gpu["ts"], self.cpu["ts"]) if a.size]
        candidates += [ts for _, ts, _ in self.c.steps if math.isfinite(ts)]
        return min(candidates) if candidates else 0.0

    def _rel(self, ts: float) -> float:
        return round(ts - self.t0, 3)

    # -- sections ------------------------------------------------------------------------

    def result(self) -> TorchTraceResult:
        g = self.gpu
        launch_ts = tb.lookup(self.cpu["correlation"], self.cpu["ts"], g["correlation"])
        meta = self._meta()
        if g["ts"].size == 0:
            self.warnings.append(
                "CPU-only trace: no GPU kernel, memcpy or memset events, so the GPU "
                "breakdowns are empty"
            )
        breakdown = tb.temporal_breakdown(g["ts"], g["end"], g["type"], window="trace")
        if breakdown.get("gpu_events"):
            breakdown["start_us"] = self._rel(float(g["ts"][0]))
        kernels, omitted = self._kernels()
        return TorchTraceResult(
            meta=meta,
            breakdown=breakdown,
            breakdown_steps=self._steps_window(),
            kernel_types=tb.kernel_type_overlap(g["ts"], g["end"], g["type"]),
            kernel_type_totals=tb.kernel_type_totals(g["type"], g["dur"]),
            kernels=kernels,
            kernels_omitted=omitted,
            idle=self._idle(launch_ts),
            launch=self._launch(),
            steps=self._steps(launch_ts),
            collectives=self._collectives_rows(),
            collectives_summary=self._collectives_summary(),
            warnings=tuple(self.warnings),
        )

    def _steps_window(self) -> dict[str, Any]:
        w = self.cols.hta_window(keys=("ts", "end"))
        window = tb.temporal_breakdown(w["ts"], w["end"], w["type"], window="hta_default")
        window["filtered"] = self.cols.has_step_window
        if self.cols.has_step_window:
            window["cutoff_us"] = self._rel(self.c.step_cutoff)
            window["dropped_gpu_events"] = int(self.gpu["ts"].size - w["ts"].size)
        window["kernel_types"] = tb.kernel_type_overlap(w["ts"], w["end"], w["type"])
        return window

    def _kernels(self) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        g = self.gpu
        rows = tb.kernel_table(g["name_id"], g["dur"], self.cols.names, self.cols.name_types)
        if len(rows) <= MAX_KERNELS:
            return rows, None
        rest = rows[MAX_KERNELS:]
        self.warnings.append(
            f"{len(rows)} distinct GPU kernel names: listing the {MAX_KERNELS} with the most "
            f"time, the other {len(rest)} are aggregated in kernels_omitted"
        )
        omitted = {
            "names": len(rest),
            "count": sum(r["count"] for r in rest),
            "sum_us": round(sum(r["sum_us"] for r in rest), 3),
        }
        return rows[:MAX_KERNELS], omitted

    def _idle(self, launch_ts: np.ndarray) -> dict[str, Any]:
        g = self.gpu
        mask = g["kind"] != _K_SYNC  # HTA's idle analysis looks at kernels/memcpy/memset
        idle = tb.idle_breakdown(g["ts"][mask], g["end"][mask], g["stream"][mask], launch_ts[mask])
        if len(idle["streams"]) > MAX_STREAMS:
            idle["streams"] = sorted(idle["streams"], key=lambda r: -r["idle_us"])[:MAX_STREAMS]
            self.warnings.append(f"idle breakdown lists the {MAX_STREAMS} idlest streams only")
        return idle

    def _launch(self) -> dict[str, Any]:
        g, cpu = self.gpu, self.cpu
        is_launch = tb.lookup(
            cpu["correlation"], cpu["launch"].astype(np.float64), g["correlation"]
        )
        mask = (is_launch == 1.0) & (g["stream"] >= 0) & (g["correlation"] >= 0)
        cpu_ts = tb.lookup(cpu["correlation"], cpu["ts"], g["correlation"][mask])
        cpu_dur = tb.lookup(cpu["correlation"], cpu["dur"], g["correlation"][mask])
        return tb.launch_stats(cpu_ts, cpu_dur, g["ts"][mask], g["dur"][mask])

    def _steps(self, launch_ts: np.ndarray) -> list[dict[str, Any]]:
        steps = sorted(
            {(ts, dur, name) for name, ts, dur in self.c.steps if math.isfinite(ts + dur)}
        )
        if len(steps) > MAX_STEPS:
            self.warnings.append(f"{len(steps)} ProfilerSteps: listing the first {MAX_STEPS}")
            steps = steps[:MAX_STEPS]
        if not steps:
            return []
        starts = np.array([s[0] for s in steps])
        ends = np.array([s[0] + s[1] for s in steps])
        g = self.gpu
        gpu_rows = tb.per_step_gpu(starts, ends, g["ts"], g["end"], g["type"], launch_ts)
        rows = []
        for (ts, dur, name), gpu_row in zip(steps, gpu_rows, strict=True):
            m = _STEP_RE.search(name)
            rows.append(
                {
                    "step": int(m.group(1)) if m else None,
                    "name": name,
                    "start_us": self._rel(ts),
                    "dur_us": round(dur, 3),
                    **gpu_row,
                }
            )
        return rows

    # -- collectives ---------------------------------------------------------------------

    def _collective_args(self, i: int) -> tuple[str | None, _CommArgs]:
        """Collective and NCCL metadata of GPU event ``i``: the kernel's own args, else its
        record_param_comms op (same External id), else the kernel name."""
        g = self.gpu
        index = int(g["index"][i])
        args = self.c.comm_kernel_args.get(index)
        if args is None and index in self.c.comm_kernel_ext:
            args = self.c.cpu_comm_args.get(self.c.comm_kernel_ext[index])
        args = args or _CommArgs()
        if args.collective:
            return tb.normalise_collective(args.collective), args
        return tb.collective_from_kernel(self.c.names[int(g["name_id"][i])]), args

    def _collectives_rows(self) -> list[dict[str, Any]]:
        g = self.gpu
        comm = np.flatnonzero(g["type"] == tb.COMMUNICATION)
        # (collective, group size, duration, bytes) of every call, for the summary; full rows
        # only for the first MAX_COLLECTIVES, so a long trace costs tuples, not dicts.
        self._calls: list[tuple[str | None, int | None, float, int | None]] = []
        rows = []
        for i in comm:
            collective, args = self._collective_args(int(i))
            size = _message_bytes(args)
            dur = float(g["dur"][i])
            self._calls.append((collective, args.group_size, dur, size))
            if len(rows) >= MAX_COLLECTIVES:
                continue
            algbw, busbw = tb.bandwidths(collective, size, dur, args.group_size)
            rows.append(
                {
                    "collective": collective,
                    "kernel": self.c.names[int(g["name_id"][i])][:300],
                    "start_us": self._rel(float(g["ts"][i])),
                    "dur_us": round(dur, 3),
                    "stream": int(g["stream"][i]),
                    "group_size": args.group_size,
                    "dtype": args.dtype,
                    "in_nelems": args.in_nelems,
                    "out_nelems": args.out_nelems,
                    "size_bytes": size,
                    "algbw_gbps": algbw,
                    "busbw_gbps": busbw,
                    "process_group": args.pg_name,
                    "process_group_desc": args.pg_desc,
                }
            )
        if len(self._calls) > MAX_COLLECTIVES:
            self.warnings.append(
                f"{len(self._calls)} collective kernels: listing the first "
                f"{MAX_COLLECTIVES}; collectives_summary covers all of them"
            )
        return rows

    def _collectives_summary(self) -> list[dict[str, Any]]:
        groups: dict[tuple[str, int | None], list[tuple[float, int | None]]] = {}
        for collective, group_size, dur, size in self._calls:
            groups.setdefault((collective or "unknown", group_size), []).append((dur, size))
        rows = []
        for (name, group_size), items in groups.items():
            total = sum(dur for dur, _ in items)
            sized = [(dur, size) for dur, size in items if size and dur > 0]
            sized_time = sum(dur for dur, _ in sized)
            sized_bytes = sum(size for _, size in sized)
            algbw, busbw = tb.bandwidths(name, sized_bytes, sized_time, group_size)
            rows.append(
                {
                    "collective": name,
                    "group_size": group_size,
                    "count": len(items),
                    "sum_us": round(total, 3),
                    "mean_us": round(total / len(items), 3),
                    "max_us": round(max(dur for dur, _ in items), 3),
                    "total_bytes": sized_bytes or None,
                    "algbw_gbps": algbw,
                    "busbw_gbps": busbw,
                }
            )
        rows.sort(key=lambda r: -r["sum_us"])
        return rows

    # -- metadata ------------------------------------------------------------------------

    def _meta(self) -> dict[str, Any]:
        m = self.meta_in
        dist = m.get("distributedInfo") if isinstance(m.get("distributedInfo"), dict) else {}
        cats = sorted(self.c.cat_counts.items(), key=lambda kv: -kv[1])[:MAX_CATEGORIES]
        meta: dict[str, Any] = {
            "rank": _as_int(dist.get("rank")),
            "world_size": _as_int(dist.get("world_size")),
            "backend": _str_or_none(dist.get("backend")),
            "nccl_version": _str_or_none(dist.get("nccl_version")),
            "pg_count": _as_int(dist.get("pg_count")),
            "process_groups": _process_groups(dist.get("pg_config")),
            "devices": _devices(m.get("deviceProperties")),
            "gpu_devices_used": sorted(self.c.gpu_devices)[:64],
            "platform": self._platform(),
            "cpu_only": self.gpu["ts"].size == 0,
            "schema_version": _as_int(m.get("schemaVersion")),
            "trace_name": _str_or_none(m.get("traceName")),
            "display_time_unit": _str_or_none(m.get("displayTimeUnit")),
            "base_time_ns": _as_int(m.get("baseTimeNanoseconds")),
            "host_name": _str_or_none(m.get("host_name") or m.get("hostname")),
            "cupti_version": _as_int(m.get("cupti_version")),
            "cuda_runtime_version": _as_int(m.get("cuda_runtime_version")),
            "cuda_driver_version": _as_int(m.get("cuda_driver_version")),
            "events": self.c.events,
            "gpu_events": int(self.gpu["ts"].size),
            "categories": dict(cats),
            "bytes_read": self.cols.bytes_read,
            "truncated": self.cols.truncated,
        }
        if self.meta_in.get("distributedInfo") is None:
            self.warnings.append("no distributedInfo: rank and world size are unknown")
        return meta

    def _platform(self) -> str:
        if self.gpu["ts"].size == 0:
            return "cpu"
        hip = sum(n for name, n in self.c.runtime_names.items() if name.startswith("hip"))
        cuda = sum(n for name, n in self.c.runtime_names.items() if name.startswith("cu"))
        devices = " ".join(
            d.get("name") or "" for d in _devices(self.meta_in.get("deviceProperties"))
        )
        if hip > cuda or "AMD" in devices or "Instinct" in devices:
            return "rocm"
        return "cuda"


def _message_bytes(args: _CommArgs) -> int | None:
    width = tb.dtype_bytes(args.dtype)
    counts = [n for n in (args.in_nelems, args.out_nelems) if n is not None and n > 0]
    if width is None or not counts:
        return None
    # nccl-tests sizes: the larger buffer (allgather's output, reduce-scatter's input).
    return max(counts) * width


def _decode_meta(raw: dict[str, bytes], warnings: list[str]) -> dict[str, Any]:
    meta = {}
    for key, value in raw.items():
        try:
            meta[key] = _ANY_DECODER.decode(value)
        except (msgspec.DecodeError, msgspec.ValidationError):
            warnings.append(f"top-level key {key!r} is not valid JSON; ignored")
    return meta


def _str_or_none(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)[:300]


def _devices(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    devices = []
    for d in value[:64]:
        if not isinstance(d, dict):
            continue
        memory = _as_count(d.get("totalGlobalMem"))
        major, minor = _as_int(d.get("computeMajor")), _as_int(d.get("computeMinor"))
        devices.append(
            {
                "id": _as_int(d.get("id")),
                "name": _str_or_none(d.get("name")),
                "total_memory_bytes": memory,
                "total_memory_gib": round(memory / 2**30, 2) if memory else None,
                "num_sms": _as_int(d.get("numSms")),
                "compute_capability": f"{major}.{minor}" if major is not None else None,
                "warp_size": _as_int(d.get("warpSize")),
            }
        )
    return devices


def _process_groups(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    groups = []
    for pg in value[:100]:
        if isinstance(pg, dict):
            groups.append(
                {
                    "name": _str_or_none(pg.get("pg_name")),
                    "desc": _str_or_none(pg.get("pg_desc")),
                    "size": _as_int(pg.get("pg_size")),
                    "backend_config": _str_or_none(pg.get("backend_config")),
                }
            )
    return groups
