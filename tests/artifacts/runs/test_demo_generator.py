"""The demo-data generator: determinism, nccl-tests format fidelity and the physics behind it.

The generated text is read back here with a few regular expressions of our own, so these tests
do not depend on the production parser; the last test checks that parser against the demo files
once it exists.
"""

from __future__ import annotations

import io
import itertools
import re
import statistics
from dataclasses import dataclass

import pytest

from artifacts.runs.demo import (
    FAIL_AT_BYTES,
    FAILED_COLLECTIVE,
    FAILED_PROFILE,
    NEW_STACK,
    OLD_STACK,
    PROFILES,
    REGRESSION,
    SEMANTICS,
    DemoFile,
    _format_row,
    _Measure,
    _Row,
    bus_factor,
    demo_files,
)
from tests.samples import sample

FILES = demo_files()
BY_NAME = {f.name: f for f in FILES}
PROFILE_BY_SLUG = {p.slug: p for p in PROFILES}

DEVICE_RE = re.compile(r"^#  Rank +(\d+) Group +0 Pid +\d+ on +(\S+) device +(\d+) \[[0-9a-f:]+\] ")
ROW_RE = re.compile(
    r"^ *(\d+) +(\d+) +(\w+) +(\w+) +(-?\d+)"
    r" +([\d.]+) +([\d.]+) +([\d.]+) +(\d+|N/A)"
    r" +([\d.]+) +([\d.]+) +([\d.]+) +(\d+|N/A)$"
)
AVG_RE = re.compile(r"^# Avg bus bandwidth    : (\S+) $")


@dataclass
class Row:
    size: int
    count: int
    dtype: str
    redop: str
    root: int
    times: tuple[float, float]
    algbw: tuple[float, float]
    busbw: tuple[float, float]
    wrong: tuple[str, str]
    text: tuple[str, ...]  # the printed algbw/busbw columns, for rounding-aware comparisons


@dataclass
class Reading:
    lines: list[str]
    devices: list[tuple[int, str, int]]
    rows: list[Row]
    avg_busbw: float | None
    complete: bool


def read(demo: DemoFile) -> Reading:
    lines = demo.content.decode("ascii").splitlines()
    devices, rows, avg = [], [], None
    for line in lines:
        if m := DEVICE_RE.match(line):
            devices.append((int(m[1]), m[2], int(m[3])))
        elif m := ROW_RE.match(line):
            g = m.groups()
            rows.append(
                Row(
                    int(g[0]), int(g[1]), g[2], g[3], int(g[4]),
                    (float(g[5]), float(g[9])),
                    (float(g[6]), float(g[10])),
                    (float(g[7]), float(g[11])),
                    (g[8], g[12]),
                    (g[6], g[7], g[10], g[11]),
                )
            )  # fmt: skip
        elif m := AVG_RE.match(line):
            avg = float(m[1])
    complete = (
        bool(lines) and lines[-1] == "#" and lines[-2].startswith("# Collective test concluded: ")
    )
    return Reading(lines, devices, rows, avg, complete)


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _ids(files: list[DemoFile]) -> list[str]:
    return [f.name for f in files]


COMPLETE = [f for f in FILES if read(f).complete]


# --- determinism and size -------------------------------------------------------------------


def test_same_arguments_give_byte_identical_files():
    again = demo_files()
    assert [(f.name, f.content, f.label, f.host, f.metadata) for f in again] == [
        (f.name, f.content, f.label, f.host, f.metadata) for f in FILES
    ]
    assert demo_files(days=3, seed=11) == demo_files(days=3, seed=11)


def test_another_seed_changes_the_numbers_not_the_plan():
    other = demo_files(seed=8)
    assert [f.name for f in other] == [f.name for f in FILES]
    assert sum(a.content != b.content for a, b in zip(other, FILES, strict=True)) == len(FILES)


