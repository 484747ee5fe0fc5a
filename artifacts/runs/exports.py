"""Columns and rows of run exports (CSV/JSON pages, API, incident bundles)."""

from __future__ import annotations

from typing import Any

from artifacts.runs.models import BenchmarkRun

MEASUREMENT_COLUMNS = (
    "size_bytes", "count", "dtype", "redop", "root",
    "oop_time_us", "oop_algbw_gbps", "oop_busbw_gbps", "oop_wrong",
    "ip_time_us", "ip_algbw_gbps", "ip_busbw_gbps", "ip_wrong",
)  # fmt: skip


RUN_COLUMNS = (
    "id", "artifact_id", "collective", "nranks", "nhosts", "gpu", "dtype", "nccl_version",
    "nccl_tests_version", "avg_busbw_gbps", "max_busbw_gbps", "out_of_bounds", "complete",
    "measured_at",
)  # fmt: skip


def run_measurement_rows(run: BenchmarkRun) -> list[tuple[Any, ...]]:
    return list(run.measurements.values_list(*MEASUREMENT_COLUMNS))


def run_as_json(run: BenchmarkRun) -> dict[str, Any]:
    return {
        **{c: getattr(run, c) for c in RUN_COLUMNS},
        "params": run.params,
        "errors": run.errors,
        "ranks": list(run.ranks.values("rank", "host", "device", "busid", "gpu")),
        "measurements": [
            dict(zip(MEASUREMENT_COLUMNS, r, strict=True)) for r in run_measurement_rows(run)
        ],
    }
