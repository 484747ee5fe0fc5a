"""PyTorch Profiler (Kineto) traces: every shared sample, agreement with HTA 0.5.0, detection,
format variants (chunk cuts, compact/indented JSON, metadata after traceEvents), robustness.

Reference numbers in tests/expected/torch_trace/<sample>.json come from HTA 0.5.0 run on the
samples (regenerate with hta_reference.py there, in a throwaway venv); other expected values
were read off the files. Agreement is required within 0.5 % of the GPU span.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.parsers.base import ParseError
from artifacts.parsers.streams import HEAD_BYTES, open_decompressed
from artifacts.traces.analysis import breakdown as tb
from artifacts.traces.parsers import torch_trace
from tests.samples import (
    MORE_SAMPLES_DIR,
    REPO_DIR,
    SAMPLES_DIR,
    TESTS_DIR,
    all_samples,
    sample,
)

EXPECTED_DIR = TESTS_DIR / "expected" / "torch_trace"
# Both sample folders, read alike (the 8 ranks of a DLRM job sit in a sub-folder of
# ../shared/more-samples). Left out: the same 8 ranks as one tar.gz, a trace_archive bundle
# (tests/artifacts/bundles/parsers/test_trace_archive.py; its members are the files beside it).
ARCHIVES = {"param_dlrm_kineto_8rank.tar.gz"}
TORCH = [p for p in all_samples("torch_profiler", "**/*") if p.name not in ARCHIVES]
TOLERANCE = 0.005  # of the GPU span
CPU_ONLY = {
    "hta_cpu_only_gloo_rank34_world300.pt.trace.json.gz",
    "hta_no_distributedInfo_cpu_only.json.gz",
    "hta_cupti_profiler_counters.json.gz",
}


def _ids(paths: list[Path]) -> list[str]:
    return [p.name for p in paths]


def content(path: Path) -> bytes:
    with path.open("rb") as fh:
        return open_decompressed(fh, compressed_size=path.stat().st_size).read()


def parse_path(path: Path) -> torch_trace.TorchTraceResult:
    with path.open("rb") as fh:
        return torch_trace.parse(open_decompressed(fh, compressed_size=path.stat().st_size))


def columns_of(path: Path) -> torch_trace.TraceColumns:
    with path.open("rb") as fh:
        return torch_trace.read_trace(open_decompressed(fh, compressed_size=path.stat().st_size))


def parse_bytes(data: bytes) -> torch_trace.TorchTraceResult:
    return torch_trace.parse(io.BytesIO(data))


def expected(path: Path) -> dict[str, Any]:
    return json.loads((EXPECTED_DIR / f"{path.name}.json").read_text())


def assert_close(mine: float, theirs: float, span: float, what: str) -> None:
    assert abs(mine - theirs) <= TOLERANCE * span + 1e-9, f"{what}: {mine} vs HTA {theirs}"


_CACHE: dict[str, Any] = {}


def parsed(path: Path) -> torch_trace.TorchTraceResult:
    if path.name not in _CACHE:
        _CACHE[path.name] = parse_path(path)
    return _CACHE[path.name]


# ---------------------------------------------------------------------------------------
# Every sample
# ---------------------------------------------------------------------------------------


def test_the_samples_are_there() -> None:
    if not SAMPLES_DIR.exists():
        pytest.skip("../shared/samples not available")
    assert len(TORCH) >= 17 + (10 if MORE_SAMPLES_DIR.exists() else 0)
    assert {p.name for p in TORCH} == {p.name[: -len(".json")] for p in EXPECTED_DIR.glob("*.json")}


@pytest.mark.parametrize("path", TORCH, ids=_ids(TORCH))
def test_every_sample_parses_with_consistent_sections(path: Path) -> None:
    result = parsed(path)
    body = result.to_json()
    json.dumps(body, allow_nan=False)  # canonical JSON: plain types, no NaN
    assert list(body)[:6] == ["kind", "rank", "world_size", "backend", "nccl_version", "devices"]
    assert list(body)[-1] == "warnings"
    assert body["kind"] == "torch_trace"
    assert list(body["temporal_breakdown"]) == ["whole_trace", "hta_default"]
    assert body["temporal_breakdown"]["whole_trace"] == result.breakdown
    assert body["comm_comp_overlap_pct"] == result.breakdown.get("comm_comp_overlap_pct")
    for key in ("kernel_types", "kernels", "steps", "collectives"):
        assert key in body
    b = result.breakdown
    if path.name in CPU_ONLY:
        assert result.meta["cpu_only"] is True and result.meta["platform"] == "cpu"
        assert any(w.startswith("CPU-only trace") for w in result.warnings)
        assert b["gpu_events"] == 0 and result.kernels == []
        return
    assert result.meta["cpu_only"] is False
    span = b["kernel_time_us"]
    parts = b["idle_time_us"] + b["compute_time_us"] + b["non_compute_time_us"]
    assert parts == pytest.approx(span, abs=5e-3)
    assert b["busy_time_us"] == pytest.approx(span - b["idle_time_us"], abs=5e-3)
    assert b["idle_time_pct"] + b["compute_time_pct"] + b["non_compute_time_pct"] == (
        pytest.approx(100, abs=0.01)
    )
    assert b["communication_time_us"] <= b["busy_time_us"] + 1e-6
    assert sum(r["count"] for r in result.kernels) == b["gpu_events"]
    assert sum(r["pct"] for r in result.kernels) == pytest.approx(100, abs=0.1)
    for row in result.kernels:
        assert row["min_us"] <= row["mean_us"] <= row["max_us"]
        assert row["type"] in tb.TYPE_NAMES
    assert result.summary()["gpu_events"] == b["gpu_events"]


# ---------------------------------------------------------------------------------------
# Agreement with HTA 0.5.0
# ---------------------------------------------------------------------------------------

HTA_OK = [p for p in TORCH if p.name not in CPU_ONLY]


@pytest.mark.parametrize("path", HTA_OK, ids=_ids(HTA_OK))
def test_temporal_breakdown_agrees_with_hta(path: Path) -> None:
    ref = expected(path)["temporal"]
    mine = parsed(path).breakdown_steps
    assert mine["window"] == "hta_default"
    if path.name == "hta_triton_example.json.gz":
        # HTA counts a CPU op with a stream argument as a kernel (see the note in the
        # expected file); the file has one kernel of 1.76 us, rounded by HTA to 1 us.
        assert ref["kernel_time_us"] == 94.0
        assert mine["kernel_time_us"] == 1.0 and mine["compute_time_us"] == 1.0
        assert parsed(path).breakdown["kernel_time_us"] == 1.76
        return
    span = ref["kernel_time_us"]
    for key, value in ref.items():
        assert_close(mine[key], value, span, key)


@pytest.mark.parametrize("path", HTA_OK, ids=_ids(HTA_OK))
def test_kernel_breakdown_agrees_with_hta(path: Path) -> None:
    if path.name == "hta_triton_example.json.gz":
        pytest.skip("HTA counts a CPU op as a kernel here (see the expected file's note)")
    ref = expected(path)
    check_kernels_against_hta(path, ref, ref["temporal"]["kernel_time_us"])


def check_kernels_against_hta(path: Path, ref: dict[str, Any], span: float) -> None:
    """Kernel types and the per-name table over HTA's window agree with HTA's ``ref``."""
    mine_types = {r["type"]: r["sum_us"] for r in parsed(path).breakdown_steps["kernel_types"]}
    for row in ref["kernel_types"]:
        assert_close(mine_types.get(row["type"], 0.0), row["sum_us"], span, row["type"])
    # Per kernel name, over HTA's window (with its rounding), as HTA tabulates them.
    cols = columns_of(path)
    w = cols.hta_window()
    rows = tb.kernel_table(w["name_id"], w["dur"], cols.names, cols.hta_name_types)
    table = {r["name"]: r for r in rows}
    assert len(ref["kernels"]) > 0
    for row in ref["kernels"]:
        mine = table[row["name"]]
        assert_close(mine["sum_us"], row["sum_us"], span, row["name"][:60])
        for key in ("mean_us", "min_us", "max_us"):
            assert mine[key] == pytest.approx(row[key], abs=0.01), (key, row["name"][:60])


@pytest.mark.parametrize("path", HTA_OK, ids=_ids(HTA_OK))
def test_idle_and_launch_statistics_agree_with_hta(path: Path) -> None:
    ref = expected(path)
    check_idle_against_hta(path, ref, ref["temporal"]["kernel_time_us"])
    stats = launch_stats(path)
    if path.name in {"hta_amd_mi250_rocm62.json.gz", "hta_triton_example.json.gz"}:
        # HTA only knows the CUDA runtime launch calls; PerfHub also counts HIP/driver ones.
        assert ref["launch"]["launches"] == 0 and stats["launches"] > 0
        return
    for key, value in ref["launch"].items():
        assert stats[key] == value, key


def check_idle_against_hta(path: Path, ref: dict[str, Any], span: float) -> None:
    cols = columns_of(path)
    w, cpu = cols.hta_window(), cols.cpu
    cpu_ts = np.ceil(cpu["ts"])  # HTA rounds host events too
    kernels = w["kind"] != 3  # not stream syncs
    idle = tb.idle_breakdown(
        w["ts"][kernels],
        w["end"][kernels],
        w["stream"][kernels],
        tb.lookup(cpu["correlation"], cpu_ts, w["correlation"][kernels]),
    )
    mine = {
        (s["stream"], k): s[f"{k}_us"]
        for s in idle["streams"]
        for k in ("host_wait", "kernel_wait", "other")
    }
    for row in ref["idle"]:
        got = mine.get((row["stream"], row["category"]), 0.0)
        assert_close(got, row["idle_us"], span, f"stream {row['stream']} {row['category']}")


def launch_stats(path: Path) -> dict[str, Any]:
    """Kernel launch statistics over HTA's window, with HTA's rounding of host events."""
    cols = columns_of(path)
    w, cpu = cols.hta_window(), cols.cpu
    cpu_ts = np.ceil(cpu["ts"])
    cpu_dur = np.floor(cpu["ts"] + cpu["dur"]) - cpu_ts
    launch_flag = tb.lookup(cpu["correlation"], cpu["launch"].astype(float), w["correlation"])
    pairs = launch_flag == 1.0
    corr = w["correlation"][pairs]
    return tb.launch_stats(
        tb.lookup(cpu["correlation"], cpu_ts, corr),
        tb.lookup(cpu["correlation"], cpu_dur, corr),
        w["ts"][pairs],
        w["dur"][pairs],
    )


@pytest.mark.parametrize("path", [p for p in TORCH if p.name in CPU_ONLY], ids=lambda p: p.name)
def test_hta_cannot_analyse_cpu_only_traces_and_we_say_so(path: Path) -> None:
    assert "hta_error" in expected(path)
    assert parsed(path).meta["cpu_only"] is True


def test_whole_trace_window_equals_hta_where_hta_keeps_everything() -> None:
    # Integer timestamps and fewer than two ProfilerSteps: HTA's view is the whole trace.
    names = (
        "hta_gpu_user_annotation_step_based.json.gz",
        "hta_inference_rank_1_legacy_cats.json.gz",
    )
    for name in names:
        path = sample(f"torch_profiler/{name}")
        result = parsed(path)
        assert result.breakdown_steps["filtered"] is False
        for key, value in expected(path)["temporal"].items():
            assert result.breakdown[key] == value, (name, key)


def test_step_window_drops_the_last_profiler_step() -> None:
    result = parsed(sample("torch_profiler/hta_df_index_resolver_rank1_world2.json.gz"))
    whole, hta = result.breakdown, result.breakdown_steps
    assert hta["filtered"] is True and hta["dropped_gpu_events"] > 0
    assert hta["kernel_time_us"] < whole["kernel_time_us"]
    assert [s["step"] for s in result.steps] == sorted(s["step"] for s in result.steps)
    last = result.steps[-1]
    assert hta["cutoff_us"] == pytest.approx(last["start_us"], abs=1.0)


# ---------------------------------------------------------------------------------------
# Values read off the files
# ---------------------------------------------------------------------------------------


def test_nccl_metadata_collectives_and_bandwidth() -> None:
    result = parsed(sample("torch_profiler/hta_nccl_data_world2_rank0.json.gz"))
    meta = result.meta
    assert (meta["rank"], meta["world_size"], meta["backend"]) == (0, 2, "nccl")
    assert meta["nccl_version"] == "2.17.1" and meta["pg_count"] == 1
    assert meta["process_groups"] == [
        {"name": "0", "desc": "default_pg", "size": 2, "backend_config": "cuda:nccl"}
    ]
    assert meta["devices"][0] == {
        "id": 0,
        "name": "NVIDIA A100-PG509-200",
        "total_memory_bytes": 42297524224,
        "total_memory_gib": 39.39,
        "num_sms": 108,
        "compute_capability": "8.0",
        "warp_size": 32,
    }
    assert meta["platform"] == "cuda" and meta["display_time_unit"] == "ms"
    assert meta["base_time_ns"] == 1711964646000000000
    # The kernel at ts 4458677009853.422: allreduce of 6637568 floats over 2 ranks.
    row = next(c for c in result.collectives if c["dur_us"] == 2636.669)
    assert row["collective"] == "allreduce" and row["group_size"] == 2
    assert row["dtype"] == "Float" and row["size_bytes"] == 6637568 * 4
    assert row["algbw_gbps"] == pytest.approx(6637568 * 4 / 2636.669e3, rel=1e-4)
    assert row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * 2 * (2 - 1) / 2, rel=1e-4)
    assert row["process_group_desc"] == "default_pg"
    names = {r["collective"] for r in result.collectives_summary}
    assert names == {"allreduce", "broadcast"}
    assert sum(r["count"] for r in result.collectives_summary) == len(result.collectives)


def test_float_nanosecond_timestamps_are_kept_in_the_whole_trace_window() -> None:
    result = parsed(sample("torch_profiler/hta_amd_mi250_rocm62.json.gz"))
    # First GPU event: Memcpy at 4203669603454.206 (22.441 us); last kernel ends at
    # 4203669612357.612 + 8.481 (read off the file).
    assert result.breakdown["kernel_time_us"] == pytest.approx(
        4203669612357.612 + 8.481 - 4203669603454.206, abs=1e-3
    )
    assert result.meta["platform"] == "rocm" and result.meta["rank"] is None
    assert any("no distributedInfo" in w for w in result.warnings)
    assert result.launch["launches"] == 14  # hipLaunchKernel/hipExtModuleLaunchKernel/memcpy


def test_cpu_only_gloo_trace_metadata() -> None:
    result = parsed(sample("torch_profiler/hta_cpu_only_gloo_rank34_world300.pt.trace.json.gz"))
    meta = result.meta
    assert (meta["rank"], meta["world_size"], meta["backend"], meta["pg_count"]) == (
        34,
        300,
        "gloo",
        10,
    )
    # pg_count says 10 but pg_config lists 11 groups (read off the file): both are kept.
    assert len(meta["process_groups"]) == 11 and meta["process_groups"][0]["size"] == 300
    assert meta["devices"] == []


def test_legacy_categories_are_understood() -> None:
    result = parsed(sample("torch_profiler/hta_inference_rank_1_legacy_cats.json.gz"))
    assert result.meta["categories"]["Kernel"] == 4 and result.meta["categories"]["Runtime"] == 8
    assert result.breakdown["gpu_events"] == 4 and result.meta["rank"] == 1


def test_old_async_cpu_to_gpu_flows_and_record_param_comms() -> None:
    result = parsed(sample("torch_profiler/hta_trace_diff_control_rank3_world8.json.gz"))
    assert result.meta["world_size"] == 8 and result.meta["rank"] == 3
    kinds = {r["collective"] for r in result.collectives}
    assert kinds and None not in kinds  # collective read from the kernel names
    assert result.launch["launches"] > 0


def test_independent_reading_of_a_small_sample() -> None:
    """Cross-check against the stdlib json reading of the whole file (fine when small)."""
    path = sample("torch_profiler/hta_sampled_world128_rank-0.json.gz")
    doc = json.loads(gzip.decompress(path.read_bytes()))
    gpu = [
        e
        for e in doc["traceEvents"]
        if e.get("ph") == "X" and e.get("cat") in {"kernel", "gpu_memcpy", "gpu_memset"}
    ]
    result = parsed(path)
    assert result.breakdown["gpu_events"] == len(gpu)
    start = min(e["ts"] for e in gpu)
    assert result.breakdown["kernel_time_us"] == max(e["ts"] + e["dur"] for e in gpu) - start
    by_name: dict[str, list[float]] = {}
    for e in gpu:
        by_name.setdefault(e["name"], []).append(e["dur"])
    for row in result.kernels:
        durs = by_name[row["name"]]
        assert (row["count"], row["sum_us"], row["max_us"]) == (len(durs), sum(durs), max(durs))
    steps = sorted(
        (e["ts"], e["dur"])
        for e in doc["traceEvents"]
        if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep")
    )
    assert [(s["dur_us"]) for s in result.steps] == [d for _, d in steps]
    assert result.meta["world_size"] == 128


# ---------------------------------------------------------------------------------------
# Detection
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", TORCH, ids=_ids(TORCH))
def test_accepts_every_kineto_sample(path: Path) -> None:
    assert torch_trace.accepts(path.name, content(path)[:HEAD_BYTES])


def test_refuses_other_kinds_of_files() -> None:
    others = [
        p
        for root in (SAMPLES_DIR, MORE_SAMPLES_DIR)
        for p in root.glob("*/*")
        if p.parent.name != "torch_profiler"
    ]
    if not others:
        pytest.skip("../shared/samples not available")
    nccl = sample("nccl_tests/xxrjun_pair_N2_G1_ok.log")
    assert not torch_trace.accepts(nccl.name, nccl.read_bytes()[:HEAD_BYTES])
    for path in others:
        if path.name == "MANIFEST.tsv" or path.stat().st_size > 50_000_000:
            continue
        head = content(path)[:HEAD_BYTES]
        assert not torch_trace.accepts(path.name, head), path


@pytest.mark.parametrize(
    "head",
    [
        b'{"a": 1, "b": [1, 2, 3]}',
        b'{"config": {"minBytes": 8}, "results": []}',
        b'[{"name": "x"}]',
        b'{"traceEvents": [{"ph": "X", "name": "foo", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}',
        b"",
        b"\x1f\x8b\x08\x00garbage",
        b"traceEvents schemaVersion deviceProperties",
    ],
)
def test_refuses_other_json(head: bytes) -> None:
    assert not torch_trace.accepts("trace.json", head)


def test_accepts_kineto_whose_events_start_beyond_the_head() -> None:
    ranks = ", ".join(str(i) for i in range(20000))
    head = (
        '{\n  "schemaVersion": 1,\n  "deviceProperties": [],\n  "distributedInfo": '
        f'{{"rank": 0, "pg_config": [{{"ranks": [{ranks}]}}]}}'
    )
    assert torch_trace.accepts("rank0.json", head.encode()[:HEAD_BYTES])


# ---------------------------------------------------------------------------------------
# Format variants: the streaming reader must not depend on Kineto's exact layout
# ---------------------------------------------------------------------------------------

VARIANT_SAMPLE = "torch_profiler/hta_gpu_user_annotation_step_based.json.gz"


def _analysis_view(result: torch_trace.TorchTraceResult) -> dict[str, Any]:
    body = result.to_json()
    body["meta"] = {k: v for k, v in body["meta"].items() if k != "bytes_read"}
    return body


@pytest.fixture(scope="module")
def variant_doc() -> tuple[bytes, dict[str, Any]]:
    data = content(sample(VARIANT_SAMPLE))
    return data, json.loads(data)


@pytest.mark.parametrize("chunk", [97, 1000, 4096, 65536])
def test_chunk_size_does_not_change_the_result(
    chunk: int, variant_doc: tuple[bytes, dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, _ = variant_doc
    reference = _analysis_view(parse_bytes(data))
    monkeypatch.setattr(torch_trace, "CHUNK_BYTES", chunk)
    assert _analysis_view(parse_bytes(data)) == reference


@pytest.mark.parametrize(
    "dump",
    [
        lambda d: json.dumps(d, separators=(",", ":")),  # one line, no spaces
        lambda d: json.dumps(d, indent=4),  # nested args on their own lines
        lambda d: json.dumps(  # metadata after the events
            {"traceEvents": d["traceEvents"], **{k: v for k, v in d.items() if k != "traceEvents"}}
        ),
    ],
    ids=["compact", "indent4", "metadata-last"],
)
def test_other_json_layouts_give_the_same_result(
    dump: Any, variant_doc: tuple[bytes, dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, doc = variant_doc
    reference = _analysis_view(parse_bytes(data))
    monkeypatch.setattr(torch_trace, "CHUNK_BYTES", 8192)
    assert _analysis_view(parse_bytes(dump(doc).encode())) == reference


def test_event_boundaries_inside_strings_and_nested_args(monkeypatch: pytest.MonkeyPatch) -> None:
    tricky = '}, {"ph": "X", "cat": "kernel"},\n  {'
    events = [
        {
            "ph": "X",
            "cat": "kernel",
            "name": f"k{tricky}{i}",
            "pid": 0,
            "tid": 7,
            "ts": 100 + 10 * i,
            "dur": 5,
            "args": {"stream": 7, "correlation": i, "nested": [{"a": 1}, {"b": [{"c": 2}]}]},
        }
        for i in range(200)
    ]
    doc = {"schemaVersion": 1, "traceEvents": events, "deviceProperties": [{"id": 0}, {"id": 1}]}
    for chunk in (64, 300, 5000):
        monkeypatch.setattr(torch_trace, "CHUNK_BYTES", chunk)
        result = parse_bytes(json.dumps(doc, indent=2).encode())
        assert result.breakdown["gpu_events"] == 200
        assert result.breakdown["kernel_time_us"] == 1995
        assert len(result.meta["devices"]) == 2
        assert result.warnings == ("no distributedInfo: rank and world size are unknown",)


def test_memory_stays_bounded_while_streaming(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 12 MB trace read with 64 KiB chunks never buffers more than a few chunks."""
    monkeypatch.setattr(torch_trace, "CHUNK_BYTES", 64 * 1024)
    event = (
        '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": %d, '
        '"dur": 3, "args": {"External id": %d, "Input Dims": [[64, 64], [64, 64]]}}'
    )
    body = ",\n  ".join(event % (i * 5, i) for i in range(90_000))
    data = ('{"schemaVersion": 1, "traceEvents": [\n  ' + body + "\n]}").encode()
    peak = 0
    original = torch_trace._TraceReader._fill

    def spy(self: Any, want: int) -> None:
        nonlocal peak
        original(self, want)
        peak = max(peak, len(self.buf))

    monkeypatch.setattr(torch_trace._TraceReader, "_fill", spy)
    result = parse_bytes(data)
    assert result.meta["events"] == 90_000 and len(data) > 10_000_000
    assert peak <= 4 * 64 * 1024


