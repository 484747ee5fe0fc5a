"""Plotly figures (pure: DataFrames in, figures out).

Reports and exports take ``go.Figure`` objects (kaleido draws them to PNG/SVG). The figures
of busy pages (series history, version matrix, an alert's curves) are built as the plain
dicts plotly.js reads and encoded by ``figure_json``: validating graph objects, deep-copying
them and expanding their template cost several times more than the data.
"""

from __future__ import annotations

import datetime
import functools
import json
import math
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.utils import PlotlyJSONEncoder

from charts.palette import TRACE_PARTS
from perfhub.units import human_bytes

Spec = dict[str, Any]  # a figure as plain dicts: {"data": [...], "layout": {...}}


def figure_json(figure: Spec) -> str:
    """A plain-dict figure as the JSON ``Figure.to_json()`` writes: plotly's encoder (ISO
    dates, NaN as null, ``<``, ``>`` and ``/`` escaped), with the layout's template (plotly's
    default when none is named) expanded as a graph object would, since plotly.js knows no
    template names and its colours come from the template."""
    layout = figure.get("layout") or {}
    template = layout.get("template", pio.templates.default)
    if isinstance(template, str):
        figure = {**figure, "layout": {**layout, "template": _template(template)}}
    elif template is not None and not isinstance(template, dict):
        figure = {**figure, "layout": {**layout, "template": template.to_plotly_json()}}
    text = json.dumps(figure, cls=_FigureEncoder, separators=(",", ":"))
    for char, escaped in _JSON_ESCAPES:
        text = text.replace(char, escaped)
    return text


@functools.cache
def _template(name: str) -> Spec:
    # Read-only from here on: only ever encoded, never changed.
    return pio.templates[name].to_plotly_json()


_JSON_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("/", "\\u002f"))  # as plotly's


class _FigureEncoder(PlotlyJSONEncoder):
    """plotly's encoder, asked about dates first: a series chart holds thousands of them,
    and plotly tries five other encodings (plotly objects, sage, numpy ...) before dates."""

    def default(self, obj: Any) -> Any:
        if isinstance(obj, datetime.date) and obj is not pd.NaT:
            return obj.isoformat()
        return super().default(obj)


_SERIES = (
    # column, legend name, dash, axis
    ("oop_busbw_gbps", "busbw out-of-place", "solid", "y"),
    ("ip_busbw_gbps", "busbw in-place", "dot", "y"),
    ("oop_algbw_gbps", "algbw out-of-place", "dash", "y"),
    ("ip_algbw_gbps", "algbw in-place", "dashdot", "y"),
)


def _layout(
    fig: go.Figure,
    title: str,
    *,
    height: int,
    left: int = 60,
    bottom: int = 60,
    legend_y: float | None = None,
    **extra: object,
) -> None:
    """``_frame`` applied to a graph object, with any other layout properties."""
    fig.update_layout(
        **_frame(title, height=height, left=left, bottom=bottom, legend_y=legend_y), **extra
    )


def bandwidth_curve(
    rows: pd.DataFrame, *, title: str = "", peak_gbps: float | None = None, peak_label: str = ""
) -> go.Figure:
    """``bandwidth_curve_spec`` as a graph object, for reports, embeds and image exports."""
    return go.Figure(
        bandwidth_curve_spec(rows, title=title, peak_gbps=peak_gbps, peak_label=peak_label)
    )


def bandwidth_curve_spec(
    rows: pd.DataFrame, *, title: str = "", peak_gbps: float | None = None, peak_label: str = ""
) -> Spec:
    """busbw and algbw against message size, on a log2 size axis labelled in KiB/MiB/GiB.

    ``rows`` has a ``size_bytes`` column and any of the ``oop_*``/``ip_*`` bandwidth columns;
    series that are entirely empty (e.g. no in-place results) are left out. ``peak_gbps``
    draws the hardware's busbw ceiling (baselines.limits) as a dashed reference line.
    Plain dicts (``figure_json``): every run page draws it.
    """
    sizes = rows["size_bytes"] if "size_bytes" in rows else pd.Series(dtype=float)
    x = sizes.tolist()
    labels = [human_bytes(s) for s in x]
    traces = [
        {"type": "scatter", "x": x, "y": rows[column].tolist(), "name": name,
         "mode": "lines+markers", "line": {"dash": dash}, "yaxis": axis, "customdata": labels,
         "hovertemplate": "%{customdata}: %{y:.2f} GB/s<extra>" + name + "</extra>"}
        for column, name, dash, axis in _SERIES
        if column in rows and not rows[column].isna().all()
    ]  # fmt: skip
    layout = _frame(title, height=420, legend_y=-0.25)
    layout.update(
        hovermode="x unified",
        xaxis=_size_axis(sizes),
        yaxis={"title": {"text": "GB/s"}, "rangemode": "tozero"},
    )
    if peak_gbps:
        layout["shapes"] = [_hline(peak_gbps, {"dash": "dash", "color": "#d62728", "width": 1})]
        layout["annotations"] = [
            {"text": peak_label or f"peak {peak_gbps:g} GB/s", "showarrow": False,
             "xref": "x domain", "x": 0, "xanchor": "left", "yref": "y", "y": peak_gbps,
             "yanchor": "bottom"}
        ]  # fmt: skip
    return {"data": traces, "layout": layout}


