"""nsys_sqlite: Nsight Systems SQLite exports of different schema versions.

Expected values for the real samples were read with the sqlite3 shell (e.g.
``select end-start from CUPTI_ACTIVITY_KIND_KERNEL``), not from the parser; those for the
synthetic export are worked out by hand in nsys_synthetic.py's comments and below.
"""

from __future__ import annotations

import gzip
import io
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.nsight.parsers.nsys import sqlite as nsys_sqlite
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from artifacts.parsers.streams import open_decompressed
from tests.artifacts.nsight.parsers import nsys_synthetic
from tests.samples import sample

RTX3060 = "nsys/p4arth_nsys2025.5_schema3.24.0_rtx3060.sqlite"
NO_CUDA = "nsys/stella_nsys2024.6_schema3.16.1_no_cuda_activity.sqlite"


def parse_file(relative: str) -> nsys_sqlite.NsysSqliteResult:
    with sample(relative).open("rb") as f:
        return nsys_sqlite.parse(f)


@pytest.fixture
def synthetic(tmp_path):
    return nsys_synthetic.build(tmp_path / "synthetic.sqlite")


def test_detects_both_samples_by_magic_and_table_names():
    for relative in (RTX3060, NO_CUDA):
        head = sample(relative).read_bytes()[:65536]
        assert detect_kind("report1.sqlite", head) == "nsys_sqlite"
    assert not nsys_sqlite.accepts("x.sqlite", b"SQLite format 3\x00" + b"\x00" * 200)


def test_schema_3_24_kernel_memcpy_api_and_target():
    result = parse_file(RTX3060)
    assert (result.export.nsys_version, result.export.schema_version) == ("2025.5.2.266", "3.24.0")
    assert result.export.duration_ns == 1450002034
    target = result.target
    assert (target.host, target.driver_version, target.cuda_driver_version) == (
        "DESKTOP-70MGH34",
        "591.44",
        "13.1",  # CudaDriverVersion 13010
    )
    [gpu] = target.gpus
    assert (gpu.name, gpu.chip, gpu.sm_count, gpu.memory_bytes, gpu.bus_location) == (
        "NVIDIA GeForce RTX 3060",
        "GA104",
        28,
        12884377600,
        "0000:01:00.0",
    )
    assert (gpu.compute_major, gpu.compute_minor) == (8, 6)
    [kernel] = result.kernels
    # 1143966856 - 1143927944
    assert kernel.name == "kernVectorAdd(const float *, const float *, float *, int)"
    assert (kernel.count, kernel.total_ns, kernel.med_ns, kernel.stddev_ns) == (1, 38912, 38912, 0)
    assert kernel.time_pct == 100.0 and not kernel.is_nccl
    # runtime correlationId 126 (same process): 1143927944 - 1141768668
    assert (kernel.launch_api, kernel.avg_launch_ns) == ("cudaLaunchKernel", 2159276)
    h2d, d2h = result.memory
    assert (h2d.name, h2d.count, h2d.total_ns, h2d.min_ns, h2d.max_ns) == (
        "[CUDA memcpy Host-to-Device]",
        2,
        676416 + 1781856,
        676416,
        1781856,
    )
    assert h2d.med_ns == (676416 + 1781856) / 2
    assert h2d.stddev_ns == pytest.approx((1781856 - 676416) / 2**0.5)
    assert (h2d.total_bytes, h2d.throughput_gbps) == (8388608, pytest.approx(8388608 / 2458272))
    assert (d2h.name, d2h.total_ns, d2h.total_bytes) == (
        "[CUDA memcpy Device-to-Host]",
        586464,
        4194304,
    )
    api = {a.name: a for a in result.api_calls}
    # cudaMalloc_v3020 x3 (nsys drops the _v3020 suffix), 303278828 + 827969 + 658818
    assert (api["cudaMalloc"].count, api["cudaMalloc"].total_ns) == (3, 304765615)
    assert api["cudaMalloc"].med_ns == 827969
    assert set(api) == {
        "cudaMalloc", "cudaMemcpy", "cudaDeviceSynchronize", "cuLibraryLoadData",
        "cudaLaunchKernel", "cudaFree", "cuModuleGetLoadingMode", "cuKernelGetName",
        "cuLibraryGetKernel",
    }  # fmt: skip
    assert sum(a.count for a in result.api_calls) == 15
    assert result.activity_tables["CUPTI_ACTIVITY_KIND_RUNTIME"] == 15
    assert sum(o.count for o in result.os_runtime) == 446
    assert [p.name for p in result.processes] == ["./vecAdd"]
    assert result.ranges == () and result.warnings == ()
    assert "No NVTX events collected. Does the process use NVTX?" in {
        d.text for d in result.diagnostics
    }


