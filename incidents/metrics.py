"""Incident metrics (pure pandas): time to detect / mitigate / resolve, and action-item ages.

Inputs are plain DataFrames built by ``querysets.metrics_frames``; nothing here touches the
database, so the numbers are easy to test and to reuse in reports.
"""

from __future__ import annotations

import pandas as pd

DURATIONS = ("detect", "acknowledge", "mitigate", "resolve")
# What on-call dashboards call them (the statistics are medians and p90s, not means).
DURATION_LABELS = {"detect": "MTTD", "acknowledge": "MTTA", "mitigate": "MTTM", "resolve": "MTTR"}
SPLITS = {
    "severity": "severity",
    "cluster": "cluster",
    "month": "month",
    "hardware generation": "hardware_generation",
    "vendor": "vendor",
}
AGE_BUCKETS = ((0, 7, "up to 7 days"), (8, 30, "8 to 30 days"), (31, 90, "31 to 90 days"))
OLDEST_BUCKET = "over 90 days"


def duration_stats(incidents: pd.DataFrame, by: str) -> pd.DataFrame:
    """Median and p90 (hours) of each duration per value of ``by``, plus an "all" row.

    ``incidents`` has one row per (incident, group value) with duration columns in seconds
    (NaN when unknown); an incident with two vendors counts once for each.
    """
    columns = ["group", "incidents"] + [f"{d}_{s}" for d in DURATIONS for s in ("median", "p90")]
    if incidents.empty:
        return pd.DataFrame(columns=columns)
    frame = incidents.copy()
    frame[by] = frame[by].fillna("").replace("", "(none)")
    rows = []
    groups = [("all", frame.drop_duplicates("id")), *sorted(frame.groupby(by), key=lambda g: g[0])]
    for value, group in groups:
        row: dict[str, object] = {"group": value, "incidents": int(group["id"].nunique())}
        for duration in DURATIONS:
            hours = group[duration].dropna() / 3600.0
            row[f"{duration}_median"] = round(float(hours.median()), 2) if len(hours) else None
            row[f"{duration}_p90"] = round(float(hours.quantile(0.9)), 2) if len(hours) else None
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def all_splits(incidents: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``duration_stats`` for every split the metrics page shows."""
    return {name: duration_stats(incidents, column) for name, column in SPLITS.items()}


def open_item_ages(items: pd.DataFrame) -> pd.DataFrame:
    """Open action items by age bucket and type; ``items`` has ``age_days``, ``type``,
    ``overdue`` (bool)."""
    columns = ["age", "items", "overdue", "mitigate", "prevent", "process"]
    labels = [label for *_, label in AGE_BUCKETS] + [OLDEST_BUCKET]
    if items.empty:
        return pd.DataFrame([[label, 0, 0, 0, 0, 0] for label in labels], columns=columns)
    bucket = items["age_days"].map(_bucket)
    rows = []
    for label in labels:
        chosen = items[bucket == label]
        counts = chosen["type"].value_counts()
        rows.append(
            [
                label,
                len(chosen),
                int(chosen["overdue"].sum()),
                *[int(counts.get(t, 0)) for t in ("mitigate", "prevent", "process")],
            ]
        )
    return pd.DataFrame(rows, columns=columns)


def _bucket(days: float) -> str:
    for low, high, label in AGE_BUCKETS:
        if low <= days <= high:
            return label
    return OLDEST_BUCKET
