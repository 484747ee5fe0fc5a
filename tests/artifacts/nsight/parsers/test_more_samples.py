"""Nsight files from other clusters (../shared/more-samples): an nsys 2023.2 SQLite export
(schema 3.1.7, four GPUs of two models), two `nsys profile --stats=true` console outputs cut
from a README (prompt, progress and app lines around the reports) and an ncu 2025 CSV with
rule columns on a B200.

Expected values are read independently of the parsers: the SQLite file with the sqlite3
module, the CSV with the csv module, the console reports as printed (thousands separators
removed by hand).
"""

from __future__ import annotations

import csv
import io
import re
import sqlite3
from pathlib import Path

import pytest

from artifacts.nsight.parsers.ncu import csv as ncu_csv
from artifacts.nsight.parsers.nsys import sqlite as nsys_sqlite
from artifacts.nsight.parsers.nsys import stats as nsys_stats
from artifacts.parsers import detect_kind
from tests.samples import more_sample

SQLITE = "nsys/wenscarl_nsys2023.2_schema3.1.7_4gpu_a40_a100.sqlite"
STATS_N10 = "nsys/ayush_nsys_stats_true_vectoradd_N10_a100.txt"
STATS_N50M = "nsys/ayush_nsys_stats_true_vectoradd_N50M_a100.txt"
NCU_B200 = "ncu/superbench_ncu_csv_details_with_rules_sm100_b200.log"


def query(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return list(db.execute(sql))


# --------------------------------------------------------------------------- nsys SQLite


def test_nsys_2023_export_schema_3_1_7() -> None:
    path = more_sample(SQLITE)
    assert detect_kind(path.name, path.read_bytes()[:65536]) == "nsys_sqlite"
    with path.open("rb") as f:
        result = nsys_sqlite.parse(f)
    meta = dict(query(path, "select name, value from EXPORT_META_DATA"))
    assert result.export.schema_version == meta["EXPORT_SCHEMA_VERSION"] == "3.1.7"
    assert result.export.nsys_version == meta["EXPORT_PRODUCT_VERSION"]
    gpus = dict(query(path, "select id, name from TARGET_INFO_GPU"))
    assert {g.id: g.name for g in result.target.gpus} == gpus
    assert sorted(gpus.values()) == ["NVIDIA A100-PCIE-40GB"] * 2 + ["NVIDIA A40"] * 2
    [(count, total, low, high)] = query(
        path, "select count(*), sum(end-start), min(end-start), max(end-start) "
        "from CUPTI_ACTIVITY_KIND_KERNEL"
    )  # fmt: skip
    [kernel] = result.kernels  # one CUTLASS GEMM, launched 6 times
    assert (kernel.count, kernel.total_ns, kernel.min_ns, kernel.max_ns) == (
        count,
        total,
        low,
        high,
    )
    assert kernel.name.startswith("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<")
    copies = {
        kind: (n, size, ns)
        for kind, n, size, ns in query(
            path,
            "select copyKind, count(*), sum(bytes), sum(end-start) "
            "from CUPTI_ACTIVITY_KIND_MEMCPY group by copyKind",
        )
    }
    memory = {m.name: (m.count, m.total_bytes, m.total_ns) for m in result.memory}
    assert memory["[CUDA memcpy Host-to-Device]"] == copies[1]  # copyKind 1: HtoD
    assert memory["[CUDA memcpy Device-to-Host]"] == copies[2]  # copyKind 2: DtoH


# --------------------------------------------------------------------------- nsys stats


def executed_reports(text: str) -> list[str]:
    return re.findall(r"Executing '(\w+)' stats report", text)


@pytest.mark.parametrize("relative", [STATS_N10, STATS_N50M])
def test_nsys_stats_console_cut_from_a_readme(relative: str) -> None:
    # A prompt with the nsys command, the app's own lines and "[n/8]" progress lines sit
    # around the report tables: every report the console announces is read.
    path = more_sample(relative)
    text = path.read_text()
    assert detect_kind(path.name, path.read_bytes()[:65536]) == "nsys_stats"
    with path.open("rb") as f:
        result = nsys_stats.parse(f)
    assert [r.report for r in result.reports] == executed_reports(text)
    [kernel] = result.kernels
    assert kernel.name == "vectorAdd(const float *, const float *, float *, int)"
    assert kernel.count == 1010 and kernel.time_pct == 100.0
    assert [r.name for r in result.ranges] == ["Profile_Loop", "Warmup"]
    launch = next(a for a in result.api_calls if a.name == "cudaLaunchKernel")
    assert launch.count == 1010
    assert result.warnings == ()


def test_nsys_stats_values_as_printed() -> None:
    with more_sample(STATS_N10).open("rb") as f:
        small = nsys_stats.parse(f)
    # "100.0  1,831,281  1,010  1,813.1  1,823.0  1,791  4,705  93.3  vectorAdd(...)"
    [k] = small.kernels
    assert (k.total_ns, k.avg_ns, k.med_ns, k.min_ns, k.max_ns, k.stddev_ns) == (
        1831281, 1813.1, 1823.0, 1791, 4705, 93.3
    )  # fmt: skip
    # "sem_wait: 67.3  335,987,431  2  167,993,715.5 ..."
    sem = next(o for o in small.os_runtime if o.name == "sem_wait")
    assert (sem.time_pct, sem.total_ns, sem.count, sem.avg_ns) == (67.3, 335987431, 2, 167993715.5)
    with more_sample(STATS_N50M).open("rb") as f:
        large = nsys_stats.parse(f)
    # cuda_gpu_mem_size_sum: "400.000  2  200.000 ... [CUDA memcpy HtoD]" (MB = 10^6 bytes)
    h2d = next(m for m in large.memory if m.name == "[CUDA memcpy HtoD]")
    assert (h2d.count, h2d.total_bytes, h2d.avg_bytes) == (2, 400e6, 200e6)


# --------------------------------------------------------------------------- ncu CSV (B200)


def csv_rows(path: Path) -> list[dict[str, str]]:
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    return list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))


