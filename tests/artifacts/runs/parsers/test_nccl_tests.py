"""nccl-tests parser: every shared sample, detection, synthetic variants, robustness.

Expected values were read off the sample files by hand (not copied from parser output).
Golden files in tests/expected/nccl_tests/ pin the full JSON of a few small samples; after a
deliberate output change regenerate them with PERFHUB_REGEN_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.parsers.base import ParseError
from artifacts.runs.parsers import nccl_tests
from artifacts.runs.parsers.nccl_tests import NcclRow, NcclRun, NcclTestsResult
from tests.samples import (
    MORE_SAMPLES_DIR,
    SAMPLES_DIR,
    TESTS_DIR,
    all_samples,
    any_sample,
    relative_name,
)

EXPECTED_DIR = TESTS_DIR / "expected" / "nccl_tests"
T = "nccl_tests/"
J = "nccl_tests_json/"


# Files of the sample folders that hold no nccl-tests output, each with its reason.
NOT_NCCL_TESTS = {
    "xxrjun_pairwise_failures_summary.txt": "a hand-made summary of failed pairs",
    "alcf_polaris_n128_launch_failed_PMI.dat": "the launcher failed before any test started",
}


def parse_sample(relative: str) -> NcclTestsResult:
    """A sample of ../shared/samples or ../shared/more-samples (both are read alike)."""
    with any_sample(relative).open("rb") as fh:
        return nccl_tests.parse(fh)


def parse_bytes(data: bytes) -> NcclTestsResult:
    return nccl_tests.parse(io.BytesIO(data))


def parse_text(text: str) -> NcclTestsResult:
    return parse_bytes(text.encode())


def head_of(relative: str) -> bytes:
    path = any_sample(relative)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        return fh.read(64 * 1024)


def row(run: NcclRun, size: int, nth: int = 0) -> NcclRow:
    return [r for r in run.rows if r.size_bytes == size][nth]


def halves(r: NcclRow) -> tuple[tuple[Any, ...], tuple[Any, ...] | None]:
    oop = r.out_of_place
    ip = r.in_place
    assert oop is not None
    first = (oop.time_us, oop.algbw_gbps, oop.busbw_gbps, oop.wrong)
    return first, (None if ip is None else (ip.time_us, ip.algbw_gbps, ip.busbw_gbps, ip.wrong))


def has_warning(result: NcclTestsResult, fragment: str) -> bool:
    return any(fragment in w for w in result.warnings)


# --------------------------------------------------------------------------- module surface


def test_module_constants_and_purity() -> None:
    assert nccl_tests.KIND == "nccl_tests"
    assert isinstance(nccl_tests.VERSION, int)
    # The entry point and its package-private modules (text, json, ...).
    modules = sorted(Path(nccl_tests.__file__).parent.glob("*.py"))
    assert len(modules) > 1
    for module in modules:
        source = module.read_text()
        assert "import django" not in source and "from django" not in source, module.name


def test_public_names_stay_importable_from_the_entry_point() -> None:
    # Callers import from artifacts.runs.parsers.nccl_tests, whatever sibling defines the name.
    for name in nccl_tests.__all__:
        assert getattr(nccl_tests, name) is not None, name
    assert {"NcclMeasurement", "NcclRank", "PARAM_KEYS", "MAX_ROWS"} <= set(nccl_tests.__all__)


def test_registry_knows_the_module() -> None:
    from artifacts.parsers import get_parser

    assert get_parser("nccl_tests") is nccl_tests


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("all_reduce_perf", "all_reduce"),
        ("./build/all_gather_perf", "all_gather"),
        ("reduce_scatter_perf_mpi", "reduce_scatter"),
        ("nccl_alltoall_perf", "alltoall"),
        ("AllReduce", "all_reduce"),
        ("AllToAll", "alltoall"),
        ("ReduceScatter", "reduce_scatter"),
        ("SendRecv", "sendrecv"),
        ("broadcast_perf", "broadcast"),
        ("hypercube_perf", "hypercube"),
        ("gather_perf", "gather"),
        ("scatter_perf", "scatter"),
        ("reduce_perf", "reduce"),
        ("", None),
        (None, None),
    ],
)
def test_normalise_collective(raw: str | None, expected: str | None) -> None:
    assert nccl_tests.normalise_collective(raw) == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [(22902, "2.29.2"), (22807, "2.28.7"), (21903, "2.19.3"), (2708, "2.7.8"), (0, None)],
)
def test_decode_nccl_version(code: int, expected: str | None) -> None:
    assert nccl_tests.decode_nccl_version(code) == expected


# --------------------------------------------------------------------------- detection

ACCEPTED = [p.name for p in all_samples("nccl_tests") if p.name not in NOT_NCCL_TESTS]


@pytest.mark.parametrize("name", ACCEPTED or ["(no shared samples)"])
def test_accepts_every_text_sample(name: str) -> None:
    assert nccl_tests.accepts("anything.bin", head_of(T + name))


@pytest.mark.parametrize("name", [p.name for p in all_samples("nccl_tests_json")] or ["(none)"])
def test_accepts_json_samples(name: str) -> None:
    assert nccl_tests.accepts("x", head_of(J + name))


@pytest.mark.parametrize(
    "relative",
    [
        "torch_profiler/hta_backward_thread_tiny.json",
        "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log",
        "nccl_debug/timez_NCCL_TOPO_DUMP_FILE_normal.xml",
        T + "xxrjun_pairwise_failures_summary.txt",
    ],
)
def test_rejects_other_files(relative: str) -> None:
    assert not nccl_tests.accepts("nccl_allreduce.log", head_of(relative))


def test_rejects_every_profiler_trace() -> None:
    traces = all_samples("torch_profiler", "**/*")
    if not traces:
        pytest.skip("shared samples not available")
    for path in traces:
        assert not nccl_tests.accepts(path.name, head_of(relative_name(path))), path


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b"hello world\nthis is a plain text file\n",
        b"\xff\xfe\x00garbage\x80\x81",
        b'{"a": 1, "nccl_version": 22807}',
        b'{"traceEvents": [], "distributedInfo": {"nccl_version": "2.17.1"}}',
        b"host:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE\n" * 50,
        b"# just a comment\n# size of things\n",
    ],
)
def test_rejects_non_nccl_tests_heads(head: bytes) -> None:
    assert not nccl_tests.accepts("all_reduce_perf.log", head)


def test_detection_ignores_the_file_name() -> None:
    head = head_of(T + "xxrjun_smoke_N2_G1.log")
    assert nccl_tests.accepts("README.md", head)
    assert not nccl_tests.accepts("all_reduce_perf.log", b"nothing here\n")


# --------------------------------------------------------------------------- xxrjun (2.17.x)


def test_smoke_n2_g1() -> None:
    result = parse_sample(T + "xxrjun_smoke_N2_G1.log")
    assert [r.collective for r in result.runs] == ["all_reduce", "sendrecv"]
    ar, sr = result.runs
    assert ar.nccl_tests_version == "2.17.8" and ar.nccl_version == "2.29.2"
    assert ar.params["warmup_iters"] == 2 and ar.params["iters"] == 5
    assert ar.params["maxBytes"] == 536870912 and ar.params["agg_iters"] == 1
    assert ar.params["graph"] == 0 and ar.params["step"] == 2
    assert ar.params["step_kind"] == "factor"
    assert ar.nranks == 2 and list(ar.hosts) == ["cnode3-002", "cnode3-003"]
    assert ar.ranks[1].busid == "0000:1b:00" and ar.ranks[1].gpu == "NVIDIA H100 80GB HBM3"
    assert len(ar.rows) == 5 and len(sr.rows) == 5
    assert halves(row(ar, 268435456)) == ((5940.85, 45.18, 45.18, 0), (5936.76, 45.22, 45.22, 0))
    assert halves(row(sr, 33554432)) == ((838.43, 40.02, 40.02, 0), (787.24, 42.62, 42.62, None))
    assert row(ar, 33554432).redop == "sum" and row(ar, 33554432).root == -1
    assert (ar.avg_busbw_gbps, sr.avg_busbw_gbps) == (43.6076, 42.9182)
    assert ar.out_of_bounds == 0 and ar.complete and sr.complete
    assert ar.errors == () and result.warnings == ()


def test_singlenode_g8_five_collectives() -> None:
    result = parse_sample(T + "xxrjun_singlenode_G8_h100.log")
    assert [r.collective for r in result.runs] == [
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "alltoall",
        "sendrecv",
    ]
    assert [r.avg_busbw_gbps for r in result.runs] == [
        437.957,
        328.618,
        330.721,
        313.838,
        279.874,
    ]
    for run in result.runs:
        assert run.nranks == 8 and run.hosts == ("cnode3-002",) and len(run.rows) == 10
        assert run.complete and run.params["maxBytes_effective"] == 26549638485
        assert run.params["maxBytes"] == 68719476736
    rs = result.runs[2]
    assert halves(row(rs, 1073741824)) == (
        (2741.51, 391.66, 342.70, 0),
        (2734.35, 392.69, 343.60, 0),
    )
    assert row(rs, 1073741824).count == 16777216
    sr = result.runs[4]
    assert halves(row(sr, 134217728)) == (
        (825.74, 162.54, 162.54, 0),
        (831.51, 161.42, 161.42, None),
    )
    assert result.summary()["max_busbw_gbps"] == 482.27
    assert result.summary()["collectives"] == [r.collective for r in result.runs]


def test_multinode_n10_g1() -> None:
    result = parse_sample(T + "xxrjun_multinode_N10_G1_10ranks_h100.log")
    assert len(result.runs) == 5
    assert [r.avg_busbw_gbps for r in result.runs] == [
        47.8165,
        46.7949,
        47.1335,
        43.6048,
        24.7624,
    ]
    hosts = tuple(f"cnode3-{n:03d}" for n in range(2, 12))
    for run in result.runs:
        assert run.nranks == 10 and run.hosts == hosts and len(run.rows) == 10
    ag = result.runs[1]
    first = ag.rows[0]
    assert (first.size_bytes, first.count, first.dtype, first.redop, first.root) == (
        33554400,
        419430,
        "double",
        "none",
        -1,
    )
    assert halves(first) == ((721.94, 46.48, 41.83, 0), (687.61, 48.80, 43.92, 0))
    a2a = result.runs[3]
    assert all(r.in_place is not None and r.in_place.wrong is None for r in a2a.rows)


def test_multinode_n10_g8_80_ranks() -> None:
    result = parse_sample(T + "xxrjun_multinode_N10_G8_80ranks_h100.log")
    assert [r.collective for r in result.runs] == [
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "alltoall",
        "sendrecv",
    ]
    assert [r.avg_busbw_gbps for r in result.runs] == [
        265.631,
        218.677,
        216.683,
        47.1472,
        15.1671,
    ]
    for run in result.runs:
        assert run.nranks == 80 and len(run.ranks) == 80 and len(run.hosts) == 10
        assert len(run.rows) == 10 and run.complete
    ar = result.runs[0]
    assert halves(row(ar, 67108864)) == ((939.84, 71.40, 141.02, 0), (962.96, 69.69, 137.64, 0))
    assert halves(row(ar, 17179869184))[0] == (105854.0, 162.30, 320.54, 0)
    assert row(result.runs[3], 33553920).count == 52428
    assert result.summary()["nranks"] == 80 and result.summary()["hosts"] == 10


def test_pair_n2_g1_ok() -> None:
    result = parse_sample(T + "xxrjun_pair_N2_G1_ok.log")
    a2a, sr = result.runs
    assert (a2a.collective, sr.collective) == ("alltoall", "sendrecv")
    assert a2a.nccl_tests_version == "2.17.6" and a2a.nccl_version == "2.28.7"
    assert a2a.hosts == ("cnode2-001", "cnode2-002") and a2a.nranks == 2
    assert (a2a.avg_busbw_gbps, sr.avg_busbw_gbps) == (13.4689, 13.5405)
    assert halves(row(sr, 33554432)) == ((2513.89, 13.35, 13.35, 0), (2504.26, 13.40, 13.40, None))
    assert halves(row(a2a, 17179869184)) == (
        (635876.0, 27.02, 13.51, 0),
        (631396.0, 27.21, 13.60, None),
    )
    assert row(a2a, 33554432).redop == "none" and row(sr, 33554432).redop == "sum"
    assert a2a.complete and sr.complete and result.warnings == ()


def test_pair_n2_g8_ok() -> None:
    result = parse_sample(T + "xxrjun_pair_N2_G8_ok.log")
    a2a, sr = result.runs
    assert a2a.nranks == 16 and a2a.hosts == ("cnode2-001", "cnode2-002")
    assert a2a.ranks[15].rank == 15 and a2a.ranks[15].busid == "0000:df:00"
    assert (a2a.avg_busbw_gbps, sr.avg_busbw_gbps) == (23.4963, 15.1193)
    assert halves(row(a2a, 17179869184)) == (
        (682007.0, 25.19, 23.62, 0),
        (681661.0, 25.20, 23.63, None),
    )
    assert row(a2a, 17179869184).count == 134217728
    assert len(a2a.rows) == len(sr.rows) == 10


def test_pair_n2_g1_network_failure() -> None:
    result = parse_sample(T + "xxrjun_pair_N2_G1_FAIL_network_error.log")
    (run,) = result.runs
    assert run.collective == "alltoall" and run.nranks == 2
    assert run.hosts == ("cnode2-005", "cnode2-016")
    assert run.rows == () and not run.complete
    assert run.avg_busbw_gbps is None and run.out_of_bounds is None
    assert run.errors[0] == (
        "cnode2-016: Test NCCL failure alltoall.cu:274 "
        "'remote process exited or there was a network error / '"
    )
    assert run.errors[-1] == ".. cnode2-016 pid 340134: Test failure common.cu:1100"
    assert len(run.errors) == 7
    assert has_warning(result, "failed")


def test_pair_n2_g4_failure_during_init_is_deduplicated() -> None:
    result = parse_sample(T + "xxrjun_pair_N2_G4_FAIL_network_error.log")
    (run,) = result.runs
    assert run.nranks == 8 and run.hosts == ("cnode2-007", "cnode2-016")
    # Four ranks print the same NCCL failure (kept once) and their own "Test failure" line.
    assert run.errors[0].endswith(
        "Test NCCL failure common.cu:1279 'remote process exited or there was a network error / '"
    )
    assert [e for e in run.errors if "pid" in e] == [
        ".. cnode2-016 pid 475446: Test failure common.cu:1100",
        ".. cnode2-016 pid 475449: Test failure common.cu:1100",
        ".. cnode2-016 pid 475447: Test failure common.cu:1100",
        ".. cnode2-016 pid 475448: Test failure common.cu:1100",
    ]
    assert len(run.errors) == 5 and not run.complete and run.rows == ()


def test_pair_n2_g4_truncated_after_devices() -> None:
    result = parse_sample(T + "xxrjun_pair_N2_G4_TRUNCATED_after_devices.log")
    (run,) = result.runs
    assert run.collective == "alltoall" and run.nranks == 8
    assert run.hosts == ("cnode2-003", "cnode2-008")
    assert run.rows == () and not run.complete and run.errors == ()
    assert has_warning(result, "truncated after the device list")


def test_pair_n2_g1_truncated_in_second_run() -> None:
    result = parse_sample(T + "xxrjun_pair_N2_G1_TRUNCATED_sendrecv_header.log")
    a2a, sr = result.runs
    assert a2a.complete and len(a2a.rows) == 10 and a2a.avg_busbw_gbps == 13.3923
    assert halves(row(a2a, 4294967296)) == (
        (159619.0, 26.91, 13.45, 0),
        (159221.0, 26.97, 13.49, None),
    )
    assert sr.collective == "sendrecv" and sr.rows == () and not sr.complete
    assert sr.hosts == ("cnode2-002", "cnode2-008") and sr.errors == ()
    assert has_warning(result, "run 2 (sendrecv): no footer, output truncated after the column")
    assert result.summary()["complete"] is False


def test_failure_summary_is_not_nccl_tests_output() -> None:
    with pytest.raises(ParseError) as info:
        parse_sample(T + "xxrjun_pairwise_failures_summary.txt")
    assert info.value.permanent and "no nccl-tests output found" in info.value.message


# --------------------------------------------------------------------------- superbench (old)

SUPERBENCH = {
    # name: (redop, root, first non-zero size, avg busbw, (size, oop, ip))
    "allgather": (
        None,
        None,
        32,
        58.2651,
        (4194304, (100.7, 41.64, 36.43, None), (99.56, 42.13, 36.86, None)),
    ),
    "allreduce": (
        "sum",
        None,
        4,
        68.4048,
        (8589934592, (63896.0, 134.44, 235.26, None), (63959.0, 134.30, 235.03, None)),
    ),
    "alltoall": (
        None,
        None,
        32,
        58.6481,
        (32, (89.00, 0.0, 0.0, None), (85.13, 0.0, 0.0, None)),
    ),
    "broadcast": (
        None,
        0,
        4,
        64.8653,
        (8589934592, (36896.0, 232.81, 232.81, None), (36599.0, 234.70, 234.70, None)),
    ),
    "reduce": (
        "sum",
        0,
        4,
        65.018,
        (16777216, (137.7, 121.83, 121.83, None), (139.6, 120.17, 120.17, None)),
    ),
    "reducescatter": (
        "sum",
        None,
        32,
        60.168,
        (8589934592, (32464.0, 264.60, 231.52, None), (32502.0, 264.29, 231.25, None)),
    ),
}


@pytest.mark.parametrize("name", sorted(SUPERBENCH))
def test_superbench_old_format(name: str) -> None:
    redop, root, first_size, avg, (size, oop, ip) = SUPERBENCH[name]
    result = parse_sample(f"{T}superbench_old_format_{name}_8xA100_dgx.log")
    (run,) = result.runs
    # Nothing in these logs names the collective; the table alone decides where its redop
    # and root columns tell the equal busbw/algbw ratios apart (test_nccl_tests_fragments.py
    # adds the file name for the others).
    assert run.collective == {
        "allreduce": "all_reduce", "reduce": "reduce", "reducescatter": "reduce_scatter",
    }.get(name)  # fmt: skip
    assert (run.collective_source == "ambiguous") == (run.collective is None)
    assert run.nccl_tests_version is None
    assert run.params["nGpus"] == 8 and run.params["nThread"] == 1
    assert run.params["minBytes"] == 1 and run.params["maxBytes"] == 8589934592
    assert run.params["warmup_iters"] == 5 and run.params["iters"] == 20
    assert run.params["validation"] == 0 and run.params["graph"] is None
    assert run.nranks == 8 and run.hosts == ("localhost",)
    assert run.ranks[7].device == 7 and run.ranks[7].gpu == "A100-SXM4-40GB"
    assert run.ranks[0].busid == "0x00"
    assert len(run.rows) == 34 and run.error_column
    nonzero = [r for r in run.rows if r.size_bytes]
    assert nonzero[0].size_bytes == first_size and run.rows[-1].size_bytes == 8589934592
    assert all((r.redop, r.root) == (redop, root) for r in run.rows)
    assert halves(row(run, size)) == (oop, ip)
    assert run.avg_busbw_gbps == avg and run.out_of_bounds == 0 and run.complete


def test_superbench_interleaved_info_line_is_skipped_with_warning() -> None:
    result = parse_sample(T + "superbench_old_format_allreduce_8xA100_dgx.log")
    assert has_warning(result, "1 NCCL debug lines")
    assert len(result.runs[0].rows) == 34


# --------------------------------------------------------------------------- coreweave README


def test_coreweave_2023_old_format_error_column() -> None:
    result = parse_sample(T + "coreweave_readme_2023_old_format_error_column_128gpu_fragment.txt")
    (run,) = result.runs
    assert run.params["minBytes"] == 4 and run.params["maxBytes"] == 2147483648
    assert run.params["warmup_iters"] == 50 and run.params["iters"] == 50
    assert run.params["agg_iters"] is None and run.params["validation"] == 1
    # no collective line, but busbw/algbw = 1.938 is all_reduce over 32 ranks
    assert run.error_column and run.collective == "all_reduce" and run.nranks_inferred == 32
    assert [r.rank for r in run.ranks] == [0, 1, 2, 3, 4]
    assert run.ranks[2].busid == "0x51" and run.ranks[2].gpu == "NVIDIA A100-SXM4-80GB"
    assert run.hosts == ("nccl-test-128-worker-0",) and run.nranks == 5
    assert has_warning(result, "elided")
    assert len(run.rows) == 31
    assert halves(row(run, 8)) == ((58.23, 0.0, 0.0, 0.0), (56.02, 0.0, 0.0, 0.0))
    assert halves(row(run, 16))[0] == (56.27, 0.0, 0.0, 2e-07)
    assert halves(row(run, 1073741824)) == (
        (18266.0, 58.78, 113.89, 5e-07),
        (18301.0, 58.67, 113.68, 5e-07),
    )
    assert row(run, 8).redop == "sum" and row(run, 8).root is None
    assert run.avg_busbw_gbps == 37.7108 and run.out_of_bounds == 0 and run.complete


def test_coreweave_gb200_1440_ranks_fragment() -> None:
    result = parse_sample(T + "coreweave_readme_gb200_20racks_1440ranks_fragment.txt")
    (run,) = result.runs
    assert run.nranks == 1440  # only "Rank 1439" is in the fragment
    assert run.ranks[0].host == "slurm-gb200-218-073" and run.ranks[0].gpu == "NVIDIA GB200"
    assert run.ranks[0].device == 3 and run.ranks[0].busid == "0x01"
    assert [r.size_bytes for r in run.rows] == [2**k for k in range(29, 35)]
    assert halves(row(run, 17179869184)) == (
        (84625.0, 203.01, 405.74, 0),
        (84828.0, 202.53, 404.77, 0),
    )
    assert row(run, 17179869184).count == 4294967296
    assert run.avg_busbw_gbps is None and run.out_of_bounds == 0 and run.complete
    assert has_warning(result, "no 'Avg bus bandwidth' line")
    assert has_warning(result, "starts without its parameter line")


def test_coreweave_gb200_nvl72_fragment() -> None:
    result = parse_sample(T + "coreweave_readme_gb200_nvl72_single_rack_fragment.txt")
    (run,) = result.runs
    assert run.nranks == 72 and run.hosts == ("slurm-gb200-207-171",)
    assert run.ranks[0].gpu == "NVIDIA Graphics Device"
    assert len(run.rows) == 5
    assert halves(row(run, 1073741824)) == (
        (3108.8, 345.38, 681.17, 0),
        (2924.7, 367.13, 724.06, 0),
    )
    assert result.summary()["max_busbw_gbps"] == 846.82


def test_coreweave_h100_sharp_kubectl_fragment() -> None:
    result = parse_sample(T + "coreweave_readme_h100_64_sharp_kubectl_fragment.txt")
    (run,) = result.runs
    assert run.params["iters"] == 50 and run.params["validation"] == 1
    assert run.ranks == () and run.nranks is None and run.hosts == ()
    assert len(run.rows) == 5
    assert halves(row(run, 2147483648)) == (
        (11163.0, 192.37, 380.73, 0),
        (11203.0, 191.70, 379.40, 0),
    )
    assert run.avg_busbw_gbps == 373.187 and run.complete


# --------------------------------------------------------------------------- ssbandjl


@pytest.mark.parametrize("collective", ["allreduce", "alltoall"])
def test_mpirun_without_mpi_support_gives_four_interleaved_runs(collective: str) -> None:
    result = parse_sample(f"{T}ssbandjl_{collective}_mpirun_without_MPI1_interleaved_debug.log")
    expected = "all_reduce" if collective == "allreduce" else "alltoall"
    binary = f"./build/{expected}_perf"
    first = 8 if collective == "allreduce" else 0  # alltoall prints 8 bytes as 0 for 1 rank
    sizes = [first] + [2**k for k in range(4, 31)]
    assert len(result.runs) == 4
    assert sum(len(r.rows) for r in result.runs) == 112  # every data line of the file
    for run in result.runs:
        assert run.collective == expected and run.nranks == 1
        assert [r.size_bytes for r in run.rows] == sizes
        assert run.avg_busbw_gbps == 0.0 and run.out_of_bounds == 0 and run.complete
        assert run.command is not None and f"{binary} -b 8 -e 1G -f 2 -g 1" in run.command
    # Ranks (and their NCCL versions, from NCCL INFO lines matched by pid) per process.
    assert [r.hosts for r in result.runs] == [("gdr116",), ("gdr116",), ("gdr114",), ("gdr114",)]
    assert [r.nccl_version for r in result.runs] == ["2.26.2", "2.26.2", "2.26.5", "2.26.5"]
    assert has_warning(result, "runs 1, 2, 3, 4 were printed interleaved")
    assert has_warning(result, "different NCCL versions: 2.26.2, 2.26.5")
    assert has_warning(result, "352 NCCL debug lines")


def test_interleaved_rows_keep_their_values() -> None:
    result = parse_sample(T + "ssbandjl_allreduce_mpirun_without_MPI1_interleaved_debug.log")
    # The first data line of the file opens run 1.
    assert halves(result.runs[0].rows[0]) == ((5.55, 0.0, 0.0, 0), (0.16, 0.05, 0.0, 0))
    last_times = {row(r, 1073741824).out_of_place.time_us for r in result.runs}  # type: ignore[union-attr]
    assert last_times == {6809.3, 6760.2, 6986.4, 6766.1}
    command = result.runs[0].command
    assert command is not None and command.startswith("mpirun -np 4 -H s114:2,s116:2")


# --------------------------------------------------------------------------- JSON samples


def test_fork_json_truncated_excerpt() -> None:
    result = parse_sample(J + "nccl_tests_pr318_fork_json_alltoall_8gpu_TRUNCATED_EXCERPT.txt")
    (run,) = result.runs
    assert run.format == "nccl_tests_fork_json"
    assert run.collective == "alltoall" and run.nccl_version == "2.26.6"
    assert run.command is not None and "nccl_alltoall_perf -b 32M -e 128M" in run.command
    assert [r.size_bytes for r in run.rows] == [33554432, 67108864]
    first = run.rows[0]
    assert (first.count, first.dtype, first.redop, first.root) == (1048576, "float", "none", -1)
    assert halves(first) == (
        (1494.278386, 22.455275, 19.648366, 0),
        (1459.561667, 22.98939, 20.115716, None),
    )
    assert halves(run.rows[1])[0] == (2846.555628, 23.575462, 20.628529, 0)
    assert not run.complete and has_warning(result, "JSON ends early")


def test_rccl_json_lines_excerpt() -> None:
    result = parse_sample(J + "rccl_tests_pr93_output_file_jsonlines_allreduce_4gpu_EXCERPT.jsonl")
    (run,) = result.runs
    assert run.format == "rccl_jsonl" and run.collective == "all_reduce" and run.nranks == 4
    assert [r.size_bytes for r in run.rows] == [1024, 2048, 4096]
    r1024 = run.rows[0]
    assert (r1024.dtype, r1024.redop, r1024.count, r1024.root) == ("float", "sum", None, None)
    assert halves(r1024) == (
        (19.184150000000002, 0.05337739748698796, 0.08006609623048194, 0),
        (19.897650000000002, 0.05146336376406259, 0.07719504564609389, 0),
    )
    assert run.rows[2].in_place is None  # the excerpt stops after its out-of-place record
    assert not run.complete and run.avg_busbw_gbps is None


# ------------------------------------------------ ../shared/more-samples (other clusters)
# Values read off the files by hand: device lists, first/last rows, footers, error lines.

M = "nccl_tests/"
ALCF_FULL = ("parameters", "devices", "column header", "rows", "footer")


def test_alcf_sirius_without_a_version_line() -> None:
    # Two PALS lines ("Read only 28 bytes ...") come before the parameter line; nccl-tests of
    # this build prints no version line, so only the table tells the collective.
    (run,) = parse_sample(M + "alcf_sirius_n2_g4_all_reduce.dat").runs
    assert run.nccl_tests_version is None and run.nccl_version is None
    assert run.collective == "all_reduce" and run.nranks == 8
    assert run.hosts == ("x3200c0s31b1n0", "x3200c0s37b1n0")
    assert run.params["minBytes"] == 4 and run.params["maxBytes"] == 1073741824
    assert [r.size_bytes for r in run.rows] == [4 << i for i in range(29)]
    assert halves(run.rows[0]) == ((47.91, 0.0, 0.0, 0), (46.06, 0.0, 0.0, 0))
    assert halves(run.rows[-1]) == ((566821.0, 1.89, 3.32, 0), (570205.0, 1.88, 3.3, 0))
    assert run.avg_busbw_gbps == 1.20433 and run.out_of_bounds == 0
    assert run.complete and run.errors == () and run.parts == ALCF_FULL


def test_alcf_polaris_2160_ranks() -> None:
    (run,) = parse_sample(M + "alcf_polaris_n540_g4_all_reduce_2160ranks.dat").runs
    assert run.nranks == 2160 and len(run.ranks) == 2160 and len(run.hosts) == 540
    last = run.ranks[-1]
    assert (last.rank, last.host, last.device, last.busid) == (2159, "x3006c0s13b0n0", 3, "0xc7")
    assert run.collective == "all_reduce"
    assert halves(run.rows[0]) == ((235.5, 0.0, 0.0, 0), (216.8, 0.0, 0.0, 0))
    assert halves(row(run, 1073741824)) == ((114623.0, 9.37, 18.73, 0), (114645.0, 9.37, 18.72, 0))
    assert run.avg_busbw_gbps == 4.54332 and run.complete


def test_alcf_polaris_all_gather_zero_size_rows() -> None:
    # 512 ranks: the 11 smallest sizes hold fewer elements than ranks and print size 0.
    result = parse_sample(M + "alcf_polaris_n128_g4_all_gather_512ranks_zero_size_rows.dat")
    (run,) = result.runs
    assert run.collective == "all_gather" and run.nranks == 512 and len(run.hosts) == 128
    sizes = [r.size_bytes for r in run.rows]
    assert sizes[:11] == [0] * 11 and sizes[11:] == [8192 << i for i in range(18)]
    assert all(r.count == 0 and r.redop == "none" for r in run.rows[:11])
    assert halves(row(run, 8192)) == ((4051.7, 0.0, 0.0, 0), (3846.1, 0.0, 0.0, 0))
    assert halves(run.rows[-1]) == ((32943.0, 32.59, 32.53, 0), (32988.0, 32.55, 32.49, 0))
    assert run.avg_busbw_gbps == 2.87814 and run.complete
    assert has_warning(result, "11 rows of size 0")


def test_alcf_polaris_alltoall_slingshot_timeouts_and_na_column() -> None:
    (run,) = parse_sample(M + "alcf_polaris_n8_g4_alltoall_slingshot_timeouts.dat").runs
    assert run.collective == "alltoall" and run.nranks == 32 and len(run.hosts) == 8
    assert [r.size_bytes for r in run.rows][:6] == [0, 0, 0, 0, 0, 128]
    assert halves(row(run, 128)) == ((658.9, 0.0, 0.0, 0), (641.2, 0.0, 0.0, None))
    assert halves(run.rows[-1]) == ((238600.0, 4.5, 4.36, 0), (238178.0, 4.51, 4.37, None))
    assert run.avg_busbw_gbps == 1.91429 and run.complete  # the summary follows the footer
    assert run.errors == ("MPICH Slingshot Network Summary: 3 network timeouts",)


@pytest.mark.parametrize(
    ("name", "sizes", "last", "avg"),
    [
        (
            "alcf_polaris_n8_g4_2023_maxbytes256M.dat",
            27,
            ((52849.0, 5.08, 9.84, 0), (52910.0, 5.07, 9.83, 0)),
            3.45481,
        ),
        (
            "alcf_polaris_n8_g4_all_reduce_nccl221.dat",
            29,
            ((629519.0, 1.71, 3.3, 0), (632133.0, 1.7, 3.29, 0)),
            1.01272,
        ),
    ],
)
def test_alcf_polaris_32_rank_all_reduce(name: str, sizes: int, last: tuple, avg: float) -> None:
    (run,) = parse_sample(M + name).runs
    assert run.collective == "all_reduce" and run.nranks == 32 and len(run.hosts) == 8
    assert [r.size_bytes for r in run.rows] == [4 << i for i in range(sizes)]
    assert run.params["maxBytes"] == 4 << (sizes - 1)
    assert halves(run.rows[-1]) == last and run.avg_busbw_gbps == avg and run.complete


def test_alcf_sophia_all_gather() -> None:
    (run,) = parse_sample(M + "alcf_sophia_n2_g8_all_gather_ok.dat").runs
    assert run.collective == "all_gather" and run.nranks == 16
    assert run.hosts == ("sophia-gpu-09", "sophia-gpu-13")
    assert [r.size_bytes for r in run.rows][:7] == [0] * 6 + [256]
    assert halves(run.rows[-1]) == ((5755.6, 186.55, 174.89, 0), (5733.8, 187.27, 175.56, 0))
    assert run.avg_busbw_gbps == 40.5396 and run.complete


def test_alcf_sophia_failure_before_the_table() -> None:
    result = parse_sample(M + "alcf_sophia_n2_g8_FAIL_unhandled_system_error.dat")
    (run,) = result.runs
    assert run.nranks == 16 and run.rows == () and not run.complete
    assert run.parts == ("parameters", "devices")
    # the same line from 8 ranks is one error; each rank's "Test failure" line is its own
    assert run.errors[0].startswith("sophia-gpu-13: Test NCCL failure common.cu:1012 'unhandled")
    assert sum("Test failure common.cu:891" in e for e in run.errors) == 8
    assert run.errors[-1].startswith("prterun detected that one or more processes exited")
    assert has_warning(result, "failed: sophia-gpu-13: Test NCCL failure")


def test_launcher_failure_alone_is_a_clear_refusal() -> None:
    with pytest.raises(ParseError) as caught:
        parse_sample(M + "alcf_polaris_n128_launch_failed_PMI.dat")
    assert caught.value.permanent
    assert "failed before any test started" in caught.value.message
    assert "Couldn't allocate a port for PMI" in caught.value.message
    assert not nccl_tests.accepts("x.dat", head_of(M + "alcf_polaris_n128_launch_failed_PMI.dat"))


@pytest.mark.parametrize(
    ("name", "rows", "last_size", "last", "avg", "nranks"),
    [
        (
            "aws_batch_openmpi_tag_output_trailing_spaces_fragment.txt",
            32,
            17179869184,
            ((62239.0, 276.03, 483.05, 0), (62200.0, 276.2, 483.35, 0)),
            156.742,
            8,
        ),
        (
            "aws_eks_p5_openmpi_tag_output_prefix_indented_fragment.txt",
            7,
            2147483648,
            ((9197.5, 233.49, 437.79, 0), (9195.2, 233.54, 437.89, 0)),
            52.9753,
            16,
        ),
        (
            "aws_p4de_2node_srun_label_prefix_fragment.txt",
            29,
            2147483648,
            ((51406.0, 41.78, 78.33, 0), (51406.0, 41.77, 78.33, 0)),
            None,
            16,
        ),
        (
            "aws_p5_2node_srun_label_prefix_fragment.txt",
            32,
            17179869184,
            ((66132.0, 259.78, 487.09, 0), (66109.0, 259.87, 487.26, 0)),
            None,
            16,
        ),
    ],
)
def test_aws_readme_fragments_give_their_table(
    name: str, rows: int, last_size: int, last: tuple, avg: float | None, nranks: int
) -> None:
    # Fragments from the column header on, behind launcher prefixes (the EKS one indented by
    # a Markdown list, with the author's '...' between rows): the table's facts, and which
    # parts were there.
    result = parse_sample(M + name)
    (run,) = result.runs
    assert run.collective == "all_reduce" and run.nranks is None and run.nranks_inferred == nranks
    assert len(run.rows) == rows and run.rows[-1].size_bytes == last_size
    assert halves(run.rows[-1]) == last and run.avg_busbw_gbps == avg
    footer = ("footer",) if avg is not None else ()
    assert run.parts == ("column header", "rows", *footer) and run.complete == bool(footer)
    assert has_warning(result, "launcher prefixes were stripped")


def test_gcp_markdown_copy_lost_some_hash_marks() -> None:
    # The Markdown copy dropped the '#' of the parameter line and of rank 0's line; the
    # quoted ('> ') command gives the collective.
    result = parse_sample(M + "gcp_a3mega_2node_16xH100_all_reduce_mpirun.md")
    (run,) = result.runs
    assert run.collective == "all_reduce" and run.collective_source == "command line"
    assert run.command is not None and run.command.startswith("mpirun -v --mca btl self,tcp")
    assert run.command.endswith("all_reduce_perf -b 8 -e 8G -f 2 -g 1")
    assert run.params["maxBytes"] == 8589934592 and run.params["iters"] == 20
    assert run.nranks == 16 and len(run.ranks) == 16
    assert run.ranks[0] == nccl_tests.NcclRank(
        rank=0, host="ztan-mig-235z", device=0, busid="0000:04:00", gpu="NVIDIA H100 80GB HBM3"
    )
    assert run.hosts == ("ztan-mig-235z", "ztan-mig-gq73")
    assert len(run.rows) == 31 and run.rows[-1].size_bytes == 8589934592
    assert halves(run.rows[-1]) == ((47535.0, 180.71, 338.82, 0), (47743.0, 179.92, 337.35, 0))
    assert run.avg_busbw_gbps == 70.742 and run.complete and result.warnings == ()


# --------------------------------------------------------------------------- golden files

GOLDEN = [
    T + "superbench_old_format_allgather_8xA100_dgx.log",
    T + "xxrjun_pair_N2_G1_TRUNCATED_sendrecv_header.log",
    T + "xxrjun_pair_N2_G4_FAIL_network_error.log",
    T + "coreweave_readme_gb200_nvl72_single_rack_fragment.txt",
    J + "nccl_tests_pr318_fork_json_alltoall_8gpu_TRUNCATED_EXCERPT.txt",
    J + "rccl_tests_pr93_output_file_jsonlines_allreduce_4gpu_EXCERPT.jsonl",
    T + "alcf_sirius_n2_g4_all_reduce.dat",
    T + "alcf_sophia_n2_g8_FAIL_unhandled_system_error.dat",
    T + "aws_eks_p5_openmpi_tag_output_prefix_indented_fragment.txt",
]


@pytest.mark.parametrize("relative", GOLDEN)
def test_golden_json(relative: str) -> None:
    document = parse_sample(relative).to_json()
    golden = EXPECTED_DIR / (Path(relative).stem + ".json")
    if os.environ.get("PERFHUB_REGEN_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(document, indent=1) + "\n")
    assert document == json.loads(golden.read_text())


ALL_SAMPLES = [
    relative_name(p)
    for p in all_samples("nccl_tests") + all_samples("nccl_tests_json")
    if p.name not in NOT_NCCL_TESTS
]


@pytest.mark.parametrize("relative", ALL_SAMPLES or ["nccl_tests/(none)"])
def test_contract_shape(relative: str) -> None:
    result = parse_sample(relative)
    document = result.to_json()
    json.dumps(document, allow_nan=False)  # plain JSON: no NaN/Infinity
    assert list(document) == ["kind", "runs", "warnings"] and document["kind"] == "nccl_tests"
    run_keys = [
        "collective",
        "nccl_tests_version",
        "nccl_version",
        "params",
        "ranks",
        "nranks",
        "hosts",
        "rows",
        "avg_busbw_gbps",
        "out_of_bounds",
        "complete",
        "errors",
    ]
    for run in document["runs"]:
        assert list(run)[: len(run_keys)] == run_keys
        for key in ("minBytes", "maxBytes", "step", "warmup_iters", "iters", "validation"):
            assert key in run["params"]
        assert "graph" in run["params"]
        for rank in run["ranks"]:
            assert list(rank) == ["rank", "host", "device", "busid", "gpu"]
        for r in run["rows"]:
            assert list(r) == [
                "size_bytes",
                "count",
                "dtype",
                "redop",
                "root",
                "out_of_place",
                "in_place",
            ]
            for half in (r["out_of_place"], r["in_place"]):
                if half is not None:
                    assert list(half) == ["time_us", "algbw_gbps", "busbw_gbps", "wrong"]
        assert run["hosts"] == sorted({rk["host"] for rk in run["ranks"]})
    assert set(result.summary()) >= {"runs", "collectives", "max_busbw_gbps", "warnings"}


# --------------------------------------------------------------------------- synthetic text


def nt_lead(size: object, count: object, dtype: str, redop: str, root: object) -> str:
    """The row preamble exactly as nccl-tests prints it ("%12li  %12li  %8s  %6s  %6s")."""
    return f"{size:>12}  {count:>12}  {dtype:>8}  {redop:>6}  {root:>6}"


def nt_half(time: str, algbw: str, busbw: str, wrong: str) -> str:
    return f"  {time:>7}  {algbw:>6}  {busbw:>6}  {wrong:>6}"


def nt_header() -> list[str]:
    cols = ("time", "algbw", "busbw", "#wrong")
    units = ("(us)", "(GB/s)", "(GB/s)", "")
    return [
        "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place",
        "# " + nt_lead("size", "count", "type", "redop", "root")[2:] + nt_half(*cols) * 2,
        "# " + nt_lead("(B)", "(elements)", "", "", "")[2:] + nt_half(*units) * 2,
    ]


MODERN = "\n".join(
    [
        "# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807",
        "# Collective test starting: all_reduce_perf",
        "# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 1 "
        "iters: 5 agg iters: 1 validation: 1 graph: 0 unalign: 0",
        "#",
        "# Using devices",
        "#  Rank  0 Group  0 Pid   1001 on     nodea device  0 [0000:1b:00] NVIDIA H100 80GB HBM3",
        "#  Rank  1 Group  0 Pid   2002 on     nodeb device  0 [0000:1b:00] NVIDIA H100 80GB HBM3",
        "#",
        *nt_header(),
        nt_lead(1024, 256, "float", "sum", -1)
        + nt_half("10.50", "0.10", "0.10", "0")
        + nt_half("10.40", "0.10", "0.10", "0"),
        nt_lead(2048, 512, "float", "sum", -1)
        + nt_half("11.50", "0.18", "0.18", "0")
        + nt_half("11.40", "0.18", "0.18", "0"),
        nt_lead(4096, 1024, "float", "sum", -1)
        + nt_half("12.50", "0.33", "0.33", "1e+06")
        + nt_half("12.40", "0.33", "0.33", "0"),
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : 0.203333",
        "#",
        "# Collective test concluded: all_reduce_perf",
        "",
    ]
)


def test_synthetic_modern_run() -> None:
    result = parse_text(MODERN)
    (run,) = result.runs
    assert run.nccl_tests_version == "2.19.6" and run.nccl_version == "2.28.7"
    assert run.params["unalign"] == 0 and run.hosts == ("nodea", "nodeb")
    assert [r.size_bytes for r in run.rows] == [1024, 2048, 4096]
    assert run.rows[2].out_of_place.wrong == 1000000  # type: ignore[union-attr]
    assert run.avg_busbw_gbps == 0.203333 and run.complete and result.warnings == ()


@pytest.mark.parametrize(
    ("prefix", "label"),
    [
        ("[1,0]<stdout>:", "Open MPI"),
        ("0: ", "rank prefix"),
        ("[pod/nccl-test-launcher-x/mpi] ", "kubectl"),
        ("2025-01-02T03:04:05.123456789Z ", "timestamp"),
        ("2025-01-02T03:04:05Z [1,0]<stderr>:", "Open MPI"),
    ],
)
def test_launcher_prefixes(prefix: str, label: str) -> None:
    plain = parse_text(MODERN).runs[0]
    result = parse_text("".join(prefix + line + "\n" for line in MODERN.splitlines()))
    (run,) = result.runs
    assert run.rows == plain.rows and run.ranks == plain.ranks and run.complete
    assert run.collective == "all_reduce" and run.avg_busbw_gbps == 0.203333
    assert has_warning(result, label)


def test_real_sample_behind_open_mpi_tags() -> None:
    text = any_sample(T + "xxrjun_pair_N2_G8_ok.log").read_text()
    tagged = "".join(f"[1,{i % 16}]<stdout>:{line}\n" for i, line in enumerate(text.splitlines()))
    plain, result = parse_text(text), parse_text(tagged)
    assert [r.rows for r in result.runs] == [r.rows for r in plain.runs]
    assert [r.avg_busbw_gbps for r in result.runs] == [23.4963, 15.1193]


def test_nccl_warn_lines_become_deduplicated_errors() -> None:
    lines = MODERN.splitlines()
    warn = "{host}:{pid}:{pid} [0] NCCL WARN Net : Connect to 10.0.0.2<43211> failed : refused"
    lines.insert(10, warn.format(host="nodea", pid=1001))
    lines.insert(11, warn.format(host="nodeb", pid=2002))
    lines.insert(14, "nodea:1001:1005 [0] NCCL INFO Channel 00/02 : 0 1")
    (run,) = parse_text("\n".join(lines)).runs
    assert run.errors == (warn.format(host="nodea", pid=1001),)
    assert run.complete and len(run.rows) == 3  # a warning is not a failure


def test_fatal_error_after_footer_does_not_undo_completion() -> None:
    text = MODERN + "nodeb: Test NCCL failure common.cu:1100 'unhandled system error'\n"
    (run,) = parse_text(text).runs
    assert run.complete and run.errors == (
        "nodeb: Test NCCL failure common.cu:1100 'unhandled system error'",
    )


def test_failure_mid_table_marks_run_failed() -> None:
    lines = MODERN.splitlines()
    cut = next(i for i, line in enumerate(lines) if line.strip().startswith("2048"))
    text = "\n".join(
        [*lines[:cut], "nodeb: Test NCCL failure all_reduce.cu:50 'unhandled system error'"]
    )
    result = parse_text(text)
    (run,) = result.runs
    assert not run.complete and len(run.rows) == 1 and len(run.errors) == 1
    assert has_warning(result, "failed: nodeb: Test NCCL failure")


def test_errors_before_the_run_attach_to_it() -> None:
    text = "Net : Connect to 10.1.1.1<5555> failed : Connection refused\n" + MODERN
    (run,) = parse_text(text).runs
    assert run.errors == ("Net : Connect to 10.1.1.1<5555> failed : Connection refused",)


def test_debug_line_glued_into_a_row_is_stitched() -> None:
    # NCCL_DEBUG output written to the same stream cuts rows in pieces (seen in real logs).
    lines = MODERN.splitlines()
    i = next(i for i, line in enumerate(lines) if line.strip().startswith("2048"))
    lines[i : i + 1] = [
        "        2048           512     float     sum      -1nodea:1001:1001 [0] NCCL INFO "
        "AllReduce: opCount 1 sendbuff 0x1 count 512 datatype 7 op 0",
        "nodea:1001:1001 [0] NCCL INFO AllReduce: 2048 Bytes -> Algo RING proto LL",
        "    11.50    0.18    0.18       0nodea:1001:1001 [0] NCCL INFO AllReduce: opCount 2",
        "    11.40    0.18    0.18       0",
    ]
    result = parse_text("\n".join(lines))
    assert result.runs[0].rows == parse_text(MODERN).runs[0].rows
    assert has_warning(result, "NCCL debug lines")


def test_source_location_prefixes_are_stripped() -> None:
    lines = MODERN.splitlines()
    patched = []
    for line in lines:
        if line.strip()[:1].isdigit():
            lead, rest = line[:52], line[52:]
            oop, ip = rest[:33], rest[33:]
            line = (
                f"TimeTest(), common.cu:610, {lead}BenchTime(), common.cu:561, {oop}"
                f"BenchTime(), common.cu:561, {ip}TimeTest(), common.cu:613, "
            )
        else:
            line = "run(), common.cu:967, " + line
        patched.append(line)
    result = parse_text("\n".join(patched))
    assert result.runs[0].rows == parse_text(MODERN).runs[0].rows
    assert has_warning(result, "source-location prefixes")


def test_optional_columns_timestamp_per_iteration_cputime() -> None:
    per_iter = "cputime algbw busbw #wrong i_min i_max i_p99 i_cv%"
    text = "\n".join(
        [
            "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 8(bytes) warmup iters: 1 iters: 2 "
            "agg iters: 1 validation: 0 graph: 1",
            "#  Rank  0 Group  0 Pid 1 on h device  0 [0000:01:00] GPU",
            "#  Rank  1 Group  0 Pid 1 on h device  1 [0000:02:00] GPU",
            f"#  size count type redop root {per_iter} {per_iter} timestamp",
            "  8  2 float sum -1  5.00 0.00 0.00 N/A 4.00 6.00 6.00 10.0"
            "  5.10 0.00 0.00 N/A 4.10 6.10 6.10 11.0  2025-05-06 07:08:09",
            " 16  4 float sum -1  5.50 0.00 0.00 N/A 4.50 6.50 6.50  9.0"
            "  5.60 0.00 0.00 N/A 4.60 6.60 6.60  9.5  2025-05-06 07:08:10",
            "# Out of bounds values : 0 OK",
            "# Avg bus bandwidth    : 0.001 OK",
        ]
    )
    result = parse_text(text)
    (run,) = result.runs
    assert run.params["step"] == 8 and run.params["step_kind"] == "bytes"
    assert run.params["graph"] == 1 and run.params["cputime"] is True
    assert halves(run.rows[1]) == ((5.5, 0.0, 0.0, None), (5.6, 0.0, 0.0, None))
    assert run.avg_busbw_gbps == 0.001 and run.complete
    assert has_warning(result, "extra columns")


def test_in_place_only_rows() -> None:
    header = MODERN.split("        1024", 1)[0]
    text = header + (
        "        1024           256     float     sum      -1"
        + " " * 32
        + "    10.40    0.10    0.10       0\n"
        "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.1\n"
    )
    result = parse_text(text)
    (run,) = result.runs
    assert run.rows[0].out_of_place is None
    assert run.rows[0].in_place is not None and run.rows[0].in_place.time_us == 10.4
    assert has_warning(result, "no out-of-place result")


def test_rows_without_any_header_use_the_modern_layout() -> None:
    text = "   1024  256  float  sum  -1  10.5  0.10  0.10  0  10.4  0.10  0.10  0\n"
    result = parse_text(text * 2)
    assert len(result.runs) == 1 and len(result.runs[0].rows) == 2
    assert not result.runs[0].complete


def test_na_and_nan_values_become_null() -> None:
    text = MODERN.replace(
        "    10.50    0.10    0.10       0    10.40",
        "      nan     N/A    0.10     N/A      inf",
    )
    r = parse_text(text).runs[0].rows[0]
    assert halves(r)[0] == (None, None, 0.1, None)
    assert r.in_place is not None and r.in_place.time_us is None


def test_several_runs_concatenated_without_footer_between() -> None:
    truncated = MODERN.split("# Out of bounds", 1)[0]
    result = parse_text(truncated + MODERN)
    first, second = result.runs
    assert len(first.rows) == 3 and not first.complete
    assert len(second.rows) == 3 and second.complete
    assert has_warning(result, "run 1 (all_reduce): no footer, output truncated after 3 rows")


# --------------------------------------------------------------------------- synthetic JSON


def upstream_document(rows: int = 3, *, env_size: int = 10) -> dict[str, Any]:
    """A -J document shaped like nccl-tests' util.cu (JSON_FILE_VERSION 3) writes it."""
    results = []
    for i in range(rows):
        size = 1024 << i
        results.append(
            {
                "size": size,
                "count": size // 4,
                "type": "float",
                "redop": "sum",
                "root": "    -1",
                "out_of_place": {"time": 10.0 + i, "alg_bw": 1.5, "bus_bw": 2.5, "nwrong": 0.0},
                "in_place": {"time": 11.0 + i, "alg_bw": 1.4, "bus_bw": 2.4, "nwrong": None},
                "out_of_place_per_iter": {"min_us": 9.0, "times_us": [9.0, 10.0, 11.0]},
                "actual_iterations": 20,
                "experiment_name": "",
            }
        )
    return {
        "version": 3,
        "start_time": "2025-07-01 10:00:00",
        "args": ["./build/reduce_scatter_perf", "-b", "1K", "-e", "4K", "-J", "out.json"],
        "env": [f"VAR{i}=" + "x" * 50 for i in range(env_size)],
        "nccl_version": 22807,
        "config": {
            "nthreads": 1,
            "ngpus": 1,
            "minimum_bytes": 1024,
            "maximum_bytes": 4096,
            "step_factor": 2,
            "warmup_iters": 5,
            "iterations": 20,
            "aggregated_iterations": 1,
            "validation": 1,
            "graph": 0,
            "blocking_collectives": "false",
            "per_iter_timing": "true",
            "per_iter_skip": 0,
            "parallel_init": "false",
            "devices": [
                {
                    "rank": r,
                    "group": 0,
                    "pid": 100 + r,
                    "hostname": f"node{r // 2}",
                    "device": r % 2,
                    "device_hex": f"0000:{r:02x}:00",
                    "device_info": "NVIDIA H200",
                }
                for r in range(4)
            ],
        },
        "results": results,
        "out_of_bounds": {"count": 0, "okay": "true"},
        "average_bus_bandwidth": {"bandwidth": 2.45, "okay": "unchecked"},
        "errors": [],
        "end_time": "2025-07-01 10:00:05",
    }


