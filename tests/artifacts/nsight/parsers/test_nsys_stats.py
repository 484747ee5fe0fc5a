"""nsys_stats: `nsys profile --stats=true` console tables (2024 column layout and the 2021
"Statistics (nanoseconds)" layout) and `nsys stats --format csv` reports.

Expected values are copied from the sample files as printed (grep), not from the parser.
"""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.nsight.parsers.nsys import stats as nsys_stats
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import sample

TORCH = "nsys/yktian_nsys_profile_stats_true_torch_gcn.txt"
PADDLE = "nsys/yktian_nsys_profile_stats_true_paddle_gcn.txt"

CSV_REPORTS = """Generating SQLite file report.sqlite from report.nsys-rep
Processing [report.sqlite] with [/opt/nvidia/nsight-systems/2024.2.1/host-linux-x64/reports/cuda_gpu_kern_sum.py]...

 ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):

"Time (%)","Total Time (us)","Instances","Avg (us)","Med (us)","Min (us)","Max (us)","StdDev (us)","Name"
"60.0","1,500.000","3","500.000","450.000","400.000","650.000","132.288","ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
"40.0","1000.5","2","500.25","500.25","500","500.5","0.354","sm90_xmma_gemm_bf16bf16_bf16f32"

Processing [report.sqlite] with [/opt/nvidia/nsight-systems/2024.2.1/host-linux-x64/reports/cuda_gpu_mem_size_sum.py]...

 ** CUDA GPU MemOps Summary (by Size) (cuda_gpu_mem_size_sum):

"Total (MB)","Count","Avg (MB)","Med (MB)","Min (MB)","Max (MB)","StdDev (MB)","Operation"
"8.389","2","4.194","4.194","4.194","4.194","0.000","[CUDA memcpy Host-to-Device]"

 ** CUDA GPU MemOps Summary (by Time) (cuda_gpu_mem_time_sum):
"Time (%)","Total Time (ns)","Count","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Operation"
"100.0","2458272","2","1229136.0","1229136.0","676416","1781856","781664.1","[CUDA memcpy Host-to-Device]"

 ** NVTX Range Summary (nvtx_sum):

"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Style","Range"
"100.0","4300","2","2150.0","2150.0","700","3600","2050.6","PushPop","step"
"""  # noqa: E501


def parse_file(relative: str) -> nsys_stats.NsysStatsResult:
    with sample(relative).open("rb") as f:
        return nsys_stats.parse(f)


def parse_text(text: str) -> nsys_stats.NsysStatsResult:
    return nsys_stats.parse(io.BytesIO(text.encode()))


def test_detects_console_and_csv_outputs():
    for relative in (TORCH, PADDLE):
        assert detect_kind("out.txt", sample(relative).read_bytes()[:65536]) == "nsys_stats"
    assert detect_kind("stats.csv", CSV_REPORTS.encode()) == "nsys_stats"
    assert not nsys_stats.accepts("x.txt", b"Time is money\nTotal: 3\n")


def test_console_tables_of_nsys_2024():
    result = parse_file(TORCH)
    assert [t.report for t in result.reports] == [
        "osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
        "cuda_gpu_mem_size_sum",
    ]  # fmt: skip
    [skipped] = result.skipped
    assert skipped.report == "nvtx_sum" and "does not contain NV Tools Extension" in skipped.reason
    kernels = result.reports[2]
    assert kernels.columns == (
        "Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)",
        "Max (ns)", "StdDev (ns)", "Name",
    )  # fmt: skip
    assert len(kernels.rows) == 19 and len(result.kernels) == 19
    first = result.kernels[0]
    # "16.0  44,287  11  4,026.1  4,096.0  2,976  4,799  495.3  void at::native::index_..."
    assert (first.time_pct, first.total_ns, first.count, first.avg_ns, first.med_ns) == (
        16.0, 44287, 11, 4026.1, 4096.0,
    )  # fmt: skip
    assert (first.min_ns, first.max_ns, first.stddev_ns) == (2976, 4799, 495.3)
    assert first.name.startswith("void at::native::index_elementwise_kernel<(int)128, (int)4")
    assert first.name.endswith("…")  # nsys cut the name; it stays as printed
    sgemm = next(k for k in result.kernels if k.name == "ampere_sgemm_64x32_sliced1x4_tn")
    assert (sgemm.count, sgemm.total_ns) == (3, 42720)
    api = {a.name: a for a in result.api_calls}
    assert (api["cudaMemcpyAsync"].total_ns, api["cudaMemcpyAsync"].count) == (929629185, 105)
    assert api["cudaStreamIsCapturing_v10000"].count == 4
    poll = result.os_runtime[0]
    assert (poll.name, poll.total_ns, poll.count, poll.med_ns) == (
        "poll",
        1602579192,
        28,
        78157206.5,
    )
    assert len(result.os_runtime) == 29
    h2d = result.memory[0]
    # time table 138,432 ns over 97 copies; size table 0.846 MB (10^6 bytes)
    assert (h2d.name, h2d.count, h2d.total_ns, h2d.time_pct) == (
        "[CUDA memcpy Host-to-Device]", 97, 138432, 89.2,
    )  # fmt: skip
    assert h2d.total_bytes == pytest.approx(846000)
    assert h2d.throughput_gbps == pytest.approx(846000 / 138432)
    assert [m.name for m in result.memory] == [
        "[CUDA memcpy Host-to-Device]", "[CUDA memcpy Device-to-Device]",
        "[CUDA memcpy Device-to-Host]",
    ]  # fmt: skip
    assert result.warnings == ()


