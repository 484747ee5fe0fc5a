"""Straggler detection (artifacts.traces.analysis.stragglers): robust statistics and constructed
rank sets with one slow rank. Pure: no database."""

from __future__ import annotations

import pytest

from artifacts.traces.analysis import stragglers as st


def steps(durations: list[float], *, compute: float | None = None, first: int = 1) -> list:
    out, t = [], 0.0
    for i, dur in enumerate(durations):
        out.append(st.Step(first + i, t, dur, compute))
        t += dur
    return out


def calls(durations: list[float], *, group: str = "0", name: str = "allreduce") -> list:
    return [st.CollectiveCall(group, name, 1000.0 * i, d) for i, d in enumerate(durations)]


def rank(r: int, **kwargs) -> st.RankInput:  # type: ignore[no-untyped-def]
    return st.RankInput(key=str(100 + r), rank=r, host=f"node-{r // 4}", **kwargs)


# ---------------------------------------------------------------------------------------
# Robust statistics
# ---------------------------------------------------------------------------------------


def test_modified_z_scores_use_median_and_mad() -> None:
    values = {"a": 10.0, "b": 11.0, "c": 12.0, "d": 13.0, "e": 40.0}
    scores = st.robust_scores(values)
    # median 12, MAD = median(|-2|,|-1|,0,1,28) = 1 -> scale 1.4826
    assert scores["c"] == 0.0
    assert scores["e"] == pytest.approx(28 / 1.4826)
    assert scores["a"] == pytest.approx(-2 / 1.4826)


def test_zero_mad_falls_back_to_the_mean_absolute_deviation() -> None:
    values = {str(i): 100.0 for i in range(7)} | {"slow": 150.0}
    scores = st.robust_scores(values)
    mean_ad = 50.0 / 8
    assert scores["slow"] == pytest.approx(50.0 / (1.253314 * mean_ad))
    assert st.high_outliers(values) == {"slow": pytest.approx(scores["slow"])}


def test_a_scale_floor_keeps_identical_ranks_from_hiding_an_outlier() -> None:
    # one node of 4 GPUs, three identical to the microsecond: the mean-AD fallback alone
    # caps the score at n / 1.2533 = 3.2 and would never flag the slow one
    values = {"a": 4000.0, "b": 4000.0, "c": 4000.0, "d": 6400.0}
    assert st.high_outliers(values) == {}
    flagged = st.high_outliers(values, floor=40.0, min_deviation=200.0)
    assert flagged == {"d": pytest.approx(2400.0 / 40.0)}
    assert st.robust_scores(values, floor=40.0)["a"] == 0.0


def test_a_four_rank_job_with_one_slow_gpu() -> None:
    analysis = st.analyse_job(synchronous_job(4, slow=2, factor=1.2))
    assert {(s.rank, s.signal) for s in analysis.stragglers} == {
        (2, st.STEP_COMPUTE),
        (2, st.LATENESS),
    }


def test_identical_values_have_no_scores_and_no_outliers() -> None:
    values = dict.fromkeys("abcd", 5.0)
    assert set(st.robust_scores(values).values()) == {None}
    assert st.high_outliers(values) == {}


def test_small_deviations_are_not_outliers_even_with_a_tiny_mad() -> None:
    values = {"a": 1000.0, "b": 1000.1, "c": 1000.2, "d": 1003.0}  # 0.3 % slower
    assert st.robust_scores(values)["d"] > st.MODIFIED_Z_THRESHOLD
    assert st.high_outliers(values, min_deviation=0.05 * 1000.0) == {}


def test_fast_ranks_are_not_stragglers_and_two_ranks_cannot_tell() -> None:
    assert st.high_outliers({"a": 100.0, "b": 100.0, "c": 100.0, "d": 10.0}) == {}
    assert st.high_outliers({"a": 100.0, "b": 300.0}) == {}


# ---------------------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------------------


def synchronous_job(world: int, slow: int | None, factor: float = 1.5) -> list[st.RankInput]:
    """Every rank computes for 4 ms per step (the slow one longer), then all-reduces; all
    leave the all-reduce when the slowest arrives + 0.5 ms."""
    compute = {r: 4000.0 * (factor if r == slow else 1.0) for r in range(world)}
    slowest = max(compute.values())
    return [
        rank(
            r,
            steps=steps([10_000.0] * 5, compute=compute[r]),
            collectives=calls([slowest - compute[r] + 500.0] * 5),
        )
        for r in range(world)
    ]