def check_upstream_run(run: NcclRun, rows: int = 3) -> None:
    assert run.format == "nccl_tests_json" and run.collective == "reduce_scatter"
    assert run.nccl_version == "2.28.7" and run.nranks == 4
    assert run.hosts == ("node0", "node1") and run.ranks[3].busid == "0000:03:00"
    assert run.params["minBytes"] == 1024 and run.params["iters"] == 20
    assert run.params["step"] == 2 and run.params["step_kind"] == "factor"
    assert run.params["agg_iters"] == 1 and run.params["per_iter_timing"] is True
    assert len(run.rows) == rows
    assert halves(run.rows[0]) == ((10.0, 1.5, 2.5, 0), (11.0, 1.4, 2.4, None))
    assert run.rows[0].root == -1 and run.rows[0].count == 256
    assert run.started_at == "2025-07-01 10:00:00" and run.ended_at == "2025-07-01 10:00:05"
    assert run.command is not None and run.command.startswith("./build/reduce_scatter_perf -b 1K")


def test_upstream_json_compact() -> None:
    data = json.dumps(upstream_document(), separators=(",", ":")).encode()
    assert nccl_tests.accepts("out.json", data[:65536])
    result = parse_bytes(data)
    (run,) = result.runs
    check_upstream_run(run)
    assert run.avg_busbw_gbps == 2.45 and run.out_of_bounds == 0 and run.complete
    assert result.warnings == ()


