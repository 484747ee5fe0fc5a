"""Evidence captured on an H200 with scripts/capture/gpu_evidence.sh (tests/fixtures/
h200_capture/README.md): each file's kind and the facts an engineer reads in it, as stored
and under every text transformation of the real-inputs matrix. The expected values were
read off the files themselves (and the machine: one H200, driver 580.159.04, NCCL 2.28.9)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from artifacts.parsers.reading import parse_file
from tests.artifacts.traces.parsers import test_torch_trace as torch_trace_checks
from tests.transforms import TRANSFORMS, applies, opener, reading, same_reading

CAPTURE = Path(__file__).resolve().parents[1] / "fixtures" / "h200_capture"
EXPECTED = Path(__file__).resolve().parents[1] / "expected" / "h200_capture"
FILES = sorted(p.name for p in CAPTURE.iterdir() if p.name != "README.md")


def parsed(name: str) -> tuple[str, dict[str, Any]]:
    data = (CAPTURE / name).read_bytes()
    found, result = parse_file(opener(data), name)
    return found.kind, result.to_json()


def test_every_captured_file_is_recognised():
    kinds = {name: parsed(name)[0] for name in FILES}
    assert kinds == {
        "dmesg.txt": "dmesg",
        "lscpu.txt": "numa",
        "ncu_train_step.csv.gz": "ncu_csv",
        "ncu_train_step.txt": "ncu_text",
        "nvidia_smi_dmon.txt": "nvidia_smi",
        "nvidia_smi_dmon_all.txt": "nvidia_smi",
        "nvidia_smi.txt": "nvidia_smi",
        "nvidia_smi_q.xml": "nvidia_smi",
        "nvidia_smi_q_performance.txt": "nvidia_smi",
        "nvidia_smi_topo_p2p_r.txt": "nvidia_smi",
        "ncu_train_step_raw.csv": "ncu_csv",
        "ncu_full.csv.gz": "ncu_csv",
        "ncu_full.txt": "ncu_text",
        "ncu_summary.csv.gz": "ncu_csv",
        "nvidia_smi_q.txt": "nvidia_smi",
        "nvidia_smi_query.csv": "nvidia_smi",
        "nvidia_smi_topo_m.txt": "nvidia_smi",
        "proc_interrupts.txt": "proc_interrupts",
        "sysctl_a.txt": "sysctl",
        "torch_trace_train_step.json.gz": "torch_trace",
        "train_step.log": "nccl_debug",
    }


def test_the_training_steps_trace():
    _, trace = parsed("torch_trace_train_step.json.gz")
    (device,) = trace["devices"]
    assert (device["name"], device["num_sms"], device["compute_capability"]) == (
        "NVIDIA H200",
        132,
        "9.0",
    )
    assert (trace["world_size"], trace["backend"], trace["nccl_version"]) == (1, "nccl", "2.28.9")
    names = {a["name"] for a in trace["annotations"] if a["domain"] == "user_annotation"}
    assert {"forward", "backward", "allreduce_grads", "optimizer"} <= names
    # cuBLAS's Hopper GEMMs (nvjet_sm90_*) are the top kernels of a transformer step
    assert trace["kernels"][0]["name"].startswith("nvjet_sm90")
    assert trace["temporal_breakdown"]["whole_trace"]["gpu_events"] > 0


def test_the_nccl_log_of_the_same_run():
    _, log = parsed("train_step.log")
    assert [(v["version"], v["build"]) for v in log["versions"]] == [("2.28.9", "cuda13.0")]
    (host,) = log["hosts"]
    assert (host["host"], host["cuda_driver_version"], host["transports"]) == (
        "vm",
        13000,
        ["Socket"],
    )
    assert log["nranks"] == 1
    # six steps (two before the profiler's window, four in it), one all_reduce each
    assert [(c["collective"], c["calls"]) for c in log["collectives"]] == [("AllReduce", 6)]


@pytest.mark.parametrize(
    ("name", "kernels"),
    [("ncu_train_step.csv.gz", 40), ("ncu_train_step.txt", 6), ("ncu_train_step_raw.csv", 6)],
)
def test_nsight_compute_reports_keep_every_kernel(name, kernels):
    _, report = parsed(name)
    assert len(report["kernels"]) == kernels  # --launch-count
    last = report["kernels"][5]
    assert last["name"] == "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"
    assert (last["grid"], last["block"]) == ("(2, 66, 1)", "(384, 1, 1)")
    assert all(k["cc"] == "9.0" for k in report["kernels"])


@pytest.mark.parametrize(("name", "kernels"), [("ncu_full.csv.gz", 3), ("ncu_full.txt", 2)])
def test_the_full_section_set(name, kernels):
    _, report = parsed(name)
    assert len(report["kernels"]) == kernels
    sections = {m["section"] for k in report["kernels"] for m in k["metrics"]}
    # --set full: every section of the report, not only Speed Of Light
    assert {"Warp State Statistics", "Memory Workload Analysis", "Source Counters"} <= sections
    assert all(k["achieved_occupancy_pct"] is not None for k in report["kernels"])


def test_the_per_kernel_summary_page():
    """`ncu --csv --print-summary per-kernel`: no ID column, one kernel per launch shape with
    its invocations; the average is the value and a spread keeps its minimum and maximum."""
    _, report = parsed("ncu_summary.csv.gz")
    assert report["page"] == "summary"
    kernels = report["kernels"]
    invocations = [
        next(m["value"] for m in k["metrics"] if m["name"] == "Invocations") for k in kernels
    ]
    assert len(kernels) == 11 and sum(invocations) == 12  # --launch-count 12
    norm = next(k for k in kernels if "vectorized_layer_norm" in k["name"])
    names = {m["name"] for m in norm["metrics"]}
    assert {"Duration", "Duration (minimum)", "Duration (maximum)"} <= names
    attention = kernels[0]
    assert attention["name"].startswith("cudnn_generated_fort_native_sdpa_sm90_flash_fprop")
    assert (attention["grid"], attention["block"]) == ("(132, 1, 1)", "(384, 1, 1)")
    assert attention["duration_ns"] == 23584.0


def test_nvidia_smi_views():
    _, q = parsed("nvidia_smi_q.txt")
    (gpu,) = q["gpus"]
    assert (gpu["name"], q["driver_version"], q["cuda_version"]) == (
        "NVIDIA H200",
        "580.159.04",
        "13.0",
    )
    _, topo = parsed("nvidia_smi_topo_m.txt")
    assert topo["topology"]["affinities"][0]["cpu_affinity"] == "0-15"
    _, query = parsed("nvidia_smi_query.csv")
    assert query["query_gpus"][0]["name"] == "NVIDIA H200"
    # the upload list's summary counts and names the GPUs of views without GPU objects
    data = (CAPTURE / "nvidia_smi_query.csv").read_bytes()
    summary = parse_file(opener(data), "q.csv")[1].summary()
    assert (summary["gpus"], summary["names"], summary["driver_version"]) == (
        1,
        ["NVIDIA H200"],
        "580.159.04",
    )


def test_more_nvidia_smi_views_of_the_second_machine():
    _, xml = parsed("nvidia_smi_q.xml")
    (gpu,) = xml["gpus"]
    assert (xml["formats"], gpu["name"], gpu["bus_id"]) == (
        ["q_xml"],
        "NVIDIA H200",
        "00000000:00:06.0",
    )
    _, table = parsed("nvidia_smi.txt")
    assert [(g["name"], g["memory_total_mib"]) for g in table["table_gpus"]] == [
        ("NVIDIA H200", 143771)
    ]
    _, perf = parsed("nvidia_smi_q_performance.txt")
    (gpu,) = perf["gpus"]
    assert (gpu["power_limit_w"], gpu["max_clocks_sm_mhz"], gpu["clock_event_reasons"]) == (
        700.0,
        1980,
        ["idle"],
    )
    # one GPU: a matrix of "X" alone, told from topo -m by its legend
    _, p2p = parsed("nvidia_smi_topo_p2p_r.txt")
    assert (p2p["formats"], p2p["p2p"]) == (
        ["p2p"],
        [{"mode": None, "devices": ["GPU0"], "links": []}],
    )
    _, dmon = parsed("nvidia_smi_dmon_all.txt")
    columns = set(dmon["dmon_rows"][0])
    assert {"date", "time", "pviol", "tviol", "fb", "bar1", "sbecc", "rxpci", "txpci"} <= columns
    first = {s["counter"]: (s["value"], s["unit"]) for s in dmon["samples"] if s["snapshot"] == 0}
    assert first["dmon.txpci"][1] == "MB/s" and first["memory.used"][1] == "MiB"
    assert dmon["samples"][0]["captured_at"] == "2026-12-04T11:59:53"


def test_nvidia_smi_dmon_gives_one_snapshot_per_interval():
    _, dmon = parsed("nvidia_smi_dmon.txt")
    assert dmon["formats"] == ["dmon"] and len(dmon["dmon_rows"]) == 5
    power = [s for s in dmon["samples"] if s["counter"] == "power.draw"]
    assert [(s["device"], s["value"], s["unit"]) for s in power] == [("GPU 0", 80, "W")] * 5
    assert [s["snapshot"] for s in power] == [0, 1, 2, 3, 4]
    clocks = {s["counter"]: s["value"] for s in dmon["samples"] if s["snapshot"] == 0}
    assert (clocks["clocks.mem"], clocks["clocks.gr"]) == (3201, 345)


def test_dmon_with_date_and_time_columns_and_two_gpus():
    text = (
        "#Date       Time        gpu    pwr  gtemp     sm    mem   mclk   pclk\n"
        "#YYYYMMDD   HH:MM:SS    Idx      W      C      %      %    MHz    MHz\n"
        " 20261204   11:52:03      0    312     51     97     40   3201   1980\n"
        " 20261204   11:52:03      1      -     49     95     38   3201   1980\n"
        " 20261204   11:52:04      0    318     52     98     41   3201   1980\n"
    )
    kind, _ = reading("dmon.txt", text.encode())
    assert kind == "nvidia_smi"
    power = [
        (s["device"], s["value"], s["captured_at"], s["snapshot"])
        for s in parsed_text(text)["samples"]
        if s["counter"] == "power.draw"
    ]
    # GPU 1 printed "-" (no reading): no sample rather than a zero
    assert power == [
        ("GPU 0", 312, "2026-12-04T11:52:03", 0),
        ("GPU 0", 318, "2026-12-04T11:52:04", 1),
    ]


def parsed_text(text: str) -> dict[str, Any]:
    return parse_file(opener(text.encode()), "dmon.txt")[1].to_json()


def test_the_open_kernel_modules_driver_line_in_dmesg():
    _, dmesg = parsed("dmesg.txt")
    assert dmesg["driver_version"] == "580.159.04"
    assert dmesg["kernel_version"] == "6.18.44-fc-v1252-gpu"


TEXT_FILES = [n for n in FILES if n.endswith((".txt", ".csv", ".log"))]
# A one-GPU query is two lines: a launcher label on both is one key seen twice, which the
# cleaning's vote does not take for a layer (it needs three lines; "0: " may be content).
KNOWN = {("nvidia_smi_query.csv", "Slurm label"), ("nvidia_smi_query.csv", "pdsh")}


@pytest.mark.parametrize("name", [*TEXT_FILES, "ncu_train_step.csv.gz", "ncu_summary.csv.gz"])
def test_captured_files_keep_kind_and_facts_however_they_arrive(name):
    data = (CAPTURE / name).read_bytes()
    if name.endswith(".gz"):
        data, name = gzip.decompress(data), name.removesuffix(".gz")
    kind, want = reading(name, data)
    broken = [
        f"{label}: {why}"
        for label, transform in TRANSFORMS.items()
        if applies(name, kind, label, data[:64])
        and (why := same_reading(kind, want, label, *reading(name, transform(data))))
    ]
    known = sorted(label for file, label in KNOWN if file == name)
    assert sorted(b.split(":")[0] for b in broken) == known, broken  # fixed: drop from KNOWN


def test_the_trace_agrees_with_hta_where_hta_can_read_it():
    """HTA 0.5.0 loads the capture but its temporal breakdown fails an assertion
    (non_compute_time >= 0); its kernel and idle tables and its launch count are compared
    as for the shared traces (tests/expected/h200_capture/, made by hta_reference.py)."""
    ref = json.loads((EXPECTED / "hta_torch_trace_train_step.json").read_text())
    assert ref["hta_error"].startswith("AssertionError")
    path = CAPTURE / "torch_trace_train_step.json.gz"
    span = torch_trace_checks.parsed(path).breakdown_steps["kernel_time_us"]
    torch_trace_checks.check_kernels_against_hta(path, ref, span)
    torch_trace_checks.check_idle_against_hta(path, ref, span)
    # HTA counts the runtime's launch calls only; cuBLAS's Hopper GEMMs and the attention
    # kernels are launched through the driver (cuLaunchKernelEx), which PerfHub counts too.
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    driver = [e["args"]["correlation"] for e in events if e.get("name") == "cuLaunchKernelEx"]
    window = torch_trace_checks.columns_of(path).hta_window()
    by_driver = int(np.isin(window["correlation"], driver).sum())
    assert by_driver > 0
    assert (
        torch_trace_checks.launch_stats(path)["launches"] == ref["launch"]["launches"] + by_driver
    )