def test_big_unneeded_metadata_is_skipped_without_buffering(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(torch_trace, "CHUNK_BYTES", 16 * 1024)
    info = json.dumps([f"INFO: line {i} of the profiler log" for i in range(60_000)])
    data = (
        '{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", '
        '"ts": 5, "dur": 1, "args": {"stream": 7}}], "INFO": ' + info + ', "distributedInfo": '
        '{"rank": 3, "world_size": 4}, "displayTimeUnit": "ms"}'
    ).encode()
    peak = 0
    original = torch_trace._TraceReader._fill

    def spy(self: Any, want: int) -> None:
        nonlocal peak
        original(self, want)
        peak = max(peak, len(self.buf))

    monkeypatch.setattr(torch_trace._TraceReader, "_fill", spy)
    result = parse_bytes(data)
    assert len(data) > 2_000_000 and peak <= 4 * 16 * 1024
    assert (result.meta["rank"], result.meta["world_size"]) == (3, 4)
    assert result.meta["display_time_unit"] == "ms" and result.breakdown["gpu_events"] == 1


# ---------------------------------------------------------------------------------------
# Truncated and bad input
# ---------------------------------------------------------------------------------------


def test_truncated_trace_keeps_what_was_read(variant_doc: tuple[bytes, dict]) -> None:
    data, _ = variant_doc
    full = parse_bytes(data)
    cut = parse_bytes(data[: len(data) * 2 // 3])
    assert cut.meta["truncated"] is True
    assert any("truncated" in w for w in cut.warnings)
    assert 0 < cut.meta["events"] < full.meta["events"]


def test_truncated_gzip_keeps_what_was_read() -> None:
    path = sample("torch_profiler/hta_sampled_world128_rank-0.json.gz")
    raw = path.read_bytes()[:-20000]
    stream = open_decompressed(io.BytesIO(raw), compressed_size=len(raw))
    result = torch_trace.parse(stream)
    assert result.meta["truncated"] and result.breakdown["gpu_events"] > 0


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "empty file"),
        (b"   \n", "empty file"),
        (b"hello world", "not JSON"),
        (b'{"schemaVersion": 1}', "no traceEvents"),
        (b'{"traceEvents": []}', "no events"),
        (b'{"traceEvents": [', "no complete trace event"),
        (b'{"traceEvents": [{"ph": "X", "na', "no complete trace event"),
    ],
)
def test_nothing_usable_is_a_permanent_parse_error(data: bytes, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_bytes(data)
    assert info.value.permanent is True and message in info.value.message


def test_bad_events_are_skipped_with_a_warning() -> None:
    events = [
        '{"ph": "X", "cat": "kernel", "name": "good", "ts": 10, "dur": 5, '
        '"args": {"stream": 7, "correlation": 1}}',
        '{"ph": "X", "cat": "kernel", "name": "\xff\xfe", "ts": 20, "dur": 5}',
        '{"ph": "X", "cat": "kernel", "name": "huge", "ts": 1e400, "dur": 5}',
        '{"ph": "X", "cat": "kernel", "name": "longint", "ts": 1' + "0" * 400 + ', "dur": 5}',
        '{"ph": "X", "cat": "kernel", "name": "str ts", "ts": "30", "dur": "5", '
        '"args": {"stream": "0x7", "correlation": 99999999999999999999999999}}',
        "[1, 2]",
        '{"ph": "X", "cat": "kernel", "name": "neg", "ts": 40, "dur": -3}',
    ]
    data = ('{"traceEvents": [' + ", ".join(events) + "]}").encode("latin-1")
    result = parse_bytes(data)
    names = {r["name"] for r in result.kernels}
    assert {"good", "str ts"} <= names and "neg" not in names
    assert any("malformed events" in w for w in result.warnings)
    assert any("impossible" in w for w in result.warnings)


def _assert_contract(data: bytes) -> None:
    try:
        result = parse_bytes(data)
    except ParseError as exc:
        assert not exc.message.startswith("internal error"), exc.message
        return
    json.dumps(result.to_json(), allow_nan=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_random_bytes_never_crash(data: bytes) -> None:
    _assert_contract(data)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=500), st.sampled_from([b"{", b'{"traceEvents": [', b"[{"]))
