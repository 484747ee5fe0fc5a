"""Start-up cost of the command line and the worker, as a user meets it.

Each command runs in a fresh process (wall time from spawn to exit, peak RSS from GNU time),
``--repeat`` times; the table gives the median and the worst run:

* ``manage.py parse`` of a tiny nccl-tests log (target: < 0.6 s, < 80 MB);
* ``manage.py ingest`` of a tiny new file (SQLite under a throwaway var dir);
* ``python -m baselines.detect`` on a 500-point CSV;
* ``manage.py check`` for reference: the full project import (every view, DRF, pandas);
* the Celery worker: from ``celery -A perfhub worker`` being started to its first task
  (the parse of an ingested file) finished, and the worker's peak RSS (target: < 3 s).

    .venv/bin/python benchmarks/cli_startup.py
    .venv/bin/python benchmarks/cli_startup.py --repeat 10
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from proc import Timed, machine_line, timed  # noqa: E402  (sibling script)

PY = sys.executable
TINY_LOG = """# nccl-tests version 2.17.6 nccl-headers=22105 nccl-library=22105
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  40000 on   node-a01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  40001 on   node-a01 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    11.02    0.00    0.00      0    10.91    0.00    0.00      0
          16             4     float     sum      -1    11.10    0.00    0.00      0    11.00    0.00    0.00      0
          32             8     float     sum      -1    11.05    0.00    0.00      0    11.03    0.00    0.00      0
          64            16     float     sum      -1    11.20    0.01    0.01      0    11.11    0.01    0.01      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.005
#
# Collective test concluded: all_reduce_perf
"""  # noqa: E501  (nccl-tests' own line width)


def _env(var: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(PERFHUB_VAR_DIR=str(var), PERFHUB_TASK_QUEUE=f"bench-{os.getpid()}")
    return env


def _row(name: str, runs: list[Timed], target: str) -> str:
    walls = [r.wall_s for r in runs]
    peaks = [r.peak_mb or 0.0 for r in runs]
    return (
        f"| {name} | {statistics.median(walls):.2f} | {max(walls):.2f} | "
        f"{statistics.median(peaks):.0f} | {max(peaks):.0f} | {target} |"
    )


def _repeat(
    cmd: list[str], env: dict[str, str], n: int, before: Callable[[], None] | None = None
) -> list[Timed]:
    runs = []
    for _ in range(n):
        if before:
            before()
        done = timed(cmd, cwd=ROOT, env=env)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr_tail}")
        runs.append(done)
    return runs


def worker_first_task(var: Path, env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting a worker to its first task done, and its peak RSS (MB)."""
    tiny = var / "first.log"
    tiny.write_text(TINY_LOG + f"# {random.random()}\n")
    done = timed([PY, "manage.py", "ingest", str(tiny)], cwd=ROOT, env=env)  # queues a parse
    if done.returncode != 0:
        raise SystemExit(f"ingest failed: {done.stderr_tail}")
    database = var / "perfhub.sqlite3"
    log = (var / "worker.log").open("wb")
    clock = time.perf_counter()
    worker = subprocess.Popen(
        [PY, "-m", "celery", "-A", "perfhub", "worker", "--pool", "solo",
         "--loglevel", "warning", "--without-heartbeat",
         "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        while True:
            with sqlite3.connect(database, timeout=5) as db:
                row = db.execute(
                    "SELECT status FROM artifacts_artifact ORDER BY id DESC LIMIT 1"
                ).fetchone()
            if row and row[0] in ("parsed", "failed"):
                break
            if worker.poll() is not None or time.perf_counter() - clock > 120:
                raise SystemExit(f"worker gave up: {(var / 'worker.log').read_text()[-2000:]}")
            time.sleep(0.02)
        first = time.perf_counter() - clock
        with open(f"/proc/{worker.pid}/status") as fh:
            peak = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:")) / 1024
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        log.close()
    return first, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(machine_line() + "\n")
    var = Path(tempfile.mkdtemp(prefix="perfhub-cli-bench-"))
    try:
        env = _env(var)
        tiny = var / "tiny.log"
        tiny.write_text(TINY_LOG)
        subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        csv = var / "series.csv"
        rng = random.Random(7)
        csv.write_text(
            "value\n"
            + "".join(f"{100 + rng.gauss(0, 0.3) - (i >= 300) * 6:.2f}\n" for i in range(500))
        )
        counter = iter(range(10**6))

        def fresh_file() -> None:
            (var / "new.log").write_text(TINY_LOG + f"# {next(counter)}\n")

        rows = [
            _row("`manage.py parse` tiny nccl-tests log",
                 _repeat([PY, "manage.py", "parse", str(tiny)], env, args.repeat),
                 "< 0.6 s, < 80 MB"),
            _row("`manage.py ingest` tiny new file (SQLite)",
                 _repeat([PY, "manage.py", "ingest", str(var / "new.log")], env, args.repeat,
                         fresh_file), "-"),
            _row("`python -m baselines.detect` 500 points",
                 _repeat([PY, "-m", "baselines.detect", str(csv)], env, args.repeat), "-"),
            _row("`manage.py check` (the whole project, reference)",
                 _repeat([PY, "manage.py", "check"], env, max(1, args.repeat // 2)), "-"),
        ]  # fmt: skip
        firsts = [worker_first_task(var, env) for _ in range(max(1, args.repeat // 2))]
    finally:
        shutil.rmtree(var, ignore_errors=True)
    print(
        "| command | median wall s | worst wall s | median peak RSS MB | worst peak MB | target |"
    )
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    walls = [f for f, _ in firsts]
    peaks = [p for _, p in firsts]
    print(
        f"| Celery worker: start to first task done (parse of a tiny log) | "
        f"{statistics.median(walls):.2f} | {max(walls):.2f} | {statistics.median(peaks):.0f} | "
        f"{max(peaks):.0f} | < 3 s |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