def _frame(
    title: str, *, height: int, left: int = 60, bottom: int = 60, legend_y: float | None = None
) -> Spec:
    """The house frame: white template, room at the top only for a title, and (with
    ``legend_y``) a horizontal legend under the plot."""
    layout: Spec = {
        "margin": {"l": left, "r": 20, "t": 40 if title else 10, "b": bottom},
        "template": "plotly_white",
        "height": height,
    }
    if title:
        layout["title"] = {"text": title}
    if legend_y is not None:
        layout["legend"] = {"orientation": "h", "y": legend_y}
    return layout


def _size_axis(sizes: pd.Series) -> Spec:
    """The message-size x axis: log2 scale, ticks labelled in KiB/MiB/GiB."""
    return {"type": "log", "title": {"text": "message size"}, **_log2_ticks(sizes)}


def _hline(y: float, line: Spec) -> Spec:
    """A horizontal line across the plot at ``y`` (what ``add_hline`` adds)."""
    return {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y,
            "line": line}  # fmt: skip


def _log2_ticks(sizes: pd.Series) -> dict[str, object]:
    """Tick at every power of two (every other one when there are many) with human labels."""
    valid = [s for s in sizes if s and s > 0]
    if not valid:
        return {}
    lo, hi = math.floor(math.log2(min(valid))), math.ceil(math.log2(max(valid)))
    step = 1 if hi - lo <= 12 else 2
    ticks = [2**e for e in range(lo, hi + 1, step)]
    return {"tickvals": ticks, "ticktext": [human_bytes(t) for t in ticks]}


# --- Comparison reports ---------------------------------------------------------------------

_METRIC_AXES = (
    # column, button label, axis title, axis type
    ("busbw_gbps", "busbw", "bus bandwidth GB/s", "linear"),
    ("algbw_gbps", "algbw", "algorithm bandwidth GB/s", "linear"),
    ("time_us", "time", "time µs (log)", "log"),
)
_REGRESSED_FILL = "rgba(214, 39, 40, 0.12)"
_IMPROVED_FILL = "rgba(44, 160, 44, 0.10)"


def comparison_curves(
    means: pd.DataFrame,
    *,
    title: str = "",
    regressed: list[list[int]] | None = None,
    improved: list[list[int]] | None = None,
) -> go.Figure:
    """``comparison_curves_spec`` as a graph object, for reports and image exports."""
    return go.Figure(
        comparison_curves_spec(means, title=title, regressed=regressed, improved=improved)
    )


