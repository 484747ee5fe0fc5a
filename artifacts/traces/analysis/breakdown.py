"""GPU timeline maths on columns: interval unions, temporal and kernel breakdowns, idle-time
and launch statistics, collective bandwidths.

Pure numpy (no Django, no pandas), so parsers, reports and benchmarks share one definition.
Times are microseconds (float64). The definitions follow Holistic Trace Analysis (HTA 0.5.0)
so that numbers are comparable with what engineers already use:

* a GPU event is a kernel, memcpy, memset or stream synchronisation on a GPU stream;
* kernel type by name, exactly HTA's rules: ``^nccl.*Kernel`` is communication,
  ``^(Memcpy|Memset|dma)`` is memory, names matching ``nccl.*Kernel|.*Memcpy|Memset|.*Sync``
  are "other" (e.g. "Stream Sync"), everything else is compute;
* ``kernel_time`` is the GPU span (end of the last event minus start of the first), idle time
  is the span minus the union of all events, compute time is the union of compute kernels and
  non-compute time is the rest of the busy time, so overlapping streams count once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

COMPUTE, COMMUNICATION, MEMORY, OTHER = 0, 1, 2, 3
TYPE_NAMES: tuple[str, ...] = ("compute", "communication", "memory", "other")

# HTA's classification (hta/utils/utils.py), re-expressed; re.match anchors at the start.
_COMM_RE = re.compile(r"nccl.*Kernel")
_MEMORY_RE = re.compile(r"Memcpy|Memset|dma")
_NOT_COMPUTE_RE = re.compile(r"nccl.*Kernel|.*Memcpy|Memset|.*Sync")

# HTA's defaults for the idle-time breakdown and the kernel launch statistics (µs).
CONSECUTIVE_KERNEL_DELAY_US = 30.0
RUNTIME_CUTOFF_US = 50.0
LAUNCH_DELAY_CUTOFF_US = 100.0

_EMPTY = np.empty(0, dtype=np.float64)


def classify_kernel(name: str) -> int:
    """Kernel type code of a GPU event name (HTA rules)."""
    if _COMM_RE.match(name):
        return COMMUNICATION
    if _MEMORY_RE.match(name):
        return MEMORY
    if _NOT_COMPUTE_RE.match(name):
        return OTHER
    return COMPUTE


# ---------------------------------------------------------------------------------------
# Interval unions
# ---------------------------------------------------------------------------------------


def merge_sorted(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Union of intervals already sorted by start; touching intervals merge (as HTA)."""
    n = starts.size
    if n == 0:
        return _EMPTY, _EMPTY
    run_end = np.maximum.accumulate(ends)
    new_group = np.empty(n, dtype=bool)
    new_group[0] = True
    np.greater(starts[1:], run_end[:-1], out=new_group[1:])
    first = np.flatnonzero(new_group)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = n - 1
    return starts[first], run_end[last]


