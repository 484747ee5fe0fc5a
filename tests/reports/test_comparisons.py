"""reports.comparisons and reports.tables: pure pandas, no database."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from reports import comparisons as cmp
from reports.tables import Column, format_cell, freeze, records, thaw

MiB = 1024 * 1024


def runs_frame(rows):
    defaults = {
        "artifact_name": "f.log",
        "label": "",
        "nranks": 8,
        "dtype": "float",
        "nccl_version": "",
        "gpu": "H100",
    }
    return pd.DataFrame([{**defaults, **r} for r in rows], columns=list(cmp.RUN_COLUMNS))


def points_frame(rows):
    return pd.DataFrame(rows, columns=list(cmp.POINT_COLUMNS))


def test_sides_put_the_earliest_measured_side_first_whatever_the_input_order():
    runs = runs_frame(
        [
            {
                "run_id": 9,
                "artifact_id": 2,
                "collective": "all_reduce",
                "nccl_version": "2.23.4",
                "measured_at": pd.Timestamp("2025-11-06"),
            },
            {
                "run_id": 3,
                "artifact_id": 1,
                "collective": "all_reduce",
                "nccl_version": "2.21.5",
                "measured_at": pd.Timestamp("2025-11-03"),
            },
            {
                "run_id": 4,
                "artifact_id": 3,
                "collective": "all_reduce",
                "nccl_version": "2.21.5",
                "measured_at": pd.Timestamp("2025-11-04"),
            },
        ]
    )
    by_version = cmp.assign_sides(runs, "nccl_version")
    assert dict(zip(by_version.run_id, by_version.side_order, strict=True)) == {9: 1, 3: 0, 4: 0}
    pairs = cmp.comparison_pairs(by_version)
    assert pairs.to_dict("records") == [
        {"collective": "all_reduce", "reference": "2.21.5", "candidate": "2.23.4"}
    ]
    by_file = cmp.assign_sides(runs, "artifact")
    # Sides are named by what differs between the files (NCCL and day), not by their ids.
    assert sorted(by_file.side) == [
        "NCCL 2.21.5 · 2025-11-03", "NCCL 2.21.5 · 2025-11-04", "NCCL 2.23.4 · 2025-11-06"
    ]  # fmt: skip
    assert len(cmp.comparison_pairs(by_file)) == 2  # both later files against the first


def test_a_collective_on_one_side_only_makes_no_pair_and_bad_groupings_are_refused():
    runs = runs_frame(
        [
            {"run_id": 1, "artifact_id": 1, "collective": "all_reduce", "measured_at": 1},
            {"run_id": 2, "artifact_id": 2, "collective": "alltoall", "measured_at": 2},
        ]
    )
    assert cmp.comparison_pairs(cmp.assign_sides(runs, "artifact")).empty
    with pytest.raises(ValueError, match="unknown grouping 'host'"):
        cmp.assign_sides(runs, "host")


def fake_comparer(reference, candidate, tolerance_pct):
    """Stands in for baselines.curve_compare: Δ of means, ±1 % band, one range."""
    ref = reference.groupby("size_bytes")["value"].mean()
    cand = candidate.groupby("size_bytes")["value"].mean()
    per = pd.DataFrame({"reference": ref, "candidate": cand}).reset_index()
    per["delta_pct"] = 100 * (per.candidate / per.reference - 1)
    per["low_pct"], per["high_pct"] = per.delta_pct - 1, per.delta_pct + 1
    limit = tolerance_pct if tolerance_pct is not None else 3
    per["change"] = ["regressed" if d < -limit else "unchanged" for d in per.delta_pct]
    per["n_reference"] = reference.groupby("size_bytes").size().values
    per["n_candidate"] = candidate.groupby("size_bytes").size().values
    per["band"] = "fake"
    changed = per[per.change == "regressed"].size_bytes
    ranges = (
        (cmp.SizeRange(int(changed.min()), int(changed.max()), "regressed", "big -8%"),)
        if len(changed)
        else ()
    )
    return cmp.PairComparison(
        per_size=per,
        verdict="regressed" if ranges else "unchanged",
        ranges=ranges,
        method="fake",
        summary="regressed: big -8%" if ranges else "unchanged",
    )


def test_pair_comparisons_use_side_means_and_say_where_it_regressed():
    runs = runs_frame(
        [
            {
                "run_id": 1,
                "artifact_id": 1,
                "collective": "all_reduce",
                "nccl_version": "old",
                "measured_at": 1,
            },
            {
                "run_id": 2,
                "artifact_id": 2,
                "collective": "all_reduce",
                "nccl_version": "old",
                "measured_at": 2,
            },
            {
                "run_id": 3,
                "artifact_id": 3,
                "collective": "all_reduce",
                "nccl_version": "new",
                "measured_at": 3,
            },
        ]
    )
    points = points_frame(
        [
            (1, MiB, 100.0, 50.0, 10.0),
            (1, 256 * MiB, 300.0, 150.0, 900.0),
            (2, MiB, 102.0, 51.0, 9.8),
            (2, 256 * MiB, 302.0, 151.0, 890.0),
            (3, MiB, 101.0, 50.5, 9.9),
            (3, 256 * MiB, 277.0, 138.5, 970.0),
        ]
    )
    sided = cmp.assign_sides(runs, "nccl_version")
    curves = cmp.curve_points(sided, points)
    deltas, verdicts = cmp.pair_comparisons(curves, cmp.comparison_pairs(sided), fake_comparer)
    big = deltas[deltas.size_bytes == 256 * MiB].iloc[0]
    assert big.reference_busbw_gbps == 301.0  # mean of 300 and 302
    assert (big.n_reference, big.n_candidate, big.band) == (2, 1, "fake")
    assert big.delta_pct == pytest.approx(100 * (277 / 301 - 1))
    assert big["change"] == "regressed" and big["size"] == "256 MiB"
    verdict = verdicts.iloc[0]
    assert verdict.verdict == "regressed" and verdict.regressed_ranges == "big -8%"
    assert verdict.regressed_spans == [[256 * MiB, 256 * MiB]] and verdict.improved_spans == []
    assert verdict.line == "all_reduce: new vs old: regressed: big -8%"
    means = cmp.side_curves(curves)
    old_1mib = means[(means.side == "old") & (means.size_bytes == MiB)]
    assert (old_1mib.runs.item(), old_1mib.busbw_gbps.item()) == (2, 101.0)
    # a pair's own tolerance (a baseline's) reaches the method
    pairs = cmp.comparison_pairs(sided).assign(tolerance_pct=10.0)
    _, lenient = cmp.pair_comparisons(curves, pairs, fake_comparer)
    assert lenient.iloc[0].verdict == "unchanged"


def test_profile_ratios_pair_equal_rank_counts_else_the_largest_and_summarise_by_geomean():
    runs_a = pd.DataFrame(
        [
            (1, "all_reduce", "float", 8),
            (2, "all_reduce", "float", 16),
            (3, "alltoall", "float", 8),
        ],
        columns=list(cmp.PROFILE_RUN_COLUMNS),
    )
    runs_b = pd.DataFrame(
        [
            (7, "all_reduce", "float", 16),
            (8, "alltoall", "float", 32),
            (9, "broadcast", "float", 8),
        ],
        columns=list(cmp.PROFILE_RUN_COLUMNS),
    )
    matched = cmp.matched_benchmarks(runs_a, runs_b)
    assert matched.to_dict("records") == [
        {"collective": "all_reduce", "dtype": "float", "nranks_a": 16, "nranks_b": 16},
        {"collective": "alltoall", "dtype": "float", "nranks_a": 8, "nranks_b": 32},
    ]
    points_a = points_frame(
        [
            (2, 1024, 10.0, 5, 1),
            (2, 32 * MiB, 200.0, 100, 1),
            (2, 64 * MiB, 200.0, 100, 1),
            (3, 32 * MiB, 40.0, 20, 1),
        ]
    )
    points_b = points_frame(
        [
            (7, 1024, 5.0, 2.5, 1),
            (7, 32 * MiB, 400.0, 200, 1),
            (7, 64 * MiB, 100.0, 50, 1),
            (8, 32 * MiB, 80.0, 40, 1),
        ]
    )
    per_size = cmp.profile_size_ratios(runs_a, points_a, runs_b, points_b)
    assert list(per_size.ratio) == [0.5, 2.0, 0.5, 2.0]
    summary = cmp.profile_ratio_summary(per_size)
    large = summary[
        (summary.collective == "all_reduce") & (summary.size_range == "large (>= 16 MiB)")
    ]
    # 2x and 0.5x average to 1x geometrically (not 1.25x)
    assert large.ratio_geomean.item() == pytest.approx(1.0)
    assert (large.sizes.item(), large.from_size.item(), large.to_size.item()) == (
        2,
        "32 MiB",
        "64 MiB",
    )
    assert list(summary.size_range[summary.collective == "all_reduce"]) == [
        "small (< 64 KiB)",
        "large (>= 16 MiB)",
    ]


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (0, "small (< 64 KiB)"),
        (64 * 1024 - 1, "small (< 64 KiB)"),
        (64 * 1024, "medium (64 KiB - 16 MiB)"),
        (16 * MiB, "large (>= 16 MiB)"),
    ],
)
def test_size_ranges_have_sharp_edges(size, expected):
    assert cmp.size_range(size) == expected


def test_tables_round_once_and_print_the_same_text_everywhere():
    frame = pd.DataFrame(
        {"size_bytes": [1024], "v": [12.3456], "d": [-7.891], "n": [math.nan], "t": ["x"]}
    )
    columns = [
        Column("size_bytes", "size", "bytes"),
        Column("v", "value", "number", 2),
        Column("d", "Δ", "percent", 1),
        Column("n", "none", "number"),
        Column("t", "text"),
    ]
    table = freeze(frame, name="t", title="T", columns=columns)
    assert table["rows"] == [[1024, 12.35, -7.9, None, "x"]]
    assert [format_cell(v, c) for v, c in zip(table["rows"][0], table["columns"], strict=True)] == [
        "1 KiB",
        "12.35",
        "-7.9",
        "",
        "x",
    ]
    assert format_cell(7.91, {"format": "percent", "decimals": 2}) == "+7.91"
    # a share of a whole (% of peak) has no sign: "+107.2" reads as a gain
    assert format_cell(107.24, {"format": "share", "decimals": 1}) == "107.2"
    assert records(table) == [{"size_bytes": 1024, "v": 12.35, "d": -7.9, "n": None, "t": "x"}]
    assert list(thaw(table).columns) == ["size_bytes", "v", "d", "n", "t"]
    with pytest.raises(KeyError, match="lacks columns"):
        freeze(frame, name="t", title="T", columns=[Column("nope", "x")])


def test_file_sides_are_named_by_what_differs_and_stay_distinct():
    base = {"collective": "all_reduce", "measured_at": pd.Timestamp("2026-11-30 22:00")}
    runs = runs_frame(
        [
            {**base, "run_id": 1, "artifact_id": 29, "label": "nightly", "gpu": "H100"},
            {**base, "run_id": 2, "artifact_id": 45, "label": "newcomer", "gpu": "H100"},
            {**base, "run_id": 3, "artifact_id": 46, "label": "newcomer", "gpu": "H100"},
        ]
    )
    runs["profile"] = ["h100-ib", "h100-ib", "h100-ib"]
    runs["stack"] = ["NCCL 2.21.5", "NCCL 2.23.4", "NCCL 2.23.4"]
    names = cmp.artifact_side_names(runs)
    # Profile, GPU and day are shared: only the stack and label name the sides; two files
    # alike in everything keep their ids so the sides stay apart.
    assert names == {
        29: "NCCL 2.21.5 · nightly",
        45: "NCCL 2.23.4 · newcomer (#45)",
        46: "NCCL 2.23.4 · newcomer (#46)",
    }
    assert cmp.artifact_side_names(runs.iloc[:1]) == {29: "#29 nightly"}  # one file: its id
