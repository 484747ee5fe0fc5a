"""PyTorch Profiler (Kineto) Chrome-trace JSON: a streaming parser and per-rank GPU analyses.

One trace file is one rank. The file is read in ~2 MiB chunks cut at event boundaries and
each chunk is decoded by msgspec straight into small typed structs holding only the fields
the analyses need; those become numpy records (GPU events, correlated CPU calls, NCCL
metadata) in spill tables (:mod:`.spill`), so neither a dict per event nor the whole
document is ever held. Chunks that do not cut cleanly (unusual formatting, bad bytes, the
end of the array) fall back to an exact scanner that reads events one at a time.

Memory does not grow with the trace: past ``spill.CHUNK_ROWS`` rows the tables live in a
temporary file, the GPU events are joined to their launch calls one bucket of correlation
ids at a time, then read back in start order, bucket by bucket, by the incremental
accumulators of :mod:`artifacts.traces.analysis.stream` (62-77 MB peak from 324 MB to 3 GB).
Those follow HTA 0.5.0's definitions, as the whole-array functions of
:mod:`artifacts.traces.analysis.breakdown` (which :func:`read_trace` + tests use) do. Two
windows are reported: the whole trace (``breakdown``) and HTA's default window
(``breakdown_steps``: GPU work launched before the last ProfilerStep, which HTA drops
because it is usually cut short). See docs/formats.md, section torch_trace.
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

from artifacts.parsers.base import ParseError, ParseResult
from artifacts.traces.analysis import breakdown as tb
from artifacts.traces.analysis import stream as ts_
from artifacts.traces.parsers import spill

KIND = "torch_trace"
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
# record_function / NVTX-style ranges: host-side, and their GPU-side projection. Kineto has no
# NVTX domains of its own; the category is the domain.
_ANNOTATION_DOMAINS = frozenset({"user_annotation", _GPU_ANNOTATION})
MAX_ANNOTATION_NAMES = 1000  # per domain; further names are summed into one row
_OTHER_ANNOTATIONS = "(other names)"

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


def score(name: str, head: bytes) -> tuple[float, str] | None:
    """Kineto's own keys make a trace certain (detection.py)."""
    if not accepts(name, head):
        return None
    return 0.95, "a Chrome-trace JSON object with Kineto's keys (traceEvents, schemaVersion)"


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
    annotation_domains: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    annotations: list[dict[str, Any]] = dataclasses.field(default_factory=list)

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


# Records the analyses read back, one table each (see spill.py: they go to a temporary file
# past CHUNK_ROWS rows, so memory stays flat). GPU events carry the fields the correlation
# join fills in: the first host call with the same correlation id (its start, duration and
# whether it is a launch call) and whether a host call of theirs started in HTA's window.
_GPU_DTYPE = np.dtype(
    [
        ("ts", "f8"),
        ("dur", "f8"),
        ("mts", "f8"),
        ("mdur", "f8"),
        ("index", "i8"),
        ("corr", "i8"),
        ("name_id", "i4"),
        ("stream", "i4"),
        ("kind", "i1"),
        ("mlaunch", "i1"),
        ("win", "i1"),
    ]
)
_CPU_DTYPE = np.dtype([("ts", "f8"), ("dur", "f8"), ("corr", "i8"), ("launch", "i1")])
# NCCL metadata: string fields are ids into the collector's interned strings (-1: none).
_ARGS_FIELDS = [
    ("coll", "i4"),
    ("in_n", "i8"),
    ("out_n", "i8"),
    ("group", "i8"),
    ("dtype", "i4"),
    ("pg_name", "i4"),
    ("pg_desc", "i4"),
]
_COMM_DTYPE = np.dtype(
    [
        ("ts", "f8"),
        ("dur", "f8"),
        ("index", "i8"),
        ("ext", "i8"),
        ("name_id", "i4"),
        ("stream", "i4"),
        ("own", "i1"),
        *_ARGS_FIELDS,
    ]
)
_CPU_COMM_DTYPE = np.dtype([("ext", "i8"), *_ARGS_FIELDS])
_ARGS_NAMES = [name for name, _ in _ARGS_FIELDS]
_NO_ARGS = (-1, -1, -1, -1, -1, -1, -1)
MAX_STRINGS = 10_000


