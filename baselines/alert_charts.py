"""The charts of an alert and of an alert summary: the curve that regressed and its history.

1. ``regressed_curve``: the candidate run's curve against the reference it was compared with
   (the active baseline's runs, else the previous run of the identity), per message size:
   the reference's min-max band and mean, the candidate, the sizes that alerted shaded
   (``charts.figures.comparison_curves`` draws the curves and shading; the band is added).
2. ``history_with_change``: the alert's series over time (``baselines.charts.series_chart``:
   baseline band, alert markers, stack changes) with the change point marked.

Reads only; a fixed number of queries each. Kept apart from charts.py, which holds the
series/matrix charts. Both figures stay plain dicts until ``figure_json`` encodes them once:
the summary page draws them on every request, and graph objects (validation, deep copies,
``add_vrect``/``add_vline``, a JSON round trip to add the change point) cost ten times the
data.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from baselines.charts import series_chart
from baselines.comparing import baseline_for_identity
from baselines.models import Alert, AlertSummary, SeriesPoint
from charts.figures import Spec, comparison_curves_spec, figure_json

BAND_FILL = "rgba(31, 119, 180, 0.15)"


def reference_runs(alert: Alert) -> tuple[list[int], str]:
    """The runs the alert's run is drawn against, and what they are."""
    series = alert.series
    baseline = baseline_for_identity(
        series.profile_id, series.benchmark, series.collective, series.nranks, series.dtype
    )
    if baseline is not None:
        ids = list(baseline.runs.exclude(pk=alert.run_id).values_list("pk", flat=True))
        if ids:
            return ids, f"baseline {baseline.name} ({len(ids)} run{'s' if len(ids) > 1 else ''})"
    if alert.previous_run_id:
        return [alert.previous_run_id], f"previous run #{alert.previous_run_id}"
    return [], ""


def curve_points(alert: Alert, run_ids: list[int]) -> pd.DataFrame:
    """run_id, size_bytes, value of the alert's metric on its profile, for these runs."""
    series = alert.series
    rows = SeriesPoint.objects.filter(
        run_id__in=run_ids,
        series__profile_id=series.profile_id,
        series__benchmark=series.benchmark,
        series__collective=series.collective,
        series__nranks=series.nranks,
        series__metric=series.metric,
    ).values_list("run_id", "series__size_bytes", "value")
    return pd.DataFrame(list(rows), columns=["run_id", "size_bytes", "value"])


def band_curve_figure(
    reference: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    reference_label: str,
    candidate_label: str,
    unit: str,
    alerted_sizes: list[int],
) -> Spec:
    """Reference band (min-max per size) and mean vs the candidate, alerted sizes shaded.

    ``reference``/``candidate``: size_bytes, value (one row per run and size).
    """
    ref = reference.groupby("size_bytes")["value"].agg(["mean", "min", "max", "count"])
    cand = candidate.groupby("size_bytes")["value"].mean()
    means = pd.DataFrame(
        [
            *[
                {"side": reference_label, "size_bytes": s, "runs": int(r["count"]),
                 "busbw_gbps": r["mean"]}
                for s, r in ref.iterrows()
            ],
            *[
                {"side": candidate_label, "size_bytes": s, "runs": 1, "busbw_gbps": v}
                for s, v in cand.items()
            ],
        ]
    )  # fmt: skip
    spans = [[s, s] for s in sorted(set(alerted_sizes))]
    figure = comparison_curves_spec(means, regressed=spans)
    if len(ref):
        sizes = ref.index.tolist()
        figure["data"].append(
            {"type": "scatter", "x": sizes + sizes[::-1],
             "y": ref["max"].tolist() + ref["min"].tolist()[::-1], "fill": "toself",
             "fillcolor": BAND_FILL, "line": {"width": 0}, "hoverinfo": "skip",
             "name": f"{reference_label}: min to max"}
        )  # fmt: skip
    yaxis = figure["layout"].setdefault("yaxis", {})
    yaxis["title"] = {**yaxis.get("title", {}), "text": unit}
    return figure


def regressed_curve(alert: Alert) -> str | None:
    """Plotly JSON of the alert's run against its reference, or None without data."""
    if alert.run_id is None or alert.series.size_bytes == 0:
        return None  # a whole-run metric has no curve over sizes
    ref_ids, label = reference_runs(alert)
    points = curve_points(alert, [*ref_ids, alert.run_id])
    candidate = points[points["run_id"] == alert.run_id]
    if candidate.empty:
        return None
    alerted = list(
        Alert.objects.filter(summary_id=alert.summary_id, run_id=alert.run_id)
        .exclude(kind=Alert.Kind.IMPROVEMENT)
        .values_list("series__size_bytes", flat=True)
    )
    figure = band_curve_figure(
        points[points["run_id"] != alert.run_id],
        candidate,
        reference_label=label or "no reference",
        candidate_label=f"run #{alert.run_id}",
        unit=alert.series.unit,
        alerted_sizes=alerted,
    )
    return figure_json(figure)


def history_with_change(alert: Alert) -> str | None:
    """The series over time with a marked vertical line at the alert's run."""
    chart = series_chart(alert.series)
    if not chart.points:
        return None
    x = next((p["x"] for p in chart.points if p["run_id"] == alert.run_id), alert.measured_at)
    layout = chart.figure["layout"]
    # What add_vline and add_annotation would add, written out.
    vline = {"type": "line", "xref": "x", "x0": x, "x1": x, "yref": "y domain", "y0": 0, "y1": 1,
             "line": {"color": "#dc2626", "width": 2, "dash": "dash"}}  # fmt: skip
    note = {"x": x, "yref": "paper", "y": 1.02, "showarrow": False,
            "text": f"change point ({alert.get_kind_display()} {alert.magnitude_pct:+.1f}%)",
            "font": {"color": "#dc2626", "size": 11}}  # fmt: skip
    layout["shapes"] = [*layout.get("shapes", []), vline]
    layout["annotations"] = [*layout.get("annotations", []), note]
    return figure_json(chart.figure)


def alert_charts(alert: Alert) -> dict[str, Any]:
    return {"curve_json": regressed_curve(alert), "history_json": history_with_change(alert)}


def summary_charts(summary: AlertSummary, alerts: list[Alert] | None = None) -> dict[str, Any]:
    """The summary's worst alert (largest change, regressions first) drawn as on its page.

    ``alerts``: the summary's alerts with their series, when the caller has read them already
    (the summary page lists them)."""
    if alerts is None:
        alerts = list(Alert.objects.filter(summary=summary).select_related("series", "summary"))
    alerts = [a for a in alerts if a.status != Alert.Status.INVALID]
    if not alerts:
        return {}
    worst = max(alerts, key=lambda a: (a.kind == Alert.Kind.REGRESSION, abs(a.magnitude_pct or 0)))
    return {"chart_alert": worst, **alert_charts(worst)}
