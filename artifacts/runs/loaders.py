"""nccl-tests ParseResult -> BenchmarkRun, RunRank and Measurement rows.

Runs inside the parse transaction; the artifact's earlier runs are deleted first, so a
re-parse replaces them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

from artifacts.models.core import Artifact
from artifacts.runs.models import BenchmarkRun, Measurement, RunRank
from artifacts.times import aware_datetime


def load_nccl_tests(artifact: Artifact, result: Any) -> None:
    artifact.runs.all().delete()
    for index, run in enumerate(result.runs):
        busbws = [r.out_of_place.busbw_gbps for r in run.rows if r.out_of_place.busbw_gbps]
        busbws += [r.in_place.busbw_gbps for r in run.rows if r.in_place and r.in_place.busbw_gbps]
        row = BenchmarkRun.objects.create(
            artifact=artifact,
            index=index,
            benchmark="nccl-tests",
            collective=run.collective or "",
            nccl_tests_version=run.nccl_tests_version or "",
            nccl_version=run.nccl_version or "",
            params=dict(run.params),
            nranks=run.nranks,
            nhosts=len(run.hosts) if run.hosts else None,
            gpu=_most_common(r.gpu for r in run.ranks),
            dtype=_most_common(r.dtype for r in run.rows),
            avg_busbw_gbps=run.avg_busbw_gbps,
            max_busbw_gbps=max(busbws) if busbws else None,
            out_of_bounds=run.out_of_bounds,
            complete=run.complete,
            errors=list(run.errors),
            # The NCCL_* settings the output states; filing adds them to the stack's env.
            extra={"env": dict(run.env)} if getattr(run, "env", None) else {},
            measured_at=_parse_time(run.started_at) or artifact.captured_at or artifact.uploaded_at,
        )
        RunRank.objects.bulk_create(
            RunRank(
                run=row,
                rank=r.rank,
                host=r.host or "",
                device=r.device,
                busid=r.busid or "",
                gpu=r.gpu or "",
            )
            for r in run.ranks
        )
        Measurement.objects.bulk_create(
            Measurement(
                run=row,
                measured_at=row.measured_at,  # the partition key (artifacts/runs/partitions.py)
                size_bytes=r.size_bytes,
                count=r.count,
                dtype=r.dtype or "",
                redop=r.redop or "",
                root=r.root,
                **_side("oop", r.out_of_place),
                **_side("ip", r.in_place),
            )
            for r in run.rows
        )


def _side(prefix: str, side: Any) -> dict[str, float | None]:
    if side is None:
        return {}
    return {
        f"{prefix}_time_us": side.time_us,
        f"{prefix}_algbw_gbps": side.algbw_gbps,
        f"{prefix}_busbw_gbps": side.busbw_gbps,
        f"{prefix}_wrong": side.wrong,
    }


def _parse_time(text: str | None) -> datetime | None:
    try:
        return aware_datetime(text) if text else None
    except ValueError:
        return None  # an odd timestamp in the file is no reason to lose the run


def _most_common(values: Any) -> str:
    counts = Counter(v for v in values if v)
    return counts.most_common(1)[0][0] if counts else ""


RUN_LOADERS: dict[str, Callable[[Artifact, Any], None]] = {"nccl_tests": load_nccl_tests}