def test_random_json_prefixed_bytes_never_crash(tail: bytes, prefix: bytes) -> None:
    _assert_contract(prefix + tail)


_SMALL = "torch_profiler/hta_triton_example.json.gz"


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_truncated_and_corrupted_real_samples_never_crash(data: st.DataObject) -> None:
    raw = content(sample(_SMALL))
    cut = data.draw(st.integers(0, len(raw)))
    flips = data.draw(
        st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 255)), max_size=5)
    )
    body = bytearray(raw[:cut])
    for pos, value in flips:
        if pos < len(body):
            body[pos] = value
    _assert_contract(bytes(body))


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["0x7", "7", "", "nan", "[0, 1]"]),
)
_EVENT = st.fixed_dictionaries(
    {
        "ph": st.sampled_from(["X", "X", "X", "i", "s", "f", "M"]),
        "cat": st.sampled_from(
            [
                "kernel",
                "Kernel",
                "gpu_memcpy",
                "Memset",
                "cuda_runtime",
                "cuda_driver",
                "cpu_op",
                "user_annotation",
                "gpu_user_annotation",
                "cuda_sync",
                "ac2g",
            ]
        ),
        "name": st.sampled_from(
            [
                "ncclKernel_AllReduce_RING_LL_Sum_float",
                "Memcpy HtoD",
                "cudaLaunchKernel",
                "ProfilerStep#1",
                "ProfilerStep#2",
                "sgemm",
                "record_param_comms",
                "Stream Sync",
            ]
        ),
        "pid": _VALUES,
        "ts": _VALUES,
        "dur": _VALUES,
        "args": st.dictionaries(
            st.sampled_from(
                [
                    "stream",
                    "correlation",
                    "device",
                    "External id",
                    "Collective name",
                    "In msg nelems",
                    "Out msg nelems",
                    "Group size",
                    "dtype",
                ]
            ),
            _VALUES,
        ),
    }
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_EVENT, max_size=30),
    st.dictionaries(
        st.sampled_from(
            ["distributedInfo", "deviceProperties", "schemaVersion", "baseTimeNanoseconds"]
        ),
        _VALUES,
    ),
)
def test_kineto_shaped_events_with_odd_values_never_crash(events: list, meta: dict) -> None:
    doc = {**meta, "traceEvents": events}
    _assert_contract(json.dumps(doc).encode())


