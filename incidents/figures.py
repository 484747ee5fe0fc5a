"""Plotly figures of the incidents app (pure: DataFrames in, figures out)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

KIND_ORDER = (
    "lifecycle",
    "alert",
    "observation",
    "evidence",
    "change",
    "action",
    "decision",
    "vendor",
)


# Hover and axis times to the second: the events' sub-second digits are in the table, and
# plotly's default "%{x}" printed microseconds.
WHEN = "%{x|%Y-%m-%d %H:%M:%S}"


def timeline_figure(events: pd.DataFrame, milestones: list[tuple[str, object]]) -> go.Figure:
    """Events as markers on a time axis, one row per kind; lifecycle milestones on top.

    ``events`` has columns ``at`` (aware datetimes), ``kind``, ``text`` and ``key``.
    """
    fig = go.Figure()
    if milestones:
        fig.add_trace(
            go.Scatter(
                x=[at for _, at in milestones],
                y=["lifecycle"] * len(milestones),
                mode="markers+text",
                text=[label for label, _ in milestones],
                textposition="top center",
                marker={"symbol": "diamond", "size": 11, "color": "#0f172a"},
                name="lifecycle",
                hovertemplate="%{text}<br>" + WHEN + "<extra></extra>",
            )
        )
    for kind in KIND_ORDER[1:]:
        chosen = events[events["kind"] == kind] if not events.empty else events
        if chosen.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=chosen["at"],
                y=[kind] * len(chosen),
                mode="markers",
                name=kind,
                text=[t[:120] for t in chosen["text"]],
                marker={
                    "size": [14 if k else 9 for k in chosen["key"]],
                    "line": {"width": [2 if k else 0 for k in chosen["key"]], "color": "#111"},
                },
                hovertemplate="%{text}<br>" + WHEN + "<extra>" + kind + "</extra>",
            )
        )
    kinds = set(events["kind"]) if not events.empty else set()
    present = [k for k in KIND_ORDER if (k == "lifecycle" and milestones) or k in kinds]
    fig.update_layout(
        margin={"l": 20, "r": 20, "t": 30, "b": 40},  # the lane axis makes room for its labels
        height=120 + 34 * max(1, len(present)),
        showlegend=False,
        template="plotly_white",
        hovermode="closest",
    )
    fig.update_yaxes(
        categoryorder="array",
        categoryarray=list(reversed(present)),
        automargin=True,
        ticksuffix=" ",
    )
    fig.update_xaxes(type="date", tickformat="%H:%M:%S\n%b %d, %Y", automargin=True)
    return fig


DURATION_COLOURS = {
    "detect": "#2563eb", "acknowledge": "#7c3aed", "mitigate": "#d97706", "resolve": "#059669",
}  # fmt: skip


def duration_bars(table: pd.DataFrame, labels: dict[str, str], *, split: str) -> go.Figure:
    """Median (bars) and p90 (markers) hours of each duration per group of one split.

    ``table`` is ``metrics.duration_stats`` output: group, incidents, <d>_median, <d>_p90.
    """
    fig = go.Figure()
    groups = [str(g) for g in table["group"]] if not table.empty else []
    for duration, label in labels.items():
        colour = DURATION_COLOURS.get(duration, "#6b7280")
        fig.add_trace(
            go.Bar(
                x=groups, y=table.get(f"{duration}_median", []), name=f"{label} median",
                marker_color=colour, offsetgroup=duration, legendgroup=duration,
                hovertemplate="%{x}: %{y:.2f} h<extra>" + label + " median</extra>",
            )
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(
                x=groups, y=table.get(f"{duration}_p90", []), name=f"{label} p90",
                mode="markers", marker={"symbol": "line-ew-open", "size": 18, "color": colour,
                                        "line": {"width": 3}},
                legendgroup=duration, showlegend=False,
                hovertemplate="%{x}: %{y:.2f} h<extra>" + label + " p90</extra>",
            )
        )  # fmt: skip
    fig.update_layout(
        barmode="group", template="plotly_white", height=320,
        margin={"l": 60, "r": 20, "t": 20, "b": 60}, legend={"orientation": "h", "y": -0.25},
        yaxis_title="hours", xaxis_title=split,
    )  # fmt: skip
    return fig
