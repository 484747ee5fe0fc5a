"""From Nsight ParseResults to rows. Called inside the parse transaction (see loaders.py).

Each loader first deletes every Nsight row of the artifact (Systems and Compute alike: a
re-parse under another kind must not leave the old kind's rows behind), so a parse is
idempotent. The report row keeps the artifact's primary key, so its page URL is stable.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from typing import Any

from artifacts.models import (
    Artifact,
    NcuKernel,
    NsightApiStat,
    NsightKernelStat,
    NsightMemStat,
    NsightRange,
    NsightReport,
)

BATCH = 1000
# nsys stats tables without a typed summary are kept for the page, up to this many rows each
OTHER_REPORT_ROWS = 500
_TIME_FIELDS = ("name", "count", "total_ns", "time_pct", "avg_ns", "med_ns", "min_ns", "max_ns")
_TYPED_REPORTS = (
    "cuda_gpu_kern_sum", "cuda_api_sum", "osrt_sum", "nvtx_sum", "nvtx_pushpop_sum",
    "nvtx_startend_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
)  # fmt: skip


def clear_nsight_rows(artifact: Artifact) -> None:
    NsightReport.objects.filter(artifact=artifact).delete()
    for model in (NsightKernelStat, NsightMemStat, NsightApiStat, NsightRange, NcuKernel):
        model.objects.filter(artifact=artifact).delete()


def load_nsys(artifact: Artifact, result: Any) -> None:
    """nsys_sqlite, nsys_stats and nsys_rep results: one report row plus summary rows."""
    clear_nsight_rows(artifact)
    source = result.kind
    kernels = list(getattr(result, "kernels", ()))
    export = getattr(result, "export", None)
    target = getattr(result, "target", None)
    NsightReport.objects.create(
        artifact=artifact,
        source_kind=source,
        nsys_version=_text(
            export.nsys_version if export else getattr(result, "nsys_version", None), 40
        ),
        schema_version=_text(export.schema_version if export else None, 20),
        host=_text((target.host if target else None) or artifact.host, 255),
        driver_version=_text(target.driver_version if target else None, 40),
        cuda_driver_version=_text(target.cuda_driver_version if target else None, 40),
        duration_ns=export.duration_ns if export else None,  # an SQLite integer: fits
        kernel_count=len(kernels),
        kernel_time_ns=_number(sum(k.total_ns or 0 for k in kernels)) or 0.0,
        nccl_time_ns=_number(sum(k.total_ns or 0 for k in kernels if k.is_nccl)) or 0.0,
        gpus=_json([dataclasses.asdict(g) for g in target.gpus] if target else []),
        # NVTX domains ride in the target JSON (no column of their own, so no migration).
        target=_json(_target_facts(target) | _nvtx_domains(result)),
        utilisation=_json([dataclasses.asdict(u) for u in getattr(result, "utilisation", ())]),
        processes=_json([dataclasses.asdict(p) for p in getattr(result, "processes", ())]),
        activity_tables=_json(dict(getattr(result, "activity_tables", {}) or {})),
        diagnostics=_json([dataclasses.asdict(d) for d in getattr(result, "diagnostics", ())]),
        other_reports=_json(_other_reports(getattr(result, "reports", ()))),
        skipped_reports=_json([dataclasses.asdict(s) for s in getattr(result, "skipped", ())]),
    )
    _bulk(
        NsightKernelStat,
        (
            NsightKernelStat(
                artifact=artifact,
                source_kind=source,
                is_nccl=k.is_nccl,
                launch_api=_text(k.launch_api, 120),
                avg_launch_ns=_number(k.avg_launch_ns),
                **_durations(k),
            )
            for k in kernels
        ),
    )
    _bulk(
        NsightMemStat,
        (
            NsightMemStat(
                artifact=artifact,
                source_kind=source,
                total_bytes=_number(m.total_bytes),
                avg_bytes=_number(m.avg_bytes),
                min_bytes=_number(m.min_bytes),
                max_bytes=_number(m.max_bytes),
                throughput_gbps=_number(m.throughput_gbps),
                **_durations(m),
            )
            for m in getattr(result, "memory", ())
        ),
    )
    apis = [(NsightApiStat.Api.CUDA, a) for a in getattr(result, "api_calls", ())]
    apis += [(NsightApiStat.Api.OSRT, a) for a in getattr(result, "os_runtime", ())]
    _bulk(
        NsightApiStat,
        (
            NsightApiStat(artifact=artifact, source_kind=source, api=api, **_durations(a))
            for api, a in apis
        ),
    )
    _bulk(
        NsightRange,
        (
            NsightRange(
                artifact=artifact, source_kind=source, style=_text(r.style, 20), **_durations(r)
            )
            for r in getattr(result, "ranges", ())
        ),
    )


def load_ncu(artifact: Artifact, result: Any) -> None:
    """ncu_csv and ncu_text results: one row per profiled kernel launch."""
    clear_nsight_rows(artifact)
    _bulk(
        NcuKernel,
        (
            NcuKernel(
                artifact=artifact,
                source_kind=result.kind,
                index=index,
                kernel_id=k.id,
                name=_text(k.name),
                process=_text(_process(k), 255),
                device=_text(k.device, 60),
                cc=_text(k.cc, 10),
                stream=_text(k.stream, 20),
                grid=_text(k.grid, 60),
                block=_text(k.block, 60),
                nvtx=_json(list(k.nvtx)),
                duration_ns=_number(k.duration_ns),
                sm_throughput_pct=_number(k.sm_throughput_pct),
                memory_throughput_pct=_number(k.memory_throughput_pct),
                dram_throughput_pct=_number(k.dram_throughput_pct),
                achieved_occupancy_pct=_number(k.achieved_occupancy_pct),
                registers_per_thread=_number(k.registers_per_thread),
                metrics=_json([[m.section, m.name, m.unit, m.value] for m in k.metrics]),
                rules=_json([dataclasses.asdict(r) for r in k.rules]),
            )
            for index, k in enumerate(result.kernels)
        ),
    )


def _process(kernel: Any) -> str:
    pid = f"[{kernel.process_id}]" if kernel.process_id else ""
    return " ".join(p for p in (kernel.process_name, pid) if p)


def _text(value: Any, limit: int | None = None) -> str:
    """Text as the database takes it: PostgreSQL refuses NUL characters in strings."""
    text = str(value or "").replace("\x00", "")
    return text[:limit] if limit else text


def _json(value: Any) -> Any:
    """JSON as every database takes it: no NUL characters, no NaN/Infinity."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {_json(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