_KERNEL = st.tuples(
    st.sampled_from(["sgemm", "ncclKernel_AllReduce_x", "Memcpy HtoD", "Stream Sync"]),
    st.floats(0, 1000, allow_nan=False).map(lambda x: round(x, 3)),
    st.floats(0, 50, allow_nan=False).map(lambda x: round(x, 3)),
    st.integers(0, 3),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_KERNEL, min_size=1, max_size=40))
def test_breakdown_invariants_on_random_float_timelines(kernels: list) -> None:
    events = [
        {
            "ph": "X",
            "cat": "cuda_sync" if name == "Stream Sync" else "kernel",
            "name": name,
            "pid": 0,
            "ts": ts,
            "dur": dur,
            "args": {"stream": 7 + stream, "correlation": i},
        }
        for i, (name, ts, dur, stream) in enumerate(kernels)
    ]
    result = parse_bytes(json.dumps({"traceEvents": events}).encode())
    for b in (result.breakdown, result.breakdown_steps):
        span = b["kernel_time_us"]
        assert 0 <= b["busy_time_us"] <= span + 1e-3
        assert 0 <= b["compute_time_us"] <= b["busy_time_us"] + 1e-3
        parts = b["idle_time_us"] + b["compute_time_us"] + b["non_compute_time_us"]
        assert parts == pytest.approx(span, abs=5e-3)
        assert b["exposed_communication_time_us"] <= b["communication_time_us"] + 1e-3
    union = tb.union_length(
        np.array([t for n, t, d, _ in kernels if n != "Stream Sync"] or [0.0]),
        np.array([t + d for n, t, d, _ in kernels if n != "Stream Sync"] or [0.0]),
    )
    assert sum(r["sum_us"] for r in result.kernel_types) == pytest.approx(union, abs=1e-2)


