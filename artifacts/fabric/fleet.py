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
from django.db.models import Count

from artifacts.fabric.outliers import MIN_HOSTS, Outliers, Score, mad_outliers
from artifacts.models import BenchmarkRun, CounterRate, HostFact, RunRank

RUN_METRICS = {
    "avg_busbw_gbps": "average bus bandwidth (GB/s)",
    "max_busbw_gbps": "peak bus bandwidth (GB/s)",
}


@dataclasses.dataclass(frozen=True)
class Ratio:
    """Σ Δnumerator / Σ Δdenominator of two raw counters over the window."""

    label: str
    numerator: str
    denominator: str
    direction: str  # which side of the median is bad: "high" | "low" | "both"
    scale: float = 1.0  # e.g. 1e6 for "per million"


# Ratios engineers compare across hosts (REFERENCE.md "NIC counters"). The CNP ratio only
# means something across the hosts of a flow: NPs (receivers) send CNPs, RPs (senders)
# handle them, so the fleet-wide figure is the one to read; per host a value far from the
# others says its NIC sends or handles CNPs unlike its peers.
RATIO_METRICS: dict[str, Ratio] = {
    "cnp_ratio": Ratio(
        "CNP ratio: rp_cnp_handled / np_cnp_sent", "rp_cnp_handled", "np_cnp_sent", "both"
    ),
    "cnp_per_ecn": Ratio(
        "CNPs sent per ECN-marked packet", "np_cnp_sent", "np_ecn_marked_roce_packets", "both"
    ),
    "cnp_ignored_share": Ratio(
        "share of CNPs ignored: rp_cnp_ignored / rp_cnp_handled",
        "rp_cnp_ignored",
        "rp_cnp_handled",
        "high",
    ),
    "retrans_per_million": Ratio(
        "RoCE retransmissions per million received packets",
        "roce_adp_retrans",
        "port_rcv_packets",
        "high",
        1e6,
    ),
}


@dataclasses.dataclass(frozen=True)
class HostComparison:
    metric: str
    unit: str
    table: pd.DataFrame  # host, value, device, readings, z, outlier
    outliers: Outliers
    direction: str


@dataclasses.dataclass(frozen=True)
class RatioComparison:
    metric: str
    ratio: Ratio
    hosts: HostComparison  # table also holds numerator and denominator per host
    fleet_value: float | None  # Σ numerator / Σ denominator over every host
    numerator_total: float
    denominator_total: float


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


def ratio_by_host(
    metric: str,
    *,
    since: date | None = None,
    until: date | None = None,
    label: str = "",
) -> RatioComparison:
    """Per host Σ Δnumerator / Σ Δdenominator over clean raw rates (no reset, wrap or
    saturation), and the same over the whole fleet. Hosts without the denominator are left
    out (a ratio over nothing is no number)."""
    if metric not in RATIO_METRICS:
        raise ValueError(f"metric must be one of {', '.join(RATIO_METRICS)}")
    ratio = RATIO_METRICS[metric]
    qs = (
        CounterRate.objects.filter(
            counter__in=[ratio.numerator, ratio.denominator], derived=False, flag=""
        )
        .exclude(delta__isnull=True)
        .exclude(host="")
    )
    if since:
        qs = qs.filter(at__date__gte=since)
    if until:
        qs = qs.filter(at__date__lte=until)
    if label:
        qs = qs.filter(after__artifact__label=label)
    frame = pd.DataFrame(
        list(qs.values_list("host", "counter", "delta")[:200_000]),
        columns=["host", "counter", "delta"],
    )
    sums = frame.pivot_table(index="host", columns="counter", values="delta", aggfunc="sum")
    counts = frame.groupby("host")["delta"].count()
    numerator = sums.get(ratio.numerator, pd.Series(0.0, index=sums.index)).fillna(0.0)
    denominator = sums.get(ratio.denominator, pd.Series(0.0, index=sums.index)).fillna(0.0)
    rows = [
        {
            "host": host,
            "value": float(numerator[host] / denominator[host] * ratio.scale),
            "device": "",
            "readings": int(counts.get(host, 0)),
            "numerator": float(numerator[host]),
            "denominator": float(denominator[host]),
        }
        for host in sums.index
        if denominator[host] > 0
    ]
    table = pd.DataFrame(
        rows, columns=["host", "value", "device", "readings", "numerator", "denominator"]
    )
    num_total, den_total = float(numerator.sum()), float(denominator.sum())
    return RatioComparison(
        metric=metric,
        ratio=ratio,
        hosts=_comparison(
            metric, "ratio" if ratio.scale == 1 else "per million", table, ratio.direction
        ),
        fleet_value=num_total / den_total * ratio.scale if den_total > 0 else None,
        numerator_total=num_total,
        denominator_total=den_total,
    )


