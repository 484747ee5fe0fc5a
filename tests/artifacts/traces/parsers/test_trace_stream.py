"""Bounded-memory trace analyses: spill tables, the distribution sort, and the incremental
accumulators, each checked against the whole-array functions of trace_breakdown (which the
HTA-agreement tests pin down) on random inputs cut into random chunks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artifacts.traces.analysis import breakdown as tb
from artifacts.traces.analysis import stream as ts_
from artifacts.traces.parsers import spill

_REC = np.dtype([("key", "f8"), ("seq", "i8")])


@pytest.fixture
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(spill, "CHUNK_ROWS", 50)
    return 50


def _records(keys: list[float], start: int = 0) -> np.ndarray:
    rec = np.empty(len(keys), _REC)
    rec["key"] = keys
    rec["seq"] = np.arange(start, start + len(keys))
    return rec


def _table(keys: list[float], batch: int) -> spill.SpillTable:
    table = spill.SpillTable(_REC, sample=("key",))
    for i in range(0, len(keys), batch):
        table.append(_records(keys[i : i + batch], i))
    return table


@given(
    keys=st.lists(st.integers(-20, 20).map(float), max_size=600),
    batch=st.integers(1, 120),
)
@settings(max_examples=60, deadline=None)
def test_co_sorted_is_a_stable_sort_in_bounded_buckets(keys: list[float], batch: int) -> None:
    old = spill.CHUNK_ROWS
    spill.CHUNK_ROWS = 40
    try:
        table = _table(keys, batch)
        assert table.rows == len(keys)
        assert [r["seq"] for r in table.array()] == list(range(len(keys)))  # append order
        buckets = [b for (b,) in spill.co_sorted([table], "key")]
        table.close()
    finally:
        spill.CHUNK_ROWS = old
    out = np.concatenate(buckets) if buckets else np.empty(0, _REC)
    expected = sorted(range(len(keys)), key=lambda i: (keys[i], i))
    assert out["seq"].tolist() == expected
    for a, b in itertools.pairwise(buckets):
        assert a["key"].max() < b["key"].min()  # equal keys never straddle two buckets


def test_spilled_tables_go_to_disk_and_buckets_stay_small(tiny_chunks: int) -> None:
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 10**6, 5000).astype(float).tolist()
    table = _table(keys, 37)
    assert table.spilled
    sizes = [b.size for (b,) in spill.co_sorted([table], "key")]
    assert sum(sizes) == 5000 and len(sizes) > 50
    assert max(sizes) <= 2 * tiny_chunks  # sampling error aside, about CHUNK_ROWS / 2 each
    table.close()


def test_co_partitioned_tables_can_be_joined_bucket_by_bucket(tiny_chunks: int) -> None:
    left = _table([float(k % 997) for k in range(3000)], 64)
    right = _table([float(k) for k in range(997)], 10)
    matched = 0
    for a, b in spill.co_sorted([left, right], "key"):
        # every key of the left side finds its partner in the same bucket
        assert np.isin(a["key"], b["key"]).all()
        matched += a.size
    assert matched == 3000


_INTERVALS = st.lists(
    st.tuples(st.integers(0, 400), st.integers(-3, 40), st.sampled_from([0, 1, 2, 3])),
    min_size=1,
    max_size=80,
)


def _sorted_intervals(items: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    items = sorted(items, key=lambda x: x[0])
    ts = np.array([float(t) for t, _, _ in items])
    end = ts + np.array([float(d) for _, d, _ in items])  # negative: HTA's rounded events
    return ts, end, np.array([k for _, _, k in items], np.int8)


def _cuts(n: int, data: st.DataObject) -> list[tuple[int, int]]:
    points = sorted(set(data.draw(st.lists(st.integers(0, n), max_size=6))) | {0, n})
    return list(itertools.pairwise(points))


@given(items=_INTERVALS, data=st.data())
@settings(max_examples=80, deadline=None)
def test_temporal_accumulator_equals_the_whole_array_breakdown(
    items: list, data: st.DataObject
) -> None:
    ts, end, types = _sorted_intervals(items)
    acc = ts_.Temporal("x")
    for lo, hi in _cuts(ts.size, data):
        acc.add(ts[lo:hi], end[lo:hi], types[lo:hi])
    mine, ref = acc.breakdown(), tb.temporal_breakdown(ts, end, types, window="x")
    assert mine.keys() == ref.keys()
    for key, value in ref.items():
        assert mine[key] == pytest.approx(value, abs=2e-3), key
    expected = {r["type"]: r["sum_us"] for r in tb.kernel_type_overlap(ts, end, types)}
    got = {r["type"]: r["sum_us"] for r in acc.kernel_types()}
    assert got == pytest.approx({k: v for k, v in expected.items() if v > 0}, abs=2e-3)


@given(
    rows=st.lists(
        st.tuples(st.integers(0, 5), st.floats(0, 1e4, allow_nan=False)), min_size=1, max_size=60
    ),
    data=st.data(),
)
@settings(max_examples=60, deadline=None)
def test_kernel_accumulator_equals_the_kernel_table(rows: list, data: st.DataObject) -> None:
    ids = np.array([r[0] for r in rows], np.int32)
    dur = np.array([r[1] for r in rows])
    names = [f"k{i}" for i in range(6)]
    types = np.array([0, 1, 2, 3, 0, 0], np.int8)
    acc = ts_.Kernels(6)
    for lo, hi in _cuts(ids.size, data):
        acc.add(ids[lo:hi], dur[lo:hi], types[ids[lo:hi]])
    mine = acc.table(names, types)
    ref = tb.kernel_table(ids, dur, names, types)
    assert sorted(r["name"] for r in mine) == sorted(r["name"] for r in ref)
    by_name = {r["name"]: r for r in mine}
    for row in ref:
        for key, value in row.items():
            if isinstance(value, str):
                assert by_name[row["name"]][key] == value
            else:
                assert by_name[row["name"]][key] == pytest.approx(value, abs=2e-3), key
    totals = {r["type"]: r for r in acc.type_totals()}
    for row in tb.kernel_type_totals(types[ids], dur):
        assert totals[row["type"]]["count"] == row["count"]
        assert totals[row["type"]]["sum_us"] == pytest.approx(row["sum_us"], abs=2e-3)


@given(
    rows=st.lists(
        st.tuples(st.integers(0, 300), st.integers(0, 30), st.integers(0, 2), st.integers(-5, 300)),
        min_size=1,
        max_size=60,
    ),
    data=st.data(),
)
@settings(max_examples=60, deadline=None)
def test_idle_and_step_accumulators_equal_the_whole_array_versions(
    rows: list, data: st.DataObject
) -> None:
    rows = sorted(rows, key=lambda r: r[0])
    ts = np.array([float(r[0]) for r in rows])
    end = ts + np.array([float(r[1]) for r in rows])
    stream = np.array([r[2] for r in rows])
    launch = np.array([float(r[3]) if r[3] >= 0 else np.nan for r in rows])
    types = (stream % 2).astype(np.int8)
    starts, ends = np.array([0.0, 100.0, 200.0]), np.array([90.0, 180.0, 260.0])
    idle, steps = ts_.Idle(), ts_.Steps(starts, ends)
    for lo, hi in _cuts(ts.size, data):
        idle.add(ts[lo:hi], end[lo:hi], stream[lo:hi], launch[lo:hi])
        steps.add(ts[lo:hi], end[lo:hi], types[lo:hi], launch[lo:hi])
    ref = tb.idle_breakdown(ts, end, stream, launch)
    mine = idle.result()
    for key in ("host_wait_us", "kernel_wait_us", "other_us"):
        assert mine[key] == pytest.approx(ref[key], abs=2e-3)
    assert [s["events"] for s in mine["streams"]] == [s["events"] for s in ref["streams"]]
    ref_steps = tb.per_step_gpu(starts, ends, ts, end, types, launch)
    assert steps.rows() == ref_steps  # integer times: exact


def test_launch_percentiles_are_exact_when_spilled(tiny_chunks: int) -> None:
    rng = np.random.default_rng(3)
    n = 2001
    cpu_ts = rng.uniform(0, 1e6, n)
    cpu_dur = rng.exponential(10, n)
    gpu_ts = cpu_ts + cpu_dur + rng.exponential(50, n)
    gpu_dur = rng.exponential(20, n)
    acc = ts_.Launches()
    for lo in range(0, n, 97):
        acc.add(
            cpu_ts[lo : lo + 97], cpu_dur[lo : lo + 97], gpu_ts[lo : lo + 97], gpu_dur[lo : lo + 97]
        )
    assert acc.values["delay"].spilled
    mine = acc.result()
    ref = tb.launch_stats(cpu_ts, cpu_dur, gpu_ts, gpu_dur)
    for key, value in ref.items():
        if isinstance(value, dict):
            assert mine[key] == pytest.approx(value, abs=2e-3), key
        else:
            assert mine[key] == value, key