def test_default_history_is_modest_and_well_named():
    assert 30 <= len(FILES) <= 50
    assert len(BY_NAME) == len(FILES)
    for demo in FILES:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}_[a-z0-9-]+_[a-z_]+\.log", demo.name)
        assert 2_000 < len(demo.content) < 20_000
        assert demo.label in {"nightly", "sweep", "rerun"}
        assert demo.name.startswith(demo.metadata["day"])
        assert demo.host == PROFILE_BY_SLUG[demo.metadata["profile"]].hosts[0]


@pytest.mark.parametrize("days", [1, 2, 9])
def test_other_lengths_of_history(days):
    files = demo_files(days=days)
    assert len({f.metadata["day"] for f in files}) == days
    assert sum(not read(f).complete for f in files) == 1


def test_days_must_be_positive():
    with pytest.raises(ValueError):
        demo_files(days=0)


# --- format -----------------------------------------------------------------------------------


@pytest.mark.parametrize("demo", FILES, ids=_ids(FILES))
def test_header_lines_and_one_device_line_per_rank(demo):
    reading = read(demo)
    profile = PROFILE_BY_SLUG[demo.metadata["profile"]]
    collective = demo.metadata["collective"]
    lines = reading.lines
    assert re.fullmatch(
        r"# nccl-tests version 2\.17\.\d+ nccl-headers=(\d+) nccl-library=\1", lines[0]
    )
    assert lines[1] == f"# Collective test starting: {collective}_perf"
    assert re.fullmatch(
        r"# nThread 1 nGpus 1 minBytes \d+ maxBytes \d+ step: 2\(factor\) warmup iters: \d+ "
        r"iters: \d+ agg iters: 1 validation: 1 graph: 0",
        lines[2],
    )
    assert lines[3:5] == ["#", "# Using devices"]
    assert len(reading.devices) == profile.ranks
    assert [rank for rank, _, _ in reading.devices] == list(range(profile.ranks))
    expected_hosts = [h for h in profile.hosts for _ in range(profile.gpus_per_node)]
    assert [host for _, host, _ in reading.devices] == expected_hosts
    assert all(line.endswith(profile.gpu_name) for line in lines if DEVICE_RE.match(line))
    assert any("out-of-place" in line and "in-place" in line for line in lines)


@pytest.mark.parametrize("demo", FILES, ids=_ids(FILES))
def test_metadata_agrees_with_the_content(demo):
    meta = demo.metadata
    assert set(meta) >= {"profile", "cluster", "collective", "nccl", "day"}
    assert all(isinstance(v, str) for v in meta.values())
    major, minor, patch = (int(x) for x in meta["nccl"].split("."))
    assert f"nccl-library={major * 10000 + minor * 100 + patch}" in read(demo).lines[0]
    for line in read(demo).lines:
        if "NCCL version" in line:
            assert f"NCCL version {meta['nccl']}+cuda" in line


def test_some_files_carry_nccl_version_and_info_lines():
    texts = [f.content.decode() for f in FILES]
    assert any(re.search(r"^NCCL version 2\.\d+\.\d+\+cuda12\.\d$", t, re.M) for t in texts)
    assert any(re.search(r"^[\w-]+:\d+:\d+ \[\d\] NCCL INFO ", t, re.M) for t in texts)
    assert any("NCCL INFO" not in t and "NCCL version" not in t for t in texts)


def test_layout_matches_real_nccl_tests_output():
    """Our column header is byte-identical to a real 2.17 log's, and our row formatter
    reproduces every real row exactly from its own numbers."""
    real = sample("nccl_tests/xxrjun_singlenode_G8_h100.log").read_text().splitlines()
    start = next(i for i, line in enumerate(real) if "out-of-place" in line)
    header = real[start : start + 3]
    for demo in FILES:
        lines = read(demo).lines
        at = next(i for i, line in enumerate(lines) if "out-of-place" in line)
        assert lines[at : at + 3] == header
    checked = 0
    for line in real:
        if m := ROW_RE.match(line):
            g = m.groups()
            oop = _Measure(float(g[5]), float(g[6]), float(g[7]), g[8] != "N/A")
            inp = _Measure(float(g[9]), float(g[10]), float(g[11]), g[12] != "N/A")
            row = _Row(int(g[0]), int(g[1]), oop, inp)
            assert _format_row(row, g[2], g[3], int(g[4])) == line
            checked += 1
    assert checked >= 40


