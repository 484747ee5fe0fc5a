"""Report computations. PURE pandas: DataFrames in, DataFrames out; no Django imports.

Two families live here:

* **Curve comparisons** (report kind ``runs``): runs are put on *sides* (one file, one NCCL
  version, one label, ...), and per collective every side is compared with a reference
  side, size by size. The per-size Δ% and its uncertainty band, and the curve verdict, are
  *not* computed here: they come from ``baselines.curve_compare`` (the project's one
  statistics implementation), passed in as ``compare``. This module shapes its inputs and
  outputs into report tables.
* **Profile ratios** (report kind ``profiles``, NPI): one hardware profile against another
  on every benchmark both have: per-size ratio of median busbw and a summary per benchmark
  and size range.

Input frames (what ``reports.kinds.*`` collect from the database):

``runs``:   run_id, artifact_id, artifact_name, label, collective, nranks, dtype,
            nccl_version, gpu, measured_at (one row per benchmark run); optionally
            profile and stack (what the run was filed under), which name the sides
``points``: run_id, size_bytes, busbw_gbps, algbw_gbps, time_us (out-of-place values,
            one row per run and message size)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfhub.units import human_bytes

KiB = 1024
MiB = 1024 * KiB

METRICS = ("busbw_gbps", "algbw_gbps", "time_us")
RUN_COLUMNS = (
    "run_id",
    "artifact_id",
    "artifact_name",
    "label",
    "collective",
    "nranks",
    "dtype",
    "nccl_version",
    "gpu",
    "measured_at",
)
POINT_COLUMNS = ("run_id", "size_bytes", *METRICS)

# How runs are put on sides. "artifact" is the default: one uploaded file is one side, which
# is what "before vs after" usually means.
GROUPINGS: dict[str, str] = {
    "artifact": "one side per uploaded file",
    "run": "one side per benchmark run",
    "nccl_version": "one side per NCCL version",
    "label": "one side per artifact label (nightly, rerun, ...)",
    "gpu": "one side per GPU model",
    "nranks": "one side per rank count",
}

# Size ranges of the NPI summary. The edges follow where nccl-tests curves change regime on
# current hardware: latency bound below 64 KiB, protocol/pipelining bound up to 16 MiB, wire
# bound above. They are labels for humans, not a model.
SIZE_RANGES: tuple[tuple[str, int, float], ...] = (
    ("small (< 64 KiB)", 0, 64 * KiB),
    ("medium (64 KiB - 16 MiB)", 64 * KiB, 16 * MiB),
    ("large (>= 16 MiB)", 16 * MiB, math.inf),
)


def size_range(size_bytes: int) -> str:
    for name, low, high in SIZE_RANGES:
        if low <= size_bytes < high:
            return name
    raise ValueError(f"negative size {size_bytes}")


# ------------------------------------------------------------------------------------------
# Sides
# ------------------------------------------------------------------------------------------


def assign_sides(runs: pd.DataFrame, group_by: str) -> pd.DataFrame:
    """``runs`` plus ``side`` (a label) and ``side_order`` (0 = the reference: the side whose
    first run was measured earliest, i.e. "before")."""
    if group_by not in GROUPINGS:
        raise ValueError(f"unknown grouping {group_by!r}; choose one of {', '.join(GROUPINGS)}")
    out = runs.copy()
    if group_by == "artifact":
        out["side"] = out["artifact_id"].map(artifact_side_names(out))
    elif group_by == "run":
        out["side"] = [f"run #{r}" for r in out.run_id]
    elif group_by == "nranks":
        out["side"] = [f"{n} ranks" if n else "? ranks" for n in out.nranks]
    else:
        out["side"] = [str(v) if v not in (None, "") else f"(no {group_by})" for v in out[group_by]]
    first_seen = out.groupby("side")["measured_at"].min().sort_values(kind="stable")
    order = {side: i for i, side in enumerate(first_seen.index)}
    out["side_order"] = out["side"].map(order)
    return out


# What tells one file's runs from another's, in the order a reader looks for it.
SIDE_FACETS = ("profile", "stack", "gpu", "nccl_version", "nranks", "label", "date")


def artifact_side_names(runs: pd.DataFrame) -> dict[int, str]:
    """A name for each file's side made of what differs between the files (profile, stack,
    GPU, NCCL, ranks, label, day), not its id: "#45 newcomer" vs "#29 nightly" says nothing,
    "H100 IB · NCCL 2.21.5 · 2026-11-30" does. Files alike in all of these keep their id."""
    facets = _artifact_facets(runs)
    if len(facets) < 2:
        return {a: _short(f"#{a} {f['label'] or f['name']}") for a, f in facets.items()}
    differing = [facet for facet in SIDE_FACETS if len({f[facet] for f in facets.values()}) > 1]
    names = {
        a: " · ".join(_facet_text(facet, f[facet]) for facet in differing) or f"#{a}"
        for a, f in facets.items()
    }
    count = Counter(names.values())
    return {a: _short(f"{n} (#{a})" if count[n] > 1 else n) for a, n in names.items()}


def _artifact_facets(runs: pd.DataFrame) -> dict[int, dict[str, object]]:
    facets: dict[int, dict[str, object]] = {}
    for row in runs.sort_values("measured_at", kind="stable").itertuples(index=False):
        if row.artifact_id in facets:
            continue
        measured = pd.Timestamp(row.measured_at) if row.measured_at is not None else None
        facets[row.artifact_id] = {
            "name": row.artifact_name,
            "label": row.label or "",
            "profile": getattr(row, "profile", "") or "",
            "stack": getattr(row, "stack", "") or "",
            "gpu": row.gpu or "",
            "nccl_version": row.nccl_version or "",
            "nranks": row.nranks or 0,
            "date": measured.strftime("%Y-%m-%d") if measured is not None else "",
        }
    return facets


def _facet_text(facet: str, value: object) -> str:
    if value in ("", 0, None):
        return f"no {facet.replace('_', ' ')}"
    if facet == "nccl_version":
        return f"NCCL {value}"
    if facet == "nranks":
        return f"{value} ranks"
    return str(value)


def _short(text: str, limit: int = 80) -> str:
    text = str(text or "").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def comparison_pairs(runs: pd.DataFrame) -> pd.DataFrame:
    """Per collective: the reference side (lowest ``side_order`` present) against each other
    side. Columns: collective, reference, candidate. A collective on one side only has none."""
    rows = []
    for collective, group in runs.sort_values("side_order").groupby("collective", sort=True):
        sides = list(dict.fromkeys(group["side"]))
        rows.extend((collective, sides[0], other) for other in sides[1:])
    return pd.DataFrame(rows, columns=["collective", "reference", "candidate"])


def baseline_pairs(runs: pd.DataFrame) -> pd.DataFrame:
    """Pairs when each candidate side brings its own reference side (run vs its baseline):
    ``runs`` has ``side``, ``reference_side`` and ``tolerance_pct`` for the candidate runs."""
    columns = ["collective", "reference_side", "side", "tolerance_pct"]
    pairs = runs.loc[runs["reference_side"].notna(), columns].drop_duplicates(
        subset=["collective", "reference_side", "side"]
    )
    pairs = pairs.rename(columns={"reference_side": "reference", "side": "candidate"})
    return pairs.sort_values(["collective", "candidate"]).reset_index(drop=True)


# ------------------------------------------------------------------------------------------
# Curves
# ------------------------------------------------------------------------------------------


def curve_points(runs: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """One row per run and size with its side: what the overlaid curves draw."""
    keep = ["run_id", "side", "side_order", "collective", "nranks"]
    # a run can sit on two sides (in two baselines): it is drawn once per side
    sides = runs[keep].drop_duplicates(subset=["run_id", "side"])
    merged = points.merge(sides, on="run_id", how="inner")
    merged["size"] = merged["size_bytes"].map(human_bytes)
    merged = merged.sort_values(["collective", "side_order", "run_id", "size_bytes"])
    return merged.reset_index(drop=True)


def side_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """Per collective, side and size: the mean of each metric over the side's runs (the mean,
    as the baselines method compares means, so the chart and the Δ table agree)."""
    grouped = curves.groupby(["collective", "side", "side_order", "size_bytes"], sort=True)
    means = grouped[list(METRICS)].mean()
    means["runs"] = grouped["run_id"].nunique()
    out = means.reset_index()
    out["size"] = out["size_bytes"].map(human_bytes)
    return out.sort_values(["collective", "side_order", "size_bytes"]).reset_index(drop=True)


# ------------------------------------------------------------------------------------------
# Per-size deltas and verdicts (statistics delegated to ``compare``)
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SizeRange:
    low_bytes: int
    high_bytes: int
    direction: str  # "regressed" | "improved"
    label: str = ""  # the method's own wording, e.g. "256 MiB-8 GiB -7.9%"

    @property
    def text(self) -> str:
        if self.low_bytes == self.high_bytes:
            return human_bytes(self.low_bytes)
        return f"{human_bytes(self.low_bytes)} - {human_bytes(self.high_bytes)}"


@dataclass(frozen=True)
class PairComparison:
    """What the statistics method says about one candidate curve against one reference.

    ``per_size`` columns: size_bytes, reference, candidate (each side's mean), delta_pct,
    low_pct, high_pct (the uncertainty band), change ("regressed" | "improved" |
    "unchanged"), n_reference, n_candidate, band (how the band was obtained).
    ``verdict``: improved | regressed | mixed | unchanged (or "unassessed" without a method).
    ``ranges``: the contiguous size ranges that changed. ``summary``: the method's one line.
    """

    per_size: pd.DataFrame
    verdict: str
    ranges: tuple[SizeRange, ...] = ()
    method: str = ""
    summary: str = ""


PER_SIZE_COLUMNS = [
    "size_bytes",
    "reference",
    "candidate",
    "delta_pct",
    "low_pct",
    "high_pct",
    "change",
    "n_reference",
    "n_candidate",
    "band",
]

# (reference runs, candidate runs, tolerance_pct or None for the method's default) ->
# comparison. Both frames: run_id, size_bytes, value.
Comparer = Callable[[pd.DataFrame, pd.DataFrame, "float | None"], PairComparison]


def pair_comparisons(
    curves: pd.DataFrame,
    pairs: pd.DataFrame,
    compare: Comparer,
    *,
    metric: str = "busbw_gbps",
    runs: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-size deltas and one verdict per pair.

    ``pairs``: collective, reference, candidate and optionally tolerance_pct (e.g. the
    baseline's). Returns ``(deltas, verdicts)``. ``deltas``: collective, reference,
    candidate, size_bytes, size, reference_<metric>, candidate_<metric>, n_reference,
    n_candidate, delta_pct, low_pct, high_pct, change, band. ``verdicts``: VERDICT_COLUMNS;
    with ``runs`` (sided), each verdict says what differs that should not (``mismatch``).
    """
    delta_parts: list[pd.DataFrame] = []
    verdict_rows: list[dict[str, object]] = []
    for pair in pairs.to_dict("records"):
        ref_runs = _metric_frame(curves, pair["collective"], pair["reference"], metric)
        cand_runs = _metric_frame(curves, pair["collective"], pair["candidate"], metric)
        tolerance = pair.get("tolerance_pct")
        result = compare(ref_runs, cand_runs, None if pd.isna(tolerance) else float(tolerance))
        table = _delta_table(pair, result, metric)
        delta_parts.append(table)
        mismatch = pair_mismatch(runs, pair) if runs is not None else ""
        verdict_rows.append(_verdict_row(pair, result, table, mismatch))
    delta_columns = [
        "collective",
        "reference",
        "candidate",
        "size_bytes",
        "size",
        f"reference_{metric}",
        f"candidate_{metric}",
        "n_reference",
        "n_candidate",
        "delta_pct",
        "low_pct",
        "high_pct",
        "change",
        "band",
    ]
    parts = [p for p in delta_parts if not p.empty]
    deltas = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=delta_columns)
    verdicts = pd.DataFrame(verdict_rows, columns=VERDICT_COLUMNS)
    return deltas[delta_columns], verdicts


