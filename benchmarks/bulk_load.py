"""The ten-million-measurement history, loaded as a user would: time, memory, what it holds.

Creates (or, with ``--replace``, drops and re-creates) a PostgreSQL database, migrates it,
runs ``manage.py seed_demo --measurements N`` in a new process (GNU time for its peak RSS)
and prints the command's phases (rows, index rebuild, statistics, then the detection pass:
comparisons and change points) with the table sizes it left behind:

    .venv/bin/python benchmarks/bulk_load.py --replace              # 10,000,000 rows
    .venv/bin/python benchmarks/bulk_load.py --measurements 1000000 --profiles 3 --replace

The measurements table is partitioned by month on PostgreSQL (issue 27): its size is summed
over the partitions. Target (issue 14): the load under 20 minutes on the 2-core development
machine; the detection pass reported on its own. Then ``benchmarks/pages.py`` reads the same
database.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from proc import machine_line  # noqa: E402  (sibling script)

PY = sys.executable
GNU_TIME = "/usr/bin/time"
TABLES = (
    "artifacts_artifact", "artifacts_benchmarkrun", "artifacts_measurement",
    "artifacts_runrank", "baselines_seriespoint", "baselines_series", "baselines_alert",
    "baselines_alertsummary", "baselines_comparison",
)  # fmt: skip


def psql(sql: str, database: str = "postgres") -> str:
    done = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", database, "-AtXqc", sql],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measurements", type=int, default=10_000_000)
    parser.add_argument("--profiles", type=int, default=24)
    parser.add_argument("--database", default="perfhub_bench")
    parser.add_argument("--var", default="/tmp/perfhub-bulk-var", help="PERFHUB_VAR_DIR")
    parser.add_argument("--replace", action="store_true", help="drop the database first")
    args = parser.parse_args()

    print(machine_line() + "\n")
    exists = psql(f"SELECT 1 FROM pg_database WHERE datname = '{args.database}'") == "1"
    if exists and not args.replace:
        raise SystemExit(f"database {args.database} exists: pass --replace to load it afresh")
    if exists:
        psql(f'DROP DATABASE "{args.database}" WITH (FORCE)')
    psql(f'CREATE DATABASE "{args.database}"')
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{args.database}",
        "PERFHUB_VAR_DIR": args.var,
    }
    subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    report = Path(args.var) / "bulk_load.time"
    command = [
        GNU_TIME, "-f", "%M", "-o", str(report), PY, "manage.py", "seed_demo",
        "--measurements", str(args.measurements), "--profiles", str(args.profiles),
    ]  # fmt: skip
    clock = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - clock
    if done.returncode:
        raise SystemExit(f"seed_demo failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    out = done.stdout
    print("\n".join(f"    {line}" for line in out.splitlines()) + "\n")
    phases = {
        name: float(seconds)
        for name, seconds in re.findall(r"([a-z][a-z ]+) ([0-9.]+) s", out.split("in all:")[-1])
    }
    rebuilt = re.search(r"indexes and constraints made again in (\d+) s", out)
    load_s = phases.get("load", 0.0) + phases.get("series statistics", 0.0)
    detect_s = phases.get("compare", 0.0) + phases.get("detect", 0.0)
    peak = report.read_text().split()[-1] if report.exists() else "?"
    print("| what | figure |")
    print("|---|---|")
    print(f"| load (rows, indexes and constraints rebuilt, statistics) | {load_s:.0f} s "
          f"({load_s / 60:.1f} min; target < 20 min) |")  # fmt: skip
    if rebuilt:
        print(f"| of which indexes and constraints rebuilt | {rebuilt.group(1)} s |")
    print(
        f"| detection pass (comparisons + change points on every series) | {detect_s:.0f} s "
        f"(compare {phases.get('compare', 0):.0f} s, detect {phases.get('detect', 0):.0f} s) |"
    )
    print(f"| whole command, wall | {wall:.0f} s |")
    if peak.isdigit():
        print(f"| peak RSS of the command | {int(peak) / 1024:.0f} MB |")
    counts = psql(
        " UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}" for t in TABLES), args.database
    )
    for line in counts.splitlines():
        table, count = line.split("|")
        print(f"| rows in {table} | {int(count):,} |")
    # a partitioned table's bytes are its partitions' (issue 27): summed over the parent's tree
    heap, indexes, parts = psql(
        "SELECT sum(pg_table_size(relid)), sum(pg_indexes_size(relid)), count(*) "
        "FROM pg_partition_tree('artifacts_measurement') WHERE isleaf",
        args.database,
    ).split("|")
    rows = max(1, int(psql("SELECT count(*) FROM artifacts_measurement", args.database)))
    print(
        f"| artifacts_measurement on disk | {int(parts)} partition(s): table "
        f"{int(heap) / 2**20:,.0f} MB ({int(heap) / rows:.0f} B/row), indexes "
        f"{int(indexes) / 2**20:,.0f} MB ({int(indexes) / rows:.0f} B/row) |"
    )
    size = psql(f"SELECT pg_size_pretty(pg_database_size('{args.database}'))", args.database)
    print(f"| database size | {size} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
