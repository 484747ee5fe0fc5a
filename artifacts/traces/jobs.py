"""Job views and diffs of stored traces: rows read in a fixed number of queries, then the pure
analyses (artifacts.traces.analysis.stragglers, artifacts.traces.analysis.diff) do the maths.

Pages, the API, CSV exports and the job benchmark all go through these functions, so every
rendering of a job or a diff shows the same numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from artifacts.models import TraceCollective, TraceKernelStat, TraceStep, TraceSummary
from artifacts.traces.analysis import diff as trace_diff
from artifacts.traces.analysis import stragglers as st
from artifacts.traces.querysets import MAX_JOB_TRACES, Selection

# The per-rank table of a job: page, CSV and API share these columns, in this order.
RANK_COLUMNS = (
    "trace_id", "rank", "host", "gpu", "world_size", "steps", "step_time_us",
    "step_compute_us", "span_us", "compute_pct", "comm_pct", "exposed_comm_pct", "memory_pct",
    "idle_pct", "overlap_pct", "comm_us", "exposed_comm_us", "comm_wait_us", "lateness_us",
    "collectives_matched", "z_step_time", "z_step_compute", "z_lateness", "straggler",
)  # fmt: skip
STEP_COLUMNS = ("trace_id", "rank", "host", "step", "dur_us", "gpu_compute_us", "straggler")
STRAGGLER_COLUMNS = (
    "trace_id", "rank", "host", "signal", "value_us", "median_us", "deviation_pct", "score",
    "message",
)  # fmt: skip


@dataclass
class JobView:
    selection: Selection
    window: str
    traces: list[TraceSummary]
    analysis: st.JobAnalysis
    rank_rows: list[dict[str, Any]]
    step_rows: list[dict[str, Any]]
    truncated: bool

    @property
    def stragglers(self) -> list[st.Straggler]:
        return self.analysis.stragglers

    def straggler_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "trace_id": int(s.key),
                "rank": s.rank,
                "host": s.host,
                "signal": s.signal,
                "value_us": s.value_us,
                "median_us": s.median_us,
                "deviation_pct": s.deviation_pct,
                "score": s.score,
                "message": s.message,
            }
            for s in self.analysis.stragglers
        ]

    def breakdown_frame(self) -> pd.DataFrame:
        """One row per rank for the stacked breakdown chart."""
        rows = []
        for trace in self.traces:
            b = trace.breakdown(self.window)
            rows.append({"label": _short_label(trace), **b})
        return pd.DataFrame(rows)

    def rank_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(self.rank_rows, columns=list(RANK_COLUMNS))
        labels = {t.pk: _short_label(t) for t in self.traces}
        frame["label"] = [labels[i] for i in frame["trace_id"]]
        frame["straggler"] = frame["straggler"].astype(bool)
        return frame

    def step_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(self.step_rows, columns=list(STEP_COLUMNS))
        labels = {t.pk: _short_label(t) for t in self.traces}
        frame["label"] = [labels[i] for i in frame["trace_id"]]
        return frame


def build_job_view(selection: Selection, *, window: str = "trace") -> JobView:
    """Three queries (traces, steps, collectives) whatever the number of ranks."""
    traces = list(selection.traces()[: MAX_JOB_TRACES + 1])
    truncated = len(traces) > MAX_JOB_TRACES
    traces = traces[:MAX_JOB_TRACES]
    ids = [t.pk for t in traces]
    related = {"trace__job_label": selection.label} if selection.label else {"trace_id__in": ids}
    steps: dict[int, list[st.Step]] = defaultdict(list)
    for trace_id, number, start, dur, compute in (
        TraceStep.objects.filter(**related)
        .order_by("trace_id", "index")
        .values_list("trace_id", "step", "start_us", "dur_us", "gpu_compute_us")
    ):
        steps[trace_id].append(st.Step(number, start, dur, compute))
    calls: dict[int, list[st.CollectiveCall]] = defaultdict(list)
    for trace_id, group, size, name, start, dur in (
        TraceCollective.objects.filter(**related)
        .order_by("trace_id", "index")
        .values_list("trace_id", "process_group", "group_size", "name", "start_us", "dur_us")
    ):
        # without a process-group name, the group size tells communicators apart best
        calls[trace_id].append(st.CollectiveCall(group or f"size {size}", name, start, dur))
    inputs = [
        st.RankInput(
            key=str(t.pk),
            rank=t.rank,
            host=t.host,
            steps=steps.get(t.pk, []),
            collectives=calls.get(t.pk, []),
        )
        for t in traces
    ]
    analysis = st.analyse_job(inputs)
    if truncated:
        analysis.notes.append(f"only the first {MAX_JOB_TRACES} traces are compared")
    stats = {int(r.key): r for r in analysis.ranks}
    rank_rows = [_rank_row(t, stats[t.pk], window) for t in traces]
    flagged = analysis.straggler_keys
    step_rows = [
        {
            "trace_id": t.pk,
            "rank": t.rank,
            "host": t.host,
            "step": s.number,
            "dur_us": s.dur_us,
            "gpu_compute_us": s.compute_us,
            "straggler": str(t.pk) in flagged,
        }
        for t in traces
        for s in steps.get(t.pk, [])
    ]
    return JobView(selection, window, traces, analysis, rank_rows, step_rows, truncated)


def _rank_row(trace: TraceSummary, stats: st.RankStats, window: str) -> dict[str, Any]:
    b = trace.breakdown(window)
    return {
        "trace_id": trace.pk,
        "rank": trace.rank,
        "host": trace.host,
        "gpu": trace.gpu,
        "world_size": trace.world_size,
        "steps": stats.steps,
        "step_time_us": stats.step_time_us,
        "step_compute_us": stats.step_compute_us,
        "span_us": b["span_us"],
        "compute_pct": b["compute_pct"],
        "comm_pct": b["comm_pct"],
        "exposed_comm_pct": b["exposed_comm_pct"],
        "memory_pct": b["memory_pct"],
        "idle_pct": b["idle_pct"],
        "overlap_pct": b["overlap_pct"],
        "comm_us": b["comm_us"],
        "exposed_comm_us": b["exposed_comm_us"],
        "comm_wait_us": stats.comm_wait_us,
        "lateness_us": stats.lateness_us,
        "collectives_matched": stats.collectives_matched,
        "z_step_time": _round(stats.scores.get(st.STEP_TIME)),
        "z_step_compute": _round(stats.scores.get(st.STEP_COMPUTE)),
        "z_lateness": _round(stats.scores.get(st.LATENESS)),
        "straggler": ";".join(stats.flags),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _short_label(trace: TraceSummary) -> str:
    who = f"rank {trace.rank}" if trace.rank is not None else f"#{trace.pk}"
    return f"{who} · {trace.host}" if trace.host else who


# ---------------------------------------------------------------------------------------
# Diff
# ---------------------------------------------------------------------------------------


@dataclass
class DiffSide:
    selection: Selection
    traces: list[TraceSummary]
    breakdown: dict[str, Any]
    kernels: pd.DataFrame

    @property
    def title(self) -> str:
        if len(self.traces) == 1 and not self.selection.label:
            t = self.traces[0]
            return f"#{t.pk} {_short_label(t)} ({t.artifact.original_name})"
        return f"{self.selection.title} ({len(self.traces)} traces)"


@dataclass
class DiffView:
    a: DiffSide
    b: DiffSide
    window: str
    per_step: bool
    breakdown: pd.DataFrame
    kernels: pd.DataFrame
    types: pd.DataFrame

    @property
    def caveats(self) -> list[str]:
        """What makes the two sides not like for like: other GPUs, world sizes or platforms.
        The diff is still drawn (comparing an A100 job with an H100 one is a fair question);
        the reader is told why the numbers may differ for reasons no kernel explains."""
        notes = []
        for label, attr in (("GPU", "gpu"), ("world size", "world_size"), ("platform", "platform")):
            a, b = _values(self.a.traces, attr), _values(self.b.traces, attr)
            if a and b and a != b:
                notes.append(f"A and B differ in {label}: {', '.join(a)} vs {', '.join(b)}")
        return notes

    def breakdown_frame(self) -> pd.DataFrame:
        """The two sides as bars of the stacked breakdown chart."""
        rows = []
        for name, side in (("A", self.a), ("B", self.b)):
            b = side.breakdown
            parts = {k: b.get(k) for k in ("span_us", "compute_us", "exposed_comm_us", "idle_us")}
            parts["memory_other_us"] = side.breakdown.get("memory_other_us")
            rows.append({"label": name, **parts})
        return pd.DataFrame(rows)


def default_per_step(a: Selection, b: Selection) -> bool:
    """Per-step comparison when every trace of both sides has ProfilerSteps."""
    return all(s.traces().filter(step_count=0).count() == 0 for s in (a, b))


def build_diff(
    a: Selection, b: Selection, *, window: str = "trace", per_step: bool = False
) -> DiffView:
    sides = [_side(s, window=window, per_step=per_step) for s in (a, b)]
    return DiffView(
        a=sides[0],
        b=sides[1],
        window=window,
        per_step=per_step,
        breakdown=trace_diff.breakdown_delta(sides[0].breakdown, sides[1].breakdown),
        kernels=trace_diff.kernel_delta(sides[0].kernels, sides[1].kernels),
        types=trace_diff.type_delta(sides[0].kernels, sides[1].kernels),
    )


def _side(selection: Selection, *, window: str, per_step: bool) -> DiffSide:
    traces = list(selection.traces()[:MAX_JOB_TRACES])
    rows = []
    for t in traces:
        b = t.breakdown(window)
        rows.append({**b, "step_median_us": t.step_median_us, "step_count": t.step_count})
    breakdown = trace_diff.side_breakdown(rows, per_step=per_step)
    # the chart's "memory / other" part, averaged the same way
    extra = trace_diff.side_breakdown(
        [{"span_us": r["memory_other_us"], "step_count": r["step_count"]} for r in rows],
        per_step=per_step,
    )
    breakdown["memory_other_us"] = extra["span_us"]
    ids = [t.pk for t in traces]
    values = TraceKernelStat.objects.filter(trace_id__in=ids).values_list(
        "trace_id", "name", "kernel_type", "count", "sum_us"
    )
    frame = pd.DataFrame(list(values), columns=["trace_id", "name", "type", "count", "sum_us"])
    tables = [frame[frame["trace_id"] == i].drop(columns="trace_id") for i in ids]
    steps = [t.step_count for t in traces] if per_step else None
    kernels = trace_diff.side_kernels(tables, step_counts=steps)
    return DiffSide(selection, traces, breakdown, kernels)


# ---------------------------------------------------------------------------------------
# Plain payloads (API responses and JSON exports)
# ---------------------------------------------------------------------------------------


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """DataFrame rows as dicts with None (not NaN) for missing values."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def job_payload(view: JobView) -> dict[str, Any]:
    a = view.analysis
    return {
        "title": view.selection.title,
        "query": view.selection.query,
        "window": view.window,
        "ranks": view.rank_rows,
        "stragglers": view.straggler_rows(),
        "common_steps": a.common_steps,
        "matched_collectives": a.matched_collectives,
        "threshold": a.threshold,
        "min_relative": a.min_relative,
        "notes": a.notes,
    }


def _values(traces: Sequence[TraceSummary], attr: str) -> list[str]:
    return sorted({str(v) for t in traces if (v := getattr(t, attr)) not in (None, "")})


def diff_payload(view: DiffView) -> dict[str, Any]:
    return {
        "caveats": view.caveats,
        "a": {"title": view.a.title, "trace_ids": [t.pk for t in view.a.traces]},
        "b": {"title": view.b.title, "trace_ids": [t.pk for t in view.b.traces]},
        "window": view.window,
        "per_step": view.per_step,
        "breakdown": records(view.breakdown),
        "kernels": records(view.kernels),
        "types": records(view.types),
    }