# ---------------------------------------------------------------------------------------
# Collecting records
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


def _valid_times(ts: np.ndarray, dur: np.ndarray) -> np.ndarray:
    valid = np.isfinite(ts) & np.isfinite(dur) & (np.abs(ts) < _MAX_ABS_TS)
    return valid & (dur >= 0) & (dur < _MAX_ABS_TS)


class _Collector:
    """Turns decoded events into records. The loop in ``add`` is the hot path."""

    def __init__(self) -> None:
        self.events = 0
        self.bad_events = 0
        self.dropped_gpu = 0
        self.cat_counts: dict[str, int] = {}
        self.names: list[str] = []
        self.name_ids: dict[str, int] = {}
        self.name_types: list[int] = []
        self.runtime_names: dict[str, int] = {}
        self.steps: list[tuple[str, float, float]] = []
        self.steps_dropped = 0
        self.step_names: set[str] = set()
        self.step_cutoff = -math.inf
        self.strings: list[str] = []
        self._string_ids: dict[str, int] = {}
        self.gpu_devices: set[int] = set()
        # (domain, name) -> [count, total, min, max] of the annotation ranges
        self.annotations: dict[tuple[str, str], list[float]] = {}
        self._annotation_names: dict[str, int] = {}
        self.gpu_total = 0  # GPU events seen (their index), valid or not
        self.gpu_valid = 0
        self.ts_min = math.inf
        # GPU events with a correlation id (joined to host calls) and without one.
        self.gpu = spill.SpillTable(_GPU_DTYPE, sample=("corr", "ts"))
        self.gpu_uncorrelated = spill.SpillTable(_GPU_DTYPE, sample=("ts",))
        self.cpu = spill.SpillTable(_CPU_DTYPE, sample=("corr",))
        # Communication kernels whose NCCL metadata is on their record_param_comms op (same
        # External id), and those that carry it themselves or have no External id.
        self.comm = spill.SpillTable(_COMM_DTYPE, sample=("ext", "ts"))
        self.comm_resolved = spill.SpillTable(_COMM_DTYPE, sample=("ts",))
        self.cpu_comm = spill.SpillTable(_CPU_COMM_DTYPE, sample=("ext",))

    def close(self) -> None:
        for table in (
            self.gpu,
            self.gpu_uncorrelated,
            self.cpu,
            self.comm,
            self.comm_resolved,
            self.cpu_comm,
        ):
            table.close()

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

    def _string(self, value: Any) -> int:
        if value is None:
            return -1
        text = value if isinstance(value, str) else str(value)
        sid = self._string_ids.get(text)
        if sid is None:
            if len(self.strings) >= MAX_STRINGS:
                return -1  # a file with this many process group names is not a real trace
            sid = self._string_ids[text] = len(self.strings)
            self.strings.append(text[:300])
        return sid

    def _args(self, a: _Args) -> tuple[int, ...]:
        def count(value: Any) -> int:
            number = _as_count(value)
            return -1 if number is None else number

        return (
            self._string(a.collective) if isinstance(a.collective, str) else -1,
            count(a.in_nelems),
            count(a.out_nelems),
            count(a.group_size),
            self._string(a.dtype) if isinstance(a.dtype, str) else -1,
            self._string(a.pg_name),
            self._string(a.pg_desc),
        )

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
        comm: list[tuple[int, int, int, tuple[int, ...]]] = []  # position, own, ext, args
        cpu_comm: list[tuple[int, tuple[int, ...]]] = []  # External id, args
        cat_counts = self.cat_counts
        name_ids = self.name_ids
        name_types = self.name_types
        runtime_names = self.runtime_names
        gpu_kinds = _GPU_KINDS
        launch_apis = _LAUNCH_APIS
        comm_type = tb.COMMUNICATION
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
                if name_types[nid] == comm_type:
                    comm.append(self._comm_kernel(len(g_ts), a))
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
                    cpu_comm.append((a.external_id, self._args(a)))
            if name.startswith("ProfilerStep"):
                self._note_step(cat, name, ev.ts, ev.dur)
            if cat in _ANNOTATION_DOMAINS:
                self._note_annotation(cat, name, ev.dur)
        if g_ts:
            self._store_gpu(g_ts, g_dur, g_nid, g_stream, g_corr, g_kind, comm)
        if c_ts:
            self._store_cpu(c_ts, c_dur, c_corr, c_launch)
        if cpu_comm:
            self._store_cpu_comm(cpu_comm)

    def _comm_kernel(self, position: int, a: _Args | None) -> tuple[int, int, int, tuple]:
        if a is None:
            return position, 0, -1, _NO_ARGS
        ext = a.external_id if a.external_id is not None else -1
        if a.collective is not None:
            return position, 1, ext, self._args(a)
        return position, 0, ext, _NO_ARGS

    def _store_cpu_comm(self, rows: list[tuple[int, tuple[int, ...]]]) -> None:
        rec = np.empty(len(rows), _CPU_COMM_DTYPE)
        rec["ext"] = np.frombuffer(_typed("q", [ext for ext, _ in rows]), np.int64)
        args = np.array([values for _, values in rows], np.int64)
        for i, name in enumerate(_ARGS_NAMES):
            rec[name] = args[:, i]
        self.cpu_comm.append(rec)

    def _store_gpu(
        self,
        g_ts: list[float],
        g_dur: list[float],
        g_nid: list[int],
        g_stream: list[int],
        g_corr: list[int],
        g_kind: list[int],
        comm: list[tuple[int, int, int, tuple[int, ...]]],
    ) -> None:
        n = len(g_ts)
        rec = np.empty(n, _GPU_DTYPE)
        rec["ts"] = g_ts
        rec["dur"] = g_dur
        rec["name_id"] = g_nid
        rec["stream"] = np.frombuffer(_typed("i", g_stream), np.int32)
        rec["corr"] = np.frombuffer(_typed("q", g_corr), np.int64)
        rec["kind"] = g_kind
        rec["index"] = np.arange(self.gpu_total, self.gpu_total + n)
        rec["mts"] = np.nan
        rec["mdur"] = np.nan
        rec["mlaunch"] = 0
        rec["win"] = 0
        self.gpu_total += n
        valid = _valid_times(rec["ts"], rec["dur"])
        kept = rec if valid.all() else rec[valid]
        self.dropped_gpu += n - kept.size
        if kept.size == 0:
            return
        self.gpu_valid += kept.size
        self.ts_min = min(self.ts_min, float(kept["ts"].min()))
        correlated = kept["corr"] >= 0
        self.gpu.append(kept[correlated])
        self.gpu_uncorrelated.append(kept[~correlated])
        if comm:
            self._store_comm(rec, valid, comm)

    def _store_comm(
        self, rec: np.ndarray, valid: np.ndarray, comm: list[tuple[int, int, int, tuple]]
    ) -> None:
        comm = [c for c in comm if valid[c[0]]]
        if not comm:
            return
        positions = np.array([c[0] for c in comm], np.int64)
        out = np.empty(len(comm), _COMM_DTYPE)
        for name in ("ts", "dur", "index", "name_id", "stream"):
            out[name] = rec[name][positions]
        out["own"] = [c[1] for c in comm]
        out["ext"] = np.frombuffer(_typed("q", [c[2] for c in comm]), np.int64)
        args = np.array([c[3] for c in comm], np.int64)
        for i, name in enumerate(_ARGS_NAMES):
            out[name] = args[:, i]
        resolved = (out["own"] == 1) | (out["ext"] < 0)
        self.comm_resolved.append(out[resolved])
        self.comm.append(out[~resolved])

    def _store_cpu(
        self, c_ts: list[float], c_dur: list[float], c_corr: list[int], c_launch: list[bool]
    ) -> None:
        rec = np.empty(len(c_ts), _CPU_DTYPE)
        rec["ts"] = c_ts
        rec["dur"] = c_dur
        rec["corr"] = np.frombuffer(_typed("q", c_corr), np.int64)
        rec["launch"] = c_launch
        ts, dur = rec["ts"], rec["dur"]
        valid = np.isfinite(ts) & np.isfinite(dur) & (np.abs(ts) < _MAX_ABS_TS)
        if valid.any():
            self.ts_min = min(self.ts_min, float(ts[valid].min()))
        # A negative correlation id is "none": no GPU event is joined to it.
        self.cpu.append(rec[valid & (rec["corr"] >= 0)])

    def _note_step(self, cat: str, name: str, ts: float | None, dur: float | None) -> None:
        if ts is None or dur is None or not math.isfinite(ts + dur) or abs(ts) > _MAX_ABS_TS:
            return
        # HTA counts every non-kernel event named ProfilerStep* (GPU annotations included)
        # when deciding whether, and where, to cut the last step; only "two or more" matters.
        if len(self.step_names) < 2:
            self.step_names.add(name)
        self.step_cutoff = max(self.step_cutoff, ts)
        if cat != _GPU_ANNOTATION:
            self.steps.append((name, ts, dur))
            if len(self.steps) > 4 * MAX_STEPS:
                self._compact_steps()

    def _note_annotation(self, domain: str, name: str, dur: float | None) -> None:
        if dur is None or not 0 <= dur < _MAX_ABS_TS:
            return
        if name.startswith("ProfilerStep"):
            name = "ProfilerStep#*"  # one row for the steps, not one per step
        key = (domain, name)
        row = self.annotations.get(key)
        if row is None:
            seen = self._annotation_names.get(domain, 0)
            if seen >= MAX_ANNOTATION_NAMES:
                key = (domain, _OTHER_ANNOTATIONS)
                row = self.annotations.get(key)
            else:
                self._annotation_names[domain] = seen + 1
            if row is None:
                row = self.annotations[key] = [0, 0.0, math.inf, -math.inf]
        row[0] += 1
        row[1] += dur
        if dur < row[2]:
            row[2] = dur
        if dur > row[3]:
            row[3] = dur

    def _compact_steps(self) -> None:
        """Keep the earliest steps only (the result lists the first MAX_STEPS), counting the
        others, so a trace with very many steps costs a bounded list."""
        unique = sorted({(ts, dur, name) for name, ts, dur in self.steps})
        keep = unique[: 2 * MAX_STEPS]
        self.steps_dropped += len(unique) - len(keep)
        self.steps = [(name, ts, dur) for ts, dur, name in keep]


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
    return _guarded(lambda: _parse(stream))