@dataclasses.dataclass(frozen=True)
class FactComparison:
    """A fact across hosts: numeric facts are scored like counter rates; text facts (NCCL or
    firmware versions, trust state, a sysctl string) by majority, the odd hosts named."""

    name: str
    numeric: bool
    majority: str | None  # text facts: the value most hosts state
    hosts: HostComparison


def fact_by_host(
    name: str,
    *,
    since: date | None = None,
    until: date | None = None,
    direction: str = "both",
    label: str = "",
) -> FactComparison:
    """The newest value of ``name`` per host and device; per host the worst device (numeric)
    or every distinct value (text). Fixes are seen at once: the newest upload wins."""
    qs = HostFact.objects.filter(name=name).exclude(host="")
    if since:
        qs = qs.filter(observed_at__date__gte=since)
    if until:
        qs = qs.filter(observed_at__date__lte=until)
    if label:
        qs = qs.filter(artifact__label=label)
    latest: dict[tuple[str, str, int | None], tuple[str, float | None]] = {}
    for host, device, port, value, number in qs.order_by("observed_at", "id").values_list(
        "host", "device", "port", "value", "number"
    )[:100_000]:
        latest[(host, device, port)] = (value, number)
    numeric = bool(latest) and all(n is not None for _, n in latest.values())
    if numeric:
        frame = pd.DataFrame(
            [(h, d, n) for (h, d, _), (_, n) in latest.items()],
            columns=["host", "device", "value"],
        )
        per_host = frame.groupby(["host", "device"])["value"].median().reset_index()
        worst = (
            per_host.sort_values("value", ascending=direction == "low")
            .groupby("host", as_index=False)
            .agg(value=("value", "first"), device=("device", "first"), readings=("value", "size"))
        )
        return FactComparison(name, True, None, _comparison(name, "", worst, direction))
    values: dict[str, set[str]] = {}
    devices: dict[str, int] = {}
    for (host, _, _), (value, _) in latest.items():
        values.setdefault(host, set()).add(value)
        devices[host] = devices.get(host, 0) + 1
    stated = {host: " | ".join(sorted(v)) for host, v in values.items()}
    counts = pd.Series(list(stated.values()), dtype=object).value_counts()
    majority = str(counts.index[0]) if len(counts) else None
    # a strict majority is needed to call anyone odd (2 against 2 says nothing)
    enough = len(stated) >= MIN_HOSTS and len(counts) > 1 and counts.iloc[0] > counts.iloc[1]
    odd = {h for h, v in stated.items() if enough and v != majority}
    table = pd.DataFrame(
        [
            {
                "host": h,
                "value": v,
                "device": "",
                "readings": devices[h],
                "z": None,
                "outlier": h in odd,
            }
            for h, v in sorted(stated.items(), key=lambda kv: (kv[0] not in odd, kv[0]))
        ],
        columns=["host", "value", "device", "readings", "z", "outlier"],
    )
    outliers = Outliers(
        None, None, "majority", tuple(Score(h, 0.0, None, h in odd) for h in sorted(stated))
    )
    return FactComparison(name, False, majority, HostComparison(name, "", table, outliers, "both"))


def fleet_facts(min_hosts: int = 2) -> list[str]:
    """Fact names stated for at least ``min_hosts`` hosts (for the picker)."""
    rows = (
        HostFact.objects.exclude(host="")
        .values("name")
        .annotate(hosts=Count("host", distinct=True))
        .filter(hosts__gte=min_hosts)
        .order_by("name")
    )
    return [r["name"] for r in rows[:5000]]


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