def comparison_curves_spec(
    means: pd.DataFrame,
    *,
    title: str = "",
    regressed: list[list[int]] | None = None,
    improved: list[list[int]] | None = None,
) -> Spec:
    """Overlaid curves of several sides against message size (log2 axis, human sizes).

    ``means``: side, size_bytes, runs and the metric columns (busbw_gbps, algbw_gbps,
    time_us), one row per side and size. Buttons switch between busbw, algbw and time; busbw
    is shown first. ``regressed``/``improved``: [[low_bytes, high_bytes], ...] size spans
    shaded red/green behind the curves. Plain dicts (``figure_json``): the alert pages draw
    it on every request.
    """
    traces: list[Spec] = []
    sides = list(dict.fromkeys(means["side"])) if "side" in means else []
    metrics = [m for m in _METRIC_AXES if m[0] in means and means[m[0]].notna().any()]
    for index, (column, label, _, _) in enumerate(metrics):
        for side in sides:
            rows = means[means["side"] == side].sort_values("size_bytes")
            sizes = rows["size_bytes"].tolist()
            runs = rows["runs"].tolist() if "runs" in rows else [1] * len(sizes)
            traces.append(
                {"type": "scatter", "x": sizes, "y": rows[column].tolist(), "name": side,
                 "legendgroup": side, "mode": "lines+markers", "visible": index == 0,
                 "customdata": [[human_bytes(s), n] for s, n in zip(sizes, runs, strict=True)],
                 "hovertemplate": "%{customdata[0]}: %{y:.2f} (mean of %{customdata[1]} "
                 f"run(s))<extra>{side} · {label}</extra>"}
            )  # fmt: skip
    shapes = [
        # half a log2 step either side, so a single size shows as a band, not a line
        {"type": "rect", "xref": "x", "x0": low / 2**0.5, "x1": high * 2**0.5,
         "yref": "y domain", "y0": 0, "y1": 1, "fillcolor": fill, "line": {"width": 0},
         "layer": "below"}
        for spans, fill in ((regressed or [], _REGRESSED_FILL), (improved or [], _IMPROVED_FILL))
        for low, high in spans
    ]  # fmt: skip
    per_metric = max(len(sides), 1)
    buttons = [
        {
            "label": label,
            "method": "update",
            "args": [
                {"visible": [i // per_metric == index for i in range(len(traces))]},
                {"yaxis.title.text": axis_title, "yaxis.type": axis_type},
            ],
        }
        for index, (_, label, axis_title, axis_type) in enumerate(metrics)
    ]
    sizes = means.get("size_bytes", pd.Series(dtype=float))
    layout: Spec = {
        "margin": {"l": 60, "r": 20, "t": 50 if title else 30, "b": 60},
        "legend": {"orientation": "h", "y": -0.25},
        "hovermode": "x unified",
        "template": "plotly_white",
        "height": 420,
        "xaxis": _size_axis(sizes),
    }
    if title:
        layout["title"] = {"text": title}
    if shapes:
        layout["shapes"] = shapes
    if len(buttons) > 1:
        layout["updatemenus"] = [
            {"type": "buttons", "direction": "right", "x": 1, "xanchor": "right", "y": 1.12,
             "buttons": buttons, "showactive": True}
        ]  # fmt: skip
    if metrics:
        layout["yaxis"] = {"title": {"text": metrics[0][2]}, "rangemode": "tozero"}
    return {"data": traces, "layout": layout}


# Layout keys that are controls on a page and noise on a picture (a PNG/SVG export).
INTERACTIVE_CONTROLS = ("updatemenus", "sliders")


def static_figure(figure: Any) -> dict[str, Any]:
    """A figure (dict or graph object) as a still image shows it: its buttons and sliders
    removed, the view they start on kept."""
    spec = figure.to_plotly_json() if hasattr(figure, "to_plotly_json") else dict(figure)
    layout = {k: v for k, v in dict(spec.get("layout") or {}).items()}
    for key in INTERACTIVE_CONTROLS:
        layout.pop(key, None)
    return {**spec, "layout": layout}


def delta_band(deltas: pd.DataFrame, *, title: str = "") -> go.Figure:
    """``delta_band_spec`` as a graph object, for reports and image exports."""
    return go.Figure(delta_band_spec(deltas, title=title))


def delta_band_spec(deltas: pd.DataFrame, *, title: str = "") -> Spec:
    """Δ% of each candidate against its reference per message size, with the uncertainty band.

    ``deltas``: candidate, size_bytes, delta_pct, low_pct, high_pct, change. Sizes whose change
    is "regressed" / "improved" get red / green markers. Plain dicts (``figure_json``): every
    run page and comparison draws it.
    """
    colours = {"regressed": "#d62728", "improved": "#2ca02c"}
    traces: list[Spec] = []
    for candidate in dict.fromkeys(deltas.get("candidate", [])):
        rows = deltas[deltas["candidate"] == candidate].sort_values("size_bytes")
        sizes = rows["size_bytes"].tolist()
        if rows["low_pct"].notna().any():
            traces.append(
                {"type": "scatter", "x": sizes + sizes[::-1],
                 "y": rows["high_pct"].tolist() + rows["low_pct"].tolist()[::-1],
                 "fill": "toself", "fillcolor": "rgba(31, 119, 180, 0.15)",
                 "line": {"width": 0}, "hoverinfo": "skip", "name": f"{candidate} uncertainty",
                 "legendgroup": candidate}
            )  # fmt: skip
        traces.append(
            {"type": "scatter", "x": sizes, "y": rows["delta_pct"].tolist(),
             "name": f"{candidate} Δ%", "legendgroup": candidate, "mode": "lines+markers",
             "marker": {"color": [colours.get(c, "#1f77b4") for c in rows["change"]], "size": 8},
             "customdata": [human_bytes(s) for s in sizes],
             "hovertemplate": "%{customdata}: %{y:+.2f} %<extra>" + str(candidate) + "</extra>"}
        )  # fmt: skip
    layout = _frame(title, height=320, legend_y=-0.25)
    layout.update(
        shapes=[_hline(0, {"color": "#888", "width": 1})],
        xaxis=_size_axis(deltas.get("size_bytes", pd.Series(dtype=float))),
        yaxis={"title": {"text": "Δ busbw % vs reference"}, "zeroline": False},
    )  # fmt: skip
    return {"data": traces, "layout": layout}


def ratio_bars(summary: pd.DataFrame, *, title: str = "") -> go.Figure:
    """NPI summary: ratio B / A per benchmark, one bar group per size range (1 = parity)."""
    fig = go.Figure()
    bench = [f"{c} {d} ({a}/{b} ranks)" for c, d, a, b in zip(
        summary.get("collective", []), summary.get("dtype", []),
        summary.get("nranks_a", []), summary.get("nranks_b", []), strict=True)]  # fmt: skip
    frame = summary.assign(benchmark=bench)
    for size_range in dict.fromkeys(frame.get("size_range", [])):
        rows = frame[frame["size_range"] == size_range]
        fig.add_trace(
            go.Bar(
                x=rows["benchmark"],
                y=rows["ratio_geomean"],
                name=size_range,
                hovertemplate="%{x}: %{y:.3f}x<extra>" + size_range + "</extra>",
            )
        )
    fig.add_hline(y=1, line={"color": "#888", "width": 1, "dash": "dot"})
    _layout(fig, title, height=380, bottom=80, legend_y=-0.3, barmode="group")
    fig.update_yaxes(title="busbw ratio B / A (geometric mean)")
    return fig


# --- Baselines: one series over time or versions, and the version matrix --------------------

_WHITE = {"paper_bgcolor": "white", "plot_bgcolor": "white", "font": {"color": "#2a3f5f"}}
_WHITE_AXIS = {"gridcolor": "#ebf0f8", "zerolinecolor": "#ebf0f8", "linecolor": "#ebf0f8"}
_ALERT_MARKERS = {
    # kind: (symbol, colour)
    "regression": ("triangle-down", "#d62728"),
    "improvement": ("triangle-up", "#2ca02c"),
    "variance": ("diamond", "#ff7f0e"),
}


def series_history(
    points: pd.DataFrame,
    *,
    unit: str = "GB/s",
    band: tuple[float, float, str] | None = None,
    alerts: pd.DataFrame | None = None,
    stack_changes: pd.DataFrame | None = None,
    ticks: list[tuple[float, str]] | None = None,
    title: str = "",
) -> Spec:
    """A series' values in order, one colour per software stack (plain dicts).

    ``points``: x (a time, or a position when ordered by version), value, stack (label),
    run_id. ``band``: (low, high, label) of the baseline, shaded across the chart.
    ``alerts``: x, value, kind (regression/improvement/variance), text - drawn as markers.
    ``stack_changes``: x, label - a dotted vertical line where the stack changed.
    ``ticks``: [(x, label)] for a version-ordered axis.
    The figure is assembled as plain dicts in one go (``figure_json`` encodes it): a series
    has thousands of points, and graph objects validate every one of them, and
    add_vline/add_annotation per stack change cost more than the data.
    """
    traces: list[dict[str, object]] = []
    shapes: list[dict[str, object]] = []
    annotations: list[dict[str, object]] = []
    if band is not None:
        low, high, label = band
        shapes.append(
            {"type": "rect", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": low,
             "y1": high, "fillcolor": "rgba(31, 119, 180, 0.12)", "line": {"width": 0},
             "layer": "below"}
        )  # fmt: skip
        annotations.append(
            {"xref": "paper", "x": 0, "yref": "y", "y": high, "text": label, "showarrow": False,
             "xanchor": "left", "yanchor": "bottom", "font": {"size": 11, "color": "#1f77b4"}}
        )  # fmt: skip
    stacks = points["stack"].tolist() if "stack" in points else []
    columns = {c: points[c].tolist() for c in ("x", "value", "run_id") if c in points}
    for stack in dict.fromkeys(stacks):
        keep = [i for i, s in enumerate(stacks) if s == stack]
        traces.append(
            {"type": "scatter", "mode": "markers+lines", "name": str(stack) or "unknown stack",
             "x": [columns["x"][i] for i in keep], "y": [columns["value"][i] for i in keep],
             "customdata": [columns["run_id"][i] for i in keep], "line": {"width": 1},
             "marker": {"size": 6},
             "hovertemplate": "%{y:.2f} " + unit + " · run %{customdata}<extra>%{fullData.name}"
             "</extra>"}
        )  # fmt: skip
    if alerts is not None and not alerts.empty:
        for kind, (symbol, colour) in _ALERT_MARKERS.items():
            rows = alerts[alerts["kind"] == kind]
            if rows.empty:
                continue
            traces.append(
                {"type": "scatter", "mode": "markers", "name": f"{kind} alert",
                 "x": rows["x"].tolist(), "y": rows["value"].tolist(),
                 "text": rows["text"].tolist(), "hovertemplate": "%{text}<extra></extra>",
                 "marker": {"symbol": symbol, "size": 14, "color": colour,
                            "line": {"width": 1, "color": "#fff"}}}
            )  # fmt: skip
    for change in (stack_changes if stack_changes is not None else pd.DataFrame()).itertuples():
        shapes.append(
            {"type": "line", "xref": "x", "x0": change.x, "x1": change.x, "yref": "paper",
             "y0": 0, "y1": 1, "line": {"color": "#6b7280", "width": 1, "dash": "dot"}}
        )  # fmt: skip
        annotations.append(
            {"xref": "x", "x": change.x, "yref": "paper", "y": 1, "text": str(change.label),
             "showarrow": False, "xanchor": "left", "yanchor": "top", "textangle": -90,
             "font": {"size": 10, "color": "#6b7280"}}
        )  # fmt: skip
    xaxis: dict[str, object] = {}
    if ticks:
        xaxis = {"tickvals": [t for t, _ in ticks], "ticktext": [lab for _, lab in ticks],
                 "title": {"text": "version"}}  # fmt: skip
    layout = {
        "title": {"text": title} if title else None,
        "margin": {"l": 60, "r": 20, "t": 40 if title else 20, "b": 60},
        "legend": {"orientation": "h", "y": -0.2},
        "hovermode": "closest",
        "height": 440,
        "shapes": shapes,
        "annotations": annotations,
        # plotly_white's look, set directly: building the template costs more than the data
        **_WHITE,
        "xaxis": {**_WHITE_AXIS, **xaxis},
        "yaxis": {**_WHITE_AXIS, "title": {"text": unit}},
    }
    return {"data": traces, "layout": {k: v for k, v in layout.items() if v is not None}}


def version_matrix_heatmap(
    grid: list[list[float | None]],
    *,
    rows: list[str],
    columns: list[str],
    links: list[list[str]] | None = None,
    limit_pct: float = 10.0,
    title: str = "",
) -> Spec:
    """Versions (rows) x benchmark and size bucket (columns), Δ% coloured red (slower) to
    green (faster), capped at ±``limit_pct``. ``links``: a URL per cell, in customdata, for
    a click handler to open the comparison. Plain dicts, like series_history."""
    text = [["" if v is None else f"{round(v, 1) + 0.0:+.1f}%" for v in row] for row in grid]
    heatmap = {
        "type": "heatmap", "z": grid, "x": columns, "y": rows, "text": text,
        "texttemplate": "%{text}", "customdata": links, "zmid": 0, "zmin": -limit_pct,
        "zmax": limit_pct, "colorscale": [[0, "#b91c1c"], [0.5, "#f8fafc"], [1, "#15803d"]],
        "colorbar": {"title": {"text": "Δ %"}}, "xgap": 2, "ygap": 2,
        "hovertemplate": "%{y} · %{x}: %{z:+.2f}%<extra></extra>",
    }  # fmt: skip
    layout = {
        "margin": {"l": 90, "r": 20, "t": 40 if title else 10, "b": 120},
        "height": max(260, 60 + 40 * len(rows)),
        **_WHITE,
        "xaxis": {"tickangle": -40, "side": "bottom"},
        "yaxis": {"title": {"text": "version"}, "autorange": "reversed", "type": "category"},
    }
    if title:
        layout["title"] = {"text": title}
    return {"data": [heatmap], "layout": layout}


# --- Tuning sweeps --------------------------------------------------------------------------

_SWEEP_COLOURS = ("#64748b", "#2563eb", "#d97706", "#16a34a", "#9333ea", "#dc2626", "#0891b2")


def sweep_curves_spec(
    values: list[dict[str, Any]], *, crossovers: list[int] | None = None, title: str = ""
) -> Spec:
    """One busbw curve per setting value with its replicate spread as error bars (±1 sd),
    the sizes a value wins marked with a filled dot, crossovers as dotted vertical lines.

    ``values``: ``{"value", "sizes", "means", "sds" (None where one run), "wins" (bools)}``,
    the default value first (drawn grey). Plain dicts, like series_history."""
    data: list[Spec] = []
    all_sizes: list[int] = []
    for index, item in enumerate(values):
        colour = _SWEEP_COLOURS[index % len(_SWEEP_COLOURS)]
        sizes = list(item["sizes"])
        all_sizes += sizes
        sds = [0 if sd is None else sd for sd in item["sds"]]
        data.append(
            {"type": "scatter", "mode": "lines+markers", "name": str(item["value"]),
             "x": sizes, "y": list(item["means"]), "line": {"color": colour},
             "marker": {"size": [9 if w else 4 for w in item["wins"]], "color": colour,
                        "symbol": ["circle" if w else "circle-open" for w in item["wins"]]},
             "error_y": {"type": "data", "array": sds, "visible": True, "thickness": 1},
             "hovertemplate": "%{x:,d} B: %{y:.2f} GB/s<extra>" + str(item["value"]) + "</extra>"}
        )  # fmt: skip
    shapes = [
        {"type": "line", "xref": "x", "x0": size, "x1": size, "yref": "y domain", "y0": 0,
         "y1": 1, "line": {"dash": "dot", "color": "#475569", "width": 1}}
        for size in crossovers or []
    ]  # fmt: skip
    layout = _frame(title, height=380, legend_y=-0.25, bottom=90)
    # Small messages are where latency-bound settings (Tree, LL) differ, invisible next to a
    # 300 GB/s plateau on a linear axis: a button switches to a log axis.
    scales = [
        {"label": label, "method": "relayout", "args": [{"yaxis.type": kind}]}
        for label, kind in (("linear", "linear"), ("log", "log"))
    ]
    layout.update(
        xaxis=_size_axis(pd.Series(all_sizes, dtype="int64")),
        yaxis={"title": {"text": "bus bandwidth GB/s"}, "rangemode": "tozero"},
        shapes=shapes,
        updatemenus=[
            {
                "type": "buttons",
                "direction": "left",
                "x": 0,
                "y": 1.12,
                "xanchor": "left",
                "buttons": scales,
                "showactive": True,
            }
        ],
    )
    return {"data": data, "layout": layout}


# --- PyTorch Profiler traces: breakdowns, per-rank bars, step times, kernel deltas ---------

_STRAGGLER = "#d62728"
_NORMAL = "#4b83d6"
_BREAKDOWN_UNITS = (("% of span", "% of GPU span"), ("µs", "µs"))  # button, axis title


def trace_breakdown_bars(
    frame: pd.DataFrame, *, title: str = "", orientation: str = "h", height: int | None = None
) -> go.Figure:
    """Stacked GPU-span breakdown, one bar per row of ``frame`` (a window, a rank, a side).

    ``frame``: ``label``, ``span_us`` and the part columns compute_us, exposed_comm_us,
    memory_other_us, idle_us (they partition the span). Buttons switch between % of the span
    (shown first) and µs.
    """
    fig = go.Figure()
    labels = [str(v) for v in frame.get("label", [])]
    span = pd.to_numeric(frame.get("span_us", pd.Series(dtype=float)), errors="coerce")
    for unit in ("pct", "us"):
        for column, name, colour in TRACE_PARTS:
            values = pd.to_numeric(frame.get(column, pd.Series(dtype=float)), errors="coerce")
            shown = 100.0 * values / span.where(span > 0) if unit == "pct" else values
            suffix = " %" if unit == "pct" else " µs"
            axis = {"x": shown, "y": labels} if orientation == "h" else {"x": labels, "y": shown}
            fig.add_trace(
                go.Bar(
                    **axis,
                    name=name,
                    legendgroup=name,
                    showlegend=unit == "pct",
                    orientation=orientation,
                    marker_color=colour,
                    visible=unit == "pct",
                    hovertemplate=f"%{{{'y' if orientation == 'h' else 'x'}}}: "
                    f"%{{{'x' if orientation == 'h' else 'y'}:,.2f}}{suffix}<extra>{name}</extra>",
                )
            )
    parts = len(TRACE_PARTS)
    value_axis = "xaxis" if orientation == "h" else "yaxis"
    buttons = [
        {
            "label": label,
            "method": "update",
            "args": [
                {"visible": [(i // parts == index) for i in range(len(fig.data))]},
                {f"{value_axis}.title.text": axis_title},
            ],
        }
        for index, (label, axis_title) in enumerate(_BREAKDOWN_UNITS)
    ]
    fig.update_layout(
        title=title or None,
        barmode="stack",
        margin={"l": 160 if orientation == "h" else 60, "r": 20, "t": 50, "b": 60},
        legend={"orientation": "h", "y": -0.25},
        template="plotly_white",
        height=height or (max(220, 80 + 48 * len(labels)) if orientation == "h" else 380),
        updatemenus=[
            {"type": "buttons", "direction": "right", "x": 1, "xanchor": "right", "y": 1.18,
             "buttons": buttons, "showactive": True}
        ],
    )  # fmt: skip
    if orientation == "h":
        fig.update_xaxes(title="% of GPU span")
        fig.update_yaxes(autorange="reversed", type="category")
    else:
        fig.update_yaxes(title="% of GPU span")
        fig.update_xaxes(type="category")
    return fig


def rank_bars(
    frame: pd.DataFrame, *, value: str, axis_title: str, title: str = "", scale: float = 1.0
) -> go.Figure:
    """One bar per rank (``label``) of column ``value`` times ``scale``; rows whose
    ``straggler`` column is true are drawn red."""
    flags = frame.get("straggler", pd.Series(False, index=frame.index)).fillna(False)
    values = pd.to_numeric(frame.get(value, pd.Series(dtype=float)), errors="coerce") * scale
    fig = go.Figure(
        go.Bar(
            x=[str(v) for v in frame.get("label", [])],
            y=values,
            marker_color=[_STRAGGLER if f else _NORMAL for f in flags],
            hovertemplate="%{x}: %{y:,.3f}<extra></extra>",
        )
    )
    _layout(fig, title, height=320, bottom=80, showlegend=False)
    fig.update_xaxes(type="category")
    fig.update_yaxes(title=axis_title, rangemode="tozero")
    return fig


def step_time_box(frame: pd.DataFrame, *, title: str = "") -> go.Figure:
    """Distribution of step durations per rank (ms): one box per ``label``, red for
    stragglers. ``frame``: label, dur_us, straggler (one row per step)."""
    fig = go.Figure()
    for label, rows in frame.groupby("label", sort=False) if len(frame) else []:
        straggler = bool(rows["straggler"].any()) if "straggler" in rows else False
        colour = _STRAGGLER if straggler else _NORMAL
        fig.add_trace(
            go.Box(
                y=pd.to_numeric(rows["dur_us"], errors="coerce") / 1e3,
                name=str(label),
                marker_color=colour,
                line_color=colour,
                boxpoints="all",
                jitter=0.3,
                pointpos=0,
                hovertemplate="%{y:,.3f} ms<extra>" + str(label) + "</extra>",
            )
        )
    _layout(fig, title, height=360, bottom=80, showlegend=False)
    fig.update_yaxes(title="step time ms", rangemode="tozero")
    return fig


def step_bars(frame: pd.DataFrame, *, title: str = "") -> go.Figure:
    """A trace's ProfilerSteps: host step time and GPU busy time per step (ms).
    ``frame``: step (label), dur_us, gpu_busy_us."""
    labels = [str(v) for v in frame.get("step", [])]
    fig = go.Figure()
    for column, name, colour in (
        ("dur_us", "step time (host)", _NORMAL),
        ("gpu_busy_us", "GPU busy", "#f59e0b"),
    ):
        if column in frame:
            fig.add_trace(
                go.Bar(
                    x=labels,
                    y=pd.to_numeric(frame[column], errors="coerce") / 1e3,
                    name=name,
                    marker_color=colour,
                    hovertemplate="step %{x}: %{y:,.3f} ms<extra>" + name + "</extra>",
                )
            )
    _layout(fig, title, height=320, legend_y=-0.25, barmode="group")
    fig.update_xaxes(title="ProfilerStep", type="category")
    fig.update_yaxes(title="ms", rangemode="tozero")
    return fig


def kernel_delta_bars(frame: pd.DataFrame, *, title: str = "", top: int = 20) -> go.Figure:
    """Kernels whose total time changed most (B - A, µs): red slower, green faster.
    ``frame``: name, delta_us, change (largest |delta| first)."""
    rows = frame.head(top)
    names = [n if len(n) <= 70 else n[:67] + "…" for n in rows.get("name", [])]
    deltas = pd.to_numeric(rows.get("delta_us", pd.Series(dtype=float)), errors="coerce")
    fig = go.Figure(
        go.Bar(
            x=deltas,
            y=names,
            orientation="h",
            marker_color=[_STRAGGLER if d > 0 else "#2ca02c" for d in deltas.fillna(0)],
            customdata=list(rows.get("change", [])),
            hovertemplate="%{y}<br>%{x:+,.1f} µs (%{customdata})<extra></extra>",
        )
    )
    _layout(
        fig, title, height=max(240, 60 + 22 * len(names)), left=420, bottom=50, showlegend=False
    )
    fig.update_xaxes(title="Δ total time µs (B - A)", zeroline=True)
    fig.update_yaxes(autorange="reversed", type="category")
    return fig


# --- Fabric: slow-node triage ---------------------------------------------------------------

_OUTLIER = "#d62728"
_NORMAL = "#1f77b4"


def pairwise_heatmap(matrix: pd.DataFrame, *, title: str = "", unit: str = "GB/s") -> go.Figure:
    """Host x host heat-map of a pairwise result (e.g. median busbw of 2-node runs).

    ``matrix``: square, hosts as index and columns, NaN where the pair has no run. Lower
    values are darker, so the row and column of a slow node stand out as a dark cross.
    """
    hosts = [str(h) for h in matrix.index]
    z = [[None if pd.isna(v) else float(v) for v in row] for row in matrix.to_numpy()]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=hosts,
            y=hosts,
            colorscale="Viridis",
            colorbar={"title": unit},
            hoverongaps=False,
            hovertemplate="%{y} ↔ %{x}: %{z:.2f} " + unit + "<extra></extra>",
        )
    )
    _layout(fig, title, height=max(360, 140 + 24 * len(hosts)), left=120, bottom=120)
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    return fig


def host_value_bars(
    table: pd.DataFrame, *, title: str = "", unit: str = "", median: float | None = None
) -> go.Figure:
    """One bar per host (``host``, ``value``, ``outlier``), outliers in red, median dashed."""
    hosts = [str(h) for h in table.get("host", [])]
    values = pd.to_numeric(table.get("value", pd.Series(dtype=float)), errors="coerce")
    flags = list(table.get("outlier", [False] * len(hosts)))
    fig = go.Figure(
        go.Bar(
            x=hosts,
            y=values,
            marker_color=[_OUTLIER if f else _NORMAL for f in flags],
            hovertemplate="%{x}: %{y:,.3g} " + unit + "<extra></extra>",
        )
    )
    if median is not None and not math.isnan(median):
        fig.add_hline(y=median, line_dash="dash", annotation_text="median")
    _layout(fig, title, height=360, bottom=100, showlegend=False)
    fig.update_xaxes(type="category")
    fig.update_yaxes(title=unit or None)
    return fig


def counter_timeline(frame: pd.DataFrame, *, title: str = "", unit: str = "") -> go.Figure:
    """A counter's rate over time, one line per device (``at``, ``device``, ``value``)."""
    fig = go.Figure()
    for device, rows in frame.sort_values("at").groupby("device", sort=True):
        fig.add_trace(
            go.Scatter(
                x=rows["at"],
                y=rows["value"],
                name=str(device) or "(device not named)",
                mode="lines+markers",
                hovertemplate="%{x}: %{y:,.3g} " + unit + "<extra>%{fullData.name}</extra>",
            )
        )
    _layout(fig, title, height=360, bottom=50, legend_y=-0.2)
    fig.update_yaxes(title=unit or None, rangemode="tozero")
    return fig


# --- Nsight Systems: GPU utilisation over time ----------------------------------------------


def gpu_utilisation_timeline(frame: pd.DataFrame, *, title: str = "") -> go.Figure:
    """Busy % per time bin, one line per GPU, NCCL-kernel % dotted beneath it.

    ``frame`` has ``device``, ``t_ms`` (bin start, ms from the session start), ``busy_pct``
    and optionally ``nccl_pct`` (NaN where the device ran no NCCL kernel).
    """
    fig = go.Figure()
    for device, rows in frame.sort_values("t_ms").groupby("device", sort=True):
        fig.add_trace(
            go.Scatter(
                x=rows["t_ms"],
                y=rows["busy_pct"],
                name=f"GPU {device} busy",
                mode="lines",
                line={"shape": "hv"},
                hovertemplate="%{x:.3f} ms: %{y:.1f}% busy<extra>GPU " + str(device) + "</extra>",
            )
        )
        if "nccl_pct" in rows and rows["nccl_pct"].notna().any():
            fig.add_trace(
                go.Scatter(
                    x=rows["t_ms"],
                    y=rows["nccl_pct"],
                    name=f"GPU {device} NCCL",
                    mode="lines",
                    line={"shape": "hv", "dash": "dot"},
                    hovertemplate="%{x:.3f} ms: %{y:.1f}% NCCL<extra>GPU "
                    + str(device)
                    + "</extra>",
                )
            )
    _layout(fig, title, height=340, bottom=50, legend_y=-0.2, hovermode="x unified")
    fig.update_xaxes(title="time since session start (ms)")
    fig.update_yaxes(title="% of bin", range=[0, 100])
    return fig