def _parse(stream: BinaryIO) -> TorchTraceResult:
    data = _read_trace(stream)
    try:
        return _Analysis(data).result()
    finally:
        data.collector.close()


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
class _TraceData:
    """What reading left: the collector's tables and counters, the metadata, warnings."""

    collector: _Collector
    meta: dict[str, Any]
    warnings: list[str]
    bytes_read: int
    truncated: bool

    @property
    def has_step_window(self) -> bool:
        """HTA cuts the last ProfilerStep only when there are at least two of them."""
        return len(self.collector.step_names) >= 2

    @property
    def window_last_ts(self) -> float:
        """Latest host-call start inside HTA's window. HTA compares rounded-up starts:
        ceil(ts) < ceil(cutoff) <=> ts <= ceil(cutoff) - 1."""
        cutoff = self.collector.step_cutoff
        return math.ceil(cutoff) - 1 if math.isfinite(cutoff) else -math.inf

    @property
    def hta_name_types(self) -> np.ndarray:
        """Kernel type per name by name alone, as HTA types every GPU event (so that, e.g.,
        a "Stream Wait Event" sync counts as compute there)."""
        return np.array([tb.classify_kernel(n) for n in self.collector.names], dtype=np.int8)


@dataclasses.dataclass
class TraceColumns:
    """One trace's events as whole in-memory columns (the output of :func:`read_trace`).

    For tests and tools that want to check the streaming analyses on small traces with the
    whole-array functions of :mod:`trace_breakdown`: memory grows with the trace.
    ``gpu``: GPU events sorted by start, columns ts, dur, end, name_id, type (kernel type
    code of :mod:`trace_breakdown`), stream, correlation, kind, index (order in the file).
    ``cpu``: host events carrying a correlation id (runtime/driver calls), sorted by
    correlation: ts, dur, correlation, launch (is a kernel/memcpy/memset launch call).
    """

    gpu: dict[str, np.ndarray]
    cpu: dict[str, np.ndarray]
    names: list[str]
    name_types: np.ndarray
    data: _TraceData

    @property
    def collector(self) -> _Collector:
        return self.data.collector

    @property
    def has_step_window(self) -> bool:
        return self.data.has_step_window

    @property
    def hta_name_types(self) -> np.ndarray:
        return self.data.hta_name_types

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
            mask = tb.hta_step_window(
                g["correlation"],
                g["stream"],
                self.cpu["correlation"],
                self.cpu["ts"] <= self.data.window_last_ts,
            )
            g = {k: v[mask] for k, v in g.items() if k in wanted}
        else:
            g = {k: v for k, v in g.items() if k in wanted}
        ts = np.ceil(g["ts"])
        end = np.floor(g["end"])
        types = self.hta_name_types[g["name_id"]] if g["name_id"].size else np.empty(0, np.int8)
        return {**g, "ts": ts, "end": end, "dur": end - ts, "type": types}