VERDICT_COLUMNS = [
    "collective",
    "reference",
    "candidate",
    "verdict",
    "regressed_ranges",
    "improved_ranges",
    "line",
    "mismatch",
    "regressed_spans",
    "improved_spans",
    "method",
]


def _metric_frame(curves: pd.DataFrame, collective: str, side: str, metric: str) -> pd.DataFrame:
    mask = (curves["collective"] == collective) & (curves["side"] == side)
    frame = curves.loc[mask, ["run_id", "size_bytes", metric]].rename(columns={metric: "value"})
    return frame.dropna(subset=["value"]).reset_index(drop=True)


def _delta_table(pair: dict[str, object], result: PairComparison, metric: str) -> pd.DataFrame:
    table = result.per_size.reindex(columns=PER_SIZE_COLUMNS).rename(
        columns={"reference": f"reference_{metric}", "candidate": f"candidate_{metric}"}
    )
    table.insert(0, "candidate", pair["candidate"])
    table.insert(0, "reference", pair["reference"])
    table.insert(0, "collective", pair["collective"])
    table["size"] = table["size_bytes"].map(human_bytes)
    table["change"] = table["change"].fillna("unchanged")
    return table.sort_values("size_bytes").reset_index(drop=True)


# What two sides must share to compare like with like. A difference does not stop the
# comparison (the engineer may mean it) but is said on the verdict and its line: float and
# double move the same bytes in different element counts and reduce at different speeds.
IDENTITY = (("dtype", "data type"),)