def test_huge_numbers_and_deep_nesting() -> None:
    deep = "[" * 5000 + "]" * 5000
    for doc in (
        '{"deviceProperties": [{"totalGlobalMem": 1' + "0" * 400 + '}], "traceEvents": [{"ph": '
        '"X", "cat": "kernel", "name": "ncclKernel_AllReduce_x", "ts": 1, "dur": 2, "args": '
        '{"stream": 7, "Collective name": "allreduce", "In msg nelems": 1' + "0" * 400 + ", "
        '"Group size": 1' + "0" * 400 + ', "dtype": "Float"}}]}',
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e308, "dur": 1e308}]}',
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, '
        f'"args": {{"x": {deep}}}}}]}}',
        '{"distributedInfo": ' + deep + ', "traceEvents": [{"ph": "X", "name": "a", "ts": 1}]}',
        '{"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", '
        '"ts": 1e400, "dur": 1}, {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", '
        '"ts": -1e300, "dur": 1e300}, {"ph": "X", "cat": "kernel", "name": "k", "ts": 5, '
        '"dur": 1, "args": {"stream": 7, "correlation": 3}}]}',
    ):
        _assert_contract(doc.encode())


# ---------------------------------------------------------------------------------------
# The maths
# ---------------------------------------------------------------------------------------