def read_trace(stream: BinaryIO) -> TraceColumns:
    """Read a trace into whole in-memory columns (small traces, tests). Raises ParseError
    when nothing usable is in it."""

    def work() -> TraceColumns:
        data = _read_trace(stream)
        c = data.collector
        name_types = np.array(c.name_types, dtype=np.int8)
        g = np.concatenate([c.gpu.array(), c.gpu_uncorrelated.array()])
        g = g[np.lexsort((g["index"], g["ts"]))]
        cpu = c.cpu.array()
        cpu = cpu[np.argsort(cpu["corr"], kind="stable")]
        gpu = {key: g[key] for key in ("ts", "dur", "name_id", "stream", "kind", "index")}
        gpu["correlation"] = g["corr"]
        gpu["end"] = g["ts"] + g["dur"]
        gpu["type"] = name_types[g["name_id"]] if g.size else np.empty(0, np.int8)
        columns = TraceColumns(
            gpu=gpu,
            cpu={
                "ts": cpu["ts"],
                "dur": cpu["dur"],
                "correlation": cpu["corr"],
                "launch": cpu["launch"].astype(bool),
            },
            names=c.names,
            name_types=name_types,
            data=data,
        )
        c.close()
        return columns

    return _guarded(work)


def _read_trace(stream: BinaryIO) -> _TraceData:
    collector = _Collector()
    try:
        reader = _TraceReader(stream, collector)
        reader.run()
        if not reader.saw_events_key:
            raise ParseError("not a PyTorch Profiler trace: no traceEvents array")
        warnings = list(reader.warnings)
        if collector.events == 0:
            if reader.truncated or reader.stopped_early:
                raise ParseError("no complete trace event could be read: " + "; ".join(warnings))
            raise ParseError("the trace has no events (traceEvents is empty)")
    except BaseException:
        collector.close()
        raise
    if collector.bad_events:
        warnings.append(f"{collector.bad_events} malformed events were skipped")
    if collector.dropped_gpu:
        warnings.append(
            f"{collector.dropped_gpu} GPU events with impossible timestamps or durations ignored"
        )
    return _TraceData(
        collector=collector,
        meta=_decode_meta(reader.meta_raw, warnings),
        warnings=warnings,
        bytes_read=reader.bytes_read,
        truncated=reader.truncated or reader.stopped_early,
    )