def pair_mismatch(runs: pd.DataFrame, pair: dict[str, object]) -> str:
    """ "data type differs: double vs float" for a pair whose sides disagree, else ""."""
    of_collective = runs[runs["collective"] == pair["collective"]]
    notes = []
    for column, label in IDENTITY:
        values = [
            sorted({str(v) for v in of_collective.loc[of_collective["side"] == side, column]
                    if v not in (None, "") and not pd.isna(v)})
            for side in (pair["reference"], pair["candidate"])
        ]  # fmt: skip
        if all(values) and values[0] != values[1]:
            notes.append(f"{label} differs: {'/'.join(values[1])} vs {'/'.join(values[0])}")
    return "; ".join(notes)


def _verdict_row(
    pair: dict[str, object], result: PairComparison, table: pd.DataFrame, mismatch: str = ""
) -> dict[str, object]:
    regressed = [r for r in result.ranges if r.direction == "regressed"]
    improved = [r for r in result.ranges if r.direction == "improved"]
    return {
        "collective": pair["collective"],
        "reference": pair["reference"],
        "candidate": pair["candidate"],
        "verdict": result.verdict,
        "regressed_ranges": "; ".join(r.label or r.text for r in regressed),
        "improved_ranges": "; ".join(r.label or r.text for r in improved),
        "line": verdict_line(pair, result, table) + (f" ({mismatch})" if mismatch else ""),
        "mismatch": mismatch,
        "regressed_spans": [[r.low_bytes, r.high_bytes] for r in regressed],
        "improved_spans": [[r.low_bytes, r.high_bytes] for r in improved],
        "method": result.method,
    }


