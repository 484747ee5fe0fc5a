"""Speed of the fabric pure path: pairing counter snapshots into rates, then the rules.

A synthetic fleet: H hosts x 8 NICs, each read R times 10 s apart, each reading holding C
counters (mlx5 ethtool -S + hw_counters names rising at random speeds, so many rules fire).
Prints one row per size: samples in, rate rows out, seconds for rates.compute_rates, seconds
for building the rule rows plus rules.evaluate, findings, and samples per second. No
database: this is the work the findings task does in memory after reading the rows.

    .venv/bin/python benchmarks/fabric_rates.py
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")

from artifacts.fabric import rates, rules

NAMES = [
    f"rx_prio{p}_{k}"
    for p in range(8)
    for k in ("pause", "pause_duration", "bytes", "packets", "discards")
]
NAMES += [
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rp_cnp_handled",
    "out_of_sequence",
    "port_rcv_packets",
    "port_xmit_data",
    "port_rcv_data",
    "symbol_error",
    "link_downed",
    "rx_discards_phy",
    "local_ack_timeout_err",
]


def fleet(hosts: int, readings: int, counters: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(7)
    names = NAMES[:counters]
    t0 = datetime(2025, 3, 1, tzinfo=UTC)
    snaps, samples = [], []
    sid = 0
    for h in range(hosts):
        for d in range(8):
            base = rng.integers(0, 10**9, size=len(names)).astype(float)
            speed = rng.integers(0, 2000, size=len(names)).astype(float)
            for r in range(readings):
                sid += 1
                snaps.append(
                    (
                        sid,
                        1 + h,
                        "ethtool_stats",
                        f"node{h:03d}",
                        f"mlx5_{d}",
                        None,
                        t0 + timedelta(seconds=10 * r),
                    )
                )
                values = base + speed * 10 * r
                samples.extend((sid, n, v, "count") for n, v in zip(names, values, strict=True))
    snap = pd.DataFrame(snaps, columns=list(rates.SNAPSHOT_COLUMNS))
    snap["port"] = snap["port"].astype("object")
    return snap, pd.DataFrame(samples, columns=list(rates.SAMPLE_COLUMNS))


def main() -> None:
    print(
        f"{'hosts':>6} {'readings':>8} {'samples':>9} {'rate rows':>10} {'rates s':>8} "
        f"{'rules s':>8} {'findings':>8} {'samples/s':>11}"
    )
    for hosts, readings, counters in ((8, 2, 40), (64, 2, 51), (64, 10, 51), (256, 4, 51)):
        snap, samples = fleet(hosts, readings, counters)
        start = time.perf_counter()
        out = rates.compute_rates(snap, samples)
        mid = time.perf_counter()
        rows = tuple(
            rules.RateRow(
                1,
                r.host,
                r.device,
                None,
                r.counter,
                bool(r.derived),
                None if pd.isna(r.delta) else float(r.delta),
                float(r.dt_seconds),
                None if pd.isna(r.value) else float(r.value),
                r.unit,
                r.flag,
                r.at,
            )
            for r in out.itertuples(index=False)
        )
        hits = rules.evaluate(rules.Evidence(rates=rows))
        end = time.perf_counter()
        print(
            f"{hosts:>6} {readings:>8} {len(samples):>9} {len(out):>10} {mid - start:>8.2f} "
            f"{end - mid:>8.2f} {len(hits):>8} {len(samples) / (end - start):>11,.0f}"
        )


if __name__ == "__main__":
    main()
