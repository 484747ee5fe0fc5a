"""The per-rank GPU analyses of :mod:`trace_breakdown`, computed incrementally.

Each accumulator is fed the GPU events in ascending start order, one bounded chunk at a time
(see :func:`artifacts.traces.parsers.spill.co_sorted`), and keeps only a fixed amount of state per
kernel name, stream, step or window, so the memory of a trace's analysis does not grow with
the number of events. Fed everything in one chunk they compute what the whole-array functions
of :mod:`trace_breakdown` compute (the definitions are HTA 0.5.0's, documented there); the
tests check both ways on every sample.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from artifacts.traces.analysis import breakdown as tb
from artifacts.traces.parsers.spill import SpillTable, co_sorted

_NO_TIME = 5e-4  # under half the 1 ns display resolution: float noise, not time


class Union:
    """Length of the union of intervals fed in ascending start order.

    The carried state is exactly that of a sequential sweep (start and running end of the
    open group), so splitting the input into chunks changes nothing: the open group is
    prepended to the next chunk. Touching intervals merge; inverted ones (HTA's rounding of
    sub-microsecond events) add no time, as in :func:`trace_breakdown.merge_sorted`.
    """

    __slots__ = ("_closed", "_end", "_open", "_start")

    def __init__(self) -> None:
        self._closed = 0.0
        self._open = False
        self._start = 0.0
        self._end = 0.0

    def add(self, ts: np.ndarray, end: np.ndarray) -> None:
        if ts.size == 0:
            return
        if self._open:
            ts = np.concatenate(([self._start], ts))
            end = np.concatenate(([self._end], end))
        starts, ends = tb.merge_sorted(ts, end)
        self._closed += float(np.sum(np.maximum(ends[:-1] - starts[:-1], 0.0)))
        self._start, self._end, self._open = float(starts[-1]), float(ends[-1]), True

    @property
    def length(self) -> float:
        return self._closed + (max(self._end - self._start, 0.0) if self._open else 0.0)


# Non-empty subsets of {compute, communication, memory} as bit sets (1, 2, 4): the union of
# every subset gives, by inclusion-exclusion, the exclusive time of each combination.
_BITS = {tb.COMPUTE: 1, tb.COMMUNICATION: 2, tb.MEMORY: 4}
_SUBSETS = range(1, 8)


class Temporal:
    """HTA's temporal breakdown plus communication, memory, overlap and the kernel-type
    overlap table, for one window."""

    def __init__(self, window: str) -> None:
        self.window = window
        self.events = 0
        self.first: float | None = None
        self.last_end = -math.inf
        self.busy = Union()
        self.by_type = [Union() for _ in tb.TYPE_NAMES]
        self.subsets = {s: Union() for s in _SUBSETS}

    def add(self, ts: np.ndarray, end: np.ndarray, types: np.ndarray) -> None:
        if ts.size == 0:
            return
        if self.first is None:
            self.first = float(ts[0])
        self.events += int(ts.size)
        self.last_end = max(self.last_end, float(end.max()))
        self.busy.add(ts, end)
        for code, union in enumerate(self.by_type):
            mask = types == code
            if mask.any():
                union.add(ts[mask], end[mask])
        bits = np.zeros(ts.size, np.int8)
        for code, bit in _BITS.items():
            bits[types == code] = bit
        for subset, union in self.subsets.items():
            mask = (bits & subset) != 0
            if mask.any():
                union.add(ts[mask], end[mask])

    def breakdown(self) -> dict[str, Any]:
        """Same keys and meaning as :func:`trace_breakdown.temporal_breakdown`."""
        if self.first is None:
            return {"window": self.window, "gpu_events": 0, "kernel_time_us": 0.0}
        span = max(0.0, self.last_end - self.first)
        busy = self.busy.length
        compute = self.by_type[tb.COMPUTE].length
        comm = self.by_type[tb.COMMUNICATION].length
        either = self.subsets[_BITS[tb.COMPUTE] | _BITS[tb.COMMUNICATION]].length
        overlapped = max(0.0, compute + comm - either) if comm else 0.0
        values = {
            "idle_time": max(0.0, span - busy),
            "compute_time": compute,
            "non_compute_time": max(0.0, busy - compute),
            "busy_time": busy,
            "communication_time": comm,
            "memory_time": self.by_type[tb.MEMORY].length,
            "other_time": self.by_type[tb.OTHER].length,
            "exposed_communication_time": max(0.0, comm - overlapped),
        }
        result: dict[str, Any] = {
            "window": self.window,
            "gpu_events": self.events,
            "kernel_time_us": tb._us(span),
        }
        for key, value in values.items():
            result[f"{key}_us"] = tb._us(value)
        for key, value in values.items():
            result[f"{key}_pct"] = tb._pct(value, span)
        result["comm_comp_overlap_us"] = tb._us(overlapped)
        result["comm_comp_overlap_pct"] = tb._pct(overlapped, comm)
        return result

    def kernel_types(self) -> list[dict[str, Any]]:
        """As :func:`trace_breakdown.kernel_type_overlap`: exclusive time of each combination
        of compute / communication / memory, ``pct`` of their union. Combinations that take
        no time are left out."""
        union = {s: u.length for s, u in self.subsets.items()}
        every = union[7]

        def within(allowed: int) -> float:
            # time in the union where only types of ``allowed`` run
            return every - union[7 & ~allowed] if allowed != 7 else every

        rows = []
        for state in _SUBSETS:
            subs = [c for c in _SUBSETS if c & state == c]
            value = sum(
                (-1) ** (bin(state).count("1") - bin(c).count("1")) * within(c) for c in subs
            )
            if value <= _NO_TIME:
                continue
            label = " overlapping ".join(
                tb.TYPE_NAMES[code] for code, bit in _BITS.items() if state & bit
            )
            rows.append({"type": label, "sum_us": tb._us(value), "pct": tb._pct(value, every)})
        rows.sort(key=lambda r: -r["sum_us"])
        return rows


class Kernels:
    """Per kernel name: count, sum, min, max, mean and sample std (Chan et al.'s pairwise
    update of the second moment, so chunks combine without a second pass)."""

    def __init__(self, names: int) -> None:
        self.count = np.zeros(names, np.int64)
        self.sum = np.zeros(names)
        self.min = np.full(names, np.inf)
        self.max = np.full(names, -np.inf)
        self.mean = np.zeros(names)
        self.m2 = np.zeros(names)
        self.type_count = np.zeros(len(tb.TYPE_NAMES), np.int64)
        self.type_sum = np.zeros(len(tb.TYPE_NAMES))

    def add(self, name_id: np.ndarray, dur: np.ndarray, types: np.ndarray) -> None:
        if name_id.size == 0:
            return
        self.type_count += np.bincount(types, minlength=self.type_count.size)
        self.type_sum += np.bincount(types, weights=dur, minlength=self.type_sum.size)
        order = np.argsort(name_id, kind="stable")
        ids, d = name_id[order], dur[order]
        first = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        counts = np.diff(np.r_[first, ids.size])
        sums = np.add.reduceat(d, first)
        means = sums / counts
        sq = np.add.reduceat((d - np.repeat(means, counts)) ** 2, first)
        u = ids[first]
        na, nb = self.count[u], counts
        n = na + nb
        delta = means - self.mean[u]
        self.m2[u] += sq + np.where(na > 0, delta**2 * na * nb / n, 0.0)
        self.mean[u] = np.where(na > 0, self.mean[u] + delta * nb / n, means)
        self.count[u] = n
        self.sum[u] += sums
        self.min[u] = np.minimum(self.min[u], np.minimum.reduceat(d, first))
        self.max[u] = np.maximum(self.max[u], np.maximum.reduceat(d, first))

    def table(self, names: Sequence[str], name_types: np.ndarray) -> list[dict[str, Any]]:
        """Rows as :func:`trace_breakdown.kernel_table` makes them, sorted by total time."""
        total = float(self.sum.sum())
        rows = []
        for nid in np.flatnonzero(self.count):
            count = int(self.count[nid])
            std = math.sqrt(self.m2[nid] / (count - 1)) if count > 1 else 0.0
            rows.append(
                {
                    "name": names[nid],
                    "type": tb.TYPE_NAMES[int(name_types[nid])],
                    "count": count,
                    "sum_us": tb._us(self.sum[nid]),
                    "mean_us": tb._us(self.sum[nid] / count),
                    "min_us": tb._us(self.min[nid]),
                    "max_us": tb._us(self.max[nid]),
                    "std_us": tb._us(std),
                    "pct": tb._pct(float(self.sum[nid]), total),
                }
            )
        rows.sort(key=lambda r: (-r["sum_us"], r["name"]))
        return rows

    def type_totals(self) -> list[dict[str, Any]]:
        """As :func:`trace_breakdown.kernel_type_totals`."""
        total = float(self.type_sum.sum())
        return [
            {
                "type": name,
                "count": int(self.type_count[code]),
                "sum_us": tb._us(self.type_sum[code]),
                "pct": tb._pct(float(self.type_sum[code]), total),
            }
            for code, name in enumerate(tb.TYPE_NAMES)
            if self.type_count[code]
        ]


class Idle:
    """HTA's idle-time breakdown per stream (see :func:`trace_breakdown.idle_breakdown`);
    the end of the last event of each stream carries over from chunk to chunk."""

    def __init__(self, consecutive_kernel_delay_us: float = tb.CONSECUTIVE_KERNEL_DELAY_US) -> None:
        self.delay = consecutive_kernel_delay_us
        self.last_end: dict[int, float] = {}
        self.sums: dict[int, list[float]] = {}  # stream -> [events, host, kernel, other]

    def add(self, ts: np.ndarray, end: np.ndarray, stream: np.ndarray, launch: np.ndarray) -> None:
        if ts.size == 0:
            return
        order = np.argsort(stream, kind="stable")  # (stream, start) order, chunk-locally
        s_stream, s_ts, s_end, s_launch = stream[order], ts[order], end[order], launch[order]
        bounds = np.flatnonzero(np.r_[True, s_stream[1:] != s_stream[:-1]])
        streams = [int(s) for s in s_stream[bounds]]
        prev_end = np.r_[np.nan, s_end[:-1]]
        prev_end[bounds] = [self.last_end.get(s, np.nan) for s in streams]
        has_prev = ~np.isnan(prev_end)
        with np.errstate(invalid="ignore"):
            gap = np.where(has_prev, np.maximum(s_ts - prev_end, 0.0), 0.0)
            host = has_prev & (s_launch > prev_end)
        kernel_wait = has_prev & ~host & (gap < self.delay)
        other = has_prev & ~host & ~kernel_wait
        segment = np.repeat(np.arange(bounds.size), np.diff(np.r_[bounds, s_ts.size]))
        parts = [
            np.bincount(segment, minlength=bounds.size),
            np.bincount(segment, weights=np.where(host, gap, 0.0), minlength=bounds.size),
            np.bincount(segment, weights=np.where(kernel_wait, gap, 0.0), minlength=bounds.size),
            np.bincount(segment, weights=np.where(other, gap, 0.0), minlength=bounds.size),
        ]
        last = np.r_[bounds[1:], s_ts.size] - 1
        for i, s in enumerate(streams):
            row = self.sums.setdefault(s, [0.0, 0.0, 0.0, 0.0])
            for k in range(4):
                row[k] += float(parts[k][i])
            self.last_end[s] = float(s_end[last[i]])

    def result(self) -> dict[str, Any]:
        streams = []
        for s in sorted(self.sums):
            events, host, kernel, other = self.sums[s]
            row = {
                "stream": s,
                "events": int(events),
                "host_wait_us": tb._us(host),
                "kernel_wait_us": tb._us(kernel),
                "other_us": tb._us(other),
            }
            row["idle_us"] = tb._us(row["host_wait_us"] + row["kernel_wait_us"] + row["other_us"])
            streams.append(row)
        result: dict[str, Any] = {"consecutive_kernel_delay_us": self.delay}
        for key in ("host_wait_us", "kernel_wait_us", "other_us"):
            result[key] = tb._us(sum(row[key] for row in streams))
        result["streams"] = streams
        return result


_VALUES = np.dtype([("delay", "f8"), ("cpu", "f8"), ("gpu", "f8")])


class Launches:
    """HTA's kernel launch statistics (:func:`trace_breakdown.launch_stats`): counts on the
    fly, the three value columns kept in a spill table for exact percentiles."""

    def __init__(
        self,
        runtime_cutoff_us: float = tb.RUNTIME_CUTOFF_US,
        launch_delay_cutoff_us: float = tb.LAUNCH_DELAY_CUTOFF_US,
    ) -> None:
        self.runtime_cutoff = runtime_cutoff_us
        self.delay_cutoff = launch_delay_cutoff_us
        self.n = self.short = self.long_runtime = self.long_delay = 0
        self.values = {name: SpillTable([("v", "f8")], sample=("v",)) for name in _VALUES.names}

    def add(
        self, cpu_ts: np.ndarray, cpu_dur: np.ndarray, gpu_ts: np.ndarray, gpu_dur: np.ndarray
    ) -> None:
        if gpu_ts.size == 0:
            return
        delay = np.maximum(gpu_ts - cpu_ts - cpu_dur, 0.0)
        self.n += int(gpu_ts.size)
        self.short += int(np.count_nonzero(gpu_dur < cpu_dur))
        self.long_runtime += int(np.count_nonzero(cpu_dur > self.runtime_cutoff))
        self.long_delay += int(np.count_nonzero(delay > self.delay_cutoff))
        for name, column in (("delay", delay), ("cpu", cpu_dur), ("gpu", gpu_dur)):
            records = np.empty(column.size, self.values[name].dtype)
            records["v"] = column
            self.values[name].append(records)

    def result(self) -> dict[str, Any]:
        try:
            return {
                "launches": self.n,
                "runtime_cutoff_us": self.runtime_cutoff,
                "launch_delay_cutoff_us": self.delay_cutoff,
                "short_kernels": self.short,
                "short_kernels_pct": tb._pct(self.short, self.n),
                "long_runtime_calls": self.long_runtime,
                "long_launch_delays": self.long_delay,
                "launch_delay_us": describe(self.values["delay"]),
                "cpu_duration_us": describe(self.values["cpu"]),
                "gpu_duration_us": describe(self.values["gpu"]),
            }
        finally:
            for table in self.values.values():
                table.close()


def describe(table: SpillTable) -> dict[str, float | None]:
    """Mean, p50, p95 and max of column ``v`` (NumPy's linear percentiles), exactly, from
    the table's sorted buckets when it has spilled."""
    if not table.spilled:
        return tb._describe(table.array()["v"])
    n = table.rows
    wanted = {}  # rank -> value
    for q in (0.5, 0.95):
        lo = math.floor(q * (n - 1))
        wanted[lo] = wanted[min(lo + 1, n - 1)] = None
    total = 0.0
    seen = 0
    top = -math.inf
    for (bucket,) in co_sorted([table], "v"):
        v = bucket["v"]
        total += float(v.sum())
        top = max(top, float(v[-1]))
        for rank in wanted:
            if seen <= rank < seen + v.size:
                wanted[rank] = float(v[rank - seen])
        seen += v.size

    def percentile(q: float) -> float:
        pos = q * (n - 1)
        lo = math.floor(pos)
        a, b = wanted[lo], wanted[min(lo + 1, n - 1)]
        return float(np.percentile(np.array([a, b]), 100.0 * (pos - lo)))

    return {
        "mean": tb._us(total / n),
        "p50": tb._us(percentile(0.5)),
        "p95": tb._us(percentile(0.95)),
        "max": tb._us(top),
    }


class _StepState:
    __slots__ = ("busy", "comm", "compute", "events", "first", "last_end")

    def __init__(self) -> None:
        self.events = 0
        self.first = math.inf
        self.last_end = -math.inf
        self.busy = Union()
        self.compute = Union()
        self.comm = Union()


class Steps:
    """GPU work of each ProfilerStep: the events launched while the step ran on the host
    (:func:`trace_breakdown.per_step_gpu`). Steps sorted and non-overlapping."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        self.starts = starts
        self.ends = ends
        self.state: dict[int, _StepState] = {}

    def add(self, ts: np.ndarray, end: np.ndarray, types: np.ndarray, launch: np.ndarray) -> None:
        if ts.size == 0 or self.starts.size == 0:
            return
        idx = np.searchsorted(self.starts, launch, side="right") - 1
        with np.errstate(invalid="ignore"):
            inside = (idx >= 0) & (launch < self.ends[np.maximum(idx, 0)])
        sel = np.flatnonzero(inside)
        if sel.size == 0:
            return
        sel = sel[np.argsort(idx[sel], kind="stable")]  # by step, start order within one
        steps = idx[sel]
        bounds = np.flatnonzero(np.r_[True, steps[1:] != steps[:-1]])
        for lo, hi in itertools.pairwise([*bounds.tolist(), sel.size]):
            rows = sel[lo:hi]
            s, e, t = ts[rows], end[rows], types[rows]
            state = self.state.setdefault(int(steps[lo]), _StepState())
            state.events += int(rows.size)
            state.first = min(state.first, float(s[0]))
            state.last_end = max(state.last_end, float(e.max()))
            state.busy.add(s, e)
            compute, comm = t == tb.COMPUTE, t == tb.COMMUNICATION
            state.compute.add(s[compute], e[compute])
            state.comm.add(s[comm], e[comm])

    def rows(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for i in range(self.starts.size):
            state = self.state.get(i)
            if state is None:
                out.append({"gpu_events": 0})
                continue
            span = state.last_end - state.first
            busy = state.busy.length
            out.append(
                {
                    "gpu_events": state.events,
                    "gpu_span_us": tb._us(span),
                    "gpu_busy_us": tb._us(busy),
                    "gpu_compute_us": tb._us(state.compute.length),
                    "gpu_communication_us": tb._us(state.comm.length),
                    "gpu_idle_pct": tb._pct(span - busy, span),
                }
            )
        return out
