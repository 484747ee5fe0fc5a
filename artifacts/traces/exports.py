"""The tables of a trace page, as (columns, rows): pages render them, CSV/JSON export them,
so an export always holds the numbers the page shows (at full stored precision)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.db.models import QuerySet

from artifacts.models import TraceKernelStat, TraceSummary
from artifacts.traces.models import BREAKDOWN_PARTS, WINDOWS

Table = tuple[Sequence[str], list[tuple[Any, ...]]]

TRACE_LIST_COLUMNS = (
    "id", "file", "label", "job_label", "rank", "world_size", "host", "gpu", "backend",
    "nccl_version", "platform", "cpu_only", "recorded_at", "gpu_events", "span_us", "busy_pct",
    "compute_pct", "comm_pct", "exposed_comm_pct", "idle_pct", "overlap_pct", "step_count",
    "step_median_us",
)  # fmt: skip
_LIST_FIELDS = {"id": "artifact_id", "file": "artifact__original_name", "label": "artifact__label"}

BREAKDOWN_COLUMNS = (
    "window",
    *[f"{part}_us" for part in BREAKDOWN_PARTS],
    *[f"{part}_pct" for part in BREAKDOWN_PARTS],
    "overlap_pct",
)
KERNEL_COLUMNS = (
    "name", "type", "count", "sum_us", "mean_us", "min_us", "max_us", "std_us", "share_pct",
)  # fmt: skip
STEP_COLUMNS = (
    "index", "step", "start_us", "dur_us", "gpu_events", "gpu_span_us", "gpu_busy_us",
    "gpu_compute_us", "gpu_comm_us", "gpu_idle_pct",
)  # fmt: skip
COLLECTIVE_COLUMNS = (
    "index", "name", "start_us", "dur_us", "size_bytes", "group_size", "dtype", "algbw_gbps",
    "busbw_gbps", "stream", "in_nelems", "out_nelems", "process_group", "process_group_desc",
    "kernel",
)  # fmt: skip
COLLECTIVE_SUMMARY_COLUMNS = (
    "collective", "group_size", "count", "sum_us", "mean_us", "max_us", "total_bytes",
    "algbw_gbps", "busbw_gbps",
)  # fmt: skip
KERNEL_TYPE_COLUMNS = ("window", "type", "sum_us", "pct")
IDLE_COLUMNS = ("stream", "events", "host_wait_us", "kernel_wait_us", "other_us", "idle_us")
LAUNCH_COLUMNS = ("statistic", "value")
ANNOTATION_COLUMNS = ("domain", "name", "count", "sum_us", "mean_us", "min_us", "max_us")
ANNOTATION_DOMAIN_COLUMNS = ("domain", "ranges", "names", "sum_us")


def trace_list_rows(traces: QuerySet[TraceSummary]) -> list[tuple[Any, ...]]:
    return list(traces.values_list(*[_LIST_FIELDS.get(c, c) for c in TRACE_LIST_COLUMNS]))


def kernels_of(trace: TraceSummary, kernel_type: str = "") -> QuerySet[TraceKernelStat]:
    qs = trace.kernels.order_by("-sum_us", "id")
    return qs.filter(kernel_type=kernel_type) if kernel_type else qs


def breakdown_table(trace: TraceSummary) -> Table:
    rows = []
    for window in WINDOWS:
        b = trace.breakdown(window)
        rows.append(tuple(b[c] for c in BREAKDOWN_COLUMNS))
    return BREAKDOWN_COLUMNS, rows


def kernel_table(trace: TraceSummary, kernel_type: str = "") -> Table:
    fields = [c if c != "type" else "kernel_type" for c in KERNEL_COLUMNS]
    return KERNEL_COLUMNS, list(kernels_of(trace, kernel_type).values_list(*fields))


def step_table(trace: TraceSummary) -> Table:
    return STEP_COLUMNS, list(trace.steps.order_by("index").values_list(*STEP_COLUMNS))


def collective_table(trace: TraceSummary) -> Table:
    rows = trace.collectives.order_by("index").values_list(*COLLECTIVE_COLUMNS)
    return COLLECTIVE_COLUMNS, list(rows)


def collective_summary_table(trace: TraceSummary) -> Table:
    rows = trace.extra.get("collectives_summary") or []
    return COLLECTIVE_SUMMARY_COLUMNS, [_pick(r, COLLECTIVE_SUMMARY_COLUMNS) for r in rows]


def kernel_type_table(trace: TraceSummary) -> Table:
    rows = []
    for window, key in (("trace", "kernel_types"), ("steps", "steps_kernel_types")):
        rows += [
            (window, r.get("type"), r.get("sum_us"), r.get("pct"))
            for r in trace.extra.get(key) or []
        ]
    return KERNEL_TYPE_COLUMNS, rows


def idle_table(trace: TraceSummary) -> Table:
    rows = trace.extra.get("idle_streams") or []
    return IDLE_COLUMNS, [_pick(r, IDLE_COLUMNS) for r in rows]


def launch_table(trace: TraceSummary) -> Table:
    launch = trace.extra.get("launch") or {}
    rows: list[tuple[Any, ...]] = []
    for key, value in launch.items():
        if isinstance(value, dict):
            rows += [(f"{key}.{k}", v) for k, v in value.items()]
        else:
            rows.append((key, value))
    return LAUNCH_COLUMNS, rows


def annotation_table(trace: TraceSummary) -> Table:
    rows = trace.extra.get("annotations") or []
    return ANNOTATION_COLUMNS, [_pick(r, ANNOTATION_COLUMNS) for r in rows]


def annotation_domain_table(trace: TraceSummary) -> Table:
    rows = trace.extra.get("annotation_domains") or []
    return ANNOTATION_DOMAIN_COLUMNS, [_pick(r, ANNOTATION_DOMAIN_COLUMNS) for r in rows]


TRACE_TABLES: dict[str, Callable[[TraceSummary], Table]] = {
    "breakdown": breakdown_table,
    "kernels": kernel_table,
    "kernel_types": kernel_type_table,
    "steps": step_table,
    "collectives": collective_table,
    "collectives_summary": collective_summary_table,
    "idle": idle_table,
    "launch": launch_table,
    "annotations": annotation_table,
    "annotation_domains": annotation_domain_table,
}


def trace_as_json(trace: TraceSummary) -> dict[str, Any]:
    """Everything stored about one trace, table by table (the page's JSON export)."""
    body: dict[str, Any] = {
        "id": trace.pk,
        "file": trace.artifact.original_name,
        "rank": trace.rank,
        "world_size": trace.world_size,
        "backend": trace.backend,
        "nccl_version": trace.nccl_version,
        "host": trace.host,
        "gpu": trace.gpu,
        "platform": trace.platform,
        "cpu_only": trace.cpu_only,
        "job_label": trace.job_label,
        "recorded_at": trace.recorded_at.isoformat(),
        "devices": trace.devices,
    }
    for name, table in TRACE_TABLES.items():
        columns, rows = table(trace)
        body[name] = [dict(zip(columns, row, strict=True)) for row in rows]
    body["extra"] = trace.extra
    return body


def _pick(row: dict[str, Any], columns: Sequence[str]) -> tuple[Any, ...]:
    return tuple(row.get(c) for c in columns)
