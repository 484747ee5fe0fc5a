"""Trace diff: two traces (or two jobs) side by side. Pure pandas, no Django.

A *side* is one trace or the ranks of a job. A job side is the mean rank: breakdown numbers
are averaged over its traces, kernel totals are summed and divided by the number of traces.
Optionally every time is divided by the side's number of ProfilerSteps ("per step"), so a
trace of 5 steps compares fairly with one of 3.

Deltas are B - A; ``delta_pct`` is relative to A (None when A is 0 or missing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

# (key, label) of the breakdown numbers compared; keys follow TraceSummary.breakdown().
BREAKDOWN_METRICS: tuple[tuple[str, str], ...] = (
    ("span_us", "GPU span µs"),
    ("busy_us", "GPU busy µs"),
    ("compute_us", "compute µs"),
    ("comm_us", "communication µs"),
    ("exposed_comm_us", "exposed communication µs"),
    ("memory_us", "memory µs"),
    ("idle_us", "idle µs"),
    ("busy_pct", "busy % of span"),
    ("compute_pct", "compute % of span"),
    ("comm_pct", "communication % of span"),
    ("exposed_comm_pct", "exposed communication % of span"),
    ("idle_pct", "idle % of span"),
    ("overlap_pct", "comm/compute overlap % of comm"),
    ("step_median_us", "median step µs"),
)
TIME_METRICS = frozenset(key for key, _ in BREAKDOWN_METRICS if key.endswith("_us"))
KERNEL_COLUMNS = ("name", "type", "count", "sum_us")
DELTA_COLUMNS = (
    "name", "type", "a_count", "b_count", "a_sum_us", "b_sum_us", "delta_us", "delta_pct",
    "change",
)  # fmt: skip


def side_breakdown(rows: Sequence[Mapping[str, Any]], *, per_step: bool = False) -> dict:
    """Mean of each metric over the side's traces (missing values ignored).

    ``rows``: one mapping per trace with the BREAKDOWN_METRICS keys and ``step_count``.
    With ``per_step`` the time metrics of each trace are divided by its step count first
    (the median step itself is left as it is).
    """
    frame = pd.DataFrame(list(rows))
    result: dict[str, float | None] = {}
    for key, _ in BREAKDOWN_METRICS:
        if key not in frame:
            result[key] = None
            continue
        values = pd.to_numeric(frame[key], errors="coerce")
        if per_step and key in TIME_METRICS and key != "step_median_us":
            values = values / _steps(frame)
        mean = values.mean()
        result[key] = None if pd.isna(mean) else round(float(mean), 3)
    return result


def side_kernels(
    tables: Sequence[pd.DataFrame], *, step_counts: Sequence[int] | None = None
) -> pd.DataFrame:
    """The mean rank's kernel table: per name, count and sum_us averaged over the traces.

    ``tables``: one frame per trace with KERNEL_COLUMNS. ``step_counts``: divide each
    trace's numbers by its steps first (per-step comparison).
    """
    if not tables:
        return pd.DataFrame(columns=list(KERNEL_COLUMNS))
    parts = []
    for i, table in enumerate(tables):
        frame = table.loc[:, list(KERNEL_COLUMNS)].copy()
        if step_counts is not None:
            steps = max(int(step_counts[i] or 0), 1)
            frame["count"] = frame["count"] / steps
            frame["sum_us"] = frame["sum_us"] / steps
        parts.append(frame)
    joined = pd.concat(parts, ignore_index=True)
    grouped = joined.groupby(["name", "type"], as_index=False, sort=False)[["count", "sum_us"]]
    total = grouped.sum()
    total[["count", "sum_us"]] = total[["count", "sum_us"]] / len(tables)
    return total


def breakdown_delta(a: Mapping[str, Any], b: Mapping[str, Any]) -> pd.DataFrame:
    """One row per metric: metric, label, a, b, delta, delta_pct."""
    rows = []
    for key, label in BREAKDOWN_METRICS:
        va, vb = _num(a.get(key)), _num(b.get(key))
        delta = None if va is None or vb is None else round(vb - va, 3)
        rows.append(
            {
                "metric": key,
                "label": label,
                "a": va,
                "b": vb,
                "delta": delta,
                "delta_pct": _relative(delta, va),
            }
        )
    return pd.DataFrame(rows, columns=["metric", "label", "a", "b", "delta", "delta_pct"])


def kernel_delta(
    a: pd.DataFrame, b: pd.DataFrame, *, top: int | None = None, same_within_pct: float = 1.0
) -> pd.DataFrame:
    """Kernels by how much their total time changed (largest |delta| first).

    ``change``: ``new`` (only in B), ``gone`` (only in A), ``slower``/``faster`` when the
    total moved by more than ``same_within_pct`` % of A, else ``same``.
    """
    left = _kernel_frame(a).rename(columns={"count": "a_count", "sum_us": "a_sum_us"})
    right = _kernel_frame(b).rename(columns={"count": "b_count", "sum_us": "b_sum_us"})
    merged = left.merge(right, on=["name", "type"], how="outer")
    if merged.empty:
        return pd.DataFrame(columns=list(DELTA_COLUMNS))
    merged["delta_us"] = merged["b_sum_us"].fillna(0.0) - merged["a_sum_us"].fillna(0.0)
    merged["delta_pct"] = [
        _relative(d, x) for d, x in zip(merged["delta_us"], merged["a_sum_us"], strict=True)
    ]
    merged["change"] = [
        _change(x, y, pct, same_within_pct)
        for x, y, pct in zip(
            merged["a_sum_us"], merged["b_sum_us"], merged["delta_pct"], strict=True
        )
    ]
    merged = merged.assign(_size=merged["delta_us"].abs())
    merged = merged.sort_values(["_size", "name"], ascending=[False, True]).drop(columns="_size")
    if top is not None:
        merged = merged.head(top)
    for column in ("a_count", "b_count", "a_sum_us", "b_sum_us", "delta_us"):
        merged[column] = merged[column].round(3)
    merged = merged.astype(object).where(merged.notna(), None)
    return merged.loc[:, list(DELTA_COLUMNS)].reset_index(drop=True)


def type_delta(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Summed kernel time per type (compute, communication, memory, other) on each side."""
    left = _kernel_frame(a).groupby("type")["sum_us"].sum().rename("a_sum_us")
    right = _kernel_frame(b).groupby("type")["sum_us"].sum().rename("b_sum_us")
    frame = pd.concat([left, right], axis=1).fillna(0.0).reset_index(names="type")
    frame["delta_us"] = (frame["b_sum_us"] - frame["a_sum_us"]).round(3)
    frame["delta_pct"] = [
        _relative(d, x) for d, x in zip(frame["delta_us"], frame["a_sum_us"], strict=True)
    ]
    frame[["a_sum_us", "b_sum_us"]] = frame[["a_sum_us", "b_sum_us"]].round(3)
    return frame.sort_values("type").reset_index(drop=True)


def _kernel_frame(frame: pd.DataFrame) -> pd.DataFrame:
    if frame is None or frame.empty:
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("name", "type") else float)
                             for c in ("name", "type", "count", "sum_us")})  # fmt: skip
    # the same name twice on one side (two traces) is one kernel
    return frame.groupby(["name", "type"], as_index=False)[["count", "sum_us"]].sum()


def _steps(frame: pd.DataFrame) -> pd.Series:
    if "step_count" not in frame:
        return pd.Series(1.0, index=frame.index)
    return pd.to_numeric(frame["step_count"], errors="coerce").fillna(0).clip(lower=1)


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if pd.isna(number) else number


def _relative(delta: float | None, base: float | None) -> float | None:
    if delta is None or base is None or pd.isna(base) or base == 0:
        return None
    return round(100.0 * delta / base, 2)


def _change(a: float | None, b: float | None, pct: float | None, same_within: float) -> str:
    if a is None or pd.isna(a):
        return "new"
    if b is None or pd.isna(b):
        return "gone"
    if pct is None:
        return "same" if a == b else "slower" if b > a else "faster"
    if abs(pct) <= same_within:
        return "same"
    return "slower" if pct > 0 else "faster"
