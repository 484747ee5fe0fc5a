"""Report kind "traces": two PyTorch Profiler traces, or two jobs, side by side.

``artifact_ids`` are trace artifacts. ``group_by: artifact`` (default) compares exactly two
traces; ``group_by: job`` puts the traces on sides by their job label (exactly two jobs: a
side is the mean rank of its job). The side recorded first is A (the reference). The
numbers come from the trace app's own diff (``artifacts.traces.jobs.build_diff`` over the
pure ``artifacts.traces.analysis.diff``), frozen into tables: GPU-time breakdown, kernel time
deltas (top gainers and losers), time per kernel type, step times, and a per-rank table.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from artifacts.models import TraceStep, TraceSummary
from artifacts.traces.jobs import build_diff, default_per_step
from artifacts.traces.querysets import MAX_JOB_TRACES, Selection
from charts import figures
from reports.kinds.base import Built, Chart, Collected, ReportInputError, ReportSpec
from reports.kinds.inputs import artifact_pins, two_sided_ids, two_sided_spec
from reports.tables import Column, freeze, thaw

KIND = "traces"
LABEL = "Traces or jobs side by side (PyTorch Profiler)"
GROUPINGS = ("artifact", "job")
TOP_KERNELS = 40  # gainers + losers kept in the report (largest |Δ| first)


def unavailable_reason() -> str | None:
    return None


def normalise(spec: ReportSpec) -> ReportSpec:
    ids = two_sided_ids(spec, kind=KIND, what="trace", groupings=GROUPINGS)
    if len(ids) > 2 * MAX_JOB_TRACES:
        raise ReportInputError(f"at most {2 * MAX_JOB_TRACES} traces in one report")
    traces = {t.pk: t for t in TraceSummary.objects.filter(artifact_id__in=ids)}
    missing = [i for i in ids if i not in traces]
    if missing:
        raise ReportInputError(
            f"not a parsed trace: {', '.join(map(str, missing))} (artifact_ids must be "
            "PyTorch Profiler traces)"
        )
    sides = _sides([traces[i] for i in ids], spec.group_by)
    if len(sides) != 2:
        hint = (
            "give exactly two trace ids, or group_by: job with the traces of two jobs"
            if spec.group_by == "artifact"
            else f"the traces belong to {len(sides)} job label(s); a report compares two"
        )
        raise ReportInputError(f"a traces report compares two sides: {hint}")
    return two_sided_spec(spec, kind=KIND, ids=ids)


def _sides(traces: list[TraceSummary], group_by: str) -> list[tuple[str, list[TraceSummary]]]:
    """[(title, traces)] in time order: the side recorded first is A."""
    groups: dict[str, list[TraceSummary]] = {}
    for trace in traces:
        key = (trace.job_label or f"(no job) #{trace.pk}") if group_by == "job" else f"#{trace.pk}"
        groups.setdefault(key, []).append(trace)
    ordered = sorted(groups.items(), key=lambda item: min(t.recorded_at for t in item[1]))
    return [
        (title if group_by == "job" else _trace_title(members[0]), members)
        for title, members in ordered
    ]


def _trace_title(trace: TraceSummary) -> str:
    return f"#{trace.pk} {trace.rank_label}"[:60]


def estimate(spec: ReportSpec) -> int:
    # kernel rows dominate; a diff of a few traces reads in well under a second
    return TraceSummary.objects.filter(artifact_id__in=spec.artifact_ids).count() * 100


def collect(spec: ReportSpec) -> Collected:
    traces = list(
        TraceSummary.objects.select_related("artifact").filter(artifact_id__in=spec.artifact_ids)
    )
    if not traces:
        raise ReportInputError("none of the report's traces exists any more")
    sides = _sides(traces, spec.group_by)
    if len(sides) != 2:
        raise ReportInputError("the report's traces no longer fall on two sides")
    selections = [
        Selection(title=title, label="", ids=tuple(t.pk for t in members))
        for title, members in sides
    ]
    per_step = default_per_step(*selections)
    view = build_diff(selections[0], selections[1], window="trace", per_step=per_step)
    side_of = {t.pk: name for name, (_, members) in zip("AB", sides, strict=True) for t in members}
    steps = pd.DataFrame(
        list(
            TraceStep.objects.filter(trace_id__in=side_of).values_list(
                "trace_id", "index", "step", "dur_us", "gpu_compute_us"
            )
        ),
        columns=["trace_id", "index", "step", "dur_us", "gpu_compute_us"],
    )
    ranks = pd.DataFrame(
        [
            {
                "side": side_of[t.pk],
                "trace_id": t.pk,
                "rank": t.rank,
                "host": t.host,
                "gpu": t.gpu,
                "steps": t.step_count,
                "step_median_us": t.step_median_us,
                "span_us": t.span_us,
                "compute_pct": t.compute_pct,
                "comm_pct": t.comm_pct,
                "exposed_comm_pct": t.exposed_comm_pct,
                "idle_pct": t.idle_pct,
            }
            for t in traces
        ]
    )
    frames = {
        "breakdown": view.breakdown,
        "kernels": view.kernels.head(TOP_KERNELS),
        "types": view.types,
        "chart_parts": view.breakdown_frame(),
        "steps": steps.assign(side=steps["trace_id"].map(side_of)),
        "ranks": ranks,
        "sides": pd.DataFrame(
            {
                "side": ["A", "B"],
                "title": [view.a.title, view.b.title],
                "traces": [len(view.a.traces), len(view.b.traces)],
                "per_step": [per_step, per_step],
            }
        ),
    }
    return Collected(
        frames=frames,
        inputs={
            # A trace's primary key is its artifact's: side_of is keyed by both.
            "artifacts": artifact_pins(
                [t.artifact for t in traces],
                lambda a: {"parser_version": a.parser_version, "side": side_of[a.pk]},
            ),
            "sides": [
                {"side": s, "title": title} for s, (title, _) in zip("AB", sides, strict=True)
            ],
        },
        artifact_ids={t.pk for t in traces},
    )


SIDE_TABLE = (
    Column("side", "side"),
    Column("title", "traces"),
    Column("traces", "count", "int"),
    Column("per_step", "per step"),
)
BREAKDOWN_TABLE = (
    Column("label", "metric"),
    Column("a", "A", "number", 2),
    Column("b", "B", "number", 2),
    Column("delta", "Δ (B - A)", "number", 2),
    Column("delta_pct", "Δ %", "percent", 2),
    Column("metric", "key"),
)
KERNEL_TABLE = (
    Column("name", "kernel"),
    Column("type", "type"),
    Column("a_count", "count A", "number", 1),
    Column("b_count", "count B", "number", 1),
    Column("a_sum_us", "total A µs", "number", 1),
    Column("b_sum_us", "total B µs", "number", 1),
    Column("delta_us", "Δ µs", "number", 1),
    Column("delta_pct", "Δ %", "percent", 2),
    Column("change", "change"),
)
TYPE_TABLE = (
    Column("type", "kernel type"),
    Column("a_sum_us", "total A µs", "number", 1),
    Column("b_sum_us", "total B µs", "number", 1),
    Column("delta_us", "Δ µs", "number", 1),
    Column("delta_pct", "Δ %", "percent", 2),
)
RANK_TABLE = (
    Column("side", "side"),
    Column("trace_id", "trace", "int"),
    Column("rank", "rank", "int"),
    Column("host", "host"),
    Column("gpu", "GPU"),
    Column("steps", "steps", "int"),
    Column("step_median_us", "median step µs", "number", 1),
    Column("span_us", "GPU span µs", "number", 1),
    Column("compute_pct", "compute %", "number", 2),
    Column("comm_pct", "comm %", "number", 2),
    Column("exposed_comm_pct", "exposed comm %", "number", 2),
    Column("idle_pct", "idle %", "number", 2),
)
STEP_TABLE = (
    Column("side", "side"),
    Column("trace_id", "trace", "int"),
    Column("index", "#", "int"),
    Column("step", "ProfilerStep", "int"),
    Column("dur_us", "step µs", "number", 1),
    Column("gpu_compute_us", "GPU compute µs", "number", 1),
)
PARTS_TABLE = (
    Column("label", "side"),
    Column("span_us", "span µs", "number", 1),
    Column("compute_us", "compute µs", "number", 1),
    Column("exposed_comm_us", "exposed comm µs", "number", 1),
    Column("memory_other_us", "memory/other µs", "number", 1),
    Column("idle_us", "idle µs", "number", 1),
)


def compute(collected: Collected, spec: ReportSpec) -> Built:
    f = collected.frames
    sides = f["sides"]
    unit = " per step" if bool(sides["per_step"].iloc[0]) else ""
    tables = [
        freeze(sides, name="sides", title="Sides (A = reference)", columns=SIDE_TABLE),
        freeze(
            f["breakdown"],
            name="breakdown",
            title=f"GPU time breakdown{unit}",
            columns=BREAKDOWN_TABLE,
        ),
        freeze(
            f["chart_parts"], name="parts", title=f"GPU span partition{unit}", columns=PARTS_TABLE
        ),
        freeze(
            f["kernels"],
            name="kernels",
            title=f"Kernel time deltas{unit} (largest first)",
            columns=KERNEL_TABLE,
        ),
        freeze(f["types"], name="types", title=f"Time per kernel type{unit}", columns=TYPE_TABLE),
        freeze(
            f["ranks"].sort_values(["side", "rank"]),
            name="ranks",
            title="Per rank",
            columns=RANK_TABLE,
        ),
        freeze(
            f["steps"].sort_values(["side", "trace_id", "index"]),
            name="steps",
            title="ProfilerStep durations",
            columns=STEP_TABLE,
        ),
    ]
    return Built(tables=tables, summary=_lines(f["breakdown"], f["kernels"], sides))


def _lines(breakdown: pd.DataFrame, kernels: pd.DataFrame, sides: pd.DataFrame) -> list[str]:
    a, b = sides["title"].iloc[0], sides["title"].iloc[1]
    lines = [f"B = {b} against A = {a}"]
    rows = breakdown.set_index("metric")
    for key in ("span_us", "step_median_us", "exposed_comm_pct", "idle_pct"):
        if (
            key in rows.index
            and rows.at[key, "delta"] is not None
            and pd.notna(rows.at[key, "delta"])
        ):
            pct = rows.at[key, "delta_pct"]
            change = f" ({pct:+.1f} %)" if pct is not None and pd.notna(pct) else ""
            lines.append(
                f"{rows.at[key, 'label']}: {rows.at[key, 'a']:,.1f} -> "
                f"{rows.at[key, 'b']:,.1f}{change}"
            )
    for change, word in (("slower", "most slowed"), ("faster", "most sped up")):
        mine = kernels[kernels["change"].isin([change, "new" if change == "slower" else "gone"])]
        if not mine.empty:
            top = mine.iloc[0]
            lines.append(
                f"{word}: {str(top['name'])[:80]} ({top['delta_us']:+,.1f} µs, {top['change']})"
            )
    return lines


def charts(tables: list[dict[str, Any]]) -> list[Chart]:
    by_name = {t["name"]: t for t in tables}
    if "parts" not in by_name:
        return []
    out = [
        Chart(
            "breakdown",
            "GPU time breakdown, A and B",
            figures.trace_breakdown_bars(thaw(by_name["parts"])),
        ),
        Chart(
            "kernels",
            "Kernel time deltas (B - A)",
            figures.kernel_delta_bars(thaw(by_name["kernels"])),
        ),
    ]
    steps = thaw(by_name["steps"])
    if not steps.empty:
        steps = steps.assign(
            label=[f"{s} #{t}" for s, t in zip(steps["side"], steps["trace_id"], strict=True)],
            straggler=False,
        )
        out.append(Chart("steps", "Step time distribution per trace", figures.step_time_box(steps)))
    return out
