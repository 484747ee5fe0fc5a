"""The one place reports talk to the limits model (docs/efficiency.md): each run's peak and
bottleneck (read in ``collect``), and the efficiency table built from them (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from artifacts.models import BenchmarkRun
from baselines.limits.reads import RunEfficiency, run_efficiency
from hardware.efficiency import LARGE_BYTES
from reports.tables import Column, freeze

PEAK_COLUMNS = ("run_id", "peak_busbw_gbps", "bottleneck", "peak_note")

EFFICIENCY_TABLE = (
    Column("run_id", "run", "int"),
    Column("side", "side"),
    Column("collective", "collective"),
    Column("nranks", "ranks", "int"),
    Column("busbw_gbps", "best large busbw GB/s", "number", 2),
    Column("size", "at"),
    Column("peak_busbw_gbps", "peak GB/s", "number", 1),
    Column("bottleneck", "bottleneck"),
    Column("pct_of_peak", "% of peak", "share", 1),
)


def run_peaks(runs: Iterable[BenchmarkRun]) -> pd.DataFrame:
    """Per run: its peak busbw and bottleneck, or why they are unknown."""
    rows = []
    for run in runs:
        result = run_efficiency(run)
        if isinstance(result, RunEfficiency):
            rows.append((run.pk, result.peak.peak_busbw_gbps, result.peak.bottleneck, ""))
        else:
            rows.append((run.pk, None, "", getattr(result, "reason", "")))
    return pd.DataFrame(rows, columns=list(PEAK_COLUMNS))


def efficiency_table(curves: pd.DataFrame, peaks: pd.DataFrame | None) -> dict[str, Any] | None:
    """Per run and side: the best busbw from 64 MiB (else at its largest size) as % of the
    run's peak. None when the peaks were not read (a report built before this table)."""
    if peaks is None or curves.empty:
        return None
    rows = []
    for (run_id, side), points in curves.groupby(["run_id", "side"], sort=False):
        points = points.dropna(subset=["busbw_gbps"])
        if points.empty:
            continue
        large = points[points["size_bytes"] >= LARGE_BYTES]
        pool = large if not large.empty else points.tail(1)
        best = pool.loc[pool["busbw_gbps"].idxmax()]
        rows.append(
            {
                "run_id": run_id,
                "side": side,
                "collective": best["collective"],
                "nranks": best["nranks"],
                "busbw_gbps": float(best["busbw_gbps"]),
                "size": best["size"],
            }
        )
    frame = pd.DataFrame(rows, columns=["run_id", "side", "collective", "nranks", "busbw_gbps",
                                        "size"])  # fmt: skip
    frame = frame.merge(peaks, on="run_id", how="left")
    frame["pct_of_peak"] = 100 * frame["busbw_gbps"] / frame["peak_busbw_gbps"]
    return freeze(
        frame,
        name="efficiency",
        title="Against the hardware: best large-message busbw as % of each run's peak",
        columns=EFFICIENCY_TABLE,
        note="peak: the bound of the run's collective and topology on its hardware "
        "(docs/efficiency.md); blank when the hardware is unknown",
    )
