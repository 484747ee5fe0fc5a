"""Report kind "npi": an NPI evaluation, two hardware profiles side by side, each benchmark's
large-message busbw as an absolute number and as % of *its own* profile's limit.

A new generation is faster; the question is whether it is as close to its hardware's limit as
the old one was (B200 at 60 % of its NVLink while H200 ran at 80 % of its own says the
software stack, not the silicon, is what to work on). ``profile_ids = [A, B]``: A is the
reference. The limits are each profile's (docs/efficiency.md: datasheet, profile fields and
``limits`` overrides), per benchmark topology; per-host link evidence stays on run pages.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from artifacts.models import BenchmarkRun, Measurement
from baselines.limits.reads import profile_spec
from hardware.efficiency import LARGE_BYTES
from hardware.model import Topology, Unknown, peak_for, resolve_limits
from reports.kinds import baseline_link
from reports.kinds.base import Built, Chart, Collected, ReportInputError, ReportSpec
from reports.kinds.inputs import artifact_pins, measurement_points
from reports.tables import Column, freeze, thaw

KIND = "npi"
LABEL = "NPI evaluation: two profiles, absolute and % of each one's hardware limit"

KEYS = ["collective", "dtype", "nranks"]
RUN_COLUMNS = ("run_id", "collective", "dtype", "nranks", "nnodes", "peak", "bottleneck", "why")


def unavailable_reason() -> str | None:
    return baseline_link.profiles_unavailable()


def normalise(spec: ReportSpec) -> ReportSpec:
    ids = list(dict.fromkeys(spec.profile_ids))
    if len(ids) != 2:
        raise ReportInputError("an NPI evaluation needs profile_ids: [reference, new] (two)")
    for profile_id in ids:
        ref = baseline_link.hardware_profile(profile_id)
        if ref is None:
            raise ReportInputError(f"no such hardware profile: {profile_id}")
        if not ref.runs:
            raise ReportInputError(f"hardware profile {ref.name!r} has no complete runs yet")
    return ReportSpec(kind=KIND, title=spec.title, profile_ids=tuple(ids))


def estimate(spec: ReportSpec) -> int:
    total = 0
    for profile_id in spec.profile_ids:
        if ref := baseline_link.hardware_profile(profile_id):
            total += Measurement.objects.filter(run__in=[r.pk for r in ref.runs]).count()
    return total


def collect(spec: ReportSpec) -> Collected:
    from baselines.models import HardwareProfile

    frames: dict[str, pd.DataFrame] = {}
    names, pins, runs_all = [], [], []
    for side, profile_id in zip("AB", spec.profile_ids, strict=True):
        ref = baseline_link.hardware_profile(profile_id)
        profile = HardwareProfile.objects.filter(pk=profile_id).first()
        if ref is None or profile is None:
            raise ReportInputError("a hardware profile of this report no longer exists")
        runs = [r for r in ref.runs if r.benchmark == "nccl-tests"]
        frames[f"runs_{side.lower()}"] = _runs_frame(runs, profile)
        frames[f"points_{side.lower()}"] = measurement_points({r.pk for r in runs})
        names.append((side, ref.name))
        pins.append({**ref.pin(), "limits": dict(profile.limits or {})})
        runs_all += runs
    frames["names"] = pd.DataFrame(names, columns=["side", "name"])
    return Collected(
        frames=frames,
        inputs={"profiles": pins, "artifacts": artifact_pins(r.artifact for r in runs_all)},
        artifact_ids={r.artifact_id for r in runs_all},
    )


def _runs_frame(runs: list[BenchmarkRun], profile: Any) -> pd.DataFrame:
    """One row per run with the peak of its collective and topology on its profile."""
    gpu = profile.gpu_model or next((r.gpu for r in runs if r.gpu), "")
    limits = resolve_limits(profile_spec(profile), gpu_name=gpu)
    rows = []
    for r in runs:
        nodes = r.nhosts or 1
        nranks = r.nranks or 0
        peak = peak_for(r.collective, Topology(nranks, nodes, max(1, nranks // nodes)), limits)
        if isinstance(peak, Unknown):
            rows.append((r.pk, r.collective, r.dtype, nranks, nodes, None, "", peak.reason))
        else:
            rows.append(
                (r.pk, r.collective, r.dtype, nranks, nodes, peak.peak_busbw_gbps,
                 peak.bottleneck, peak.explanation)
            )  # fmt: skip
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


TABLE = (
    Column("collective", "collective"),
    Column("dtype", "dtype"),
    Column("nranks", "ranks", "int"),
    Column("busbw_a", "busbw A GB/s", "number", 2),
    Column("peak_a", "peak A GB/s", "number", 1),
    Column("pct_a", "% of A's limit", "share", 1),
    Column("bottleneck_a", "bottleneck A"),
    Column("busbw_b", "busbw B GB/s", "number", 2),
    Column("peak_b", "peak B GB/s", "number", 1),
    Column("pct_b", "% of B's limit", "share", 1),
    Column("bottleneck_b", "bottleneck B"),
    Column("speedup", "B / A busbw", "number", 3),
    Column("efficiency_pp", "efficiency B - A (points)", "number", 1),
)
PROFILE_TABLE = (Column("side", "side"), Column("name", "hardware profile"))


def _side(runs: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark: the best large-size median busbw and its share of the peak."""
    columns = [*KEYS, "busbw", "peak", "pct", "bottleneck"]
    if runs.empty or points.empty:
        return pd.DataFrame(columns=columns)
    joined = points.merge(runs, on="run_id")
    medians = joined.groupby([*KEYS, "size_bytes"], dropna=False, as_index=False).agg(
        busbw=("busbw_gbps", "median"), peak=("peak", "max"), bottleneck=("bottleneck", "first")
    )
    out = []
    for key, rows in medians.groupby(KEYS, dropna=False, sort=True):
        rows = rows.dropna(subset=["busbw"])
        if rows.empty:
            continue
        large = rows[rows["size_bytes"] >= LARGE_BYTES]
        pool = large if not large.empty else rows.tail(1)
        best = pool.loc[pool["busbw"].idxmax()]
        peak = best["peak"] if pd.notna(best["peak"]) else None
        pct = 100 * best["busbw"] / peak if peak else None
        out.append((*key, float(best["busbw"]), peak, pct, best["bottleneck"] or ""))
    return pd.DataFrame(out, columns=columns)


