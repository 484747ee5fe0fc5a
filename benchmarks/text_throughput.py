"""How fast each log-like text kind is read: MB/s and peak memory, beside a plain read + scan.

Each case tiles a real sample of ../shared/samples to ``--mb`` MB (copies of the file one
after the other, each starting on a new line) in a temporary file, then, in a new process
pinned to one core (so kinds don't share a heap or a high-water mark):

1. reads the file once in 1 MiB blocks and counts its newlines: the floor, what touching
   every byte costs in Python (the page cache is warm for the next steps after this);
2. iterates its lines with ``textutil.LineReader`` (the loop the text parsers start from;
   ethtool_stats and rdma_counters read 1 MiB blocks instead, ``line_blocks.BlockReader``)
   and does nothing with them: what reading line by line costs by itself;
3. reads it as an upload is read (``artifacts.parsers.reading``, as ``manage.py parse
   --kind KIND`` does: sample, clean, the kind's parser), with no Django set up.

The table gives both times, the parse's MB/s and the process's peak RSS (VmHWM) with how
much it grew during the parse. Several ``--mb`` sizes show whether memory stays flat.

    .venv/bin/python benchmarks/text_throughput.py            # every case at 200 MB
    .venv/bin/python benchmarks/text_throughput.py --mb 20 200 --cases dmesg,nccl_debug

Target (issue 27): every log-like kind >= 100 MB/s on one core, memory flat.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from proc import machine_line  # noqa: E402  (sibling script)
from trace_ingest import peak_rss_kb  # noqa: E402

MB = 1024 * 1024
TARGET_MB_S = 100.0
SAMPLES = ROOT.parent / "shared" / "samples"


class Case(NamedTuple):
    name: str  # the row's name: the kind, with what the sample is when a kind has two
    kind: str
    sample: str  # below ../shared/samples


# The NCCL_DEBUG=TRACE log of a 2-node nccl-tests job is read both ways, as the issue timed
# it: as the NCCL log it is, and as the nccl-tests output detection takes it for.
CASES = (
    Case("nccl_debug", "nccl_debug", "nccl_debug/ssbandjl_2node_4gpu_NCCL_DEBUG_TRACE_roce.log"),
    Case(
        "nccl_tests (same TRACE log)",
        "nccl_tests",
        "nccl_debug/ssbandjl_2node_4gpu_NCCL_DEBUG_TRACE_roce.log",
    ),
    Case(
        "nccl_tests (80 ranks)", "nccl_tests", "nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log"
    ),
    Case("dmesg", "dmesg", "counters/gpud_dmesg_with_NVRM_Xid_119.log"),
    Case("fabric_manager", "fabric_manager", "counters/gpud_nvidia_fabricmanager.log"),
    Case("perf_stat", "perf_stat", "counters/perf_stat_system_wide_per_socket_2S_224cpu.txt"),
    Case(
        "ethtool_stats",
        "ethtool_stats",
        "ethtool_rdma/ethq_mlx5_core_cx4lx_ubuntu1804_ethtool_S.txt",
    ),
    Case(
        "rdma_counters",
        "rdma_counters",
        "counters/rdma_statistic_show_roce_mlx5_optional_counters.txt",
    ),
)


def tile(sample: Path, target_mb: float, out: Path) -> int:
    """Copies of ``sample`` up to ``target_mb``; returns the size written."""
    data = sample.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    copies = max(1, round(target_mb * MB / len(data)))
    block = data * max(1, min(copies, MB // len(data) or 1))  # write ~1 MiB at a time
    per_block = len(block) // len(data)
    with out.open("wb") as fh:
        written = 0
        while written + per_block <= copies:
            fh.write(block)
            written += per_block
        fh.write(data * (copies - written))
    return out.stat().st_size


# ---------------------------------------------------------------------------------------
# The measured child
# ---------------------------------------------------------------------------------------


def child(kind: str, path: str, sample: str) -> dict[str, float]:
    """Read + scan, then parse, in this process pinned to one core. Times are CPU seconds
    of this process (wall seconds beside them): the development machine is shared, and a
    core's rate is what the target is about."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")
    # What `manage.py parse` runs, without django.setup(): parsers are pure.
    from artifacts.management.commands.parse import parse_path
    from artifacts.parsers import get_parser
    from artifacts.parsers.textutil import LineReader

    # The sample itself first: detection imports every kind's parser at its first file, a
    # cost of the process, not of the bytes.
    get_parser(kind)
    parse_path(Path(sample), kind)
    clock, cpu = time.perf_counter(), time.process_time()
    lines = 0
    with open(path, "rb") as fh:
        while block := fh.read(MB):
            lines += block.count(b"\n")
    scan_wall, scan_cpu = time.perf_counter() - clock, time.process_time() - cpu
    # The loop every text parser starts from (textutil.LineReader: readline, decode, strip)
    # doing nothing with the lines: what reading line by line in Python costs by itself.
    cpu = time.process_time()
    with open(path, "rb") as fh:
        for _ in LineReader(fh):
            pass
    loop_cpu = time.process_time() - cpu
    base_kb = peak_rss_kb()
    clock, cpu = time.perf_counter(), time.process_time()
    result = parse_path(Path(path), kind)
    parse_wall, parse_cpu = time.perf_counter() - clock, time.process_time() - cpu
    return {
        "lines": lines,
        "scan_s": scan_cpu,
        "scan_wall_s": scan_wall,
        "loop_s": loop_cpu,
        "parse_s": parse_cpu,
        "parse_wall_s": parse_wall,
        "base_kb": base_kb,
        "peak_kb": peak_rss_kb(),
        "items": result_items(result),
    }


