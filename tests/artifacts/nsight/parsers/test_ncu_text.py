"""ncu_text: Nsight Compute's default text output (details page on the console).

Sample values are read from the file's "Section:" tables (sed -n 24,40p), not the parser.
The synthetic page follows ncu 2023+ (launch configuration on the kernel line, column
titles inside the frame, rule messages with an estimated speedup).
"""
# ruff: noqa: E501

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.nsight.parsers.ncu import csv as ncu_csv
from artifacts.nsight.parsers.ncu import text as ncu_text
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import sample

TEXT = "ncu/yktian_ncu_text_details_torch_gcn.txt"
CSV_OF_THE_SAME_MODEL = "ncu/yktian_ncu_csv_details_nvtx_torch_gcn.txt"

RECENT = """==PROF== Connected to process 901 (/usr/bin/python3)
==PROF== Profiling "gemm" - 0: 0%....50%....100% - 37 passes
==PROF== Disconnected from process 901
[901] python3@127.0.0.1
  sm90_gemm_bf16 (132, 1, 1)x(384, 1, 1), Context 1, Stream 7, Device 0, CC 9.0
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    DRAM Frequency                  Ghz         2.62
    Duration                    msecond         1.23
    Memory Throughput                 %        41.20
    DRAM Throughput                   %        38.05
    Compute (SM) Throughput           %        92.13
    ----------------------- ----------- ------------

    INF   Compute and Memory are well-balanced: To reduce runtime, both computation and memory traffic must be
          reduced. Check both the Compute Workload Analysis and Memory Workload Analysis sections.

    Section: Occupancy
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    Achieved Occupancy                %        11.98
    ----------------------- ----------- ------------

    OPT   Est. Local Speedup: 12.5%
          The difference between calculated theoretical (12.5%) and measured achieved occupancy (12.0%) can be
          the result of warp scheduling overheads.

    Section: Launch Statistics
    ----------------------- --------------- ------------
    Metric Name                 Metric Unit Metric Value
    ----------------------- --------------- ------------
    Registers Per Thread    register/thread          168
    ----------------------- --------------- ------------

"""


def parse_file(relative: str) -> ncu_text.NcuTextResult:
    with sample(relative).open("rb") as f:
        return ncu_text.parse(f)


def test_detected_and_not_taken_for_csv():
    head = sample(TEXT).read_bytes()[:65536]
    assert detect_kind("ncu_metrics_prof_torch.txt", head) == "ncu_text"
    assert not ncu_csv.accepts("x.txt", head)
    assert not ncu_text.accepts("x.txt", sample(CSV_OF_THE_SAME_MODEL).read_bytes()[:65536])


def test_text_details_page_of_ncu_2021():
    result = parse_file(TEXT)
    assert result.page == "text" and len(result.kernels) == 14
    first = result.kernels[0]
    assert first.name.startswith("void at::native::index_elementwise_kernel<128, 4,")
    assert (first.process_id, first.process_name, first.host) == (
        "2072460",
        "python3.8",
        "127.0.0.1",
    )
    assert (first.kernel_time, first.context, first.stream) == ("2024-Jul-13 20:38:33", "1", "7")
    assert first.nvtx == ("default domain:0,convLayer",)
    # "gpu__time_duration.sum  usecond  5.98": the text page scales units per value
    assert first.duration_ns == pytest.approx(5980)
    assert (first.sm_throughput_pct, first.memory_throughput_pct) == (11.86, 6.45)
    assert (first.dram_throughput_pct, first.achieved_occupancy_pct) == (1.41, 20.13)
    assert (first.registers_per_thread, first.grid, first.block) == (34, "117", "128")
    assert {m.section for m in first.metrics} == {"Command line profiler metrics"}
    sgemm = result.kernels[3]
    assert sgemm.name == "ampere_sgemm_32x32_sliced1x4_tn"
    assert sgemm.duration_ns == pytest.approx(16740)
    static = next(m for m in sgemm.metrics if m.name == "launch__shared_mem_per_block_static")
    assert (static.unit, static.value) == ("Kbyte/block", 32.77)


