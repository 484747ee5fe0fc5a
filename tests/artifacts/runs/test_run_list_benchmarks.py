"""The run list is the benchmarks': runs derived from traces (step time, GPU idle) and
counters belong to their traces', jobs' and fabric pages."""

from __future__ import annotations

import pytest

from artifacts.models import BenchmarkRun
from tests.artifacts.jobs.evidence import nccl_tests_text, upload
from tests.samples import sample

pytestmark = pytest.mark.django_db


def test_trace_derived_runs_stay_out_of_the_run_list_unless_asked(viewer_client) -> None:
    upload(nccl_tests_text(["r1"]), "bench.txt", metadata={"captured_at": "2025-01-01T00:00:00Z"})
    trace = upload(
        sample("torch_profiler/hta_nccl_data_world2_rank0.json.gz").read_bytes(), "rank0.json.gz"
    )
    derived = BenchmarkRun.objects.filter(artifact=trace)
    assert {r.benchmark.split(":")[0] for r in derived} == {"torch-trace"}
    page = viewer_client.get("/runs/").content.decode()
    assert "bench.txt" in page or "all_reduce" in page
    assert not any(f'href="/runs/{r.pk}/"' in page for r in derived)
    listed = viewer_client.get("/runs/?derived=1").content.decode()
    assert all(f'href="/runs/{r.pk}/"' in listed for r in derived)
    api = viewer_client.get("/api/v1/runs/").json()
    assert {r["id"] for r in api["results"]}.isdisjoint({r.pk for r in derived})