def test_interval_union_and_overlap() -> None:
    starts = np.array([0.0, 2.0, 10.0, 11.0, 20.0])
    ends = np.array([5.0, 3.0, 12.0, 15.0, 20.0])
    ms, me = tb.merge_intervals(starts, ends)
    assert ms.tolist() == [0.0, 10.0, 20.0] and me.tolist() == [5.0, 15.0, 20.0]
    assert tb.union_length(starts, ends) == 10.0
    a = tb.merge_intervals(np.array([0.0, 10.0]), np.array([4.0, 14.0]))
    b = tb.merge_intervals(np.array([2.0]), np.array([12.0]))
    assert tb.overlap_length(a, b) == 4.0


def test_temporal_breakdown_and_type_overlap_by_hand() -> None:
    # compute [0,10) and [20,30); communication [5,25); memory [40,45)
    ts = np.array([0.0, 5.0, 20.0, 40.0])
    end = np.array([10.0, 25.0, 30.0, 45.0])
    types = np.array([tb.COMPUTE, tb.COMMUNICATION, tb.COMPUTE, tb.MEMORY])
    b = tb.temporal_breakdown(ts, end, types, window="trace")
    assert b["kernel_time_us"] == 45 and b["busy_time_us"] == 35 and b["idle_time_us"] == 10
    assert b["compute_time_us"] == 20 and b["non_compute_time_us"] == 15
    assert b["communication_time_us"] == 20 and b["comm_comp_overlap_us"] == 10
    assert b["comm_comp_overlap_pct"] == 50 and b["exposed_communication_time_us"] == 10
    rows = {r["type"]: r["sum_us"] for r in tb.kernel_type_overlap(ts, end, types)}
    assert rows == {
        "compute": 10,
        "communication": 10,
        "compute overlapping communication": 10,
        "memory": 5,
    }


def test_rounded_events_that_end_before_they_start_add_nothing() -> None:
    # HTA's rounding turns [10.3, 10.8) into [11, 10): no time, and no crash.
    ts = np.array([0.0, 11.0, 20.0])
    end = np.array([5.0, 10.0, 30.0])
    types = np.array([tb.COMPUTE, tb.COMMUNICATION, tb.COMPUTE])
    rows = {r["type"]: r["sum_us"] for r in tb.kernel_type_overlap(ts, end, types)}
    assert rows == {"compute": 15.0}
    b = tb.temporal_breakdown(ts, end, types, window="x")
    assert (b["compute_time_us"], b["communication_time_us"], b["busy_time_us"]) == (15, 0, 15)
    assert b["idle_time_us"] + b["compute_time_us"] + b["non_compute_time_us"] == 30


def test_kernel_classification_follows_hta() -> None:
    assert tb.classify_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(x)") == tb.COMMUNICATION
    assert tb.classify_kernel("ncclDevKernel_Generic") == tb.COMMUNICATION
    assert tb.classify_kernel("Memcpy DtoH (Device -> Pinned)") == tb.MEMORY
    assert tb.classify_kernel("Memset (Device)") == tb.MEMORY
    assert tb.classify_kernel("Stream Sync") == tb.OTHER
    assert tb.classify_kernel("ampere_sgemm_128x64_tn") == tb.COMPUTE


