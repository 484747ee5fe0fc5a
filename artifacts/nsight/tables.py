"""The tables of the Nsight pages, as the page shows them and the CSV exports them.

One column list per table decides the header, the unit and the text of every cell, so the
CSV holds exactly the numbers on the page. Times are shown in µs with three decimals (the
nanosecond the tools measure), percentages with two, throughput in GB/s (10^9 B/s).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

Cell = Callable[[Any], str]


def fmt_us(ns: float | None) -> str:
    return "" if ns is None else f"{ns / 1000:.3f}"


def fmt_pct(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _int(value: float | None) -> str:
    return "" if value is None else str(round(value))


def _gbps(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _text(value: Any) -> str:
    return "" if value is None else str(value)


@dataclasses.dataclass(frozen=True)
class Column:
    key: str
    label: str
    cell: Cell
    numeric: bool = True


def _attr(name: str, fmt: Callable[[Any], str]) -> Cell:
    return lambda row: fmt(getattr(row, name))


def _key(name: str, fmt: Callable[[Any], str]) -> Cell:
    return lambda row: fmt(row.get(name))


_DURATIONS = (
    Column("total_us", "total µs", _attr("total_ns", fmt_us)),
    Column("time_pct", "time %", _attr("time_pct", fmt_pct)),
    Column("avg_us", "avg µs", _attr("avg_ns", fmt_us)),
    Column("med_us", "med µs", _attr("med_ns", fmt_us)),
    Column("min_us", "min µs", _attr("min_ns", fmt_us)),
    Column("max_us", "max µs", _attr("max_ns", fmt_us)),
    Column("stddev_us", "stddev µs", _attr("stddev_ns", fmt_us)),
)

NSYS_TABLES: dict[str, tuple[str, tuple[Column, ...]]] = {
    "kernels": (
        "GPU kernels",
        (
            Column("name", "kernel", _attr("name", _text), numeric=False),
            Column("nccl", "NCCL", lambda r: "yes" if r.is_nccl else "", numeric=False),
            Column("instances", "instances", _attr("count", _int)),
            *_DURATIONS,
            Column("launch_api", "launched by", _attr("launch_api", _text), numeric=False),
            Column("avg_launch_us", "launch → start µs", _attr("avg_launch_ns", fmt_us)),
        ),
    ),
    "memory": (
        "Memory operations",
        (
            Column("operation", "operation", _attr("name", _text), numeric=False),
            Column("count", "count", _attr("count", _int)),
            *_DURATIONS[:6],
            Column("total_bytes", "total bytes", _attr("total_bytes", _int)),
            Column("avg_bytes", "avg bytes", _attr("avg_bytes", _int)),
            Column("throughput_gbps", "GB/s", _attr("throughput_gbps", _gbps)),
        ),
    ),
    "api": (
        "CUDA API calls",
        (
            Column("name", "call", _attr("name", _text), numeric=False),
            Column("calls", "calls", _attr("count", _int)),
            *_DURATIONS,
        ),
    ),
    "osrt": (
        "OS runtime calls",
        (
            Column("name", "call", _attr("name", _text), numeric=False),
            Column("calls", "calls", _attr("count", _int)),
            *_DURATIONS,
        ),
    ),
    "ranges": (
        "NVTX ranges",
        (
            Column("name", "range", _attr("name", _text), numeric=False),
            Column("style", "style", _attr("style", _text), numeric=False),
            Column("count", "count", _attr("count", _int)),
            *_DURATIONS,
        ),
    ),
    "nvtx_domains": (
        "NVTX domains",
        (
            Column("domain", "domain", _key("domain", _text), numeric=False),
            Column("ids", "domain ids", _key("domain_ids", lambda v: " ".join(map(str, v or ())))),
            Column("ranges", "ranges", _key("ranges", _int)),
            Column("names", "names", _key("names", _int)),
            Column("total_us", "total µs", _key("total_ns", fmt_us)),
            Column("max_us", "longest µs", _key("max_ns", fmt_us)),
        ),
    ),
    "gpus": (
        "GPUs",
        (
            Column("id", "id", _key("id", _text)),
            Column("name", "name", _key("name", _text), numeric=False),
            Column("bus", "bus", _key("bus_location", _text), numeric=False),
            Column("chip", "chip", _key("chip", _text), numeric=False),
            Column("sms", "SMs", _key("sm_count", _text)),
            Column("memory_gib", "memory GiB", _key("memory_bytes", lambda b: _gib(b))),
            Column(
                "bandwidth_gbps", "memory GB/s", _key("memory_bandwidth", lambda b: _per_1e9(b))
            ),
            Column("cc", "CC", lambda g: _cc(g), numeric=False),
        ),
    ),
    "utilisation": (
        "GPU utilisation",
        (
            Column("device", "GPU", _key("device", _text)),
            Column("bin_start_ms", "bin start ms", _key("t_ms", lambda v: f"{v:.6f}")),
            Column("busy_pct", "busy %", _key("busy_pct", fmt_pct)),
            Column("nccl_pct", "NCCL %", _key("nccl_pct", fmt_pct)),
        ),
    ),
}

NCU_TABLES: dict[str, tuple[str, tuple[Column, ...]]] = {
    "kernels": (
        "Profiled kernels",
        (
            Column("id", "ID", _attr("kernel_id", _text)),
            Column("name", "kernel", _attr("name", _text), numeric=False),
            Column("grid", "grid", _attr("grid", _text), numeric=False),
            Column("block", "block", _attr("block", _text), numeric=False),
            Column("duration_us", "duration µs", _attr("duration_ns", fmt_us)),
            Column("sm_pct", "SM %", _attr("sm_throughput_pct", fmt_pct)),
            Column("memory_pct", "memory %", _attr("memory_throughput_pct", fmt_pct)),
            Column("dram_pct", "DRAM %", _attr("dram_throughput_pct", fmt_pct)),
            Column(
                "occupancy_pct", "achieved occupancy %", _attr("achieved_occupancy_pct", fmt_pct)
            ),
            Column("registers", "registers/thread", _attr("registers_per_thread", _int)),
            Column("rules", "rules", lambda k: str(len(k.rules))),
        ),
    ),
    "metrics": (
        "All metrics",
        (
            Column("kernel_id", "ID", _key("kernel_id", _text)),
            Column("kernel", "kernel", _key("kernel", _text), numeric=False),
            Column("section", "section", _key("section", _text), numeric=False),
            Column("metric", "metric", _key("metric", _text), numeric=False),
            Column("unit", "unit", _key("unit", _text), numeric=False),
            Column("value", "value", _key("value", _text)),
        ),
    ),
}


def header(columns: tuple[Column, ...]) -> list[str]:
    return [c.key for c in columns]


def rows(columns: tuple[Column, ...], items: Iterable[Any]) -> list[list[str]]:
    return [[c.cell(item) for c in columns] for item in items]


def utilisation_points(utilisation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored bins as one point per device and bin (the chart's and the CSV's rows)."""
    points = []
    for device in utilisation:
        nccl = device.get("nccl_pct") or []
        for i, busy in enumerate(device.get("busy_pct") or []):
            points.append(
                {
                    "device": device.get("device_id"),
                    "t_ms": (device.get("start_ns", 0) + i * device.get("bin_ns", 0)) / 1e6,
                    "busy_pct": busy,
                    "nccl_pct": nccl[i] if i < len(nccl) else None,
                }
            )
    return points


def metric_rows(kernels: Iterable[Any]) -> Iterable[dict[str, Any]]:
    """Every metric of every Nsight Compute kernel, one row each (the long CSV)."""
    for k in kernels:
        for section, name, unit, value in k.metrics:
            yield {
                "kernel_id": k.kernel_id,
                "kernel": k.name,
                "section": section,
                "metric": name,
                "unit": unit,
                "value": value,
            }


def _gib(value: Any) -> str:
    return "" if value in (None, "") else f"{float(value) / 1024**3:.1f}"


def _per_1e9(value: Any) -> str:
    return "" if value in (None, "") else f"{float(value) / 1e9:.1f}"


def _cc(gpu: dict[str, Any]) -> str:
    major, minor = gpu.get("compute_major"), gpu.get("compute_minor")
    return f"{major}.{minor}" if major is not None and minor is not None else ""
