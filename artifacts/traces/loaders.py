"""From a TorchTraceResult to trace rows: one summary, its kernels, steps and collectives.

Runs inside the parse transaction (artifacts.parsing.artifact_parse). Deleting the summary
cascades to its children, so a re-parse replaces everything an earlier parse wrote; the
summary's primary key is the artifact's, so the trace keeps its id and URL.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from django.db import connection, models

from artifacts.models import Artifact, TraceCollective, TraceKernelStat, TraceStep, TraceSummary

# Parser breakdown key -> model field suffix (the same for both windows).
_BREAKDOWN_FIELDS = {
    "kernel_time": "span",
    "busy_time": "busy",
    "idle_time": "idle",
    "compute_time": "compute",
    "non_compute_time": "non_compute",
    "communication_time": "comm",
    "exposed_communication_time": "exposed_comm",
    "memory_time": "memory",
    "other_time": "other",
}
_META_EXTRA = (
    "pg_count", "process_groups", "gpu_devices_used", "schema_version", "trace_name",
    "display_time_unit", "base_time_ns", "host_name", "cupti_version", "cuda_runtime_version",
    "cuda_driver_version", "events", "categories", "bytes_read",
)  # fmt: skip
# Base times outside these years are not wall-clock times (some tools write 0 or uptime).
_PLAUSIBLE_YEARS = range(2000, 2101)


def load_torch_trace(artifact: Artifact, result: Any) -> None:
    TraceSummary.objects.filter(artifact=artifact).delete()
    summary = TraceSummary.objects.create(artifact=artifact, **summary_fields(artifact, result))
    _insert(
        TraceKernelStat,
        (
            {
                "trace_id": summary.pk,
                "name": row["name"],
                "kernel_type": row["type"],
                "count": row["count"],
                "sum_us": row["sum_us"],
                "mean_us": row["mean_us"],
                "min_us": row["min_us"],
                "max_us": row["max_us"],
                "std_us": row.get("std_us"),
                "share_pct": row.get("pct"),
            }
            for row in result.kernels
        ),
    )
    _insert(
        TraceStep,
        (
            {
                "trace_id": summary.pk,
                "index": index,
                "step": row.get("step"),
                "start_us": row["start_us"],
                "dur_us": row["dur_us"],
                "gpu_events": row.get("gpu_events") or 0,
                "gpu_span_us": row.get("gpu_span_us"),
                "gpu_busy_us": row.get("gpu_busy_us"),
                "gpu_compute_us": row.get("gpu_compute_us"),
                "gpu_comm_us": row.get("gpu_communication_us"),
                "gpu_idle_pct": row.get("gpu_idle_pct"),
            }
            for index, row in enumerate(result.steps)
        ),
    )
    _insert(
        TraceCollective,
        (
            {
                "trace_id": summary.pk,
                "index": index,
                "name": (row.get("collective") or "")[:40],
                "kernel": row.get("kernel") or "",
                "start_us": row["start_us"],
                "dur_us": row["dur_us"],
                "stream": row.get("stream"),
                "size_bytes": row.get("size_bytes"),
                "group_size": row.get("group_size"),
                "dtype": (row.get("dtype") or "")[:40],
                "in_nelems": row.get("in_nelems"),
                "out_nelems": row.get("out_nelems"),
                "algbw_gbps": row.get("algbw_gbps"),
                "busbw_gbps": row.get("busbw_gbps"),
                "process_group": (row.get("process_group") or "")[:300],
                "process_group_desc": (row.get("process_group_desc") or "")[:300],
            }
            for index, row in enumerate(result.collectives)
        ),
    )


def _insert(model: type[models.Model], rows: Iterable[dict[str, Any]]) -> None:
    """INSERT plain rows in one executemany.

    bulk_create spends ~100 µs a row preparing values (1000 collectives: 0.1-0.2 s, a third
    of a 50 MB rank's whole parse); these rows hold only numbers, text and None, so they go
    to the driver as they are. Columns come from the model, placeholders are the portable
    ``%s`` of Django's cursor (SQLite and PostgreSQL alike); every column is given, so
    defaults are applied here rather than by the database.
    """
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    sql = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({marks})"
    values = [
        [row[f.attname] if f.attname in row else f.get_default() for f in fields] for row in rows
    ]
    if values:
        with connection.cursor() as cursor:
            cursor.executemany(sql, values)


def summary_fields(artifact: Artifact, result: Any) -> dict[str, Any]:
    """The TraceSummary columns of one parse result (also used by the job benchmark)."""
    meta = result.meta
    devices = meta.get("devices") or []
    steps = [s["dur_us"] for s in result.steps]
    fields: dict[str, Any] = {
        "rank": meta.get("rank"),
        "world_size": meta.get("world_size"),
        "backend": (meta.get("backend") or "")[:40],
        "nccl_version": (meta.get("nccl_version") or "")[:40],
        "host": (artifact.host or meta.get("host_name") or "")[:255],
        "gpu": _gpu_name(devices, meta.get("gpu_devices_used") or []),
        "platform": meta.get("platform") or "",
        "devices": devices,
        "cpu_only": bool(meta.get("cpu_only")),
        "truncated": bool(meta.get("truncated")),
        "job_label": job_label_of(artifact),
        "recorded_at": _recorded_at(artifact, meta.get("base_time_ns")),
        "gpu_events": result.breakdown.get("gpu_events") or 0,
        "step_count": len(steps),
        "step_mean_us": round(statistics.fmean(steps), 3) if steps else None,
        "step_median_us": round(statistics.median(steps), 3) if steps else None,
        "collective_count": sum(r["count"] for r in result.collectives_summary),
        "kernel_name_count": len(result.kernels) + (result.kernels_omitted or {}).get("names", 0),
    }
    fields |= _window_fields(result.breakdown, prefix="")
    hta = result.breakdown_steps
    fields |= _window_fields(hta, prefix="steps_")
    fields["steps_filtered"] = bool(hta.get("filtered"))
    fields["steps_cutoff_us"] = hta.get("cutoff_us")
    fields["steps_dropped_events"] = hta.get("dropped_gpu_events")
    idle, launch = result.idle, result.launch
    delay = launch.get("launch_delay_us") or {}
    fields |= {
        "host_wait_us": idle.get("host_wait_us"),
        "kernel_wait_us": idle.get("kernel_wait_us"),
        "idle_other_us": idle.get("other_us"),
        "launches": launch.get("launches"),
        "short_kernels": launch.get("short_kernels"),
        "short_kernels_pct": launch.get("short_kernels_pct"),
        "long_runtime_calls": launch.get("long_runtime_calls"),
        "long_launch_delays": launch.get("long_launch_delays"),
        "launch_delay_mean_us": delay.get("mean"),
        "launch_delay_p50_us": delay.get("p50"),
        "launch_delay_p95_us": delay.get("p95"),
    }
    fields["extra"] = {
        "kernel_types": result.kernel_types,
        "steps_kernel_types": hta.get("kernel_types") or [],
        "kernel_type_totals": result.kernel_type_totals,
        "kernels_omitted": result.kernels_omitted,
        "idle_streams": idle.get("streams") or [],
        "consecutive_kernel_delay_us": idle.get("consecutive_kernel_delay_us"),
        "launch": launch,
        "collectives_summary": result.collectives_summary,
        "annotation_domains": getattr(result, "annotation_domains", []),
        "annotations": getattr(result, "annotations", []),
        "breakdown_start_us": result.breakdown.get("start_us"),
        **{key: meta.get(key) for key in _META_EXTRA},
    }
    return fields


def job_label_of(artifact: Artifact) -> str:
    """Upload metadata ``job`` wins over the label: labels are often reused ("nightly")."""
    job = (artifact.metadata or {}).get("job")
    if job not in (None, ""):
        return str(job).strip()[:120]
    return artifact.label


def _window_fields(window: dict[str, Any], *, prefix: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, suffix in _BREAKDOWN_FIELDS.items():
        fields[f"{prefix}{suffix}_us"] = window.get(f"{key}_us")
        fields[f"{prefix}{suffix}_pct"] = window.get(f"{key}_pct")
    span = window.get("kernel_time_us")
    fields[f"{prefix}span_pct"] = 100.0 if span else None
    fields[f"{prefix}overlap_pct"] = window.get("comm_comp_overlap_pct")
    return fields


def _gpu_name(devices: list[dict[str, Any]], used: list[int]) -> str:
    by_id = {d.get("id"): d for d in devices}
    for device in [by_id.get(i) for i in used] + devices:
        if device and device.get("name"):
            return str(device["name"])[:120]
    return ""


def _recorded_at(artifact: Artifact, base_time_ns: Any) -> datetime:
    if isinstance(base_time_ns, int) and base_time_ns > 0:
        try:
            when = datetime.fromtimestamp(base_time_ns / 1e9, tz=UTC)
        except (OverflowError, OSError, ValueError):
            when = None
        if when and when.year in _PLAUSIBLE_YEARS:
            return when
    return artifact.captured_at or artifact.uploaded_at