def test_collective_helpers() -> None:
    assert tb.collective_from_kernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL") == (
        "reducescatter"
    )
    assert tb.collective_from_kernel("ncclDevKernel_Generic(ncclDevKernelArgsStorage)") is None
    assert tb.normalise_collective("_allgather_base") == "allgather"
    assert tb.normalise_collective("all_to_all") == "alltoall"
    assert tb.normalise_collective("reduce_scatter_tensor_coalesced") == "reducescatter"
    n = 8
    assert tb.busbw_factor("allreduce", n) == 2 * (n - 1) / n
    assert tb.busbw_factor("allgather", n) == tb.busbw_factor("reducescatter", n) == 7 / 8
    assert tb.busbw_factor("alltoall", n) == 7 / 8
    assert tb.busbw_factor("broadcast", n) == tb.busbw_factor("reduce", n) == 1.0
    assert tb.dtype_bytes("BFloat16") == 2 and tb.dtype_bytes("Float8_e4m3fn") == 1
    assert tb.bandwidths("allreduce", 1_000_000, 10.0, 4) == (100.0, 150.0)


def test_idle_breakdown_categories_by_hand() -> None:
    # one stream: k0 [0,10); k1 launched at 12 runs [15,20) -> host wait 5;
    # k2 launched at 1 runs [25,30) -> gap 5 < 30 -> kernel wait; k3 at [100,110) -> other.
    ts = np.array([0.0, 15.0, 25.0, 100.0])
    end = np.array([10.0, 20.0, 30.0, 110.0])
    idle = tb.idle_breakdown(ts, end, np.zeros(4, int), np.array([np.nan, 12.0, 1.0, 2.0]))
    assert (idle["host_wait_us"], idle["kernel_wait_us"], idle["other_us"]) == (5, 5, 70)


