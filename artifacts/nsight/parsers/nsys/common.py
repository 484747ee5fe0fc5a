"""What the two Nsight Systems readers (SQLite export, ``nsys stats`` output) share.

Both end in the same typed rows, shaped like the ``*_sum`` reports of ``nsys stats``: one row
per kernel / memory operation / API call / NVTX range name with count, total, average,
median, min, max and standard deviation in nanoseconds. One loader stores either.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable


@dataclasses.dataclass(frozen=True)
class TimeStat:
    """Durations of all instances of one name (a kernel, an API call, a range), in ns."""

    name: str
    count: int
    total_ns: float
    time_pct: float | None = None
    avg_ns: float | None = None
    med_ns: float | None = None
    min_ns: float | None = None
    max_ns: float | None = None
    stddev_ns: float | None = None


@dataclasses.dataclass(frozen=True)
class KernelStat(TimeStat):
    """A GPU kernel summary row. ``avg_launch_ns`` (SQLite only) is the mean time from the
    launching API call's start to the kernel's start, joined on (globalPid, correlationId)."""

    is_nccl: bool = False
    avg_launch_ns: float | None = None
    launch_api: str | None = None


@dataclasses.dataclass(frozen=True)
class MemStat(TimeStat):
    """A memcpy/memset operation kind: its time and its bytes; throughput = bytes / time."""

    total_bytes: float | None = None
    avg_bytes: float | None = None
    min_bytes: float | None = None
    max_bytes: float | None = None
    throughput_gbps: float | None = None


@dataclasses.dataclass(frozen=True)
class RangeStat(TimeStat):
    """An NVTX range name; ``style`` is PushPop or StartEnd, as nvtx_sum shows it."""

    style: str = ""


def is_nccl(name: str) -> bool:
    """NCCL's device kernels are all named nccl* (ncclKernel_..., ncclDevKernel_...)."""
    return "nccl" in name.lower()


def api_display_name(name: str) -> str:
    """cuda_api_sum's naming: a versioned entry point loses its 6-character ``_vNNNN`` suffix
    (cudaMalloc_v3020 -> cudaMalloc); a longer one stays (cudaStreamIsCapturing_v10000)."""
    return name[:-6] if name[-6:-4] == "_v" else name


def throughput_gbps(total_bytes: float | None, total_ns: float | None) -> float | None:
    """Bytes per nanosecond is GB/s (10^9 bytes per second)."""
    if not total_bytes or not total_ns or total_ns <= 0:
        return None
    return total_bytes / total_ns


def with_time_pct(rows: Iterable[TimeStat]) -> list:
    """Fill ``time_pct`` as each row's share of the total, like the Time (%) column."""
    rows = list(rows)
    grand = sum(r.total_ns for r in rows)
    if grand <= 0:
        return rows
    return [dataclasses.replace(r, time_pct=round(100.0 * r.total_ns / grand, 4)) for r in rows]