def test_utilisation_bins_cover_the_session_and_count_busy_time_once():
    [util] = parse_file(RTX3060).utilisation
    assert (util.device_id, util.start_ns, len(util.busy_pct)) == (0, 0, 100)
    assert util.bin_ns == 14500021  # ceil(1450002034 / 100)
    # the kernel and the three copies all fall in bin 78: 3083648 ns of 14500021
    assert util.busy_ns == 38912 + 676416 + 1781856 + 586464
    assert util.busy_pct[78] == round(100 * 3083648 / 14500021, 2)
    assert sum(1 for v in util.busy_pct if v) == 1


def test_export_without_cuda_activity_is_a_result_with_a_warning():
    result = parse_file(NO_CUDA)
    assert result.export.schema_version == "3.16.1"
    assert result.kernels == () and result.memory == () and result.api_calls == ()
    assert result.utilisation == () and result.target.gpus == ()
    assert result.target.driver_version == "591.91"
    assert any("no CUDA activity" in w for w in result.warnings)
    # the OS runtime calls are still summarised (491 rows of OSRT_API)
    assert sum(o.count for o in result.os_runtime) == 491
    assert result.summary()["kernels"] == 0


@pytest.mark.parametrize("old_schema", [False, True])
def test_synthetic_kernels_join_launches_on_process_and_correlation_id(tmp_path, old_schema):
    path = nsys_synthetic.build(tmp_path / "s.sqlite", old_schema=old_schema)
    with path.open("rb") as f:
        result = nsys_sqlite.parse(f)
    nccl, gemm = result.kernels
    assert nccl.is_nccl and not gemm.is_nccl
    assert (gemm.count, gemm.total_ns, gemm.med_ns, gemm.min_ns, gemm.max_ns) == (
        5,
        1600,
        300,
        100,
        600,
    )
    assert gemm.stddev_ns == pytest.approx((148000 / 4) ** 0.5)  # sample stddev of 100..400, 600
    assert (nccl.count, nccl.total_ns, nccl.med_ns) == (2, 1700, 850)
    assert nccl.time_pct == pytest.approx(100 * 1700 / 3300, abs=1e-3)
    assert gemm.time_pct == pytest.approx(100 * 1600 / 3300, abs=1e-3)
    # four launches 50 ns ahead in process 1, one 300 ns ahead in process 2 (same corr id 1)
    assert (gemm.launch_api, gemm.avg_launch_ns) == ("cudaLaunchKernel", 100)
    assert (nccl.launch_api, nccl.avg_launch_ns) == ("cuLaunchKernelEx", 500)
    labels = [m.name for m in result.memory]
    assert labels == [
        "[CUDA memcpy Host-to-Device]",
        "[CUDA memcpy Device-to-Host]",
        "[CUDA memset]",
    ]
    assert result.memory[0].throughput_gbps == 2500.0  # 1e6 bytes in 400 ns
    assert result.memory[2].total_bytes == 4096
    api = {a.name: a for a in result.api_calls}
    assert api["cudaLaunchKernel"].count == 5 and api["cudaMalloc"].total_ns == 40
    assert "cudaStreamIsCapturing_v10000" in api  # a 7-character suffix stays, as in nsys
    ranges = {(r.name, r.style): r for r in result.ranges}
    assert ranges[("step", "PushPop")].count == 2 and ranges[("step", "PushPop")].total_ns == 4300
    assert ranges[("epoch", "StartEnd")].total_ns == 4600  # text via textId -> StringIds
    assert len(result.ranges) == 2  # the mark (no end) is not a range
    assert [g.bus_location for g in result.target.gpus] == ["0000:19:00.0", "0000:3b:00.0"]
    assert result.target.cuda_driver_version == "12.4"
    assert result.summary()["nccl_kernel_pct"] == round(100 * 1700 / 3300, 2)


def test_synthetic_utilisation_is_an_interval_union_per_device(synthetic):
    with synthetic.open("rb") as f:
        dev0, dev1 = nsys_sqlite.parse(f).utilisation
    assert (dev0.bin_ns, dev0.start_ns) == (100, 0)  # session of 10000 ns in 100 bins
    # overlapping gemm and NCCL kernels (1500-2500 with 2000-2200) count once
    assert dev0.busy_ns == 400 + 100 + 1000 + 300 + 900 + 100 + 50
    busy = [i for i, v in enumerate(dev0.busy_pct) if v]
    assert busy == [5, 6, 7, 8, 10, *range(15, 25), 30, 31, 32, *range(35, 44), 50, 52]
    assert dev0.busy_pct[52] == 50.0  # memset 5200-5250
    assert [i for i, v in enumerate(dev0.nccl_pct) if v] == [*range(15, 25), *range(35, 42)]
    assert dev1.device_id == 1 and dev1.busy_ns == 600 and dev1.nccl_pct == ()


