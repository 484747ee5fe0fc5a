"""Trace diff maths (artifacts.traces.analysis.diff): pure pandas, no database."""

from __future__ import annotations

import pandas as pd
import pytest

from artifacts.traces.analysis import diff as td


def kernels(rows: list[tuple[str, str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["name", "type", "count", "sum_us"])


A = kernels(
    [
        ("gemm", "compute", 10, 1000.0),
        ("nccl_allreduce", "communication", 2, 500.0),
        ("old_kernel", "compute", 1, 50.0),
        ("memcpy", "memory", 4, 20.0),
    ]
)
B = kernels(
    [
        ("gemm", "compute", 10, 1400.0),
        ("nccl_allreduce", "communication", 2, 300.0),
        ("new_kernel", "compute", 3, 90.0),
        ("memcpy", "memory", 4, 20.1),
    ]
)


def test_kernel_delta_orders_by_absolute_change_and_labels_it() -> None:
    delta = td.kernel_delta(A, B)
    assert list(delta["name"]) == ["gemm", "nccl_allreduce", "new_kernel", "old_kernel", "memcpy"]
    rows = delta.set_index("name")
    assert rows.loc["gemm", "delta_us"] == 400.0 and rows.loc["gemm", "delta_pct"] == 40.0
    assert rows.loc["gemm", "change"] == "slower"
    assert rows.loc["nccl_allreduce", "change"] == "faster"
    assert rows.loc["new_kernel", "change"] == "new" and rows.loc["new_kernel", "a_sum_us"] is None
    assert rows.loc["old_kernel", "change"] == "gone" and rows.loc["old_kernel", "delta_us"] == -50
    assert rows.loc["memcpy", "change"] == "same"  # 0.5 % is within 1 %
    assert td.kernel_delta(A, B, top=2)["name"].tolist() == ["gemm", "nccl_allreduce"]


def test_type_delta_sums_per_type() -> None:
    types = td.type_delta(A, B).set_index("type")
    assert types.loc["compute", "a_sum_us"] == 1050.0
    assert types.loc["compute", "b_sum_us"] == 1490.0
    assert types.loc["communication", "delta_us"] == -200.0
    assert types.loc["communication", "delta_pct"] == -40.0


def test_breakdown_delta_is_b_minus_a_relative_to_a() -> None:
    a = {"span_us": 1000.0, "idle_pct": 20.0, "compute_us": 0.0, "comm_us": None}
    b = {"span_us": 1100.0, "idle_pct": 25.0, "compute_us": 10.0, "comm_us": 5.0}
    rows = td.breakdown_delta(a, b).set_index("metric")
    assert rows.loc["span_us", "delta"] == 100.0 and rows.loc["span_us", "delta_pct"] == 10.0
    assert rows.loc["idle_pct", "delta"] == 5.0
    assert pd.isna(rows.loc["compute_us", "delta_pct"])  # relative to 0: undefined
    assert pd.isna(rows.loc["comm_us", "delta"])


def test_a_job_side_is_the_mean_rank_optionally_per_step() -> None:
    rank0 = kernels([("gemm", "compute", 10, 1000.0)])
    rank1 = kernels([("gemm", "compute", 20, 3000.0), ("extra", "compute", 2, 100.0)])
    mean = td.side_kernels([rank0, rank1]).set_index("name")
    assert mean.loc["gemm", "sum_us"] == 2000.0 and mean.loc["gemm", "count"] == 15.0
    assert mean.loc["extra", "sum_us"] == 50.0  # absent on rank 0 counts as 0
    per_step = td.side_kernels([rank0, rank1], step_counts=[2, 4]).set_index("name")
    assert per_step.loc["gemm", "sum_us"] == pytest.approx((500.0 + 750.0) / 2)

    rows = [
        {"span_us": 100.0, "idle_pct": 10.0, "step_count": 2, "step_median_us": 40.0},
        {"span_us": 300.0, "idle_pct": 30.0, "step_count": 3, "step_median_us": 60.0},
    ]
    assert td.side_breakdown(rows)["span_us"] == 200.0
    assert td.side_breakdown(rows)["idle_pct"] == 20.0
    per = td.side_breakdown(rows, per_step=True)
    assert per["span_us"] == 75.0  # (100/2 + 300/3) / 2
    assert per["idle_pct"] == 20.0 and per["step_median_us"] == 50.0  # not divided


def test_empty_sides() -> None:
    empty = kernels([])
    assert td.kernel_delta(empty, empty).empty
    assert td.kernel_delta(empty, B)["change"].tolist() == ["new"] * 4
    assert td.side_kernels([]).empty