def verdict_line(pair: dict[str, object], result: PairComparison, table: pd.DataFrame) -> str:
    """One sentence: "all_reduce: 2.23.4 vs 2.21.5: regressed: 256 MiB-8 GiB -7.9%"."""
    head = f"{pair['collective']}: {pair['candidate']} vs {pair['reference']}:"
    if table.empty:
        return f"{head} no message size in common"
    if result.summary:
        return f"{head} {result.summary}"
    return f"{head} {result.verdict} across {len(table)} common sizes"


# ------------------------------------------------------------------------------------------
# Profile ratios (NPI)
# ------------------------------------------------------------------------------------------

PROFILE_RUN_COLUMNS = ("run_id", "collective", "dtype", "nranks")


def matched_benchmarks(runs_a: pd.DataFrame, runs_b: pd.DataFrame) -> pd.DataFrame:
    """The benchmarks both profiles have: collective, dtype, nranks_a, nranks_b.

    The same collective and data type at the same rank count when both sides have one;
    otherwise (typical for NPI: 8 H100 against 16 H200) each side's largest rank count,
    since busbw is normalised for the rank count and the largest run is the headline.
    """
    rows = []
    keys_a = runs_a.groupby(["collective", "dtype"])["nranks"].agg(lambda s: set(s.dropna()))
    keys_b = runs_b.groupby(["collective", "dtype"])["nranks"].agg(lambda s: set(s.dropna()))
    for key in sorted(set(keys_a.index) & set(keys_b.index)):
        ranks_a, ranks_b = keys_a[key], keys_b[key]
        common = ranks_a & ranks_b
        if common:
            rows.extend((*key, n, n) for n in sorted(common))
        else:
            rows.append((*key, max(ranks_a, default=None), max(ranks_b, default=None)))
    return pd.DataFrame(rows, columns=["collective", "dtype", "nranks_a", "nranks_b"])