def _durations(stat: Any) -> dict[str, Any]:
    values = {f: _number(getattr(stat, f)) for f in (*_TIME_FIELDS[1:], "stddev_ns")}
    values["name"] = _text(stat.name)
    values["count"] = min(int(values["count"] or 0), 2**62)
    values["total_ns"] = values["total_ns"] or 0.0
    return values


def _number(value: Any) -> float | None:
    """A float column's value: NaN, infinities and out-of-range numbers become null."""
    if value is None:
        return None
    try:
        number = float(value)
    except (OverflowError, TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _nvtx_domains(result: Any) -> dict[str, Any]:
    domains = [dataclasses.asdict(d) for d in getattr(result, "nvtx_domains", ())]
    return {"nvtx_domains": domains} if domains else {}


def _target_facts(target: Any) -> dict[str, Any]:
    if target is None:
        return {}
    facts = dataclasses.asdict(target)
    facts.pop("gpus", None)
    return {k: v for k, v in facts.items() if v not in (None, "")}


def _other_reports(tables: Iterable[Any]) -> list[dict[str, Any]]:
    out = []
    for t in tables:
        if t.report.split(":")[0] in _TYPED_REPORTS:
            continue
        out.append(
            {
                "report": t.report,
                "title": t.title,
                "columns": list(t.columns),
                "rows": [list(r) for r in t.rows[:OTHER_REPORT_ROWS]],
                "row_count": len(t.rows),
            }
        )
    return out


def _bulk(model: type, rows: Iterable[Any]) -> None:
    batch: list[Any] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            model.objects.bulk_create(batch)  # type: ignore[attr-defined]
            batch = []
    if batch:
        model.objects.bulk_create(batch)  # type: ignore[attr-defined]


NSIGHT_LOADERS: dict[str, Callable[[Artifact, Any], None]] = {
    "nsys_sqlite": load_nsys,
    "nsys_stats": load_nsys,
    "nsys_rep": load_nsys,
    "ncu_csv": load_ncu,
    "ncu_text": load_ncu,
}
