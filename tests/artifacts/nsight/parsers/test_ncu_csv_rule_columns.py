"""ncu_csv: the details page of Nsight Compute 2024.x/2025.x, whose metric rows stop before
the trailing rule columns (``Rule Name, Rule Type, Rule Description, Estimated Speedup Type,
Estimated Speedup``) while rule rows run the header's full width with empty metric cells.

The fixture tests/fixtures/ncu/ncu_2025_blackwell_details_short_metric_rows.csv was written
by hand from that documented column layout (its comment lines say what it reproduces); the
expected values below were read off the fixture, not from the parser. Before this layout
was understood, the same file gave three kernels without a single metric.
"""

from __future__ import annotations

import contextlib
import csv
import io
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.nsight.parsers.ncu import csv as ncu_csv
from artifacts.nsight.parsers.ncu.common import NcuKernel
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError

FIXTURE = (
    Path(__file__).resolve().parents[3]
    / "fixtures"
    / "ncu"
    / "ncu_2025_blackwell_details_short_metric_rows.csv"
)
TEXT = FIXTURE.read_text()
LINES = TEXT.splitlines()
HEADER_AT = next(i for i, line in enumerate(LINES) if line.startswith('"ID",'))
PREAMBLE, HEADER, ROWS = LINES[:HEADER_AT], LINES[HEADER_AT], LINES[HEADER_AT + 1 :]
WIDTH = len(next(csv.reader([HEADER])))


def parse_text(text: str) -> ncu_csv.NcuCsvResult:
    return ncu_csv.parse(io.BytesIO(text.encode()))


def facts(kernel: NcuKernel) -> tuple:
    """What must not depend on row order: identity, key metrics, the metric and rule sets."""
    return (
        kernel.id,
        kernel.name,
        kernel.grid,
        kernel.block,
        kernel.duration_ns,
        kernel.sm_throughput_pct,
        kernel.memory_throughput_pct,
        kernel.dram_throughput_pct,
        kernel.achieved_occupancy_pct,
        kernel.registers_per_thread,
        frozenset(kernel.metrics),
        frozenset(kernel.rules),
    )


def test_the_fixture_has_the_new_layout() -> None:
    # The layout under test, checked on the file itself so the fixture cannot drift.
    assert next(csv.reader([HEADER]))[-5:] == [
        "Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup",
    ]  # fmt: skip
    widths = {len(next(csv.reader([row]))) for row in ROWS}
    assert widths == {WIDTH - 5, WIDTH}


def test_detected_as_ncu_csv() -> None:
    head = FIXTURE.read_bytes()[:65536]
    assert detect_kind(FIXTURE.name, head) == "ncu_csv"
    assert detect_kind("upload.bin", head) == "ncu_csv"


def test_every_metric_of_the_short_rows_is_read() -> None:
    result = ncu_csv.parse(FIXTURE.open("rb"))
    assert result.page == "details" and result.warnings == ()
    gemm, add, nccl = result.kernels
    assert [k.id for k in result.kernels] == [0, 1, 2]
    assert gemm.name == (
        "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, "
        "int, int>, cutlass::bfloat16_t, void>>(T1::Params)"
    )  # commas inside a quoted cell
    assert (gemm.process_id, gemm.host, gemm.device, gemm.cc) == (
        "183406", "127.0.0.1", "0", "10.0",
    )  # fmt: skip
    assert (gemm.grid, gemm.block) == ("(148, 1, 1)", "(384, 1, 1)")
    # 10 Speed Of Light + 11 Launch Statistics + 4 Occupancy metric rows per kernel
    assert [len(k.metrics) for k in result.kernels] == [25, 25, 25]
    assert gemm.duration_ns == pytest.approx(617_410)  # "617.41" us
    assert (gemm.sm_throughput_pct, gemm.memory_throughput_pct, gemm.dram_throughput_pct) == (
        87.93, 62.18, 41.07,
    )  # fmt: skip
    assert (gemm.achieved_occupancy_pct, gemm.registers_per_thread) == (18.42, 168)
    cycles = next(m for m in gemm.metrics if m.name == "Elapsed Cycles")
    assert (cycles.section, cycles.unit, cycles.value) == (
        "GPU Speed Of Light Throughput", "cycle", 1_187_204,
    )  # fmt: skip
    policy = next(m for m in gemm.metrics if m.name == "Cluster Scheduling Policy")
    assert policy.value == "Spread"  # text values stay text
    assert add.duration_ns == pytest.approx(7_780) and add.achieved_occupancy_pct == 78.64
    threads = next(m for m in add.metrics if m.name == "Threads")
    assert threads.value == 1_048_576  # "1,048,576"
    assert nccl.duration_ns == pytest.approx(1_250_000)  # "1.25" ms: units per row
    assert result.summary()["rules"] == 7


