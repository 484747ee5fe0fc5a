"""ncu_csv: Nsight Compute --csv details (long) and raw (wide) pages.

Sample values were read with Python's csv module over the sample files (the rows of ID 0 and
3), not from the parser. The synthetic files below follow the column sets of ncu 2023+
(Block/Grid Size, Device, CC, rule columns) that the samples (ncu 2021) do not have.
"""
# ruff: noqa: E501

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.nsight.parsers.ncu import csv as ncu_csv
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import sample

TORCH = "ncu/yktian_ncu_csv_details_nvtx_torch_gcn.txt"
PADDLE = "ncu/yktian_ncu_csv_details_nvtx_paddle_gcn.txt"
CUTLASS = "ncu/yktian_ncu_csv_cutlass_after_tensor_dump.csv"

_HEAD = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value",'
    '"Rule Name","Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"'
)
_K0 = '"0","4242","python3","node-a","gemm_kernel(float*)","1","7","(256, 1, 1)","(1024, 2, 1)","0","9.0"'
_K1 = (
    '"1","4242","python3","node-a","ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",'
    '"1","13","(640, 1, 1)","(8, 1, 1)","0","9.0"'
)
NEW_DETAILS = "\n".join(
    [
        "==PROF== Connected to process 4242 (/usr/bin/python3)",
        '==PROF== Profiling "gemm_kernel" - 0: 0%....50%....100% - 38 passes',
        "==WARNING== Found outstanding GPU clock reset, trying to revert...Success.",
        "==PROF== Disconnected from process 4242",
        _HEAD,
        f'{_K0},"GPU Speed Of Light Throughput","DRAM Frequency","Ghz","2.62","","","","",""',
        f'{_K0},"GPU Speed Of Light Throughput","Memory Throughput","%","71.25","","","","",""',
        f'{_K0},"GPU Speed Of Light Throughput","DRAM Throughput","%","65.10","","","","",""',
        f'{_K0},"GPU Speed Of Light Throughput","Duration","usecond","1,234.56","","","","",""',
        f'{_K0},"GPU Speed Of Light Throughput","Compute (SM) Throughput","%","88.40","","","","",""',
        f'{_K0},"GPU Speed Of Light Throughput","","","","SOLBottleneck","OPT",'
        '"Compute is more heavily utilized than Memory: look at Compute Workload Analysis.",'
        '"global","11.6"',
        f'{_K0},"Launch Statistics","Registers Per Thread","register/thread","128","","","","",""',
        f'{_K0},"Launch Statistics","Grid Size","","2,048","","","","",""',
        f'{_K0},"Occupancy","Achieved Occupancy","%","45.67","","","","",""',
        f'{_K0},"Occupancy","","","","AchievedOccupancy","OPT",'
        '"The difference between theoretical (50.0%) and achieved occupancy (45.7%)...",'
        '"local","8.66"',
        f'{_K1},"GPU Speed Of Light Throughput","Duration","msecond","1.05","","","","",""',
        f'{_K1},"GPU Speed Of Light Throughput","Compute (SM) Throughput","%","3.10","","","","",""',
        f'{_K1},"Launch Statistics","","","","LaunchConfiguration","WRN",'
        '"The grid is configured to execute only 8 blocks, less than the 132 SMs.","global","93.94"',
        "some line the program printed in between",
    ]
)
RAW = "\n".join(
    [
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Block Size","Grid Size","Device","CC","dram__throughput.avg.pct_of_peak_sustained_elapsed",'
        '"gpu__time_duration.sum","launch__registers_per_thread",'
        '"sm__throughput.avg.pct_of_peak_sustained_elapsed",'
        '"sm__warps_active.avg.pct_of_peak_sustained_active"',
        '"","","","","","","","","","","","%","nsecond","register/thread","%","%"',
        '"0","77","bench","h","vector_add(float const*, float*)","1","7","(256, 1, 1)",'
        '"(16, 1, 1)","0","8.0","12.50","3,008","16","73.25","91.02"',
        '"1","77","bench","h","vector_add(float const*, float*)","1","7","(256, 1, 1)",'
        '"(16, 1, 1)","0","8.0","12.75","2,976","16","73.00","90.80"',
    ]
)


def parse_file(relative: str) -> ncu_csv.NcuCsvResult:
    with sample(relative).open("rb") as f:
        return ncu_csv.parse(f)


def parse_text(text: str) -> ncu_csv.NcuCsvResult:
    return ncu_csv.parse(io.BytesIO(text.encode()))


def test_detected_after_program_output_and_prof_lines():
    for relative in (TORCH, PADDLE, CUTLASS):
        assert detect_kind("metrics.txt", sample(relative).read_bytes()[:65536]) == "ncu_csv"
    assert detect_kind("raw.csv", RAW.encode()) == "ncu_csv"


def test_details_page_with_nvtx_columns_and_thousands_separators():
    result = parse_file(TORCH)
    assert result.page == "details" and len(result.kernels) == 14
    first = result.kernels[0]
    assert first.name.startswith("void at::native::index_elementwise_kernel<128, 4,")
    assert (first.process_id, first.process_name, first.host) == (
        "2211167",
        "python3.8",
        "127.0.0.1",
    )
    assert (first.context, first.stream, first.kernel_time) == ("1", "7", "2024-Jul-13 20:44:08")
    assert first.nvtx == ("0:<default domain>:convLayer:none:none",)
    # gpu__time_duration.sum "5,824" nsecond
    assert first.duration_ns == 5824
    assert (first.sm_throughput_pct, first.memory_throughput_pct) == (12.14, 6.52)
    assert (first.dram_throughput_pct, first.achieved_occupancy_pct) == (1.40, 20.08)
    assert (first.registers_per_thread, first.grid, first.block) == (34, "117", "128")
    assert len(first.metrics) == 10 and first.rules == ()
    sgemm = result.kernels[3]
    assert sgemm.name == "ampere_sgemm_32x32_sliced1x4_tn" and sgemm.duration_ns == 16704
    static = next(m for m in sgemm.metrics if m.name == "launch__shared_mem_per_block_static")
    assert (static.value, static.unit) == (32768, "byte/block")  # "32,768"
    assert result.kernels[13].duration_ns == 3936
    assert result.summary()["kernels"] == 14 and result.warnings == ()


