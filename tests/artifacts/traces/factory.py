"""Small synthetic Kineto traces of a data-parallel job, for job-view and straggler tests.

Each rank runs ``steps`` ProfilerSteps. In each step it computes (two GEMM kernels), then
joins an all-reduce. All ranks leave the all-reduce together (at the moment the slowest one
arrives, plus the transfer time), so a slow rank has longer compute and a *shorter* NCCL
kernel: exactly what a real synchronous job looks like in its per-rank traces.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

STEP_US = 10_000.0
COMPUTE_US = 2_000.0  # per GEMM kernel, two per step
TRANSFER_US = 500.0
NELEMS = 4 * 1024 * 1024


def kineto_trace(
    rank: int,
    world: int,
    *,
    slowdowns: Sequence[float],
    steps: int = 4,
    first_step: int = 1,
    step_stretch: float = 1.0,
    gemm: str = "sm90_xmma_gemm_bf16bf16_bf16f32",
    name: str = "",
) -> bytes:
    """The trace of ``rank``; ``slowdowns[r]`` scales rank r's compute kernels and
    ``step_stretch`` this rank's host step duration."""
    events: list[dict[str, Any]] = []
    correlation = 1
    slowest = max(slowdowns)
    for i in range(steps):
        step = first_step + i
        t0 = 1_000_000.0 + (step - 1) * STEP_US * 2
        events.append(_event("user_annotation", f"ProfilerStep#{step}", t0, STEP_US * step_stretch))
        t = t0 + 100.0
        for _ in range(2):
            dur = COMPUTE_US * slowdowns[rank]
            events += _launch(correlation, t - 20.0)
            events.append(_kernel(gemm, t, dur, correlation))
            correlation += 1
            t += dur
        # everybody leaves the all-reduce when the slowest rank arrived, plus the transfer
        end = t0 + 100.0 + 2 * COMPUTE_US * slowest + TRANSFER_US
        events += _launch(correlation, t - 20.0)
        events.append(
            _kernel(
                "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                t,
                end - t,
                correlation,
                nccl={
                    "Collective name": "allreduce",
                    "In msg nelems": NELEMS,
                    "Out msg nelems": NELEMS,
                    "Group size": world,
                    "dtype": "BFloat16",
                    "Process Group Name": "0",
                    "Process Group Description": "default_pg",
                },
            )
        )
        correlation += 1
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [
            {
                "id": 0,
                "name": "NVIDIA H100 80GB HBM3",
                "totalGlobalMem": 85_520_809_984,
                "computeMajor": 9,
                "computeMinor": 0,
                "numSms": 132,
                "warpSize": 32,
            }
        ],
        "distributedInfo": {
            "backend": "nccl",
            "rank": rank,
            "world_size": world,
            "nccl_version": "2.21.5",
        },
        "baseTimeNanoseconds": 1_717_000_000_000_000_000,
        "traceName": name,  # different jobs of equal shape must not be the same bytes
        "traceEvents": events,
    }
    return json.dumps(doc).encode()


def _event(cat: str, name: str, ts: float, dur: float, **args: Any) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def _launch(correlation: int, ts: float) -> list[dict[str, Any]]:
    return [_event("cuda_runtime", "cudaLaunchKernel", ts, 5.0, correlation=correlation)]


def _kernel(
    name: str, ts: float, dur: float, correlation: int, nccl: dict[str, Any] | None = None
) -> dict[str, Any]:
    args = {"stream": 7, "correlation": correlation, "device": 0, **(nccl or {})}
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def ingest_job(
    world: int,
    *,
    slowdowns: Sequence[float] | None = None,
    label: str = "job-a",
    hosts: Sequence[str] | None = None,
    uploaded_by: Any = None,
    metadata: dict[str, Any] | None = None,
    **trace_kwargs: Any,
) -> list[Any]:
    """Ingest and parse one trace per rank (needs the database); returns the artifacts."""
    from artifacts.parsing import artifact_parse
    from artifacts.services import artifact_ingest

    slowdowns = list(slowdowns or [1.0] * world)
    artifacts = []
    for rank in range(world):
        data = kineto_trace(rank, world, slowdowns=slowdowns, name=label, **trace_kwargs)
        host = hosts[rank] if hosts else f"node-{rank // 8}"
        outcome = artifact_ingest(
            stream=io.BytesIO(data),
            name=f"{label}-rank{rank}.pt.trace.json",
            label=label,
            host=host,
            uploaded_by=uploaded_by,
            metadata=metadata,
            enqueue=False,
        )
        artifacts.append(artifact_parse(artifact_id=outcome.artifact.pk))
    return artifacts