def merge_intervals(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Union of arbitrary intervals as sorted, disjoint (start, end) arrays."""
    order = np.argsort(starts, kind="stable")
    return merge_sorted(starts[order], ends[order])


def union_length(starts: np.ndarray, ends: np.ndarray, *, is_sorted: bool = False) -> float:
    merged = merge_sorted(starts, ends) if is_sorted else merge_intervals(starts, ends)
    return _length(merged)


def _length(merged: tuple[np.ndarray, np.ndarray]) -> float:
    # Inverted intervals (HTA-style rounding of sub-microsecond events) count as empty.
    return float(np.sum(np.maximum(merged[1] - merged[0], 0.0)))


def overlap_length(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    """Length of the intersection of two merged interval sets: |A| + |B| - |A union B|."""
    len_a = _length(a)
    len_b = _length(b)
    both = union_length(np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]]))
    return max(0.0, len_a + len_b - both)


# ---------------------------------------------------------------------------------------
# Breakdowns
# ---------------------------------------------------------------------------------------


def _pct(part: float, whole: float) -> float | None:
    return round(100.0 * part / whole, 3) if whole > 0 else None


def _us(value: float) -> float:
    return round(float(value), 3)


def temporal_breakdown(
    ts: np.ndarray, end: np.ndarray, types: np.ndarray, *, window: str
) -> dict[str, Any]:
    """HTA's ``get_temporal_breakdown`` plus communication, memory and overlap.

    ``ts``/``end``/``types`` must be sorted by ``ts``. All ``*_pct`` are of the GPU span.
    """
    if ts.size == 0:
        return {"window": window, "gpu_events": 0, "kernel_time_us": 0.0}
    span = max(0.0, float(end.max() - ts[0]))
    merged = {t: merge_sorted(ts[types == t], end[types == t]) for t in range(4)}
    busy = union_length(ts, end, is_sorted=True)
    compute = _length(merged[COMPUTE])
    comm = _length(merged[COMMUNICATION])
    overlapped = overlap_length(merged[COMMUNICATION], merged[COMPUTE]) if comm else 0.0
    values = {
        "idle_time": max(0.0, span - busy),
        "compute_time": compute,
        "non_compute_time": max(0.0, busy - compute),
        "busy_time": busy,
        "communication_time": comm,
        "memory_time": _length(merged[MEMORY]),
        "other_time": _length(merged[OTHER]),
        "exposed_communication_time": max(0.0, comm - overlapped),
    }
    result: dict[str, Any] = {
        "window": window,
        "gpu_events": int(ts.size),
        "kernel_time_us": _us(span),
    }
    for key, value in values.items():
        result[f"{key}_us"] = _us(value)
    for key, value in values.items():
        result[f"{key}_pct"] = _pct(value, span)
    result["comm_comp_overlap_us"] = _us(overlapped)
    result["comm_comp_overlap_pct"] = _pct(overlapped, comm)
    return result


def kernel_type_overlap(ts: np.ndarray, end: np.ndarray, types: np.ndarray) -> list[dict]:
    """Exclusive time of each combination of compute / communication / memory kernels.

    Same table as HTA's ``get_gpu_kernel_breakdown(include_memory_kernels=True)`` first
    frame ("compute overlapping communication" etc.); ``pct`` is of the union of the three.
    Inputs sorted by ``ts``.
    """
    bits = {COMPUTE: 1, COMMUNICATION: 2, MEMORY: 4}
    times: list[np.ndarray] = []
    deltas: list[np.ndarray] = []
    for code, bit in bits.items():
        ms, me = merge_sorted(ts[types == code], end[types == code])
        # Rounded (HTA-style) sub-microsecond events can end before they start: they add
        # no time, and would break the running state of the sweep.
        keep = me > ms
        ms, me = ms[keep], me[keep]
        times += [ms, me]
        deltas += [np.full(ms.size, bit, dtype=np.int8), np.full(me.size, -bit, dtype=np.int8)]
    t = np.concatenate(times)
    if t.size == 0:
        return []
    d = np.concatenate(deltas)
    order = np.argsort(t, kind="stable")
    t, d = t[order], d[order]
    state = np.cumsum(d, dtype=np.int64)[:-1]
    sums = np.bincount(state, weights=np.diff(t), minlength=8)
    total = float(sums[1:].sum())
    present = np.bincount(state, minlength=8) > 0
    rows = []
    for state_value in range(1, 8):
        if not present[state_value]:
            continue
        label = " overlapping ".join(
            TYPE_NAMES[code] for code, bit in bits.items() if state_value & bit
        )
        value = float(sums[state_value])
        rows.append({"type": label, "sum_us": _us(value), "pct": _pct(value, total)})
    rows.sort(key=lambda r: -r["sum_us"])
    return rows


def kernel_table(
    name_ids: np.ndarray, dur: np.ndarray, names: Sequence[str], name_types: np.ndarray
) -> list[dict[str, Any]]:
    """Per-name count/sum/mean/min/max/std (sample std, 0 for one call), sorted by sum."""
    if name_ids.size == 0:
        return []
    order = np.argsort(name_ids, kind="stable")
    ids, d = name_ids[order], dur[order]
    first = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    counts = np.diff(np.r_[first, ids.size])
    sums = np.add.reduceat(d, first)
    mins = np.minimum.reduceat(d, first)
    maxs = np.maximum.reduceat(d, first)
    means = sums / counts
    sq = np.add.reduceat((d - np.repeat(means, counts)) ** 2, first)
    stds = np.sqrt(np.divide(sq, counts - 1, out=np.zeros_like(sq), where=counts > 1))
    total = float(d.sum())
    rows = []
    for i, start in enumerate(first):
        nid = int(ids[start])
        rows.append(
            {
                "name": names[nid],
                "type": TYPE_NAMES[int(name_types[nid])],
                "count": int(counts[i]),
                "sum_us": _us(sums[i]),
                "mean_us": _us(means[i]),
                "min_us": _us(mins[i]),
                "max_us": _us(maxs[i]),
                "std_us": _us(stds[i]),
                "pct": _pct(float(sums[i]), total),
            }
        )
    rows.sort(key=lambda r: (-r["sum_us"], r["name"]))
    return rows


def kernel_type_totals(types: np.ndarray, dur: np.ndarray) -> list[dict[str, Any]]:
    """Plain (non-union) count and summed duration per kernel type."""
    total = float(dur.sum())
    rows = []
    for code, name in enumerate(TYPE_NAMES):
        mask = types == code
        if mask.any():
            value = float(dur[mask].sum())
            rows.append(
                {
                    "type": name,
                    "count": int(mask.sum()),
                    "sum_us": _us(value),
                    "pct": _pct(value, total),
                }
            )
    return rows


# ---------------------------------------------------------------------------------------
# Idle time and launches
# ---------------------------------------------------------------------------------------


def idle_breakdown(
    ts: np.ndarray,
    end: np.ndarray,
    stream: np.ndarray,
    launch_ts: np.ndarray,
    *,
    consecutive_kernel_delay_us: float = CONSECUTIVE_KERNEL_DELAY_US,
) -> dict[str, Any]:
    """HTA's idle-time breakdown, per stream: each gap before a kernel is

    * host wait when the kernel's launch (runtime call) started after the previous kernel on
      the stream had ended: the CPU did not enqueue work fast enough;
    * kernel wait when it is not host wait and the gap is under ``consecutive_kernel_delay``:
      the usual back-to-back launch overhead;
    * other otherwise (e.g. waiting for an event from another stream).

    ``launch_ts`` is NaN for kernels whose runtime call is not in the trace. Gaps below zero
    (timestamp noise) count as zero.
    """
    result: dict[str, Any] = {
        "consecutive_kernel_delay_us": consecutive_kernel_delay_us,
        "host_wait_us": 0.0,
        "kernel_wait_us": 0.0,
        "other_us": 0.0,
        "streams": [],
    }
    if ts.size == 0:
        return result
    order = np.lexsort((ts, stream))
    s_stream, s_ts, s_end, s_launch = stream[order], ts[order], end[order], launch_ts[order]
    prev_end = np.r_[np.nan, s_end[:-1]]
    has_prev = np.r_[False, s_stream[1:] == s_stream[:-1]]
    gap = np.where(has_prev, np.maximum(s_ts - prev_end, 0.0), 0.0)
    with np.errstate(invalid="ignore"):
        host = has_prev & (s_launch > prev_end)
    kernel_wait = has_prev & ~host & (gap < consecutive_kernel_delay_us)
    other = has_prev & ~host & ~kernel_wait
    bounds = np.flatnonzero(np.r_[True, s_stream[1:] != s_stream[:-1]])
    streams = []
    for i, start in enumerate(bounds):
        stop = bounds[i + 1] if i + 1 < bounds.size else s_ts.size
        part = slice(start, stop)
        row = {
            "stream": int(s_stream[start]),
            "events": int(stop - start),
            "host_wait_us": _us(gap[part][host[part]].sum()),
            "kernel_wait_us": _us(gap[part][kernel_wait[part]].sum()),
            "other_us": _us(gap[part][other[part]].sum()),
        }
        row["idle_us"] = _us(row["host_wait_us"] + row["kernel_wait_us"] + row["other_us"])
        streams.append(row)
    for key in ("host_wait_us", "kernel_wait_us", "other_us"):
        result[key] = _us(sum(row[key] for row in streams))
    result["streams"] = streams
    return result


def _describe(values: np.ndarray) -> dict[str, float | None]:
    if values.size == 0:
        return {"mean": None, "p50": None, "p95": None, "max": None}
    p50, p95 = np.percentile(values, [50, 95])
    return {
        "mean": _us(values.mean()),
        "p50": _us(p50),
        "p95": _us(p95),
        "max": _us(values.max()),
    }


def launch_stats(
    cpu_ts: np.ndarray,
    cpu_dur: np.ndarray,
    gpu_ts: np.ndarray,
    gpu_dur: np.ndarray,
    *,
    runtime_cutoff_us: float = RUNTIME_CUTOFF_US,
    launch_delay_cutoff_us: float = LAUNCH_DELAY_CUTOFF_US,
) -> dict[str, Any]:
    """HTA's CUDA kernel launch statistics over (launch call, GPU event) pairs.

    Launch delay = GPU start - end of the launch call, clipped at zero. Short kernels run for
    less time on the GPU than their launch took on the CPU; long runtime calls take more
    than ``runtime_cutoff``; long delays exceed ``launch_delay_cutoff``.
    """
    delay = np.maximum(gpu_ts - cpu_ts - cpu_dur, 0.0)
    n = int(gpu_ts.size)
    short = int(np.count_nonzero(gpu_dur < cpu_dur))
    return {
        "launches": n,
        "runtime_cutoff_us": runtime_cutoff_us,
        "launch_delay_cutoff_us": launch_delay_cutoff_us,
        "short_kernels": short,
        "short_kernels_pct": _pct(short, n),
        "long_runtime_calls": int(np.count_nonzero(cpu_dur > runtime_cutoff_us)),
        "long_launch_delays": int(np.count_nonzero(delay > launch_delay_cutoff_us)),
        "launch_delay_us": _describe(delay),
        "cpu_duration_us": _describe(cpu_dur),
        "gpu_duration_us": _describe(gpu_dur),
    }


def lookup(keys_sorted: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``values[i]`` where ``keys_sorted[i] == query``, NaN where the key is absent."""
    out = np.full(queries.size, np.nan)
    if keys_sorted.size == 0 or queries.size == 0:
        return out
    pos = np.searchsorted(keys_sorted, queries)
    pos_clipped = np.minimum(pos, keys_sorted.size - 1)
    hit = keys_sorted[pos_clipped] == queries
    out[hit] = values[pos_clipped[hit]]
    return out


def _union_of(starts: np.ndarray, ends: np.ndarray, mask: np.ndarray) -> float:
    return union_length(starts[mask], ends[mask], is_sorted=True)


def per_step_gpu(
    step_start: np.ndarray,
    step_end: np.ndarray,
    ts: np.ndarray,
    end: np.ndarray,
    types: np.ndarray,
    launch_ts: np.ndarray,
) -> list[dict[str, Any]]:
    """GPU work of each step: the events launched while the step ran on the CPU.

    Steps must be sorted and non-overlapping; GPU arrays sorted by ``ts``.
    """
    rows: list[dict[str, Any]] = []
    idx = np.searchsorted(step_start, launch_ts, side="right") - 1
    with np.errstate(invalid="ignore"):
        inside = (idx >= 0) & (launch_ts < step_end[np.maximum(idx, 0)])
    for i in range(step_start.size):
        mask = inside & (idx == i)
        if not mask.any():
            rows.append({"gpu_events": 0})
            continue
        s, e, t = ts[mask], end[mask], types[mask]
        span = float(e.max() - s[0])
        busy = union_length(s, e, is_sorted=True)
        rows.append(
            {
                "gpu_events": int(s.size),
                "gpu_span_us": _us(span),
                "gpu_busy_us": _us(busy),
                "gpu_compute_us": _us(_union_of(s, e, t == COMPUTE)),
                "gpu_communication_us": _us(_union_of(s, e, t == COMMUNICATION)),
                "gpu_idle_pct": _pct(span - busy, span),
            }
        )
    return rows


# ---------------------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------------------

_KERNEL_COLLECTIVE_RE = re.compile(r"nccl(?:Dev)?Kernel_([A-Za-z]+)")

_DTYPE_BYTES = {
    "float": 4,
    "float32": 4,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "double": 8,
    "float64": 8,
    "int": 4,
    "int32": 4,
    "long": 8,
    "int64": 8,
    "short": 2,
    "int16": 2,
    "char": 1,
    "int8": 1,
    "byte": 1,
    "uint8": 1,
    "bool": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "complexfloat": 8,
    "complexhalf": 4,
    "complexdouble": 16,
}


def normalise_collective(name: str) -> str:
    """'AllReduce', 'all_reduce', 'allreduce_coalesced' -> 'allreduce' etc."""
    key = name.lower().replace("_", "").replace(" ", "")
    stripped = True
    while stripped:
        stripped = False
        for suffix in ("coalesced", "intotensor", "tensor", "base"):
            if key.endswith(suffix) and key != suffix:
                key = key[: -len(suffix)]
                stripped = True
    return key


def collective_from_kernel(kernel_name: str) -> str | None:
    """Collective of an NCCL/RCCL kernel name, e.g. ncclKernel_AllReduce_RING_LL_Sum_float."""
    match = _KERNEL_COLLECTIVE_RE.match(kernel_name)
    if not match:
        return None
    name = normalise_collective(match.group(1))
    return None if name == "generic" else name


def dtype_bytes(dtype: str | None) -> int | None:
    if not dtype:
        return None
    key = dtype.lower().replace("torch.", "").replace("_", "")
    if key.startswith("float8"):
        return 1
    return _DTYPE_BYTES.get(key)


def busbw_factor(collective: str, group_size: int) -> float | None:
    """nccl-tests bus-bandwidth factor for a collective over ``group_size`` ranks."""
    n = group_size
    if n < 1:
        return None
    key = normalise_collective(collective)
    if key == "allreduce":
        return 2.0 * (n - 1) / n
    if key in {"allgather", "reducescatter", "alltoall", "alltoallv", "alltoallbase"}:
        return (n - 1) / n
    if key in {"broadcast", "reduce", "send", "recv", "sendrecv"}:
        return 1.0
    return None


def bandwidths(
    collective: str | None, size_bytes: int | None, dur_us: float, group_size: int | None
) -> tuple[float | None, float | None]:
    """(algbw, busbw) in GB/s (10^9 bytes/s) as nccl-tests computes them."""
    if not collective or not size_bytes or dur_us <= 0:
        return None, None
    algbw = size_bytes / (dur_us * 1e3)  # bytes per ns == GB/s
    factor = busbw_factor(collective, group_size) if group_size else None
    busbw = algbw * factor if factor is not None else None
    return round(algbw, 4), (round(busbw, 4) if busbw is not None else None)


def hta_step_window(
    gpu_corr: np.ndarray,
    gpu_stream: np.ndarray,
    cpu_corr_sorted: np.ndarray,
    cpu_before_cutoff: np.ndarray,
) -> np.ndarray:
    """Mask of GPU events HTA keeps by default (``include_last_profiler_step=False``).

    HTA keeps a GPU event when its correlation id matches a CPU-side event that started
    before the start of the last ProfilerStep: kernels launched during the last (usually
    incomplete) step, or whose launch is not in the trace, are dropped. ``cpu_corr_sorted``
    must be sorted; ``cpu_before_cutoff`` flags (in that order) the calls before the cutoff.
    Done with binary searches over the sorted ids, not set operations, to stay lean.
    """
    before = np.zeros(cpu_corr_sorted.size + 1, dtype=np.int64)
    np.cumsum(cpu_before_cutoff, out=before[1:])
    lo = np.searchsorted(cpu_corr_sorted, gpu_corr, side="left")
    hi = np.searchsorted(cpu_corr_sorted, gpu_corr, side="right")
    return (gpu_corr >= 0) & (gpu_stream >= 0) & (before[hi] > before[lo])