def test_paddle_and_a_csv_after_a_tensor_dump():
    paddle = parse_file(PADDLE)
    assert len(paddle.kernels) == 14
    assert paddle.kernels[0].name.startswith("void phi::funcs::GatherNdCUDAKernel<float, int>")
    assert [k.duration_ns for k in paddle.kernels[:3]] == [11200, 4032, 6848]
    cutlass = parse_file(CUTLASS)  # the header is on line 108
    assert [k.duration_ns for k in cutlass.kernels] == [8192, 3584]
    assert cutlass.kernels[0].nvtx == ("0:<default domain>:linear_nvtx:none:none",)
    assert [k.grid for k in cutlass.kernels] == ["2", "2"]


def test_details_page_of_recent_ncu_with_rules_and_launch_columns():
    result = parse_text(NEW_DETAILS)
    gemm, nccl = result.kernels
    assert (gemm.device, gemm.cc, gemm.grid, gemm.block) == (
        "0",
        "9.0",
        "(1024, 2, 1)",
        "(256, 1, 1)",
    )
    assert gemm.duration_ns == pytest.approx(1_234_560)  # 1,234.56 usecond
    assert (gemm.sm_throughput_pct, gemm.memory_throughput_pct, gemm.dram_throughput_pct) == (
        88.4, 71.25, 65.1,
    )  # fmt: skip
    assert (gemm.achieved_occupancy_pct, gemm.registers_per_thread) == (45.67, 128)
    sol, occupancy = gemm.rules
    assert (sol.section, sol.name, sol.type, sol.speedup_type, sol.speedup_pct) == (
        "GPU Speed Of Light Throughput", "SOLBottleneck", "OPT", "global", 11.6,
    )  # fmt: skip
    assert occupancy.name == "AchievedOccupancy" and occupancy.speedup_pct == 8.66
    assert len(gemm.metrics) == 8  # rule rows carry no metric
    assert nccl.duration_ns == pytest.approx(1_050_000)  # 1.05 msecond
    [launch] = nccl.rules
    assert launch.type == "WRN" and "only 8 blocks" in launch.description
    assert any("GPU clock reset" in w for w in result.warnings)
    assert any("not CSV rows" in w for w in result.warnings)  # the stray program line
    assert result.summary()["rules"] == 3


def test_locale_decimal_commas():
    text = NEW_DETAILS.replace('"71.25"', '"9,00"').replace('"1,234.56"', '"1.234,56"')
    text = text.replace('"2,048"', '"2.048"').replace('"45.67"', '"45,67"')
    text = (
        text.replace('"88.40"', '"88,40"').replace('"65.10"', '"65,10"').replace('"2.62"', '"2,62"')
    )
    gemm = parse_text(text).kernels[0]
    assert gemm.memory_throughput_pct == 9.0
    assert gemm.duration_ns == pytest.approx(1_234_560)
    assert gemm.achieved_occupancy_pct == 45.67
    grid = next(m for m in gemm.metrics if m.name == "Grid Size")
    assert grid.value == 2048  # "2.048" is a thousands group where the decimal mark is ","


def test_raw_page_with_a_units_row():
    result = parse_text(RAW)
    assert result.page == "raw" and len(result.kernels) == 2
    first, second = result.kernels
    assert (first.duration_ns, second.duration_ns) == (3008, 2976)
    assert (first.dram_throughput_pct, first.sm_throughput_pct) == (12.5, 73.25)
    assert (first.achieved_occupancy_pct, first.registers_per_thread) == (91.02, 16)
    assert (first.grid, first.block) == ("(16, 1, 1)", "(256, 1, 1)")
    units = {m.name: m.unit for m in first.metrics}
    assert units["gpu__time_duration.sum"] == "nsecond" and len(units) == 5
    assert {m.section for m in first.metrics} == {"raw"}


def test_without_a_csv_header_nothing_is_made_up():
    with pytest.raises(ParseError, match="no Nsight Compute CSV header"):
        parse_text("==PROF== Connected to process 1\nhello\n")
    with pytest.raises(ParseError, match="no kernel row"):
        parse_text(_HEAD + "\n")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000))
def test_random_bytes_give_a_result_or_a_parse_error(data):
    with contextlib.suppress(ParseError):
        ncu_csv.parse(io.BytesIO(data)).to_json()


_PIECES = [*NEW_DETAILS.splitlines(), *RAW.splitlines(), '"0","1"', '"x,,,"', "\x00\xff", ""]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=60)), max_size=30))
def test_shuffled_rows_give_a_result_or_a_parse_error(lines):
    with contextlib.suppress(ParseError):
        ncu_csv.parse(io.BytesIO("\n".join(lines).encode())).to_json()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 95498))
def test_truncated_sample_keeps_the_kernels_read(cut):
    data = sample(TORCH).read_bytes()[:cut]
    try:
        result = ncu_csv.parse(io.BytesIO(data))
    except ParseError:
        return
    assert 1 <= len(result.kernels) <= 14