def test_legacy_statistics_layout_of_nsys_2021():
    result = parse_file(PADDLE)
    assert {t.layout for t in result.reports} == {"legacy"}
    api = result.reports[0]
    assert api.report == "cuda_api_sum"
    # the unit comes from the title "CUDA API Statistics (nanoseconds)"
    assert api.columns == (
        "Time(%)", "Total Time (ns)", "Calls", "Average (ns)", "Minimum (ns)", "Maximum (ns)",
        "Name",
    )  # fmt: skip
    malloc = result.api_calls[0]
    assert (malloc.name, malloc.total_ns, malloc.count, malloc.avg_ns) == (
        "cudaMalloc", 1709124966, 195, 8764743.4,
    )  # fmt: skip
    assert (malloc.min_ns, malloc.max_ns, malloc.med_ns) == (2450, 1707272594, None)
    assert len(result.kernels) == 27
    bn = result.kernels[0]
    assert bn.name.startswith("void phi::BNForwardInference<float, (common::DataLayout)2>")
    assert (bn.total_ns, bn.count, bn.time_pct) == (58366, 6, 18.3)
    dtod = next(m for m in result.memory if m.name == "[CUDA memcpy DtoD]")
    # "58141 ns / 56 operations" and "365.188 KiB" from the two memory tables
    assert (dtod.total_ns, dtod.count) == (58141, 56)
    assert dtod.total_bytes == pytest.approx(365.188 * 1024)
    assert dtod.throughput_gbps == pytest.approx(365.188 * 1024 / 58141)
    assert [t.report for t in result.reports][-1] == "osrt_sum"
    assert result.os_runtime[0].name == "usleep" and len(result.os_runtime) == 38


def test_csv_reports_with_time_units_and_thousands_separators():
    result = parse_text(CSV_REPORTS)
    assert [t.report for t in result.reports] == [
        "cuda_gpu_kern_sum", "cuda_gpu_mem_size_sum", "cuda_gpu_mem_time_sum", "nvtx_sum",
    ]  # fmt: skip
    assert result.reports[0].title == "CUDA GPU Kernel Summary"
    assert result.reports[0].layout == "csv"
    nccl, gemm = result.kernels
    assert nccl.is_nccl and not gemm.is_nccl
    # "Total Time (us)": 1,500.000 us -> 1.5e6 ns
    assert (nccl.total_ns, nccl.avg_ns, nccl.count) == (1_500_000, 500_000, 3)
    assert gemm.max_ns == pytest.approx(500_500)
    [h2d] = result.memory
    assert h2d.total_bytes == pytest.approx(8_389_000) and h2d.total_ns == 2458272
    assert h2d.throughput_gbps == pytest.approx(8_389_000 / 2458272)
    [step] = result.ranges
    assert (step.name, step.style, step.total_ns, step.count) == ("step", "PushPop", 4300, 2)
    assert result.summary()["nccl_kernel_pct"] == round(100 * 1_500_000 / 2_500_500, 2)


def test_tab_separated_reports():
    text = CSV_REPORTS.replace('","', "\t").replace('"', "")
    result = parse_text(text)
    assert result.reports[0].layout == "tsv"
    assert result.kernels[0].total_ns == 1_500_000


def test_text_without_any_report_is_refused():
    with pytest.raises(ParseError, match="no nsys stats report"):
        parse_text("hello\nworld\n")


def test_truncated_output_keeps_the_tables_read_so_far():
    text = sample(TORCH).read_text()
    cut = text[: text.index("[7/8] Executing")]
    result = parse_text(cut[: cut.index("ampere_sgemm_32x32") - 10])
    assert [t.report for t in result.reports] == ["osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum"]
    assert len(result.kernels) == 12


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000))
def test_random_bytes_give_a_result_or_a_parse_error(data):
    with contextlib.suppress(ParseError):
        nsys_stats.parse(io.BytesIO(data)).to_json()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(0, 12206), junk=st.text(max_size=200))
def test_cut_and_garbled_outputs_give_a_result_or_a_parse_error(cut, junk):
    data = sample(TORCH).read_bytes()
    with contextlib.suppress(ParseError):
        nsys_stats.parse(io.BytesIO(data[:cut] + junk.encode() + data[cut : cut + 500])).to_json()


_PIECES = [
    "[3/8] Executing 'cuda_api_sum' stats report",
    " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):",
    "CUDA Memory Operation Statistics (KiB)",
    " Time (%)  Total Time (ns)  Instances  Avg (ns)  Name",
    " --------  ---------------  ---------  --------  ----",
    '"Time (%)","Total Time (ms)","Instances","Name"',
    '"1e308","9,999,999,999,999","-1","x"',
    "   100.0    1,234,567,890,123,456,789  3  1.5e400  k",
    "SKIPPED: no data",
    "",
    '\t\t,,,"',
]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=80)), max_size=40))
def test_shuffled_report_fragments_give_a_result_or_a_parse_error(lines):
    with contextlib.suppress(ParseError):
        nsys_stats.parse(io.BytesIO("\n".join(lines).encode())).to_json()
