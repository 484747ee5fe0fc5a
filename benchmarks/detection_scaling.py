"""How the detection pass grows with history: per series, and over a loaded database.

1. ``baselines.detect.detect`` on synthetic nightly series of 125 to 4,000 points (a step,
   a six-point dip, noise at the print resolution): milliseconds per call and per point;
2. with ``--database`` (a database holding a history, e.g. ``seed_demo --measurements
   10000000``): ``baselines.alerting.history_scan`` over ``--series`` series of the
   longest history, i.e. what the whole-history pass costs per series, with the series'
   point count. ``history_scan`` reads a series' newest ``HISTORY_POINTS`` points, so its
   cost per series stops growing with the number of runs.

    .venv/bin/python benchmarks/detection_scaling.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfhub_bench \\
        .venv/bin/python benchmarks/detection_scaling.py --database --series 200
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")


def series(n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    values = []
    for i in range(n):
        level = 350.0 * (0.92 if i >= n * 2 // 3 else 1.0)
        if n // 3 <= i < n // 3 + 6:
            level *= 0.94
        values.append(round(level * (1 + rng.gauss(0, 0.003)), 2))
    return values


def per_series(repeat: int) -> None:
    from baselines.detect import detect

    print("| points | ms per detect() | µs per point | change points |")
    print("|---|---|---|---|")
    for n in (125, 250, 500, 1000, 2000, 4000):
        values = series(n, n)
        clock = time.perf_counter()
        for _ in range(repeat):
            found = detect(values, direction="higher", resolution=0.01)
        ms = (time.perf_counter() - clock) / repeat * 1000
        print(f"| {n} | {ms:.1f} | {ms * 1000 / n:.1f} | {len(found.change_points)} |")


def over_database(count: int) -> None:
    import django

    django.setup()
    from django.db import transaction

    from baselines.alerting import HISTORY_POINTS, Collector, history_scan
    from baselines.models import Series

    chosen = list(
        Series.objects.order_by("-point_count", "id").values_list("id", "point_count")[:count]
    )
    if not chosen:
        print("no series in this database")
        return
    clock = time.perf_counter()
    with transaction.atomic():
        history_scan([pk for pk, _ in chosen], collector=Collector())
        transaction.set_rollback(True)  # measure only: keep the database as it was
    seconds = time.perf_counter() - clock
    total = Series.objects.count()
    points = sorted(n for _, n in chosen)
    print(
        f"\nhistory_scan over {len(chosen)} series of {points[0]}-{points[-1]} points (newest "
        f"{HISTORY_POINTS} read): {seconds:.1f} s, {seconds / len(chosen) * 1000:.0f} ms per "
        f"series; all {total} series at that rate: {seconds / len(chosen) * total:.0f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--database", action="store_true", help="also scan a loaded database")
    parser.add_argument("--series", type=int, default=200)
    args = parser.parse_args()
    from proc import machine_line

    print(machine_line() + "\n")
    per_series(args.repeat)
    if args.database:
        over_database(args.series)
    return 0


if __name__ == "__main__":
    sys.exit(main())
