"""Ingest speed of PyTorch Profiler (Kineto) traces: PerfHub against HTA 0.5.0.

Generates a large Kineto trace deterministically by tiling a real sample (each copy shifted
in time, with fresh correlation/flow/external ids and step numbers), then runs, each in its
own process so peak RSS is measured cleanly:

* PerfHub: ``artifacts.traces.parsers.torch_trace.parse`` (streaming parse + every per-rank
  analysis + the canonical JSON), pinned to one CPU core;
* HTA 0.5.0 (optional, ``--hta /tmp/hta/bin/python``): ``TraceAnalysis`` load +
  ``get_temporal_breakdown`` + ``get_gpu_kernel_breakdown``.

and prints wall time, MB/s and peak RSS side by side. ``--ranks 8 --rank-mb 50`` instead
parses eight ~50 MB rank traces with one worker process per core.

    .venv/bin/python benchmarks/trace_ingest.py --mb 300 --hta /tmp/hta/bin/python
    .venv/bin/python benchmarks/trace_ingest.py --mb 300 1000 3000   # peak RSS vs size
    .venv/bin/python benchmarks/trace_ingest.py --ranks 8 --rank-mb 50

HTA is a development-time reference only: install it in a throwaway venv, never here.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import gzip
import json
import math
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SAMPLE = (
    ROOT.parent
    / "shared"
    / "samples"
    / "torch_profiler"
    / "hta_df_index_resolver_rank1_world2.json.gz"
)
MB = 1_000_000

# ---------------------------------------------------------------------------------------
# Generating a big trace
# ---------------------------------------------------------------------------------------

_TS_RE = re.compile(rb'("ts": )(-?\d+)(\.\d+)?')
_ID_RE = re.compile(rb'("(?:correlation|id|External id)": )(\d+)')
_STEP_RE = re.compile(rb"(ProfilerStep#)(\d+)")
_ARRAY_END_RE = re.compile(rb"\}\s*\]")


def _split_sample(text: bytes) -> tuple[bytes, bytes, bytes]:
    """(head up to and including '[', the events, the tail from ']' on)."""
    start = text.index(b'"traceEvents"')
    start = text.index(b"[", start) + 1
    ends = [m.start() + 1 for m in _ARRAY_END_RE.finditer(text, start)]
    end = ends[-1]
    return text[:start], text[start:end].strip(), text[end:]


def _shift(events: bytes, ts_offset: int, id_offset: int, step_offset: int) -> bytes:
    def ts(m: re.Match[bytes]) -> bytes:
        return m.group(1) + str(int(m.group(2)) + ts_offset).encode() + (m.group(3) or b"")

    def ids(m: re.Match[bytes]) -> bytes:
        return m.group(1) + str(int(m.group(2)) + id_offset).encode()

    def step(m: re.Match[bytes]) -> bytes:
        return m.group(1) + str(int(m.group(2)) + step_offset).encode()

    out = _TS_RE.sub(ts, events) if ts_offset else events
    out = _ID_RE.sub(ids, out) if id_offset else out
    return _STEP_RE.sub(step, out) if step_offset else out


def generate(sample: Path, out: Path, target_mb: float, *, rank: int | None = None) -> Path:
    """Write a trace of about ``target_mb`` MB by tiling ``sample``; cached by name."""
    if out.exists():
        return out
    text = gzip.decompress(sample.read_bytes()) if sample.suffix == ".gz" else sample.read_bytes()
    head, events, tail = _split_sample(text)
    if rank is not None:
        head = re.sub(rb'("rank": )\d+', b"\\g<1>" + str(rank).encode(), head, count=1)
    stamps = [int(m.group(2)) for m in _TS_RE.finditer(events)]
    span = max(stamps) - min(stamps) + 1000
    max_id = max((int(m.group(2)) for m in _ID_RE.finditer(events)), default=0) + 1
    steps = max((int(m.group(2)) for m in _STEP_RE.finditer(events)), default=0) + 1
    tiles = max(1, math.ceil(target_mb * MB / len(events)))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with tmp.open("wb") as fh:
        fh.write(head + b"\n  ")
        for k in range(tiles):
            if k:
                fh.write(b",\n  ")
            fh.write(_shift(events, k * span, k * max_id, k * steps))
        fh.write(b"\n  " + tail)
    tmp.rename(out)
    return out


# ---------------------------------------------------------------------------------------
# Measured children
# ---------------------------------------------------------------------------------------


def peak_rss_kb() -> int:
    """This process's peak RSS. VmHWM, not ru_maxrss: Linux carries ru_maxrss over from
    the parent across fork+exec, which would charge the generator's memory to the child."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


