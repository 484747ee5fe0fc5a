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
                hovertemplate="%{text}<br>%{x}<extra></extra>",
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
                hovertemplate="%{text}<br>%{x}<extra>" + kind + "</extra>",
            )
        )
    kinds = set(events["kind"]) if not events.empty else set()
    present = [k for k in KIND_ORDER if (k == "lifecycle" and milestones) or k in kinds]
    fig.update_layout(
        margin={"l": 90, "r": 20, "t": 20, "b": 40},
        height=120 + 34 * max(1, len(present)),
        showlegend=False,
        template="plotly_white",
        hovermode="closest",
    )
    fig.update_yaxes(categoryorder="array", categoryarray=list(reversed(present)))
    fig.update_xaxes(type="date")
    return fig