class _Analysis:
    """Turns the collected tables into the result's sections, in bounded memory: the GPU
    events are joined to their host calls bucket by bucket of correlation ids, then read
    back in start order, chunk by chunk, by the accumulators of :mod:`trace_stream`."""

    def __init__(self, data: _TraceData) -> None:
        self.data = data
        self.c = data.collector
        self.warnings = list(data.warnings)
        self.meta_in = data.meta
        self.names = self.c.names
        self.name_types = np.array(self.c.name_types, dtype=np.int8)
        self.steps = self._step_list()
        self.t0 = self._origin()

    def _origin(self) -> float:
        candidates = [self.c.ts_min] if math.isfinite(self.c.ts_min) else []
        candidates += [ts for ts, _, _ in self.steps[:1]]
        return min(candidates) if candidates else 0.0

    def _rel(self, ts: float) -> float:
        return round(ts - self.t0, 3)

    def _step_list(self) -> list[tuple[float, float, str]]:
        steps = sorted(
            {(ts, dur, name) for name, ts, dur in self.c.steps if math.isfinite(ts + dur)}
        )
        total = len(steps) + self.c.steps_dropped
        if total > MAX_STEPS:
            self.warnings.append(f"{total} ProfilerSteps: listing the first {MAX_STEPS}")
        return steps[:MAX_STEPS]

    # -- sections ------------------------------------------------------------------------

    def result(self) -> TorchTraceResult:
        meta = self._meta()
        if self.c.gpu_valid == 0:
            self.warnings.append(
                "CPU-only trace: no GPU kernel, memcpy or memset events, so the GPU "
                "breakdowns are empty"
            )
        timeline = self._timeline()
        breakdown = timeline["whole"].breakdown()
        if breakdown.get("gpu_events"):
            breakdown["start_us"] = self._rel(float(timeline["whole"].first or 0.0))
        kernels, omitted = self._kernels(timeline["kernels"])
        collectives, summary = self._collectives()
        return TorchTraceResult(
            meta=meta,
            breakdown=breakdown,
            breakdown_steps=self._steps_window(timeline["window"]),
            kernel_types=timeline["whole"].kernel_types(),
            kernel_type_totals=timeline["kernels"].type_totals(),
            kernels=kernels,
            kernels_omitted=omitted,
            idle=self._idle(timeline["idle"]),
            launch=timeline["launches"].result(),
            steps=self._steps(timeline["steps"]),
            collectives=collectives,
            collectives_summary=summary,
            **self._annotations(),
            warnings=tuple(self.warnings),
        )

    def _joined(self) -> spill.SpillTable:
        """The correlated GPU events with the fields of their first host call filled in,
        and whether a host call of theirs started inside HTA's window."""
        out = spill.SpillTable(_GPU_DTYPE, sample=("ts",))
        has_window = self.data.has_step_window
        last = self.data.window_last_ts
        for gpu, cpu in spill.co_sorted([self.c.gpu, self.c.cpu], "corr"):
            if gpu.size and cpu.size:
                keys, queries = cpu["corr"], gpu["corr"]
                lo = np.searchsorted(keys, queries, side="left")
                first = np.minimum(lo, keys.size - 1)
                hit = keys[first] == queries
                gpu["mts"][hit] = cpu["ts"][first[hit]]
                gpu["mdur"][hit] = cpu["dur"][first[hit]]
                gpu["mlaunch"][hit] = cpu["launch"][first[hit]]
                if has_window:
                    before = np.zeros(keys.size + 1, dtype=np.int64)
                    np.cumsum(cpu["ts"] <= last, out=before[1:])
                    hi = np.searchsorted(keys, queries, side="right")
                    gpu["win"] = (before[hi] > before[lo]) & (gpu["stream"] >= 0)
            out.append(gpu)
        self.c.gpu.close()
        self.c.cpu.close()
        return out

    def _timeline(self) -> dict[str, Any]:
        """One pass over the GPU events in start order feeding every accumulator."""
        acc: dict[str, Any] = {
            "whole": ts_.Temporal("trace"),
            "window": ts_.Temporal("hta_default"),
            "kernels": ts_.Kernels(len(self.names)),
            "idle": ts_.Idle(),
            "launches": ts_.Launches(),
            "steps": ts_.Steps(
                np.array([s[0] for s in self.steps]), np.array([s[0] + s[1] for s in self.steps])
            ),
        }
        hta_types = self.data.hta_name_types
        has_window = self.data.has_step_window
        joined = self._joined()
        window_events = 0
        try:
            for parts in spill.co_sorted([joined, self.c.gpu_uncorrelated], "ts"):
                g = np.concatenate(parts)
                del parts
                g = g[np.lexsort((g["index"], g["ts"]))]  # start, then file order
                ts, dur, launch_ts = g["ts"], g["dur"], g["mts"]
                end = ts + dur
                types = self.name_types[g["name_id"]]
                acc["whole"].add(ts, end, types)
                acc["kernels"].add(g["name_id"], dur, types)
                acc["steps"].add(ts, end, types, launch_ts)
                # HTA's idle analysis looks at kernels/memcpy/memset, not stream syncs
                work = g["kind"] != _K_SYNC
                acc["idle"].add(ts[work], end[work], g["stream"][work], launch_ts[work])
                launched = (g["mlaunch"] == 1) & (g["stream"] >= 0)
                acc["launches"].add(
                    launch_ts[launched], g["mdur"][launched], ts[launched], dur[launched]
                )
                inside = g["win"] == 1 if has_window else np.ones(ts.size, bool)
                window_events += int(np.count_nonzero(inside))
                acc["window"].add(
                    np.ceil(ts[inside]), np.floor(end[inside]), hta_types[g["name_id"][inside]]
                )
        finally:
            joined.close()
        acc["window_events"] = window_events
        return acc

    def _steps_window(self, temporal: ts_.Temporal) -> dict[str, Any]:
        window = temporal.breakdown()
        window["filtered"] = self.data.has_step_window
        if self.data.has_step_window:
            window["cutoff_us"] = self._rel(self.c.step_cutoff)
            window["dropped_gpu_events"] = int(self.c.gpu_valid - temporal.events)
        window["kernel_types"] = temporal.kernel_types()
        return window

    def _kernels(self, acc: ts_.Kernels) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        rows = acc.table(self.names, self.name_types)
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

    def _idle(self, acc: ts_.Idle) -> dict[str, Any]:
        idle = acc.result()
        if len(idle["streams"]) > MAX_STREAMS:
            idle["streams"] = sorted(idle["streams"], key=lambda r: -r["idle_us"])[:MAX_STREAMS]
            self.warnings.append(f"idle breakdown lists the {MAX_STREAMS} idlest streams only")
        return idle

    def _steps(self, acc: ts_.Steps) -> list[dict[str, Any]]:
        rows = []
        for (ts, dur, name), gpu_row in zip(self.steps, acc.rows(), strict=True):
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

    def _annotations(self) -> dict[str, list[dict[str, Any]]]:
        """record_function / NVTX-style ranges per domain (Kineto category) and per name."""
        rows = [
            {
                "domain": domain,
                "name": name[:300],
                "count": int(count),
                "sum_us": round(total, 3),
                "mean_us": round(total / count, 3),
                "min_us": round(low, 3),
                "max_us": round(high, 3),
            }
            for (domain, name), (count, total, low, high) in self.c.annotations.items()
        ]
        rows.sort(key=lambda r: (r["domain"], -r["sum_us"], r["name"]))
        domains: dict[str, dict[str, Any]] = {}
        for r in rows:
            d = domains.setdefault(
                r["domain"], {"domain": r["domain"], "ranges": 0, "names": 0, "sum_us": 0.0}
            )
            d["ranges"] += r["count"]
            d["names"] += 1
            d["sum_us"] = round(d["sum_us"] + r["sum_us"], 3)
        return {"annotation_domains": list(domains.values()), "annotations": rows}

    # -- collectives ---------------------------------------------------------------------

    def _comm_joined(self) -> spill.SpillTable:
        """Communication kernels without metadata of their own, given that of their
        record_param_comms op (same External id; the last one wins, as a dict would)."""
        out = spill.SpillTable(_COMM_DTYPE, sample=("ts",))
        for comm, ops in spill.co_sorted([self.c.comm, self.c.cpu_comm], "ext"):
            if comm.size and ops.size:
                pos = np.searchsorted(ops["ext"], comm["ext"], side="right") - 1
                clipped = np.maximum(pos, 0)
                hit = (pos >= 0) & (ops["ext"][clipped] == comm["ext"])
                for name in _ARGS_NAMES:
                    comm[name][hit] = ops[name][clipped[hit]]
            out.append(comm)
        self.c.comm.close()
        self.c.cpu_comm.close()
        return out

    def _collectives(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Rows of the first MAX_COLLECTIVES collective kernels (in start order) and the
        summary over all of them per (collective, group size)."""
        rows: list[dict[str, Any]] = []
        groups: dict[tuple[str, int | None], list[Any]] = {}
        calls = 0
        joined = self._comm_joined()
        try:
            for parts in spill.co_sorted([joined, self.c.comm_resolved], "ts"):
                chunk = np.concatenate(parts)
                chunk = chunk[np.lexsort((chunk["index"], chunk["ts"]))]
                for lo in range(0, chunk.size, 4096):  # Python objects for a slice at a time
                    for rec in chunk[lo : lo + 4096].tolist():
                        calls += 1
                        fields = dict(zip(_COMM_DTYPE.names, rec, strict=True))
                        self._collective_call(fields, rows, groups)
        finally:
            joined.close()
        if calls > MAX_COLLECTIVES:
            self.warnings.append(
                f"{calls} collective kernels: listing the first "
                f"{MAX_COLLECTIVES}; collectives_summary covers all of them"
            )
        return rows, self._collectives_summary(groups)

    def _args_of(self, rec: dict[str, Any]) -> _CommArgs:
        def text(sid: int) -> str | None:
            return self.c.strings[sid] if sid >= 0 else None

        def count(n: int) -> int | None:
            return n if n >= 0 else None

        return _CommArgs(
            collective=text(rec["coll"]),
            in_nelems=count(rec["in_n"]),
            out_nelems=count(rec["out_n"]),
            group_size=count(rec["group"]),
            dtype=text(rec["dtype"]),
            pg_name=text(rec["pg_name"]),
            pg_desc=text(rec["pg_desc"]),
        )

    def _collective_call(
        self,
        rec: dict[str, Any],
        rows: list[dict[str, Any]],
        groups: dict[tuple[str, int | None], list[Any]],
    ) -> None:
        args = self._args_of(rec)
        kernel = self.names[rec["name_id"]]
        if args.collective:
            collective = tb.normalise_collective(args.collective)
        else:
            collective = tb.collective_from_kernel(kernel)
        size = _message_bytes(args)
        dur = float(rec["dur"])
        # [count, total, max, time with a size, bytes]: the summary, without keeping calls
        group = groups.setdefault((collective or "unknown", args.group_size), [0, 0.0, 0.0, 0.0, 0])
        group[0] += 1
        group[1] += dur
        group[2] = max(group[2], dur) if group[0] > 1 else dur
        if size and dur > 0:
            group[3] += dur
            group[4] += size
        if len(rows) >= MAX_COLLECTIVES:
            return
        algbw, busbw = tb.bandwidths(collective, size, dur, args.group_size)
        rows.append(
            {
                "collective": collective,
                "kernel": kernel[:300],
                "start_us": self._rel(float(rec["ts"])),
                "dur_us": round(dur, 3),
                "stream": int(rec["stream"]),
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

    def _collectives_summary(
        self, groups: dict[tuple[str, int | None], list[Any]]
    ) -> list[dict[str, Any]]:
        rows = []
        for (name, group_size), (count, total, longest, sized_time, sized_bytes) in groups.items():
            algbw, busbw = tb.bandwidths(name, sized_bytes, sized_time, group_size)
            rows.append(
                {
                    "collective": name,
                    "group_size": group_size,
                    "count": count,
                    "sum_us": round(total, 3),
                    "mean_us": round(total / count, 3),
                    "max_us": round(longest, 3),
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
            "cpu_only": self.c.gpu_valid == 0,
            "schema_version": _as_int(m.get("schemaVersion")),
            "trace_name": _str_or_none(m.get("traceName")),
            "display_time_unit": _str_or_none(m.get("displayTimeUnit")),
            "base_time_ns": _as_int(m.get("baseTimeNanoseconds")),
            "host_name": _str_or_none(m.get("host_name") or m.get("hostname")),
            "cupti_version": _as_int(m.get("cupti_version")),
            "cuda_runtime_version": _as_int(m.get("cuda_runtime_version")),
            "cuda_driver_version": _as_int(m.get("cuda_driver_version")),
            "events": self.c.events,
            "gpu_events": self.c.gpu_valid,
            "categories": dict(cats),
            "bytes_read": self.data.bytes_read,
            "truncated": self.data.truncated,
        }
        if self.meta_in.get("distributedInfo") is None:
            self.warnings.append("no distributedInfo: rank and world size are unknown")
        return meta

    def _platform(self) -> str:
        if self.c.gpu_valid == 0:
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
