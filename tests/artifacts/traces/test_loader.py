"""Loading PyTorch Profiler traces: every shared sample through artifact_ingest +
artifact_parse, stored numbers equal to HTA's (tests/expected/torch_trace) and to the
parser's own output, idempotent re-parse, job labels, CPU-only traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from artifacts.models import Artifact, TraceCollective, TraceKernelStat, TraceStep, TraceSummary
from artifacts.parsers.streams import open_decompressed
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest, artifact_request_parse
from artifacts.traces.parsers import torch_trace
from tests.samples import TESTS_DIR, all_samples, sample

pytestmark = pytest.mark.django_db

EXPECTED_DIR = TESTS_DIR / "expected" / "torch_trace"
# Both sample folders alike; the tar.gz of the 8 DLRM ranks is a bundle of traces, its
# members are the files beside it.
TORCH = [
    p for p in all_samples("torch_profiler", "**/*") if p.name != "param_dlrm_kineto_8rank.tar.gz"
]
CPU_ONLY = {
    "hta_cpu_only_gloo_rank34_world300.pt.trace.json.gz",
    "hta_no_distributedInfo_cpu_only.json.gz",
    "hta_cupti_profiler_counters.json.gz",
}
# HTA counts a CPU op as a kernel in this one
# (see tests/artifacts/traces/parsers/test_torch_trace.py)
HTA_DIFFERS = {"hta_triton_example.json.gz"}
NCCL = "torch_profiler/hta_nccl_data_world2_rank0.json.gz"


def load(path: Path, **kwargs: Any) -> Artifact:
    with path.open("rb") as stream:
        artifact = artifact_ingest(stream=stream, name=path.name, **kwargs).artifact
    return artifact_parse(artifact_id=artifact.pk)


def parse_file(path: Path) -> torch_trace.TorchTraceResult:
    with path.open("rb") as fh:
        return torch_trace.parse(open_decompressed(fh, compressed_size=path.stat().st_size))


def expected(path: Path) -> dict[str, Any]:
    return json.loads((EXPECTED_DIR / f"{path.name}.json").read_text())


@pytest.mark.parametrize("path", TORCH, ids=[p.name for p in TORCH])
def test_every_sample_loads_with_numbers_equal_to_hta(path: Path) -> None:
    artifact = load(path)
    assert artifact.status == Artifact.Status.PARSED, artifact.error
    assert artifact.kind == "torch_trace"
    trace = TraceSummary.objects.get(artifact=artifact)
    assert trace.pk == artifact.pk
    if path.name in CPU_ONLY:
        assert trace.cpu_only and trace.platform == "cpu" and trace.gpu_events == 0
        assert not trace.kernels.exists()
        return
    ref = expected(path)["temporal"]
    span = ref["kernel_time_us"]
    mine = {
        "kernel_time_us": trace.steps_span_us,
        "idle_time_us": trace.steps_idle_us,
        "compute_time_us": trace.steps_compute_us,
        "non_compute_time_us": trace.steps_non_compute_us,
    }
    if path.name in HTA_DIFFERS:
        assert trace.steps_span_us == 1.0
        return
    for key, value in ref.items():
        assert abs(mine[key] - value) <= 0.005 * span + 1e-9, (key, mine[key], value)
    # the whole-trace window partitions the span: idle + compute + non-compute
    parts = trace.idle_us + trace.compute_us + trace.non_compute_us
    assert parts == pytest.approx(trace.span_us, abs=0.01)


@pytest.mark.parametrize(
    "name",
    ["hta_gpu_user_annotation_step_based.json.gz", "hta_inference_rank_1_legacy_cats.json.gz"],
)
def test_stored_kernel_sums_equal_hta_where_the_windows_coincide(name: str) -> None:
    path = sample(f"torch_profiler/{name}")
    trace = load(path).trace
    assert trace.steps_filtered is False
    stored = {k.name: k for k in trace.kernels.all()}
    for row in expected(path)["kernels"]:
        kernel = stored[row["name"]]
        assert kernel.sum_us == pytest.approx(row["sum_us"], abs=0.01)
        assert kernel.min_us == pytest.approx(row["min_us"], abs=0.01)
        assert kernel.max_us == pytest.approx(row["max_us"], abs=0.01)


def test_rows_are_the_parsers_output_one_for_one() -> None:
    path = sample(NCCL)
    trace = load(path, host="node-a", label="exp-1").trace
    result = parse_file(path)
    kernels = list(trace.kernels.values_list("name", "kernel_type", "count", "sum_us", "max_us"))
    assert kernels == [
        (k["name"], k["type"], k["count"], k["sum_us"], k["max_us"]) for k in result.kernels
    ]
    steps = list(trace.steps.values_list("step", "start_us", "dur_us", "gpu_busy_us"))
    assert steps == [
        (s["step"], s["start_us"], s["dur_us"], s["gpu_busy_us"]) for s in result.steps
    ]
    collectives = list(
        trace.collectives.values_list("name", "dur_us", "size_bytes", "group_size", "busbw_gbps")
    )
    assert collectives == [
        (c["collective"], c["dur_us"], c["size_bytes"], c["group_size"], c["busbw_gbps"])
        for c in result.collectives
    ]
    b = result.breakdown
    assert (trace.span_us, trace.idle_us, trace.comm_us, trace.overlap_pct) == (
        b["kernel_time_us"],
        b["idle_time_us"],
        b["communication_time_us"],
        b["comm_comp_overlap_pct"],
    )
    assert (trace.rank, trace.world_size, trace.backend, trace.nccl_version) == (
        0,
        2,
        "nccl",
        "2.17.1",
    )
    assert trace.gpu == "NVIDIA A100-PG509-200" and trace.host == "node-a"
    assert trace.job_label == "exp-1"
    assert trace.launches == result.launch["launches"]
    assert trace.host_wait_us == result.idle["host_wait_us"]
    assert trace.collective_count == len(result.collectives)
    assert trace.recorded_at.year == 2024  # from baseTimeNanoseconds
    assert trace.extra["collectives_summary"] == result.collectives_summary
    assert trace.breakdown("steps")["span_us"] == result.breakdown_steps["kernel_time_us"]


def test_reparse_replaces_the_rows_and_keeps_the_trace_id() -> None:
    artifact = load(sample(NCCL))
    counts = (TraceKernelStat.objects.count(), TraceStep.objects.count())
    collectives = TraceCollective.objects.count()
    # scribble on the derived rows: a re-parse must put the parsed values back
    TraceKernelStat.objects.update(sum_us=-1.0)
    TraceSummary.objects.update(span_us=-1.0)
    TraceStep.objects.filter(index=0).delete()
    artifact_request_parse(artifact=artifact)
    artifact_parse(artifact_id=artifact.pk)
    assert TraceSummary.objects.count() == 1
    trace = TraceSummary.objects.get()
    assert trace.pk == artifact.pk and trace.span_us > 0
    assert (TraceKernelStat.objects.count(), TraceStep.objects.count()) == counts
    assert TraceCollective.objects.count() == collectives
    assert not TraceKernelStat.objects.filter(sum_us=-1.0).exists()


def test_job_label_comes_from_metadata_job_before_the_label() -> None:
    trace = load(sample(NCCL), label="nightly", metadata={"job": 4711}).trace
    assert trace.job_label == "4711"


def test_cpu_only_trace_is_stored_and_says_so() -> None:
    path = sample("torch_profiler/hta_cpu_only_gloo_rank34_world300.pt.trace.json.gz")
    artifact = load(path)
    trace = artifact.trace
    assert (trace.rank, trace.world_size, trace.backend) == (34, 300, "gloo")
    assert trace.cpu_only and trace.span_us == 0.0 and trace.compute_us is None
    assert any(w.startswith("CPU-only trace") for w in artifact.warnings)