def test_gzipped_export_is_read_through_the_central_gunzip(synthetic):
    packed = gzip.compress(synthetic.read_bytes())
    stream = open_decompressed(io.BytesIO(packed), compressed_size=len(packed))
    assert len(nsys_sqlite.parse(stream).kernels) == 2


def test_refuses_bytes_that_are_not_sqlite():
    with pytest.raises(ParseError, match="not an SQLite database"):
        nsys_sqlite.parse(io.BytesIO(b"Time (%)  Total Time (ns)\n" * 20))
    with pytest.raises(ParseError, match="empty"):
        nsys_sqlite.parse(io.BytesIO(b""))


def test_refuses_an_sqlite_database_that_is_not_an_nsys_export(tmp_path):
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER, body TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(ParseError, match="not an Nsight Systems export"):
        nsys_sqlite.parse(path.open("rb"))


def test_truncated_export_says_it_is_truncated():
    data = sample(RTX3060).read_bytes()
    with pytest.raises(ParseError, match="truncated: it holds 276480 of the 552960 bytes"):
        nsys_sqlite.parse(io.BytesIO(data[: len(data) // 2]))


def test_a_readable_export_shorter_than_its_header_says_keeps_a_warning(synthetic, monkeypatch):
    # SQLite itself refuses such files today; should one ever read, the user is still told.
    monkeypatch.setattr(nsys_sqlite, "_truncation", lambda header, size: "the file is truncated")
    result = nsys_sqlite.parse(synthetic.open("rb"))
    assert len(result.kernels) == 2 and result.warnings[0] == "the file is truncated"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4096))
def test_random_bytes_give_a_parse_error(data):
    with pytest.raises(ParseError):
        nsys_sqlite.parse(io.BytesIO(data))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cut=st.integers(min_value=0, max_value=552960),
    flips=st.lists(st.integers(0, 552959), max_size=8),
)
def test_truncated_or_corrupted_exports_give_a_result_or_a_parse_error(cut, flips):
    data = bytearray(sample(RTX3060).read_bytes())
    for position in flips:
        data[position] ^= 0xFF
    try:
        result = nsys_sqlite.parse(io.BytesIO(bytes(data[:cut])))
    except ParseError:
        return
    assert isinstance(result, nsys_sqlite.NsysSqliteResult)
    result.to_json()


@pytest.mark.parametrize("with_enum", [True, False])
def test_nvtx_ranges_are_summarised_per_domain(tmp_path, with_enum):
    """The synthetic export's ranges are in the default domain (id 0: step 3600 + 700 ns,
    epoch 4600 ns); add an "NCCL" domain (id 5) with two AllReduce ranges and one of a domain
    whose create event is missing (id 9)."""
    path = nsys_synthetic.build(tmp_path / "d.sqlite")
    conn = sqlite3.connect(path)
    if with_enum:
        conn.execute("INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (75, 'NvtxDomainCreate', 'x')")
    else:
        conn.execute("DELETE FROM ENUM_NSYS_EVENT_TYPE")  # the fallback ids are used then
    rows = [
        (10, None, 75, "NCCL", None, 5),
        (1000, 1500, 59, "ncclAllReduce", None, 5),
        (2000, 2300, 59, "ncclAllReduce", None, 5),
        (3000, 3010, 59, "x", None, 9),
    ]
    conn.executemany(
        "INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, NULL, NULL, NULL, ?, 1, NULL, ?, ?)", rows
    )
    conn.commit()
    conn.close()
    with path.open("rb") as f:
        result = nsys_sqlite.parse(f)
    domains = {d.domain: d for d in result.nvtx_domains}
    assert set(domains) == {"default", "NCCL", "domain 9"}
    assert (domains["default"].ranges, domains["default"].names) == (3, 2)
    assert domains["default"].total_ns == 3600 + 700 + 4600
    nccl = domains["NCCL"]
    assert (nccl.domain_ids, nccl.ranges, nccl.names, nccl.total_ns, nccl.max_ns) == (
        (5,),
        2,
        1,
        800,
        500,
    )
    assert domains["domain 9"].total_ns == 10
    assert result.to_json()["nvtx_domains"][0]["domain"] == "default"  # most time first


def test_exports_without_nvtx_have_no_domains():
    assert parse_file(RTX3060).nvtx_domains == ()