# --- physics ----------------------------------------------------------------------------------


@pytest.mark.parametrize("demo", FILES, ids=_ids(FILES))
def test_busbw_is_algbw_times_the_collective_factor(demo):
    profile = PROFILE_BY_SLUG[demo.metadata["profile"]]
    factor = bus_factor(demo.metadata["collective"], profile.ranks)
    rows = read(demo).rows
    assert rows
    for row in rows:
        for side in (0, 1):
            alg_text, bus_text = row.text[2 * side], row.text[2 * side + 1]
            # each printed value is rounded on its own: half a unit of the last digit each
            tolerance = 0.5 * 10 ** -_decimals(bus_text) + factor * 0.5 * 10 ** -_decimals(alg_text)
            assert abs(row.busbw[side] - row.algbw[side] * factor) <= tolerance + 1e-9
            assert row.algbw[side] == pytest.approx(
                row.size / (row.times[side] * 1e3), rel=2e-3, abs=0.006
            )


@pytest.mark.parametrize("demo", FILES, ids=_ids(FILES))
def test_rows_double_in_size_and_counts_follow_nccl_tests(demo):
    profile = PROFILE_BY_SLUG[demo.metadata["profile"]]
    semantics = SEMANTICS[demo.metadata["collective"]]
    rows = read(demo).rows
    sizes = [row.size for row in rows]
    assert all(b == 2 * a for a, b in itertools.pairwise(sizes))
    header_min = int(re.search(r"minBytes (\d+)", read(demo).lines[2])[1])
    assert sizes[0] == header_min
    per_element = 4  # every profile runs float
    for row in rows:
        assert row.dtype == profile.dtype == "float"
        expected = row.size // per_element
        if semantics.count_per_rank:
            expected //= profile.ranks
        assert row.count == expected > 0
        assert (row.redop, row.root) == (semantics.redop, semantics.root)
        assert row.wrong[0] == "0"
        assert row.wrong[1] == ("0" if semantics.in_place_checked else "N/A")


@pytest.mark.parametrize("demo", FILES, ids=_ids(FILES))
def test_latency_bound_small_messages_and_a_plateau_at_large_ones(demo):
    profile = PROFILE_BY_SLUG[demo.metadata["profile"]]
    model = profile.model(demo.metadata["collective"])
    reading = read(demo)
    rows = reading.rows
    if rows[0].size <= 64:
        assert 5 < rows[0].times[0] < 60
        assert rows[0].times[0] == pytest.approx(model.latency_us, rel=0.06)
    # in-place is measured separately: close to, but not the same as, out-of-place
    assert any(row.times[0] != row.times[1] for row in rows)
    assert all(abs(row.times[1] / row.times[0] - 1) < 0.03 for row in rows)
    if reading.complete:
        plateau = model.plateau_busbw
        if (profile.slug, demo.metadata["collective"], demo.metadata["nccl"]) == (
            REGRESSION.profile, REGRESSION.collective, REGRESSION.nccl,
        ):  # fmt: skip
            plateau *= 1 - REGRESSION.loss
        assert rows[-1].busbw[0] == pytest.approx(plateau, rel=0.05)
        # busbw grows with size (noise never reverses a doubling at these sizes)
        large = [row.busbw[0] for row in rows if row.size >= 1 << 20]
        assert all(b > a * 0.98 for a, b in itertools.pairwise(large))


@pytest.mark.parametrize("demo", COMPLETE, ids=_ids(COMPLETE))
def test_footer_average_is_nccl_tests_mean_over_both_columns(demo):
    reading = read(demo)
    values = [v for row in reading.rows for v in row.busbw]
    assert reading.avg_busbw == pytest.approx(statistics.fmean(values), abs=0.01)
    assert "# Out of bounds values : 0 OK" in reading.lines


# --- the history's deliberate events ------------------------------------------------------------