def test_upstream_json_pretty_with_env_larger_than_the_head() -> None:
    data = json.dumps(upstream_document(env_size=3000), indent=2).encode()
    assert len(data) > 64 * 1024
    assert nccl_tests.accepts("out.json", data[:65536])
    check_upstream_run(parse_bytes(data).runs[0])


class Trickle(io.RawIOBase):
    """A stream that hands out a few bytes per read, like a slow socket."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data, self._pos, self._step = data, 0, step

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:  # type: ignore[override]
        chunk = self._data[self._pos : self._pos + min(self._step, max(size, 0) or self._step)]
        self._pos += len(chunk)
        return chunk


def test_upstream_json_read_in_tiny_pieces() -> None:
    data = json.dumps(upstream_document(rows=6)).encode()
    result = nccl_tests.parse(Trickle(data, 7))  # type: ignore[arg-type]
    check_upstream_run(result.runs[0], rows=6)


def test_upstream_json_truncated_keeps_complete_rows() -> None:
    data = json.dumps(upstream_document(rows=5)).encode()
    cut = data.index(b'{"size": 16384')  # inside the results list, before row 5
    result = parse_bytes(data[: cut + 25])
    (run,) = result.runs
    assert len(run.rows) == 4 and not run.complete and run.avg_busbw_gbps is None
    assert has_warning(result, "JSON ends early")


def test_upstream_json_errors_and_nan() -> None:
    document = upstream_document(rows=1)
    document["results"][0]["out_of_place"]["time"] = "nan"
    document["results"][0]["in_place"] = None
    document["errors"] = ["NCCL WARN Cuda failure 'out of memory'"]
    (run,) = parse_bytes(json.dumps(document).encode()).runs
    assert run.rows[0].out_of_place.time_us is None  # type: ignore[union-attr]
    assert run.rows[0].in_place is None
    assert run.errors == ("NCCL WARN Cuda failure 'out of memory'",)


def test_two_concatenated_json_documents() -> None:
    one = json.dumps(upstream_document(rows=2))
    result = parse_text(one + "\n" + one + "\n")
    assert [len(r.rows) for r in result.runs] == [2, 2]


def test_rccl_json_lines_two_collectives() -> None:
    def record(name: str, size: int, in_place: int) -> str:
        return json.dumps(
            {
                "#wrong": "N/A" if in_place else "0",
                "algBw": 1.0,
                "busBw": 2.0,
                "gpus": 8,
                "inPlace": in_place,
                "name": name,
                "redop": "sum",
                "size": size,
                "time": 3.0,
                "type": "half",
            }
        )

    lines = [record("AllReduce", s, ip) for s in (8, 16) for ip in (0, 1)]
    lines += [record("AllGather", s, ip) for s in (8, 16) for ip in (0, 1)]
    result = parse_text("\n".join(lines) + "\n")
    assert [r.collective for r in result.runs] == ["all_reduce", "all_gather"]
    assert all(r.complete and r.nranks == 8 and len(r.rows) == 2 for r in result.runs)
    assert result.runs[0].rows[0].in_place.wrong is None  # type: ignore[union-attr]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n\n\n",
        b"\xff\xfe\xfd" * 1000,
        b"random words that mean nothing\n" * 10,
        b"{}",
        b'{"identifier": "nccl-tests structured output", "benchmark": [',
        b"[" * 100_000,
        b'{"results": [' + b"[" * 100_000,
    ],
)
def test_garbage_is_a_clean_parse_error_or_result(data: bytes) -> None:
    try:
        parse_bytes(data)
    except ParseError as exc:
        assert not exc.message.startswith("internal")


def test_empty_file_is_permanent_parse_error() -> None:
    with pytest.raises(ParseError) as info:
        parse_bytes(b"")
    assert info.value.permanent


def test_huge_numbers_and_long_lines() -> None:
    big = "9" * 5000
    text = MODERN.replace("        4096          1024", f"{big}    {big}")
    text += "x" * (2 * 1024 * 1024) + "\n"
    result = parse_text(text)
    assert len(result.runs[0].rows) == 2  # the absurd row is skipped, not fatal
    assert has_warning(result, "could not be parsed") and has_warning(result, "cut")


def test_bad_utf8_inside_a_real_sample() -> None:
    data = any_sample(T + "xxrjun_smoke_N2_G1.log").read_bytes()
    data = data.replace(b"Collective test starting", b"Collective \xff\xfe starting", 1)
    result = parse_bytes(data)
    assert len(result.runs) == 2 and result.runs[0].rows


# --------------------------------------------------------------------------- properties

FUZZ_SAMPLES = [
    "nccl_tests/xxrjun_smoke_N2_G1.log",
    "nccl_tests/xxrjun_pair_N2_G1_TRUNCATED_sendrecv_header.log",
    "nccl_tests/superbench_old_format_alltoall_8xA100_dgx.log",
    "nccl_tests/coreweave_readme_2023_old_format_error_column_128gpu_fragment.txt",
    "nccl_tests_json/nccl_tests_pr318_fork_json_alltoall_8gpu_TRUNCATED_EXCERPT.txt",
    "nccl_tests_json/rccl_tests_pr93_output_file_jsonlines_allreduce_4gpu_EXCERPT.jsonl",
    # ../shared/more-samples: a run with zero-size rows, a failed one, a prefixed fragment
    "nccl_tests/alcf_polaris_n8_g4_alltoall_slingshot_timeouts.dat",
    "nccl_tests/alcf_sophia_n2_g8_FAIL_unhandled_system_error.dat",
    "nccl_tests/aws_eks_p5_openmpi_tag_output_prefix_indented_fragment.txt",
]


def _sample_bytes() -> list[bytes]:
    found = [root / name for name in FUZZ_SAMPLES for root in (SAMPLES_DIR, MORE_SAMPLES_DIR)]
    return [p.read_bytes() for p in found if p.exists()]


SAMPLE_BYTES = _sample_bytes()
SAMPLE_BYTES.append(json.dumps(upstream_document(rows=4), indent=1).encode())
SAMPLE_BYTES.append(MODERN.encode())


def assert_survives(data: bytes) -> None:
    try:
        result = parse_bytes(data)
    except ParseError as exc:
        assert not exc.message.startswith("internal"), exc.message
        return
    json.dumps(result.to_json(), allow_nan=False)
    result.summary()


FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=4096))
def test_arbitrary_bytes(data: bytes) -> None:
    assert_survives(data)


@FUZZ
@given(st.data())
def test_truncated_prefixes_of_real_samples(data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(SAMPLE_BYTES))
    cut = data.draw(st.integers(min_value=0, max_value=len(source)))
    assert_survives(source[:cut])


@FUZZ
@given(st.data())
def test_mutated_lines_of_real_samples(data: st.DataObject) -> None:
    lines = data.draw(st.sampled_from(SAMPLE_BYTES)).split(b"\n")
    for _ in range(data.draw(st.integers(min_value=1, max_value=6))):
        i = data.draw(st.integers(min_value=0, max_value=len(lines) - 1))
        action = data.draw(st.sampled_from(["drop", "dup", "junk", "chop", "swap"]))
        if action == "drop":
            del lines[i]
        elif action == "dup":
            lines.insert(i, lines[i])
        elif action == "junk":
            lines[i] = data.draw(st.binary(max_size=120))
        elif action == "chop":
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
        else:
            j = data.draw(st.integers(min_value=0, max_value=len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        if not lines:
            lines = [b""]
    assert_survives(b"\n".join(lines))


@FUZZ
@given(
    st.lists(
        st.sampled_from(
            [
                "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) iters: 1",
                "#  Rank  0 Group  0 Pid 1 on h device 0 [0x1] G",
                "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong",
                "   8  2  float  sum  -1  1.0  0.1  0.1  0  1.0  0.1  0.1  0",
                "   8  2  float  sum  -1  1.0  0.1",
                "# Out of bounds values : 0 OK",
                "# Avg bus bandwidth    : 0.1",
                "# Collective test starting: sendrecv_perf",
                "# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902",
                "h:1:1 [0] NCCL WARN oops",
                "h: Test NCCL failure x.cu:1 'boom'",
                '{"#wrong":"0","algBw":1,"busBw":1,"inPlace":0,"name":"AllReduce","size":8}',
                "...",
                "",
            ]
        ),
        max_size=40,
    )
)
def test_random_sequences_of_real_line_kinds(lines: list[str]) -> None:
    assert_survives("\n".join(lines).encode())