def test_same_kernels_as_the_csv_run_of_the_same_model():
    text = parse_file(TEXT)
    with sample(CSV_OF_THE_SAME_MODEL).open("rb") as f:
        csv_result = ncu_csv.parse(f)
    assert [k.name for k in text.kernels] == [k.name for k in csv_result.kernels]
    assert [k.grid for k in text.kernels] == [k.grid for k in csv_result.kernels]


def test_recent_text_page_with_launch_configuration_and_rules():
    [kernel] = ncu_text.parse(io.BytesIO(RECENT.encode())).kernels
    assert (kernel.name, kernel.grid, kernel.block) == (
        "sm90_gemm_bf16",
        "(132, 1, 1)",
        "(384, 1, 1)",
    )
    assert (kernel.context, kernel.stream, kernel.device, kernel.cc) == ("1", "7", "0", "9.0")
    assert kernel.duration_ns == pytest.approx(1_230_000)
    assert (kernel.sm_throughput_pct, kernel.dram_throughput_pct) == (92.13, 38.05)
    assert (kernel.achieved_occupancy_pct, kernel.registers_per_thread) == (11.98, 168)
    assert "Metric Name" not in {m.name for m in kernel.metrics}
    info, occupancy = kernel.rules
    assert (info.type, info.section, info.speedup_pct) == (
        "INF",
        "GPU Speed Of Light Throughput",
        None,
    )
    assert info.description.endswith("Memory Workload Analysis sections.")
    assert (occupancy.type, occupancy.speedup_type, occupancy.speedup_pct) == ("OPT", "local", 12.5)
    assert "warp scheduling overheads" in occupancy.description


# Another program's lines landed at the blank lines of the report (issue 22: generated
# variation): column-0 lines used to end the report, indented ones became kernels.
FOREIGN = (
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 798\n'
    "    main()\n"
    "  Local device: hfi1_0\n"
    "wandb: Tracking run with wandb version 0.16.6\n"
)


@pytest.mark.parametrize("bare", [False, True], ids=["launch shape", "bare name"])
def test_foreign_lines_at_the_blank_lines_of_a_kernel_are_passed_over(bare):
    page = RECENT
    if bare:  # ncu versions that print the kernel's name alone
        page = page.replace(" (132, 1, 1)x(384, 1, 1), Context 1, Stream 7, Device 0, CC 9.0", "")
    lines = page.replace("\n\n", "\n\n" + FOREIGN).split("\n")
    at = next(i for i, line in enumerate(lines) if "sm90_gemm_bf16" in line) + 1
    page = "\n".join([*lines[:at], "", *FOREIGN.splitlines(), "", *lines[at:]])
    want = ncu_text.parse(io.BytesIO(RECENT.encode())).kernels[0]
    [kernel] = ncu_text.parse(io.BytesIO(page.encode())).kernels
    assert kernel.metrics == want.metrics and kernel.rules == want.rules
    assert kernel.name == "sm90_gemm_bf16"


def test_text_without_kernels_is_refused():
    with pytest.raises(ParseError, match="no Nsight Compute kernel"):
        ncu_text.parse(io.BytesIO(b"==PROF== Connected to process 1\n==PROF== Disconnected\n"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000))
def test_random_bytes_give_a_result_or_a_parse_error(data):
    with contextlib.suppress(ParseError):
        ncu_text.parse(io.BytesIO(data)).to_json()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(RECENT.splitlines()), st.text(max_size=60)), max_size=40))
def test_shuffled_lines_give_a_result_or_a_parse_error(lines):
    with contextlib.suppress(ParseError):
        ncu_text.parse(io.BytesIO("\n".join(lines).encode())).to_json()
