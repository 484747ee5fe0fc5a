"""Fleet comparisons for slow-node triage: one number per host, and who stands out.

Two sources: a counter rate (per host, the worst device's median over the window, e.g.
``rx_prio3_pause`` frames/s) and nccl-tests runs between two hosts (per node pair, the
median bus bandwidth of its runs; per host, the median over the pairs it is in, so one bad
node drags down every pair it belongs to while its partners recover elsewhere). Outliers
come from outliers.mad_outliers, never from a fixed threshold.
"""

from __future__ import annotations

import dataclasses
from datetime import date
from typing import Any

import pandas as pd

from ..models import BenchmarkRun, CounterRate, RunRank
from .outliers import Outliers, mad_outliers

RUN_METRICS = {
    "avg_busbw_gbps": "average bus bandwidth (GB/s)",
    "max_busbw_gbps": "peak bus bandwidth (GB/s)",
}


@dataclasses.dataclass(frozen=True)
class HostComparison:
    metric: str
    unit: str
    table: pd.DataFrame  # host, value, device, readings, z, outlier
    outliers: Outliers
    direction: str


@dataclasses.dataclass(frozen=True)
class PairwiseComparison:
    metric: str
    collective: str
    pairs: pd.DataFrame  # host_a, host_b, value, runs
    matrix: pd.DataFrame  # host x host, symmetric, NaN where no run
    hosts: HostComparison


def counter_by_host(
    counter: str,
    *,
    since: date | None = None,
    until: date | None = None,
    direction: str = "high",
    label: str = "",
) -> HostComparison:
    qs = CounterRate.objects.filter(counter=counter).exclude(value__isnull=True).exclude(host="")
    if since:
        qs = qs.filter(at__date__gte=since)
    if until:
        qs = qs.filter(at__date__lte=until)
    if label:
        qs = qs.filter(after__artifact__label=label)
    frame = pd.DataFrame(
        list(qs.values_list("host", "device", "value", "unit")[:200_000]),
        columns=["host", "device", "value", "unit"],
    )
    unit = str(frame["unit"].iloc[0]) if len(frame) else ""
    if frame.empty:
        return _comparison(counter, unit, pd.DataFrame(columns=["host", "value"]), direction)
    per_device = frame.groupby(["host", "device"])["value"].agg(["median", "count"]).reset_index()
    # the worst device speaks for the host: one bad NIC of eight is the story
    ascending = direction == "low"
    worst = (
        per_device.sort_values("median", ascending=ascending)
        .groupby("host", as_index=False)
        .first()
        .rename(columns={"median": "value", "count": "readings"})
    )
    return _comparison(counter, unit, worst, direction)


def pairwise_runs(
    *,
    collective: str = "all_reduce",
    metric: str = "avg_busbw_gbps",
    since: date | None = None,
    until: date | None = None,
    label: str = "",
) -> PairwiseComparison:
    if metric not in RUN_METRICS:
        raise ValueError(f"metric must be one of {', '.join(RUN_METRICS)}")
    runs = BenchmarkRun.objects.filter(nhosts=2, errors=[]).exclude(**{f"{metric}__isnull": True})
    if collective:
        runs = runs.filter(collective=collective)
    if since:
        runs = runs.filter(measured_at__date__gte=since)
    if until:
        runs = runs.filter(measured_at__date__lte=until)
    if label:
        runs = runs.filter(artifact__label=label)
    values = dict(runs.values_list("id", metric)[:50_000])
    hosts: dict[int, set[str]] = {}
    for run_id, host in (
        RunRank.objects.filter(run_id__in=list(values)).values_list("run_id", "host").distinct()
    ):
        if host:
            hosts.setdefault(run_id, set()).add(host)
    rows = []
    for run_id, value in values.items():
        pair = sorted(hosts.get(run_id, ()))
        if len(pair) == 2:
            rows.append({"host_a": pair[0], "host_b": pair[1], "value": float(value)})
    frame = pd.DataFrame(rows, columns=["host_a", "host_b", "value"])
    pairs = (
        frame.groupby(["host_a", "host_b"])["value"].agg(value="median", runs="count").reset_index()
    )
    names = sorted(set(pairs["host_a"]) | set(pairs["host_b"]))
    matrix = pd.DataFrame(float("nan"), index=names, columns=names)
    for a, b, value in pairs[["host_a", "host_b", "value"]].itertuples(index=False):
        matrix.loc[a, b] = matrix.loc[b, a] = value
    long = pd.concat(
        [
            pairs.rename(columns={"host_a": "host", "host_b": "peer"}),
            pairs.rename(columns={"host_b": "host", "host_a": "peer"}),
        ]
    )
    per_host = (
        long.groupby("host").agg(value=("value", "median"), readings=("runs", "sum")).reset_index()
    )
    per_host["device"] = ""
    return PairwiseComparison(
        metric=metric,
        collective=collective,
        pairs=pairs,
        matrix=matrix,
        hosts=_comparison(metric, "GB/s", per_host, "low"),
    )


def _comparison(metric: str, unit: str, table: pd.DataFrame, direction: str) -> HostComparison:
    values = dict(zip(table["host"], table["value"], strict=True)) if len(table) else {}
    outliers = mad_outliers(values, direction=direction)
    scores = {s.name: s for s in outliers.scores}
    out = table.copy()
    out["z"] = [scores[h].z if h in scores else None for h in out["host"]]
    out["outlier"] = [bool(scores[h].outlier) if h in scores else False for h in out["host"]]
    for column in ("device", "readings"):
        if column not in out:
            out[column] = None
    out = out.sort_values("value", ascending=direction != "high").reset_index(drop=True)
    return HostComparison(metric, unit, out, outliers, direction)


def fleet_counters() -> list[str]:
    """Counters with rates on at least one host (for the picker), derived metrics first."""
    rows = (
        CounterRate.objects.exclude(value__isnull=True)
        .exclude(host="")
        .order_by()
        .values_list("derived", "counter")
        .distinct()
    )
    return [c for _, c in sorted(rows, key=lambda r: (not r[0], r[1]))]


def comparison_rows(comparison: HostComparison) -> list[dict[str, Any]]:
    return comparison.table.to_dict("records")  # type: ignore[return-value]