def profile_size_ratios(
    runs_a: pd.DataFrame, points_a: pd.DataFrame, runs_b: pd.DataFrame, points_b: pd.DataFrame
) -> pd.DataFrame:
    """Per benchmark and size: median busbw on each profile and the ratio B / A.

    Columns: collective, dtype, nranks_a, nranks_b, size_bytes, size, size_range, runs_a,
    runs_b, busbw_a, busbw_b, ratio (> 1: profile B is faster).
    """
    columns = [
        "collective",
        "dtype",
        "nranks_a",
        "nranks_b",
        "size_bytes",
        "size",
        "size_range",
        "runs_a",
        "runs_b",
        "busbw_a",
        "busbw_b",
        "ratio",
    ]
    parts = []
    for bench in matched_benchmarks(runs_a, runs_b).itertuples(index=False):
        med_a = _bench_medians(runs_a, points_a, bench.collective, bench.dtype, bench.nranks_a)
        med_b = _bench_medians(runs_b, points_b, bench.collective, bench.dtype, bench.nranks_b)
        both = med_a.merge(med_b, on="size_bytes", suffixes=("_a", "_b"))
        if both.empty:
            continue
        both["collective"], both["dtype"] = bench.collective, bench.dtype
        both["nranks_a"], both["nranks_b"] = bench.nranks_a, bench.nranks_b
        parts.append(both)
    if not parts:
        return pd.DataFrame(columns=columns)
    out = pd.concat(parts, ignore_index=True)
    out["ratio"] = np.where(out["busbw_a"] > 0, out["busbw_b"] / out["busbw_a"], np.nan)
    out["size"] = out["size_bytes"].map(human_bytes)
    out["size_range"] = out["size_bytes"].map(size_range)
    return out[columns].sort_values(["collective", "dtype", "size_bytes"]).reset_index(drop=True)


def _bench_medians(
    runs: pd.DataFrame, points: pd.DataFrame, collective: str, dtype: str, nranks: object
) -> pd.DataFrame:
    mask = (runs["collective"] == collective) & (runs["dtype"] == dtype)
    if nranks is not None and not pd.isna(nranks):
        mask &= runs["nranks"] == nranks
    ids = runs.loc[mask, "run_id"]
    mine = points[points["run_id"].isin(ids)].dropna(subset=["busbw_gbps"])
    grouped = mine.groupby("size_bytes")
    return pd.DataFrame(
        {"busbw": grouped["busbw_gbps"].median(), "runs": grouped["run_id"].nunique()}
    ).reset_index()