def _nightly_busbw(profile: str, nccl: str, *, min_size: int, max_size: int) -> float:
    values = [
        row.busbw[0]
        for demo in FILES
        if demo.metadata["profile"] == profile
        and demo.metadata["collective"] == "all_reduce"
        and demo.metadata["nccl"] == nccl
        and demo.label == "nightly"
        and read(demo).complete
        for row in read(demo).rows
        if min_size <= row.size <= max_size
    ]
    assert values, (profile, nccl)
    return statistics.fmean(values)


def test_history_spans_the_nccl_upgrade():
    versions = {(f.metadata["day"], f.metadata["nccl"]) for f in FILES}
    days_per_version = {
        v: sorted(d for d, n in versions if n == v) for v in (OLD_STACK.nccl, NEW_STACK.nccl)
    }
    assert len(days_per_version[OLD_STACK.nccl]) == 3
    assert len(days_per_version[NEW_STACK.nccl]) == 3
    assert days_per_version[OLD_STACK.nccl][-1] < days_per_version[NEW_STACK.nccl][0]


def test_the_deliberate_regression_is_there_and_only_there():
    big = {"min_size": 256 << 20, "max_size": 8 << 30}
    small = {"min_size": 0, "max_size": 16 << 20}
    regressed = REGRESSION.profile
    ratio = _nightly_busbw(regressed, NEW_STACK.nccl, **big) / _nightly_busbw(
        regressed, OLD_STACK.nccl, **big
    )
    assert 0.89 < ratio < 0.95  # ~8 % lower from 256 MB to 8 GB
    ratio_small = _nightly_busbw(regressed, NEW_STACK.nccl, **small) / _nightly_busbw(
        regressed, OLD_STACK.nccl, **small
    )
    assert 0.98 < ratio_small < 1.02  # small messages are untouched
    for profile in PROFILES:
        if profile.slug != regressed:
            ratio = _nightly_busbw(profile.slug, NEW_STACK.nccl, **big) / _nightly_busbw(
                profile.slug, OLD_STACK.nccl, **big
            )
            assert 0.98 < ratio < 1.02, profile.slug


def test_exactly_one_failed_run_without_footer():
    failed = [f for f in FILES if not read(f).complete]
    assert len(failed) == 1
    demo = failed[0]
    assert (demo.metadata["profile"], demo.metadata["collective"], demo.label) == (
        FAILED_PROFILE, FAILED_COLLECTIVE, "nightly",
    )  # fmt: skip
    text = demo.content.decode()
    assert "Test NCCL failure common.cu:1005 'unhandled system error" in text
    assert "# Out of bounds values" not in text
    assert "# Avg bus bandwidth" not in text
    assert "# Collective test concluded" not in text
    rows = read(demo).rows
    assert rows and rows[-1].size == FAIL_AT_BYTES // 2
    rerun = BY_NAME[demo.name.replace(".log", "_rerun.log")]
    assert rerun.label == "rerun" and read(rerun).complete


# --- the production parser ----------------------------------------------------------------------


@pytest.mark.parametrize("demo", FILES, ids=_ids(FILES))
def test_every_file_parses_with_the_nccl_tests_parser(demo):
    parser = pytest.importorskip("artifacts.runs.parsers.nccl_tests")
    result = parser.parse(io.BytesIO(demo.content))
    reading = read(demo)
    assert len(result.runs) == 1
    run = result.runs[0]
    profile = PROFILE_BY_SLUG[demo.metadata["profile"]]
    assert len(run.rows) == len(reading.rows)
    assert len(run.ranks) == run.nranks == profile.ranks
    assert run.hosts == profile.hosts
    assert run.complete is reading.complete
    # and the parser reads the same numbers we wrote
    assert run.collective == demo.metadata["collective"]
    assert run.nccl_version == demo.metadata["nccl"]
    assert [row.size_bytes for row in run.rows] == [row.size for row in reading.rows]
    assert [row.out_of_place.busbw_gbps for row in run.rows] == [
        row.busbw[0] for row in reading.rows
    ]
    assert run.avg_busbw_gbps == reading.avg_busbw
