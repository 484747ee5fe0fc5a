"""Parse speed and peak memory of the Nsight readers on large generated inputs.

* nsys_sqlite: a synthetic ``nsys export --type sqlite`` (the real samples' table and column
  names) with N kernels over 8 GPUs and 2 processes, a launch call per kernel (so the
  (globalPid, correlationId) join runs on N x N rows), memcpys and NVTX ranges;
* ncu_csv: an ``ncu --csv --page details`` file with K kernels x 40 metrics.

Each parse runs in its own process (peak RSS measured cleanly via getrusage of the child) and
the table shows rows, input size, wall time, MB/s and peak RSS, for two sizes each, so you
can see that memory does not grow with the input: SQLite sorts and groups on disk, and only
one row per distinct name is held.

    .venv/bin/python benchmarks/nsight_ingest.py                 # 0.5M and 2M kernels
    .venv/bin/python benchmarks/nsight_ingest.py --kernels 5000000
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000


def build_nsys(path: Path, kernels: int, names: int = 400) -> None:
    rnd = random.Random(7)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
        CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
        CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL, duration INTEGER NOT NULL,
            startTime INTEGER NOT NULL, stopTime INTEGER NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
            deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
            correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
            shortName INTEGER NOT NULL, registersPerThread INTEGER NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
            eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
            nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
            deviceId INTEGER NOT NULL, globalPid INTEGER, bytes INTEGER NOT NULL,
            copyKind INTEGER NOT NULL);
        CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
            text TEXT, globalTid INTEGER);
        """
    )
    strings = [(i, f"void kernel_{i}<float, {i % 7}>(float*, int)") for i in range(1, names)]
    strings += [(names, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)")]
    strings += [(names + 1, "cudaLaunchKernel_v7000")]
    conn.executemany("INSERT INTO StringIds VALUES (?, ?)", strings)
    duration = kernels * 2000
    conn.execute("INSERT INTO ANALYSIS_DETAILS VALUES (0, ?, 0, ?)", (duration, duration))
    conn.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.24.0')")
    pids = [((1 << 24) | 100) << 24, ((1 << 24) | 200) << 24]

    def kernel_rows():
        for i in range(kernels):
            start = i * 2000 // 8 * 8 + rnd.randrange(100)
            pid = pids[i % 2]
            yield (start, start + rnd.randrange(200, 3000), i % 8, 1, 7, i // 2, pid,
                   rnd.randrange(1, names + 1), 1, 32)  # fmt: skip

    def runtime_rows():
        for i in range(kernels):
            start = max(0, i * 2000 // 8 * 8 - 500)
            yield (start, start + 20, 0, pids[i % 2] | 7, i // 2, names + 1, 0, None)

    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?)", kernel_rows()
    )
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)", runtime_rows()
    )
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,?,?,?)",
        (
            (i * 20000, i * 20000 + 900, i % 8, pids[0], 1 << 20, 1 + i % 2)
            for i in range(kernels // 10)
        ),
    )
    conn.executemany(
        "INSERT INTO NVTX_EVENTS VALUES (?,?,59,?,0)",
        ((i * 200000, i * 200000 + 150000, f"step {i % 50}") for i in range(kernels // 100)),
    )
    conn.commit()
    conn.close()


def build_ncu(path: Path, kernels: int, metrics: int = 40) -> None:
    head = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
        '"Metric Value","Rule Name","Rule Type","Rule Description","Estimated Speedup Type",'
        '"Estimated Speedup"\n'
    )
    with path.open("w") as f:
        f.write("==PROF== Connected to process 1 (/usr/bin/python3)\n" + head)
        for k in range(kernels):
            ident = (
                f'"{k}","1","python3","node","gemm_{k % 300}(float*)","1","7","(256, 1, 1)",'
                '"(512, 1, 1)","0","9.0"'
            )
            for m in range(metrics):
                value = f"{(k * m) % 10000 / 100:,.2f}"
                f.write(f'{ident},"Section {m % 5}","metric_{m}","%","{value}","","","","",""\n')
            f.write(
                f'{ident},"Occupancy","","","","AchievedOccupancy","OPT","text","local","8.5"\n'
            )


def measure(kind: str, path: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one parse, in a fresh process of its own."""
    code = "\n".join(
        [
            "import resource, sys, time",
            f"sys.path.insert(0, {str(ROOT)!r})",
            "from artifacts.parsers import get_parser",
            "t = time.perf_counter()",
            f"with open({str(path)!r}, 'rb') as f: r = get_parser({kind!r}).parse(f)",
            "r.to_json()",
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
        ]
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, rss_kib = out.stdout.split()
    return float(seconds), int(rss_kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, nargs="*", default=[500_000, 2_000_000])
    parser.add_argument("--ncu-kernels", type=int, nargs="*", default=[2_000, 8_000])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.kernels:
            path = Path(tmp) / f"nsys_{n}.sqlite"
            build_nsys(path, n)
            seconds, rss = measure("nsys_sqlite", path)
            rows.append(("nsys_sqlite", f"{n:,} kernels", path.stat().st_size, seconds, rss))
            path.unlink()
        for n in args.ncu_kernels:
            path = Path(tmp) / f"ncu_{n}.csv"
            build_ncu(path, n)
            seconds, rss = measure("ncu_csv", path)
            rows.append(
                ("ncu_csv", f"{n:,} kernels x 40 metrics", path.stat().st_size, seconds, rss)
            )
            path.unlink()
    print(f"{'parser':<12} {'input':<26} {'MB':>8} {'seconds':>9} {'MB/s':>8} {'peak RSS MB':>12}")
    for kind, what, size, seconds, rss in rows:
        rate = size / MB / seconds
        print(f"{kind:<12} {what:<26} {size / MB:>8.1f} {seconds:>9.2f} {rate:>8.1f} {rss:>12.0f}")
    print("peak RSS is of the whole child process (Python + imports ~ 40 MB).")


if __name__ == "__main__":
    main()