_HTA_CHILD = r"""
import json, logging, os, resource, sys, time, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
t1 = time.perf_counter()
analysis = TraceAnalysis(trace_dir=sys.argv[1])
temporal = analysis.get_temporal_breakdown(visualize=False)
kernel_types, kernels = analysis.get_gpu_kernel_breakdown(visualize=False)
t2 = time.perf_counter()
row = temporal.iloc[0]
hwm = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")]
print(json.dumps({
    "import_s": t1 - t0, "work_s": t2 - t1,
    "maxrss_kb": hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "idle_us": float(row["idle_time(us)"]), "kernel_time_us": float(row["kernel_time(us)"]),
}))
"""


def perfhub_child(path: str, pin: bool) -> dict:
    """Parse one file in this process; returns timings and this process's peak RSS."""
    if pin and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    t0 = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    from artifacts.parsers.streams import open_decompressed
    from artifacts.traces.parsers import torch_trace

    t1 = time.perf_counter()
    with open(path, "rb") as fh:
        stream = open_decompressed(fh, compressed_size=os.path.getsize(path))
        result = torch_trace.parse(stream)
    body = json.dumps(result.to_json())
    t2 = time.perf_counter()
    b = result.breakdown_steps
    return {
        "import_s": t1 - t0,
        "work_s": t2 - t1,
        "maxrss_kb": peak_rss_kb(),
        "idle_us": b.get("idle_time_us"),
        "kernel_time_us": b.get("kernel_time_us"),
        "json_bytes": len(body),
    }


def _run_child(cmd: list[str]) -> tuple[dict, float]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"child failed: {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall


def measure_perfhub(path: Path) -> tuple[dict, float]:
    return _run_child([sys.executable, __file__, "--child", str(path)])


def measure_hta(python: str, path: Path) -> tuple[dict, float]:
    trace_dir = path.parent / f"hta_{path.stem}"
    trace_dir.mkdir(exist_ok=True)
    link = trace_dir / path.name
    if not link.exists():
        link.symlink_to(path)
    return _run_child([python, "-c", _HTA_CHILD, str(trace_dir)])


# ---------------------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------------------


def _row(tool: str, path: Path, child: dict, wall: float) -> list[str]:
    size = path.stat().st_size / MB
    return [
        tool,
        f"{size:.0f}",
        f"{wall:.2f}",
        f"{child['work_s']:.2f}",
        f"{size / child['work_s']:.0f}",
        f"{child['maxrss_kb'] / 1024:.0f}",
        f"{child['idle_us']:.0f}" if child.get("idle_us") is not None else "-",
    ]