def test_ncu_2025_csv_with_rule_columns_on_b200() -> None:
    # "==PROF==" lines and the app's own numbers come before the header.
    path = more_sample(NCU_B200)
    assert detect_kind(path.name, path.read_bytes()[:65536]) == "ncu_csv"
    rows = csv_rows(path)
    with path.open("rb") as f:
        result = ncu_csv.parse(f)
    [kernel] = result.kernels
    first = rows[0]
    assert (kernel.name, kernel.cc, kernel.grid, kernel.block) == (
        first["Kernel Name"], "10.0", first["Grid Size"], first["Block Size"]
    )  # fmt: skip
    metrics = [r for r in rows if r["Metric Name"]]
    rules = [r for r in rows if r["Rule Name"]]
    assert len(kernel.metrics) == len(metrics) == 50
    assert len(kernel.rules) == len(rules) == 8
    by_name = {(r["Section Name"], r["Metric Name"]): r["Metric Value"] for r in metrics}
    duration = by_name[("GPU Speed Of Light Throughput", "Duration")]
    assert kernel.duration_ns == float(duration) == 406240
    occupancy = by_name[("Occupancy", "Achieved Occupancy")]
    assert kernel.achieved_occupancy_pct == float(occupancy)
    speedups = [(r["Rule Name"], r["Estimated Speedup"] or None) for r in rules]
    assert [(r.name, None if r.speedup_pct is None else r.speedup_pct) for r in kernel.rules] == [
        (name, None if value is None else float(value)) for name, value in speedups
    ]


@pytest.mark.parametrize("relative", [STATS_N10, STATS_N50M])
def test_each_report_cut_alone_gives_its_facts(relative: str) -> None:
    # Fragments are first-class: one report's table pasted without its "[n/8] Executing"
    # banner is named by its columns and gives the typed rows the whole file gives.
    text = more_sample(relative).read_text()
    whole = nsys_stats.parse(io.BytesIO(text.encode()))
    blocks = re.split(r"\n\[\d+/\d+\] Executing '\w+' stats report\n", text)[1:]
    assert len(blocks) == len(whole.reports) == 6
    field_of = {
        "nvtx_sum": "ranges", "osrt_sum": "os_runtime", "cuda_api_sum": "api_calls",
        "cuda_gpu_kern_sum": "kernels", "cuda_gpu_mem_time_sum": "memory",
        "cuda_gpu_mem_size_sum": "memory",
    }  # fmt: skip
    for block, report in zip(blocks, whole.reports, strict=True):
        fragment = block.strip("\n") + "\n"
        assert nsys_stats.accepts("x.txt", fragment.encode())
        result = nsys_stats.parse(io.BytesIO(fragment.encode()))
        [table] = result.reports
        assert (table.report, table.rows) == (report.report, report.rows)
        field = field_of[report.report]
        mine, theirs = getattr(result, field), getattr(whole, field)
        if field == "memory":  # times and sizes come from two reports: one alone is half
            key = "total_ns" if report.report.endswith("time_sum") else "total_bytes"
            assert {m.name: getattr(m, key) for m in mine} == {
                m.name: getattr(m, key) for m in theirs
            }
        else:
            assert mine == theirs
        assert any("read as " + report.report in w for w in result.warnings)
