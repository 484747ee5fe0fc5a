"""Report kind "profiles" (NPI): one hardware profile against another on every benchmark both
have, with busbw ratios per message size and a summary per benchmark and size range.

``profile_ids = [A, B]``: A is the reference (the hardware you know, e.g. H100), B the new
one; ratios are B / A, so 1.25 means B moves 25 % more bus bandwidth.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from artifacts.models import BenchmarkRun, Measurement
from charts import figures
from reports import comparisons as cmp
from reports.kinds import baseline_link
from reports.kinds.base import Built, Chart, Collected, ReportInputError, ReportSpec
from reports.kinds.inputs import artifact_pins, measurement_points
from reports.tables import Column, freeze, thaw

KIND = "profiles"
LABEL = "Hardware profile against hardware profile (NPI)"


def unavailable_reason() -> str | None:
    return baseline_link.profiles_unavailable()


def normalise(spec: ReportSpec) -> ReportSpec:
    ids = list(dict.fromkeys(spec.profile_ids))
    if len(ids) != 2:
        raise ReportInputError(
            "a profiles report needs profile_ids: [reference, new] (two different profiles)"
        )
    refs = [baseline_link.hardware_profile(i) for i in ids]
    unknown = [str(i) for i, ref in zip(ids, refs, strict=True) if ref is None]
    if unknown:
        raise ReportInputError(f"no such hardware profile: {', '.join(unknown)}")
    for ref in refs:
        assert ref is not None
        if not ref.runs:
            raise ReportInputError(f"hardware profile {ref.name!r} has no complete runs yet")
    frames = [_runs_frame(list(ref.runs)) for ref in refs if ref]
    if cmp.matched_benchmarks(frames[0], frames[1]).empty:
        raise ReportInputError(
            f"the two profiles have no benchmark in common (collective and data type): "
            f"{refs[0].name} has {_benchmarks(frames[0])}; "  # type: ignore[union-attr]
            f"{refs[1].name} has {_benchmarks(frames[1])}"  # type: ignore[union-attr]
        )
    return ReportSpec(kind=KIND, title=spec.title, profile_ids=tuple(ids))


def _benchmarks(runs: pd.DataFrame) -> str:
    pairs = sorted({f"{c} {d}" for c, d in zip(runs.collective, runs.dtype, strict=True)})
    return ", ".join(pairs) or "nothing"


def estimate(spec: ReportSpec) -> int:
    total = 0
    for profile_id in spec.profile_ids:
        ref = baseline_link.hardware_profile(profile_id)
        if ref:
            total += Measurement.objects.filter(run__in=[r.pk for r in ref.runs]).count()
    return total


def collect(spec: ReportSpec) -> Collected:
    refs = [baseline_link.hardware_profile(i) for i in spec.profile_ids]
    if any(r is None for r in refs):
        raise ReportInputError("a hardware profile of this report no longer exists")
    a, b = refs[0], refs[1]
    assert a is not None and b is not None
    runs = [*a.runs, *b.runs]
    return Collected(
        frames={
            "runs_a": _runs_frame(list(a.runs)),
            "points_a": measurement_points({r.pk for r in a.runs}),
            "runs_b": _runs_frame(list(b.runs)),
            "points_b": measurement_points({r.pk for r in b.runs}),
            "names": pd.DataFrame({"side": ["A", "B"], "name": [a.name, b.name]}),
        },
        inputs={
            "profiles": [a.pin(), b.pin()],
            "artifacts": artifact_pins(r.artifact for r in runs),
        },
        artifact_ids={r.artifact_id for r in runs},
    )


def _runs_frame(runs: list[BenchmarkRun]) -> pd.DataFrame:
    return pd.DataFrame(
        [(r.pk, r.collective or r.benchmark, r.dtype, r.nranks) for r in runs],
        columns=list(cmp.PROFILE_RUN_COLUMNS),
    )


SUMMARY_TABLE = (
    Column("collective", "collective"),
    Column("dtype", "dtype"),
    Column("nranks_a", "ranks A", "int"),
    Column("nranks_b", "ranks B", "int"),
    Column("size_range", "size range"),
    Column("sizes", "sizes", "int"),
    Column("from_size", "from"),
    Column("to_size", "to"),
    Column("ratio_geomean", "B / A (geomean)", "number", 3),
    Column("ratio_min", "B / A min", "number", 3),
    Column("ratio_max", "B / A max", "number", 3),
)
RATIO_TABLE = (
    Column("collective", "collective"),
    Column("dtype", "dtype"),
    Column("nranks_a", "ranks A", "int"),
    Column("nranks_b", "ranks B", "int"),
    Column("size", "size"),
    Column("size_bytes", "size (B)", "int"),
    Column("size_range", "size range"),
    Column("runs_a", "runs A", "int"),
    Column("runs_b", "runs B", "int"),
    Column("busbw_a", "busbw A GB/s", "number", 2),
    Column("busbw_b", "busbw B GB/s", "number", 2),
    Column("ratio", "B / A", "number", 3),
)
PROFILE_TABLE = (
    Column("side", "side"),
    Column("name", "hardware profile"),
)


def compute(collected: Collected, spec: ReportSpec) -> Built:
    f = collected.frames
    per_size = cmp.profile_size_ratios(f["runs_a"], f["points_a"], f["runs_b"], f["points_b"])
    summary = cmp.profile_ratio_summary(per_size)
    names = dict(zip(f["names"]["side"], f["names"]["name"], strict=True))
    title = f"{names['B']} / {names['A']}: busbw ratio per benchmark and size range"
    tables = [
        freeze(summary, name="summary", title=title, columns=SUMMARY_TABLE),
        freeze(
            per_size,
            name="ratios",
            title="Median busbw per size on each profile",
            columns=RATIO_TABLE,
        ),
        freeze(
            f["names"], name="profiles", title="Profiles (A = reference)", columns=PROFILE_TABLE
        ),
    ]
    return Built(tables=tables, summary=_lines(summary, names))


def _lines(summary: pd.DataFrame, names: dict[str, str]) -> list[str]:
    lines = []
    keys = ["collective", "dtype", "nranks_a", "nranks_b"]
    for (collective, dtype, ranks_a, ranks_b), rows in summary.groupby(keys, sort=False):
        parts = ", ".join(
            f"{r.ratio_geomean:.2f}x {r.size_range.split(' ')[0]}" for r in rows.itertuples()
        )
        lines.append(
            f"{collective} {dtype} ({ranks_a} vs {ranks_b} ranks): "
            f"{names['B']} / {names['A']} = {parts}"
        )
    return lines


def charts(tables: list[dict[str, Any]]) -> list[Chart]:
    by_name = {t["name"]: t for t in tables}
    if "summary" not in by_name:
        return []
    names = dict(thaw(by_name["profiles"]).itertuples(index=False, name=None))
    out = [
        Chart(
            name="ratios",
            title=by_name["summary"]["title"],
            figure=figures.ratio_bars(thaw(by_name["summary"])),
        )
    ]
    ratios = thaw(by_name["ratios"])
    keys = ["collective", "dtype", "nranks_a", "nranks_b"]
    for (collective, dtype, ranks_a, ranks_b), rows in ratios.groupby(keys, sort=False):
        sides = [
            pd.DataFrame(
                {
                    "side": names.get(side, side),
                    "size_bytes": rows["size_bytes"],
                    "busbw_gbps": rows[f"busbw_{side.lower()}"],
                    "runs": rows[f"runs_{side.lower()}"],
                }
            )
            for side in ("A", "B")
        ]
        out.append(
            Chart(
                name=f"curves-{collective}-{dtype}-{ranks_a}-{ranks_b}",
                title=f"{collective} {dtype} ({ranks_a} vs {ranks_b} ranks): busbw on both",
                figure=figures.comparison_curves(pd.concat(sides), title=f"{collective} {dtype}"),
            )
        )
    return out