def profile_ratio_summary(per_size: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark and size range: geometric mean, min and max of the per-size ratios.

    The geometric mean, because ratios multiply: a 2x and a 0.5x size average to 1x, not 1.25x.
    Columns: collective, dtype, nranks_a, nranks_b, size_range, sizes, from_size, to_size,
    ratio_geomean, ratio_min, ratio_max.
    """
    columns = [
        "collective",
        "dtype",
        "nranks_a",
        "nranks_b",
        "size_range",
        "sizes",
        "from_size",
        "to_size",
        "ratio_geomean",
        "ratio_min",
        "ratio_max",
    ]
    valid = per_size[per_size["ratio"].notna() & (per_size["ratio"] > 0)]
    if valid.empty:
        return pd.DataFrame(columns=columns)
    order = {name: i for i, (name, _, _) in enumerate(SIZE_RANGES)}
    keys = ["collective", "dtype", "nranks_a", "nranks_b", "size_range"]
    grouped = valid.groupby(keys, sort=False, dropna=False)
    out = grouped.agg(
        sizes=("size_bytes", "size"),
        low=("size_bytes", "min"),
        high=("size_bytes", "max"),
        ratio_geomean=("ratio", lambda r: float(np.exp(np.log(r).mean()))),
        ratio_min=("ratio", "min"),
        ratio_max=("ratio", "max"),
    ).reset_index()
    out["from_size"] = out["low"].map(human_bytes)
    out["to_size"] = out["high"].map(human_bytes)
    out["_order"] = out["size_range"].map(order)
    out = out.sort_values(["collective", "dtype", "nranks_a", "_order"])
    return out[columns].reset_index(drop=True)


# ------------------------------------------------------------------------------------------
# Counters: rates side by side, findings on one side only
# ------------------------------------------------------------------------------------------

PORT_KEYS = ["host", "device", "port", "counter", "unit"]
RATE_COLUMNS = (*PORT_KEYS, "value")
FINDING_COLUMNS = ("fingerprint", "rule", "severity", "title", "host", "device", "port")


def counter_rates_side_by_side(rates_a: pd.DataFrame, rates_b: pd.DataFrame) -> pd.DataFrame:
    """Per host, device, port and counter: the mean rate on each side and the change.

    Inputs: RATE_COLUMNS, one row per measured interval (flagged intervals already left
    out). Rows zero on both sides are dropped: a NIC has hundreds of idle counters. Largest
    relative change first; counters on one side only come last (``delta_pct`` empty).
    """
    columns = [*PORT_KEYS, "rate_a", "rate_b", "delta", "delta_pct"]
    mean_a = _mean_rates(rates_a).rename("rate_a")
    mean_b = _mean_rates(rates_b).rename("rate_b")
    both = pd.concat([mean_a, mean_b], axis=1).reset_index()
    if both.empty:
        return pd.DataFrame(columns=columns)
    both = both[(both["rate_a"].fillna(0) != 0) | (both["rate_b"].fillna(0) != 0)]
    both["delta"] = both["rate_b"] - both["rate_a"]
    both["delta_pct"] = np.where(
        both["rate_a"].fillna(0) != 0, 100 * both["delta"] / both["rate_a"].abs(), np.nan
    )
    both = both.assign(_size=both["delta_pct"].abs()).sort_values(
        ["_size", "host", "device", "port", "counter"],
        ascending=[False, True, True, True, True],
        na_position="last",
    )
    both["port"] = both["port"].where(both["port"] >= 0, None)
    return both[columns].reset_index(drop=True)


def _mean_rates(rates: pd.DataFrame) -> pd.Series:
    frame = rates.assign(port=rates["port"].fillna(-1)).dropna(subset=["value"])
    return frame.groupby(PORT_KEYS, dropna=False)["value"].mean()


def counter_summary(per_port: pd.DataFrame) -> pd.DataFrame:
    """Per counter: ports on each side, mean rate per port on each side, change."""
    columns = ["counter", "unit", "ports_a", "ports_b", "mean_a", "mean_b", "delta_pct"]
    if per_port.empty:
        return pd.DataFrame(columns=columns)
    grouped = per_port.groupby(["counter", "unit"], dropna=False)
    out = grouped.agg(
        ports_a=("rate_a", "count"),
        ports_b=("rate_b", "count"),
        mean_a=("rate_a", "mean"),
        mean_b=("rate_b", "mean"),
    ).reset_index()
    out["delta_pct"] = np.where(
        out["mean_a"].fillna(0) != 0, 100 * (out["mean_b"] / out["mean_a"] - 1), np.nan
    )
    out = out.assign(_size=out["delta_pct"].abs()).sort_values(
        ["_size", "counter"], ascending=[False, True], na_position="last"
    )
    return out[columns].reset_index(drop=True)


def findings_diff(findings_a: pd.DataFrame, findings_b: pd.DataFrame) -> pd.DataFrame:
    """Findings by where they appear: "A only", "B only" or "both" (same fingerprint: the
    same rule about the same subject). Columns: presence and FINDING_COLUMNS."""
    a = findings_a.drop_duplicates("fingerprint").set_index("fingerprint")
    b = findings_b.drop_duplicates("fingerprint").set_index("fingerprint")
    rows = []
    for fingerprint in sorted(set(a.index) | set(b.index)):
        where = (
            "both"
            if fingerprint in a.index and fingerprint in b.index
            else ("A only" if fingerprint in a.index else "B only")
        )
        source = b.loc[fingerprint] if where == "B only" else a.loc[fingerprint]
        rows.append(
            {
                "presence": where,
                "fingerprint": fingerprint,
                **{k: source[k] for k in FINDING_COLUMNS if k != "fingerprint"},
            }
        )
    out = pd.DataFrame(rows, columns=["presence", *FINDING_COLUMNS])
    order = {"B only": 0, "A only": 1, "both": 2}
    severity = {"critical": 0, "warning": 1, "info": 2}
    out = out.assign(_p=out["presence"].map(order), _s=out["severity"].map(severity))
    return (
        out.sort_values(["_p", "_s", "rule", "host"])
        .drop(columns=["_p", "_s"])
        .reset_index(drop=True)
    )