def _table(rows: list[list[str]]) -> str:
    header = ["tool", "MB", "process wall s", "parse+analyses s", "MB/s", "peak RSS MB", "idle µs"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def measure_command(path: Path) -> dict:
    """``manage.py parse FILE > out.json`` as a user runs it: a new process, Django start-up,
    kind detection, parse, analyses and the JSON written out; wall time and peak RSS."""
    from proc import timed  # sibling script

    # a throwaway var dir: the command reads settings only, but settings create var/ folders
    env = {**os.environ, "PERFHUB_VAR_DIR": str(path.parent / "var")}
    done = timed([sys.executable, str(ROOT / "manage.py"), "parse", str(path)], cwd=ROOT, env=env)
    if done.returncode != 0:
        raise SystemExit(f"manage.py parse failed: {done.stderr_tail}")
    return {
        "wall_s": done.wall_s,
        "maxrss_kb": (done.peak_mb or 0) * 1024,
        "json_mb": done.stdout_bytes / MB,
    }


def single(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from proc import machine_line

    print(machine_line() + "\n")
    work = Path(args.workdir)
    rows = []
    ours = {}
    for mb in args.mb:
        path = generate(Path(args.sample), work / f"trace_{mb:g}mb.json", mb)
        ours[mb], wall = measure_perfhub(path)
        rows.append(_row("PerfHub (1 core)", path, ours[mb], wall))
    if args.hta:
        hta_mb = args.hta_mb or args.mb[0]
        hta_path = generate(Path(args.sample), work / f"trace_{hta_mb:g}mb.json", hta_mb)
        if hta_mb not in ours:
            ours[hta_mb], wall = measure_perfhub(hta_path)
            rows.append(_row("PerfHub (1 core)", hta_path, ours[hta_mb], wall))
        same = rows[[*ours].index(hta_mb)]
        command = measure_command(hta_path)
        size = hta_path.stat().st_size / MB
        rows.append(
            ["PerfHub `manage.py parse`", f"{size:.0f}", f"{command['wall_s']:.2f}", "-",
             f"{size / command['wall_s']:.0f}", f"{command['maxrss_kb'] / 1024:.0f}", "-"]
        )  # fmt: skip
        theirs, theirs_wall = measure_hta(args.hta, hta_path)
        rows.append(_row("HTA 0.5.0", hta_path, theirs, theirs_wall))
        print(_table(rows))
        print(
            f"\nspeed-up on {size:.0f} MB, same file, same run: "
            f"{theirs_wall / command['wall_s']:.1f}x end to end (manage.py parse as a user runs "
            f"it, {command['json_mb']:.1f} MB of JSON written, vs HTA's process), "
            f"{theirs_wall / float(same[2]):.1f}x process wall of the in-process parse, "
            f"{theirs['work_s'] / ours[hta_mb]['work_s']:.1f}x load+analyses; "
            f"peak memory {theirs['maxrss_kb'] / command['maxrss_kb']:.1f}x less "
            f"({command['maxrss_kb'] / 1024:.0f} MB vs {theirs['maxrss_kb'] / 1024:.0f} MB)"
        )
        return
    print(_table(rows))


def ranks(args: argparse.Namespace) -> None:
    work = Path(args.workdir)
    paths = [
        generate(Path(args.sample), work / f"rank{r}_{args.rank_mb:g}mb.json", args.rank_mb, rank=r)
        for r in range(args.ranks)
    ]
    workers = min(
        args.ranks,
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1,
    )
    t0 = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(perfhub_child, map(str, paths), [False] * len(paths)))
    wall = time.perf_counter() - t0
    total = sum(p.stat().st_size for p in paths) / MB
    print("| ranks | MB each | MB total | workers | wall s | MB/s | peak RSS MB per worker |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {args.ranks} | {total / args.ranks:.0f} | {total:.0f} | {workers} | {wall:.2f} | "
        f"{total / wall:.0f} | {max(r['maxrss_kb'] for r in results) / 1024:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mb",
        type=float,
        nargs="+",
        default=[300.0],
        help="size(s) of the generated trace; several sizes show that peak RSS stays flat",
    )
    parser.add_argument("--sample", default=str(DEFAULT_SAMPLE), help="Kineto trace to tile")
    parser.add_argument(
        "--hta", help="python of a venv with holistictraceanalysis==0.5.0 (omit to skip HTA)"
    )
    parser.add_argument(
        "--hta-mb", type=float, help="run HTA on a trace of this size (default: the first --mb)"
    )
    parser.add_argument("--ranks", type=int, help="parse this many rank traces in parallel")
    parser.add_argument("--rank-mb", type=float, default=50, help="size of each rank trace")
    parser.add_argument("--workdir", default="/tmp/perfhub-trace-bench")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(perfhub_child(args.child, pin=True)))
        return
    if not Path(args.sample).exists():
        raise SystemExit(f"sample not found: {args.sample} (pass --sample)")
    if args.ranks:
        ranks(args)
    else:
        single(args)


if __name__ == "__main__":
    main()