def result_items(result: object) -> int:
    """Entries of the result's top-level lists (runs, events, snapshots, ...): what a parser
    must keep, so memory that grows with them is the answer's, not the reading's."""
    fields = getattr(result, "__dataclass_fields__", {})
    values = (getattr(result, name) for name in fields if name != "warnings")
    return sum(len(v) for v in values if isinstance(v, list | tuple))


def measure(kind: str, path: Path, sample: Path, timeout: float) -> dict[str, float] | str:
    """The child's figures, or why there are none."""
    cmd = [sys.executable, __file__, "--child", kind, str(path), str(sample)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"over {timeout:.0f} s"
    if done.returncode:
        return (done.stderr.strip().splitlines() or ["failed"])[-1][:120]
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[200.0], help="tiled size(s)")
    parser.add_argument("--cases", help="comma-separated kinds or row names (default: all)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/perfhub-text-bench"))
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per case")
    parser.add_argument(
        "--child", nargs=3, metavar=("KIND", "FILE", "SAMPLE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    wanted = set(args.cases.split(",")) if args.cases else None
    cases = [c for c in CASES if wanted is None or c.kind in wanted or c.name in wanted]
    if not SAMPLES.is_dir():
        raise SystemExit(f"samples not found: {SAMPLES} (a checkout without ../shared/)")
    args.workdir.mkdir(parents=True, exist_ok=True)
    print(machine_line())
    print("CPU seconds of the measuring process (wall seconds in brackets)")
    print(
        "\n| case | sample KB | MB | read+scan s | read+scan MB/s | line loop MB/s | parse s | "
        "parse MB/s | "
        f"peak RSS MB | grew MB | result items | >= {TARGET_MB_S:.0f} MB/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    missed = 0
    for case in cases:
        sample = SAMPLES / case.sample
        for mb in args.mb:
            path = args.workdir / f"{case.kind}-{mb:g}.log"
            try:
                size = tile(sample, mb, path) / MB
                got = measure(case.kind, path, sample, args.timeout)
            finally:
                path.unlink(missing_ok=True)
            head = f"| {case.name} | {sample.stat().st_size / 1024:.0f} | {size:.0f} |"
            if isinstance(got, str):
                missed += 1
                print(f"{head} - | - | - | - | - | - | - | - | NO: {got} |", flush=True)
                continue
            rate = size / max(got["parse_s"], 1e-3)
            missed += rate < TARGET_MB_S
            print(
                f"{head} {got['scan_s']:.2f} ({got['scan_wall_s']:.2f}) | "
                f"{size / max(got['scan_s'], 1e-3):.0f} | {size / max(got['loop_s'], 1e-3):.0f} | "
                f"{got['parse_s']:.1f} ({got['parse_wall_s']:.1f}) | {rate:.1f} | "
                f"{got['peak_kb'] / 1024:.0f} | "
                f"{(got['peak_kb'] - got['base_kb']) / 1024:.0f} | {got['items']} | "
                f"{'yes' if rate >= TARGET_MB_S else 'NO'} |",
                flush=True,
            )
    print(f"\n{len(cases) * len(args.mb) - missed} of {len(cases) * len(args.mb)} meet the target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
