"""Report kind "runs": nccl-tests runs side by side, or each run against its baseline.

Runs are put on sides (``group_by``: one per file by default); per collective each side is
compared with the reference side (the one measured first), size by size, using the
baselines app's curve comparison. With ``with_baseline`` every run is compared with the
runs of its matching baseline instead.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from artifacts.models import Artifact, BenchmarkRun, Measurement
from baselines.models import RunContext
from charts import figures
from reports import comparisons as cmp
from reports.kinds import baseline_link, limits_link
from reports.kinds.base import Built, Chart, Collected, ReportInputError, ReportSpec
from reports.kinds.inputs import artifact_pins, measurement_points
from reports.tables import Column, freeze, thaw

KIND = "runs"
LABEL = "Benchmark runs side by side (nccl-tests)"

# Upper bound of runs in one report: beyond this a curve chart is unreadable anyway.
MAX_RUNS = 500


def unavailable_reason() -> str | None:
    return None


# ------------------------------------------------------------------------------------------
# normalise: validate ids, pin runs by (artifact, index)
# ------------------------------------------------------------------------------------------


def normalise(spec: ReportSpec) -> ReportSpec:
    if spec.group_by not in cmp.GROUPINGS:
        raise ReportInputError(
            f"unknown group_by {spec.group_by!r}; choose one of {', '.join(cmp.GROUPINGS)}"
        )
    runs = _requested_runs(spec)
    refs = tuple(sorted({(r.artifact_id, r.index) for r in runs}))
    if len(refs) > MAX_RUNS:
        raise ReportInputError(f"{len(refs)} runs selected; a report compares at most {MAX_RUNS}")
    normalised = ReportSpec(
        kind=KIND,
        title=spec.title,
        run_ids=tuple(sorted(r.pk for r in runs)),
        artifact_ids=tuple(sorted(set(spec.artifact_ids))),
        with_baseline=spec.with_baseline,
        group_by=spec.group_by,
        run_refs=refs,
    )
    if spec.with_baseline:
        if not any(baseline_link.matching_baseline(run) for run in runs):
            raise ReportInputError(
                "none of the selected runs has a matching baseline; promote runs to a "
                "baseline first, or compare the runs with each other (with_baseline: false)"
            )
    else:
        frame = cmp.assign_sides(_runs_frame(runs), spec.group_by)
        if cmp.comparison_pairs(frame).empty:
            raise ReportInputError(
                "nothing to compare: every collective is on one side only "
                f"(sides by {spec.group_by}: {', '.join(sorted(set(frame['side'])))}). Pick "
                "runs of the same collective from two or more files, choose another grouping, "
                "or compare one run with its baseline (with_baseline: true)"
            )
    return normalised


def _requested_runs(spec: ReportSpec) -> list[BenchmarkRun]:
    if spec.run_refs and not (spec.run_ids or spec.artifact_ids):
        runs = _runs_by_refs(spec.run_refs)
        if not runs:
            raise ReportInputError("none of the pinned runs exists any more")
        return runs
    if not (spec.run_ids or spec.artifact_ids):
        raise ReportInputError("give run_ids or artifact_ids (at least one)")
    runs = list(BenchmarkRun.objects.select_related("artifact").filter(pk__in=spec.run_ids))
    missing = sorted(set(spec.run_ids) - {r.pk for r in runs})
    if missing:
        raise ReportInputError(f"no such run: {', '.join(map(str, missing))}")
    if spec.artifact_ids:
        artifacts = Artifact.objects.filter(pk__in=spec.artifact_ids)
        found = {a.pk: a for a in artifacts}
        absent = sorted(set(spec.artifact_ids) - set(found))
        if absent:
            raise ReportInputError(f"no such artifact: {', '.join(map(str, absent))}")
        from_files = list(
            BenchmarkRun.objects.select_related("artifact").filter(artifact_id__in=found)
        )
        empty = sorted(set(found) - {r.artifact_id for r in from_files})
        if empty:
            states = ", ".join(f"#{a} ({found[a].status})" for a in empty)
            raise ReportInputError(f"artifact without benchmark runs: {states}")
        known = {r.pk for r in runs}
        runs.extend(r for r in from_files if r.pk not in known)
    return runs


def _runs_by_refs(refs: tuple[tuple[int, int], ...]) -> list[BenchmarkRun]:
    wanted = set(refs)
    candidates = BenchmarkRun.objects.select_related("artifact").filter(
        artifact_id__in={a for a, _ in refs}
    )
    return [r for r in candidates if (r.artifact_id, r.index) in wanted]


def estimate(spec: ReportSpec) -> int:
    """Measurement rows to read (the service builds small reports inline, big ones in Celery)."""
    artifact_ids = {a for a, _ in spec.run_refs}
    return Measurement.objects.filter(run__artifact_id__in=artifact_ids).count()


# ------------------------------------------------------------------------------------------
# collect: database rows into frames, plus the pins
# ------------------------------------------------------------------------------------------


def collect(spec: ReportSpec) -> Collected:
    runs = _runs_by_refs(spec.run_refs)
    if not runs:
        raise ReportInputError("none of the requested runs exists any more")
    run_frame = _runs_frame(runs)
    baselines: list[dict[str, Any]] = []
    all_runs = list(runs)
    if spec.with_baseline:
        run_frame["reference_side"] = None
        run_frame["tolerance_pct"] = None
        for run in runs:
            found = baseline_link.matching_baseline(run)
            if not found:
                continue
            baselines.append({"run_id": run.pk, **found.pin()})
            mine = run_frame.run_id == run.pk
            run_frame.loc[mine, "reference_side"] = found.side_label
            run_frame.loc[mine, "tolerance_pct"] = found.tolerance_pct
            all_runs.extend(found.runs)
    points = measurement_points({r.pk for r in all_runs})
    return Collected(
        frames={
            "runs": run_frame,
            "points": points,
            "baseline_runs": _baseline_runs(baselines, all_runs),
            "peaks": limits_link.run_peaks(all_runs),
        },
        inputs={
            "artifacts": _with_sides(
                artifact_pins((r.artifact for r in all_runs), _parse_pin),
                runs,
                run_frame if spec.group_by == "artifact" else None,
            ),
            "runs": [_run_pin(r) for r in sorted(all_runs, key=lambda r: r.pk)],
            "baselines": baselines,
        },
        artifact_ids={r.artifact_id for r in all_runs},
    )


def _runs_frame(runs: list[BenchmarkRun]) -> pd.DataFrame:
    # What each run was filed under names the sides (comparisons.artifact_side_names).
    filed = {
        c.run_id: c
        for c in RunContext.objects.select_related("profile", "stack").filter(
            run_id__in=[r.pk for r in runs]
        )
    }
    rows = [
        {
            "run_id": r.pk,
            "artifact_id": r.artifact_id,
            "artifact_name": r.artifact.original_name,
            "label": r.artifact.label,
            "collective": r.collective or r.benchmark,
            "nranks": r.nranks,
            "dtype": r.dtype,
            "nccl_version": r.nccl_version,
            "gpu": r.gpu,
            "measured_at": r.measured_at,
            "profile": str(filed[r.pk].profile) if r.pk in filed else "",
            "stack": str(filed[r.pk].stack) if r.pk in filed else "",
        }
        for r in runs
    ]
    return pd.DataFrame(rows, columns=[*cmp.RUN_COLUMNS, "profile", "stack"])


def _baseline_runs(baselines: list[dict[str, Any]], all_runs: list[BenchmarkRun]) -> pd.DataFrame:
    by_id = {r.pk: r for r in all_runs}
    rows = []
    for baseline in baselines:
        for run_id in baseline["run_ids"]:
            if run_id in by_id:
                rows.append({"side": baseline["side"], "run": by_id[run_id]})
    frame = _runs_frame([row["run"] for row in rows])
    frame["side"] = [row["side"] for row in rows]
    return frame.drop_duplicates(subset=["run_id", "side"]).reset_index(drop=True)


def _with_sides(
    pins: list[dict[str, Any]], runs: list[BenchmarkRun], run_frame: pd.DataFrame | None
) -> list[dict[str, Any]]:
    """Each file's pin says which runs it gave and, where files are the sides, the side's
    name in the report."""
    names = cmp.artifact_side_names(run_frame) if run_frame is not None else {}
    run_ids: dict[int, list[int]] = {}
    for run in sorted(runs, key=lambda r: r.pk):
        run_ids.setdefault(run.artifact_id, []).append(run.pk)
    for pin in pins:
        pin["side"] = names.get(pin["artifact_id"], "")
        pin["run_ids"] = run_ids.get(pin["artifact_id"], [])
    return pins


def _parse_pin(artifact: Artifact) -> dict[str, Any]:
    return {
        "parser_version": artifact.parser_version,
        "parsed_at": artifact.parsed_at.isoformat() if artifact.parsed_at else None,
    }


def _run_pin(run: BenchmarkRun) -> dict[str, Any]:
    return {
        "run_id": run.pk,
        "artifact_id": run.artifact_id,
        "index": run.index,
        "sha256": run.artifact.sha256,
        "collective": run.collective,
        "nranks": run.nranks,
        "gpu": run.gpu,
        "nccl_version": run.nccl_version,
        "measured_at": run.measured_at.isoformat(),
    }


# ------------------------------------------------------------------------------------------
# compute: pure, frames in, frozen tables out
# ------------------------------------------------------------------------------------------

VERDICT_TABLE = (
    Column("collective", "collective"),
    Column("reference", "reference"),
    Column("candidate", "candidate"),
    Column("verdict", "verdict"),
    Column("regressed_ranges", "regressed sizes"),
    Column("improved_ranges", "improved sizes"),
    Column("line", "summary"),
    Column("mismatch", "not like with like"),
    Column("method", "method"),
)
DELTA_TABLE = (
    Column("collective", "collective"),
    Column("reference", "reference"),
    Column("candidate", "candidate"),
    Column("size", "size", "text"),
    Column("size_bytes", "size (B)", "int"),
    Column("reference_busbw_gbps", "reference busbw GB/s", "number", 2),
    Column("candidate_busbw_gbps", "candidate busbw GB/s", "number", 2),
    Column("n_reference", "runs ref", "int"),
    Column("n_candidate", "runs cand", "int"),
    Column("delta_pct", "Δ %", "percent", 2),
    Column("low_pct", "Δ low %", "percent", 2),
    Column("high_pct", "Δ high %", "percent", 2),
    Column("change", "change"),
    Column("band", "band from"),
)
CURVE_TABLE = (
    Column("collective", "collective"),
    Column("side", "side"),
    Column("side_order", "side order", "int"),
    Column("run_id", "run", "int"),
    Column("nranks", "ranks", "int"),
    Column("size", "size", "text"),
    Column("size_bytes", "size (B)", "int"),
    Column("busbw_gbps", "busbw GB/s", "number", 2),
    Column("algbw_gbps", "algbw GB/s", "number", 2),
    Column("time_us", "time µs", "number", 2),
)
RUN_TABLE = (
    Column("run_id", "run", "int"),
    Column("side", "side"),
    Column("collective", "collective"),
    Column("nranks", "ranks", "int"),
    Column("gpu", "GPU"),
    Column("nccl_version", "NCCL"),
    Column("dtype", "dtype"),
    Column("artifact_id", "artifact", "int"),
    Column("artifact_name", "file"),
    Column("label", "label"),
    Column("measured", "measured at"),
)


def compute(collected: Collected, spec: ReportSpec) -> Built:
    runs, points = collected.frames["runs"], collected.frames["points"]
    if spec.with_baseline:
        runs = cmp.assign_sides(runs, "run")
        baseline_runs = collected.frames["baseline_runs"]
        if not baseline_runs.empty:
            # every baseline side is a reference: ordered before the runs compared with it
            baseline_runs = baseline_runs.assign(side_order=-1, reference_side=None)
        everything = pd.concat([baseline_runs, runs], ignore_index=True)
        pairs = cmp.baseline_pairs(everything)
    else:
        everything = cmp.assign_sides(runs, spec.group_by)
        pairs = cmp.comparison_pairs(everything)
    curves = cmp.curve_points(everything, points)
    deltas, verdicts = cmp.pair_comparisons(
        curves, pairs, baseline_link.curve_comparer(), runs=everything
    )
    listing = everything.assign(
        measured=[
            t.isoformat() if hasattr(t, "isoformat") else str(t) for t in everything.measured_at
        ]
    ).sort_values(["side_order", "run_id"])
    tables = [
        freeze(verdicts, name="verdicts", title="Verdict per collective", columns=VERDICT_TABLE),
        freeze(
            deltas,
            name="deltas",
            title="busbw per message size: Δ % against the reference with its uncertainty",
            columns=DELTA_TABLE,
            note="out-of-place busbw; reference and candidate are the means over each side's "
            "runs; Δ % and its band (Δ low/high) come from baselines.curve_compare, the band "
            "from a bootstrap, the run-to-run spread of repeats, or - with one run per side - "
            "the tolerance ('band from' says which)",
        ),
        freeze(curves, name="curves", title="Curves: every run and size", columns=CURVE_TABLE),
        freeze(listing, name="runs", title="Runs in this report", columns=RUN_TABLE),
    ]
    if efficiency := limits_link.efficiency_table(curves, collected.frames.get("peaks")):
        tables.append(efficiency)
    # the size spans to shade on the charts, kept beside the table (not one of its columns)
    tables[0]["spans"] = [
        {
            "collective": v.collective,
            "candidate": v.candidate,
            "regressed": v.regressed_spans,
            "improved": v.improved_spans,
        }
        for v in verdicts.itertuples(index=False)
    ]
    return Built(tables=tables, summary=list(verdicts["line"]))


# ------------------------------------------------------------------------------------------
# charts: from the stored tables only
# ------------------------------------------------------------------------------------------


def charts(tables: list[dict[str, Any]]) -> list[Chart]:
    by_name = {t["name"]: t for t in tables}
    if "curves" not in by_name:
        return []
    curves = thaw(by_name["curves"])
    deltas = thaw(by_name["deltas"]) if "deltas" in by_name else pd.DataFrame()
    regressed: dict[str, list[list[int]]] = {}
    improved: dict[str, list[list[int]]] = {}
    for spans in by_name.get("verdicts", {}).get("spans", []):
        regressed.setdefault(spans["collective"], []).extend(spans["regressed"])
        improved.setdefault(spans["collective"], []).extend(spans["improved"])
    out = []
    means = cmp.side_curves(curves) if not curves.empty else curves
    for collective in dict.fromkeys(curves["collective"]):
        mine = means[means["collective"] == collective]
        out.append(
            Chart(
                name=f"curves-{collective}",
                title=f"{collective}: curves against message size",
                figure=figures.comparison_curves(
                    mine,
                    title=f"{collective}",
                    regressed=regressed.get(collective),
                    improved=improved.get(collective),
                ),
            )
        )
        if not deltas.empty and (deltas["collective"] == collective).any():
            out.append(
                Chart(
                    name=f"delta-{collective}",
                    title=f"{collective}: Δ busbw % per size",
                    figure=figures.delta_band(deltas[deltas["collective"] == collective]),
                )
            )
    return out