def test_generated_benchmark_trace_matches_its_source(tmp_path: Path) -> None:
    """The benchmark's tiler keeps the trace valid: two tiles = twice the GPU events."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "trace_ingest", REPO_DIR / "benchmarks" / "trace_ingest.py"
    )
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    source = sample("torch_profiler/hta_sampled_world128_rank-1.json.gz")
    size = len(content(source)) / 1e6
    out = bench.generate(source, tmp_path / "tiled.json", size * 1.5, rank=5)
    tiled = torch_trace.parse(out.open("rb"))
    single = parsed(source)
    assert tiled.breakdown["gpu_events"] == 2 * single.breakdown["gpu_events"]
    assert tiled.meta["rank"] == 5 and len(tiled.steps) == 2 * len(single.steps)
    assert tiled.launch["launches"] == 2 * single.launch["launches"]


def test_parsing_is_deterministic() -> None:
    path = sample(VARIANT_SAMPLE)
    assert parse_path(path).to_json() == parse_path(path).to_json()


# ---------------------------------------------------------------------------------------
# Bounded memory: the spilled (on-disk, bucketed) analysis path
# ---------------------------------------------------------------------------------------


def _assert_same(mine: Any, ref: Any, where: str = "") -> None:
    """Equal JSON, floats within 1 ns plus float noise (sums taken in another order)."""
    if isinstance(ref, dict):
        assert isinstance(mine, dict) and mine.keys() == ref.keys(), where
        for key in ref:
            _assert_same(mine[key], ref[key], f"{where}.{key}")
    elif isinstance(ref, list):
        assert isinstance(mine, list) and len(mine) == len(ref), where
        for i, (a, b) in enumerate(zip(mine, ref, strict=True)):
            _assert_same(a, b, f"{where}[{i}]")
    elif isinstance(ref, float) and isinstance(mine, float):
        assert mine == pytest.approx(ref, rel=1e-9, abs=1.1e-3), where
    else:
        assert mine == ref, where


def _shuffled_trace(n: int, seed: int = 5) -> bytes:
    """Kernels on two streams (one NCCL), their launches, five ProfilerSteps; events in a
    random order, as merged CUPTI buffers can be."""
    rng = np.random.default_rng(seed)
    events: list[dict[str, Any]] = []
    t = 1000.0
    for i in range(n):
        launch = t + float(rng.uniform(0, 5))
        start = launch + float(rng.uniform(1, 40))
        dur = float(rng.uniform(0.5, 30))
        comm = i % 7 == 0
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                       "pid": 1, "tid": 1, "ts": launch, "dur": 3.5,
                       "args": {"correlation": i + 1, "External id": i + 1}})  # fmt: skip
        args: dict[str, Any] = {"stream": 20 if comm else 7, "correlation": i + 1}
        if comm:
            args.update({"Collective name": "allreduce", "In msg nelems": 4096,
                         "Out msg nelems": 4096, "Group size": 8, "dtype": "Float"})  # fmt: skip
        events.append({"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": start,
                       "dur": dur, "args": args,
                       "name": "ncclKernel_AllReduce_RING_LL_Sum_float" if comm
                       else f"gemm_{i % 13}"})  # fmt: skip
        t += float(rng.uniform(2, 20))
    step = t / 5
    for s in range(5):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s}",
                       "pid": 1, "tid": 1, "ts": 900.0 + s * step, "dur": step - 1})  # fmt: skip
    order = rng.permutation(len(events))
    doc = {"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 8},
           "traceEvents": [events[i] for i in order]}  # fmt: skip
    return json.dumps(doc).encode()


def test_spilled_analysis_equals_the_in_memory_one_and_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from artifacts.traces.parsers import spill

    data = _shuffled_trace(6000)
    reference = _analysis_view(parse_bytes(data))
    assert reference["temporal_breakdown"]["hta_default"]["filtered"] is True
    monkeypatch.setattr(spill, "CHUNK_ROWS", 400)
    biggest = 0
    flushes = 0
    original_sorted, original_flush = spill.co_sorted, spill.SpillTable._flush

    def co_sorted(tables: Any, key: str) -> Any:
        nonlocal biggest
        for parts in original_sorted(tables, key):
            biggest = max(biggest, sum(p.size for p in parts))
            yield parts

    def flush(self: Any) -> None:
        nonlocal flushes
        flushes += 1
        original_flush(self)

    monkeypatch.setattr(spill, "co_sorted", co_sorted)
    monkeypatch.setattr(spill.SpillTable, "_flush", flush)
    spilled = _analysis_view(parse_bytes(data))
    _assert_same(spilled, reference)
    # 6000 kernels and 6000 launches went to disk and came back in buckets of a few hundred
    assert flushes > 20 and 0 < biggest <= 2 * 400


@pytest.mark.parametrize(
    "name",
    [
        "hta_nccl_data_world2_rank0.json.gz",
        "hta_ns_resolution_rank-0.pt.trace.json.gz",
        "hta_gpu_user_annotation_step_based.json.gz",
        "hta_amd_mi250_rocm62.json.gz",
    ],
)
def test_spilled_analysis_of_real_samples_equals_the_in_memory_one(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from artifacts.traces.parsers import spill

    path = sample(f"torch_profiler/{name}")
    reference = _analysis_view(parsed(path))
    monkeypatch.setattr(spill, "CHUNK_ROWS", 300)
    _assert_same(_analysis_view(parse_path(path)), reference)


# ---------------------------------------------------------------------------------------
# Annotations (record_function / NVTX-style ranges) per domain
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["hta_gpu_user_annotation_step_based.json.gz", "hta_nccl_data_world2_rank0.json.gz"]
)
def test_annotations_per_domain_match_an_independent_reading(name: str) -> None:
    path = sample(f"torch_profiler/{name}")
    doc = json.loads(content(path))
    expected_rows: dict[tuple[str, str], list[float]] = {}
    for ev in doc["traceEvents"]:
        if ev.get("ph") == "X" and ev.get("cat") in ("user_annotation", "gpu_user_annotation"):
            label = "ProfilerStep#*" if ev["name"].startswith("ProfilerStep") else ev["name"]
            expected_rows.setdefault((ev["cat"], label), []).append(float(ev["dur"]))
    result = parsed(path)
    got = {(r["domain"], r["name"]): r for r in result.annotations}
    assert got.keys() == expected_rows.keys()
    for key, durs in expected_rows.items():
        row = got[key]
        assert row["count"] == len(durs)
        assert row["sum_us"] == pytest.approx(sum(durs), abs=1e-3)
        assert (row["min_us"], row["max_us"]) == pytest.approx((min(durs), max(durs)), abs=1e-3)
    domains = {d["domain"]: d for d in result.annotation_domains}
    for domain, d in domains.items():
        assert d["ranges"] == sum(len(v) for (dom, _), v in expected_rows.items() if dom == domain)
    body = result.to_json()
    assert body["annotation_domains"] == result.annotation_domains


def test_annotation_golden_values() -> None:
    """Read off hta_gpu_user_annotation_step_based: five SGD steps, each annotated on the
    host and projected onto the GPU."""
    result = parsed(sample("torch_profiler/hta_gpu_user_annotation_step_based.json.gz"))
    got = {(r["domain"], r["name"]): r for r in result.annotations}
    gpu_step = got[("gpu_user_annotation", "Optimizer.step#SGD.step")]
    assert (gpu_step["count"], gpu_step["sum_us"], gpu_step["min_us"], gpu_step["max_us"]) == (
        5,
        321.0,
        60.0,
        67.0,
    )
    assert [d["domain"] for d in result.annotation_domains] == [
        "gpu_user_annotation",
        "user_annotation",
    ]


def test_many_annotation_names_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch_trace, "MAX_ANNOTATION_NAMES", 3)
    events = [
        {"ph": "X", "cat": "user_annotation", "name": f"range{i}", "ts": i * 10, "dur": 2}
        for i in range(10)
    ]
    result = parse_bytes(json.dumps({"traceEvents": events}).encode())
    names = {r["name"]: r["count"] for r in result.annotations}
    assert names == {"range0": 1, "range1": 1, "range2": 1, "(other names)": 7}


# ---------------------------------------------------------------------------------------
# ../shared/more-samples: the 8 ranks of one DLRM step, and 2021-era legacy traces
# ---------------------------------------------------------------------------------------

DLRM = [p for p in TORCH if p.parent.name == "param_dlrm_kineto_8rank"]


@pytest.mark.parametrize("path", DLRM, ids=_ids(DLRM))
def test_each_rank_of_the_dlrm_job_says_who_it_is(path: Path) -> None:
    # The rank is in the file name (workerN_...) and in distributedInfo; the parser reads
    # only the latter. Collective kernels are counted off the raw events.
    raw = json.loads(path.read_bytes())
    body = parsed(path).to_json()
    assert body["rank"] == int(path.name.split("_")[0].removeprefix("worker"))
    assert (body["world_size"], body["backend"]) == (8, "nccl")
    assert [d["name"] for d in body["devices"]][:1] == [raw["deviceProperties"][0]["name"]]
    nccl_kernels = [
        e["name"]
        for e in raw["traceEvents"]
        if e.get("cat") == "kernel" and e["name"].startswith("ncclKernel_")
    ]
    assert len(body["collectives"]) == len(nccl_kernels) > 0
    assert sorted(c["kernel"] for c in body["collectives"]) == sorted(nccl_kernels)
    assert [s["name"] for s in body["steps"]] == [
        e["name"]
        for e in raw["traceEvents"]
        if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep")
    ]


@pytest.mark.parametrize(
    "name",
    [
        "kineto_tb_resnet50_v100_2021_legacy_cats.pt.trace.json.gz",
        "kineto_tb_resnet50_autograd_api.pt.trace.json.gz",
    ],
)
def test_legacy_category_traces_without_distributed_info(name: str) -> None:
    path = next((p for p in TORCH if p.name == name), None)
    if path is None:
        pytest.skip("../shared/more-samples not available")
    doc = json.loads(content(path))
    result = parsed(path)
    counts: dict[str, int] = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and "cat" in e:
            counts[e["cat"]] = counts.get(e["cat"], 0) + 1
    # 2021 Kineto spelled the categories Operator/Runtime/Kernel/Memcpy/Memset
    assert result.meta["categories"]["Kernel"] == counts["Kernel"]
    assert result.breakdown["gpu_events"] == counts["Kernel"] + counts["Memcpy"] + counts["Memset"]
    assert result.meta["world_size"] is None and result.meta["cpu_only"] is False
    assert any(w.startswith("no distributedInfo") for w in result.warnings)
    assert len(result.to_json()["devices"]) == len(doc.get("deviceProperties", []))