def test_the_slow_rank_is_named_with_host_and_rank() -> None:
    analysis = st.analyse_job(synchronous_job(8, slow=5))
    flagged = {(s.rank, s.signal) for s in analysis.stragglers}
    assert flagged == {(5, st.STEP_COMPUTE), (5, st.LATENESS)}
    compute = next(s for s in analysis.stragglers if s.signal == st.STEP_COMPUTE)
    assert compute.host == "node-1" and compute.key == "105"
    assert compute.value_us == 6000.0 and compute.median_us == 4000.0
    assert compute.deviation_pct == 50.0
    assert compute.message.startswith("rank 5 on node-1: median GPU compute per step 6.00 ms")
    row = next(r for r in analysis.ranks if r.rank == 5)
    assert row.straggler and row.lateness_us == 2000.0 and row.comm_wait_us == 0.0
    # everybody else waited 2 ms in each of the 5 all-reduces for rank 5
    others = [r for r in analysis.ranks if r.rank != 5]
    assert {r.comm_wait_us for r in others} == {5 * 2000.0}
    assert {r.lateness_us for r in others} == {0.0} and not any(r.straggler for r in others)
    assert analysis.matched_collectives == 5


def test_a_healthy_job_has_no_stragglers() -> None:
    analysis = st.analyse_job(synchronous_job(8, slow=None))
    assert analysis.stragglers == [] and analysis.notes == []
    assert all(r.comm_wait_us == 0.0 for r in analysis.ranks)


def test_a_long_host_step_is_a_step_time_straggler() -> None:
    ranks = [rank(r, steps=steps([10_000.0] * 4)) for r in range(5)]
    ranks.append(rank(5, steps=steps([13_000.0] * 4)))
    analysis = st.analyse_job(ranks)
    assert [(s.rank, s.signal) for s in analysis.stragglers] == [(5, st.STEP_TIME)]


def test_ranks_with_different_profiled_steps_are_compared_on_the_shared_ones() -> None:
    ranks = [rank(r, steps=steps([10_000.0] * 4, first=1)) for r in range(3)]
    # rank 3 profiled steps 3..6: only 3 and 4 are shared; its steps 5, 6 are slow
    ranks.append(rank(3, steps=steps([10_000.0, 10_000.0, 30_000.0, 30_000.0], first=3)))
    analysis = st.analyse_job(ranks)
    assert analysis.common_steps == [3, 4]
    assert analysis.stragglers == []
    assert any("comparing the 2 they share" in n for n in analysis.notes)
    assert {r.steps for r in analysis.ranks} == {2}


def test_collectives_are_matched_per_group_and_order() -> None:
    ranks = [
        rank(0, collectives=calls([10.0, 20.0], group="0") + calls([5.0], group="1")),
        rank(1, collectives=calls([30.0, 20.0], group="0")),
        rank(2, collectives=calls([10.0, 50.0], group="0")),
    ]
    analysis = st.analyse_job(ranks)
    assert analysis.matched_collectives == 2  # group 1 exists on rank 0 only
    waits = {r.rank: r.comm_wait_us for r in analysis.ranks}
    # call 0: durations 10, 30, 10 -> waits 0, 20, 0; call 1: 20, 20, 50 -> 0, 0, 30
    assert waits == {0: 0.0, 1: 20.0, 2: 30.0}
    assert any("not on every rank" in n for n in analysis.notes)


def test_two_ranks_get_numbers_but_a_note_instead_of_a_verdict() -> None:
    analysis = st.analyse_job(synchronous_job(2, slow=1, factor=3.0))
    assert analysis.stragglers == []
    assert any("at least 3" in n for n in analysis.notes)
    assert {r.rank: r.lateness_us for r in analysis.ranks} == {0: 0.0, 1: 8000.0}


def test_duplicate_ranks_are_reported() -> None:
    ranks = [*synchronous_job(4, slow=None), rank(2, steps=steps([10_000.0]))]
    analysis = st.analyse_job(ranks)
    assert any("rank(s) 2 appear more than once" in n for n in analysis.notes)


def test_traces_without_steps_or_collectives_are_fine() -> None:
    analysis = st.analyse_job([rank(r) for r in range(4)])
    assert analysis.stragglers == [] and analysis.matched_collectives == 0
    assert all(r.step_time_us is None and r.lateness_us is None for r in analysis.ranks)


def test_format_us() -> None:
    assert st.format_us(12.34) == "12.3 µs"
    assert st.format_us(4567.0) == "4.57 ms"
    assert st.format_us(1_230_000.0) == "1.23 s"