def test_rule_rows_become_the_kernels_rule_messages() -> None:
    gemm, add, nccl = ncu_csv.parse(FIXTURE.open("rb")).kernels
    bottleneck, roofline, occupancy = gemm.rules
    assert (bottleneck.section, bottleneck.name, bottleneck.type) == (
        "GPU Speed Of Light Throughput", "SOLBottleneck", "OPT",
    )  # fmt: skip
    assert (bottleneck.speedup_type, bottleneck.speedup_pct) == ("global", 12.07)
    # a quoted description with commas and doubled quotes comes back whole
    assert 'Compute Workload Analysis section, and the "Tensor Core" pipe utilization,' in (
        bottleneck.description
    )
    # INF rules print an empty "Estimated Speedup Type" and "Estimated Speedup"
    assert (roofline.type, roofline.speedup_type, roofline.speedup_pct) == ("INF", None, None)
    assert (occupancy.section, occupancy.speedup_type, occupancy.speedup_pct) == (
        "Occupancy", "local", 1.74,
    )  # fmt: skip
    assert [(r.name, r.speedup_pct) for r in add.rules] == [
        ("SOLBottleneck", None), ("AchievedOccupancy", 21.36),
    ]  # fmt: skip
    launch, small_grid = nccl.rules
    assert (launch.section, launch.type, launch.speedup_pct) == ("Launch Statistics", "WRN", 89.19)
    assert "less than the GPU's 148 multiprocessors" in launch.description
    # an OPT rule whose speedup ncu left empty
    assert (small_grid.type, small_grid.speedup_type, small_grid.speedup_pct) == (
        "OPT", "global", None,
    )  # fmt: skip
    # rule rows carry no metric: no empty-named metric was made from them
    assert all(m.name for k in (gemm, add, nccl) for m in k.metrics)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_rows_in_any_order_give_the_same_kernels(seed: int) -> None:
    expected = [facts(k) for k in parse_text(TEXT).kernels]
    rows = list(ROWS)
    random.Random(seed).shuffle(rows)  # rule rows before metric rows, kernels interleaved
    shuffled = parse_text("\n".join([*PREAMBLE, HEADER, *rows]))
    assert [facts(k) for k in shuffled.kernels] == expected
    assert shuffled.warnings == ()


def test_estimated_speedup_cells_left_off_a_rule_row() -> None:
    # A rule row that, like a metric row, ends early: after "Rule Description".
    rule = next(row for row in ROWS if ',"SOLFPRoofline","INF",' in row)
    cut = rule.removesuffix(',"",""')
    assert len(next(csv.reader([cut]))) == WIDTH - 2
    gemm = parse_text("\n".join([HEADER, *(cut if r == rule else r for r in ROWS)])).kernels[0]
    roofline = next(r for r in gemm.rules if r.name == "SOLFPRoofline")
    assert roofline.speedup_type is None and roofline.speedup_pct is None
    assert "64:1" in roofline.description


def test_a_row_cut_inside_a_quoted_cell_is_not_read_as_a_value() -> None:
    # A truncated file: the last metric row ends inside its quoted value.
    duration = next(row for row in ROWS if row.startswith('"0",') and '"Duration"' in row)
    cut = duration.removesuffix('7.41"')  # '..."Duration","us","61'
    result = parse_text("\n".join([HEADER, *(r for r in ROWS if r != duration), cut]))
    gemm = result.kernels[0]
    assert gemm.duration_ns is None and len(gemm.metrics) == 24
    assert any("1 line(s) after the header were not CSV rows" in w for w in result.warnings)


def test_rows_too_short_for_a_metric_or_too_long_are_skipped() -> None:
    metric_row = next(row for row in ROWS if '"DRAM Frequency"' in row)
    cells = next(csv.reader([metric_row]))
    too_short = ",".join(f'"{c}"' for c in cells[:-1])  # no "Metric Value" cell
    too_long = metric_row + ',"","","","","","surplus"'
    trailing_empty = metric_row + ',"","","","","",""'  # a full-width row after all
    text = "\n".join([HEADER, too_short, too_long, trailing_empty])
    result = parse_text(text)
    [kernel] = result.kernels
    assert [(m.name, m.value) for m in kernel.metrics] == [("DRAM Frequency", 3.99)]
    assert any("2 line(s) after the header were not CSV rows" in w for w in result.warnings)


def test_a_header_without_rule_columns_still_wants_full_rows() -> None:
    # Older layouts (ncu 2021, the shared samples) end in "Metric Value": nothing is short.
    old_header = ",".join(f'"{c}"' for c in next(csv.reader([HEADER]))[:-5])
    metric_row = next(row for row in ROWS if '"DRAM Frequency"' in row)
    cells = next(csv.reader([metric_row]))
    short = ",".join(f'"{c}"' for c in cells[:-1])
    result = parse_text("\n".join([old_header, metric_row, short]))
    assert [len(k.metrics) for k in result.kernels] == [1]
    assert any("1 line(s) after the header" in w for w in result.warnings)


def test_locale_decimal_commas_in_short_rows() -> None:
    text = TEXT.replace('"617.41"', '"617,41"').replace('"87.93"', '"87,93"')
    text = text.replace('"1,187,204"', '"1.187.204"').replace('"62.18"', '"62,18"')
    gemm = parse_text(text).kernels[0]
    assert gemm.duration_ns == pytest.approx(617_410)
    assert gemm.sm_throughput_pct == 87.93
    cycles = next(m for m in gemm.metrics if m.name == "Elapsed Cycles")
    assert cycles.value == 1_187_204


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(ROWS), max_size=40), st.integers(0, 400))
def test_any_subset_of_rows_or_a_cut_gives_a_result_or_a_parse_error(
    rows: list[str], cut: int
) -> None:
    text = "\n".join([HEADER, *rows])
    with contextlib.suppress(ParseError):
        result = parse_text(text[: len(HEADER) + 1 + cut * 40])
        result.to_json()
        assert all(m.name for k in result.kernels for m in k.metrics)