def compute(collected: Collected, spec: ReportSpec) -> Built:
    f = collected.frames
    a = _side(f["runs_a"], f["points_a"])
    b = _side(f["runs_b"], f["points_b"])
    both = a.merge(b, on=KEYS, how="outer", suffixes=("_a", "_b")).sort_values(KEYS)
    both["speedup"] = both["busbw_b"] / both["busbw_a"]
    both["efficiency_pp"] = both["pct_b"] - both["pct_a"]
    names = dict(zip(f["names"]["side"], f["names"]["name"], strict=True))
    tables = [
        freeze(
            both,
            name="efficiency",
            title=f"{names['B']} against {names['A']}: large-message busbw and % of each "
            "profile's own limit",
            columns=TABLE,
            note="busbw: the best median over sizes from 64 MiB; peak: docs/efficiency.md",
        ),
        freeze(
            f["names"], name="profiles", title="Profiles (A = reference)", columns=PROFILE_TABLE
        ),
    ]
    return Built(tables=tables, summary=_lines(both, names))


def _lines(both: pd.DataFrame, names: dict[str, str]) -> list[str]:
    lines = []
    for r in both.itertuples():
        parts = [f"{r.collective} {r.dtype} {r.nranks} ranks:"]
        for side in ("a", "b"):
            busbw, pct = getattr(r, f"busbw_{side}"), getattr(r, f"pct_{side}")
            name = names[side.upper()]
            if pd.isna(busbw):
                parts.append(f"{name} not measured;")
            elif pct is None or pd.isna(pct):
                parts.append(f"{name} {busbw:.1f} GB/s (limit unknown);")
            else:
                parts.append(f"{name} {busbw:.1f} GB/s = {pct:.0f} % of its limit;")
        if pd.notna(r.speedup):
            parts.append(f"B/A {r.speedup:.2f}x")
        if pd.notna(r.efficiency_pp):
            parts.append(f"efficiency {r.efficiency_pp:+.0f} points")
        lines.append(" ".join(parts).rstrip(";"))
    return lines


def charts(tables: list[dict[str, Any]]) -> list[Chart]:
    by_name = {t["name"]: t for t in tables}
    if "efficiency" not in by_name:
        return []
    rows = thaw(by_name["efficiency"])
    names = dict(thaw(by_name["profiles"]).itertuples(index=False, name=None))
    labels = [
        f"{c} {d} {n}r" for c, d, n in zip(rows.collective, rows.dtype, rows.nranks, strict=True)
    ]
    out = []
    for metric, axis, title in (
        ("pct", "% of own limit", "Share of each profile's hardware limit"),
        ("busbw", "busbw GB/s", "Large-message busbw"),
    ):
        fig = go.Figure()
        for side in ("A", "B"):
            fig.add_trace(
                go.Bar(x=labels, y=rows[f"{metric}_{side.lower()}"], name=names.get(side, side))
            )
        if metric == "pct":
            fig.add_hline(y=100, line={"dash": "dash", "color": "#d62728", "width": 1})
        fig.update_layout(
            barmode="group", template="plotly_white", height=380, yaxis_title=axis,
            margin={"l": 60, "r": 20, "t": 10, "b": 80}, legend={"orientation": "h", "y": -0.3},
        )  # fmt: skip
        out.append(Chart(name=f"npi-{metric}", title=title, figure=fig))
    return out
