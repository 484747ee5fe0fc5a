"""Regenerate the HTA 0.5.0 reference numbers in this folder (development time only).

HTA is never a PerfHub dependency; run this with the python of a throwaway venv:

    /root/.pyenv/versions/3.11.7/bin/python -m venv /tmp/hta
    /tmp/hta/bin/pip install holistictraceanalysis==0.5.0
    /tmp/hta/bin/python tests/expected/torch_trace/hta_reference.py

For each trace in ../shared/samples/torch_profiler/ and ../shared/more-samples/torch_profiler/
(sub-folders included, archives of several traces left out) it records what HTA's default view
(``TraceAnalysis(include_last_profiler_step=False)``) reports: ``get_temporal_breakdown``,
``get_gpu_kernel_breakdown(include_memory_kernels=True)`` with no "others" aggregation,
``get_idle_time_breakdown`` and ``get_cuda_kernel_launch_stats`` (counts with HTA's default
cutoffs), or the error HTA raises (with the tables it could still make, when the trace
loaded). Notes on known, explained differences are kept. A file named on the command line is
done alone (the H200 capture's reference was made so and moved to ../h200_capture/).
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2].parent / "shared"
FOLDERS = (SHARED / "samples" / "torch_profiler", SHARED / "more-samples" / "torch_profiler")

NOTES = {
    "hta_triton_example.json.gz": (
        "HTA counts the CPU op 'triton_poi_fused_add_cos_sin_0' (cat cpu_op, args.stream=0) "
        "as a GPU kernel because it has a stream argument, so its span is 94 us; the trace "
        "has one 1.76 us kernel (PerfHub: 1.76 us whole trace, 1 us after HTA's ns rounding)."
    ),
    "hta_amd_mi250_rocm62.json.gz": (
        "HTA's launch statistics only know cudaLaunchKernel/cudaMemcpyAsync/...; PerfHub also "
        "counts hipLaunchKernel, hipExtModuleLaunchKernel and hipMemcpyAsync launches."
    ),
}


def _type_label(hta_label: str) -> str:
    names = {"COMPUTATION": "compute", "COMMUNICATION": "communication", "MEMORY": "memory"}
    return " overlapping ".join(names[p] for p in hta_label.split(" overlapping "))


def reference(sample: Path) -> dict:
    from hta.trace_analysis import TraceAnalysis

    out: dict = {
        "sample": sample.name,
        "reference": "HTA 0.5.0 (holistictraceanalysis==0.5.0), include_last_profiler_step=False",
    }
    if sample.name in NOTES:
        out["note"] = NOTES[sample.name]
    tmp = Path(tempfile.mkdtemp())
    name = sample.name if sample.name.endswith((".json", ".gz")) else sample.name + ".json"
    shutil.copy(sample, tmp / name)
    try:
        t = TraceAnalysis(trace_dir=str(tmp))
        ranks = list(t.t.traces.keys())
    except Exception as exc:  # HTA cannot analyse CPU-only traces
        out["hta_error"] = f"{type(exc).__name__}: {exc}"
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    try:
        row = t.get_temporal_breakdown(visualize=False).iloc[0]
    except Exception as exc:  # CPU-only traces; an assertion on some GPU traces (H200 capture)
        out["hta_error"] = f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(Exception):  # what HTA can still say, for a trace it loaded
            out.update(_tables(t, ranks))
        return out
    out["temporal"] = {
        "idle_time_us": float(row["idle_time(us)"]),
        "compute_time_us": float(row["compute_time(us)"]),
        "non_compute_time_us": float(row["non_compute_time(us)"]),
        "kernel_time_us": float(row["kernel_time(us)"]),
    }
    out.update(_tables(t, ranks))
    return out


def _tables(t, ranks: list) -> dict:
    out: dict = {}
    types, kernels = t.get_gpu_kernel_breakdown(
        visualize=False, num_kernels=10**9, duration_ratio=1.0, include_memory_kernels=True
    )
    out["kernel_types"] = [
        {"type": _type_label(r["kernel_type"]), "sum_us": float(r["sum"])}
        for r in types.to_dict("records")
    ]
    out["kernels"] = [
        {
            "name": r["name"],
            "sum_us": float(r["sum (us)"]),
            "mean_us": float(r["mean (us)"]),
            "min_us": float(r["min (us)"]),
            "max_us": float(r["max (us)"]),
        }
        for r in kernels.to_dict("records")
    ]
    idle, _ = t.get_idle_time_breakdown(visualize=False, ranks=ranks)
    out["idle"] = [
        {"stream": int(r["stream"]), "category": r["idle_category"], "idle_us": r["idle_time"]}
        for r in idle.to_dict("records")
    ]
    launch = t.get_cuda_kernel_launch_stats(visualize=False, ranks=ranks)[ranks[0]]
    out["launch"] = {
        "launches": len(launch),
        "short_kernels": int((launch["gpu_duration"] < launch["cpu_duration"]).sum()),
        "long_runtime_calls": int((launch["cpu_duration"] > 50).sum()),
        "long_launch_delays": int((launch["launch_delay"] > 100).sum()),
    }
    return out


def main() -> None:
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    samples = [Path(a) for a in sys.argv[1:]] or [
        path
        for folder in FOLDERS
        for path in sorted(folder.glob("**/*"))
        if path.is_file() and not path.name.endswith(".tar.gz")
    ]
    for sample in samples:
        data = reference(sample)
        target = HERE / f"{sample.name}.json"
        target.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        print(target.name, "error" if "hta_error" in data else "ok")


if __name__ == "__main__":
    main()
