"""Plotly figures (pure: DataFrames in, figures out). Pages embed ``figure.to_json()``."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from .units import human_bytes

_SERIES = (
    # column, legend name, dash, axis
    ("oop_busbw_gbps", "busbw out-of-place", "solid", "y"),
    ("ip_busbw_gbps", "busbw in-place", "dot", "y"),
    ("oop_algbw_gbps", "algbw out-of-place", "dash", "y"),
    ("ip_algbw_gbps", "algbw in-place", "dashdot", "y"),
)


def bandwidth_curve(rows: pd.DataFrame, *, title: str = "") -> go.Figure:
    """busbw and algbw against message size, on a log2 size axis labelled in KiB/MiB/GiB.

    ``rows`` has a ``size_bytes`` column and any of the ``oop_*``/``ip_*`` bandwidth columns;
    series that are entirely empty (e.g. no in-place results) are left out.
    """
    fig = go.Figure()
    sizes = rows["size_bytes"] if "size_bytes" in rows else pd.Series(dtype=float)
    labels = [human_bytes(s) for s in sizes]
    for column, name, dash, axis in _SERIES:
        if column not in rows or rows[column].isna().all():
            continue
        fig.add_trace(
            go.Scatter(
                x=sizes,
                y=rows[column],
                name=name,
                mode="lines+markers",
                line={"dash": dash},
                yaxis=axis,
                customdata=labels,
                hovertemplate="%{customdata}: %{y:.2f} GB/s<extra>" + name + "</extra>",
            )
        )
    fig.update_layout(
        title=title or None,
        margin={"l": 60, "r": 20, "t": 40 if title else 10, "b": 60},
        legend={"orientation": "h", "y": -0.25},
        hovermode="x unified",
        template="plotly_white",
        height=420,
    )
    fig.update_xaxes(type="log", title="message size", **_log2_ticks(sizes))
    fig.update_yaxes(title="GB/s", rangemode="tozero")
    return fig


def _log2_ticks(sizes: pd.Series) -> dict[str, object]:
    """Tick at every power of two (every other one when there are many) with human labels."""
    valid = [s for s in sizes if s and s > 0]
    if not valid:
        return {}
    lo, hi = math.floor(math.log2(min(valid))), math.ceil(math.log2(max(valid)))
    step = 1 if hi - lo <= 12 else 2
    ticks = [2**e for e in range(lo, hi + 1, step)]
    return {"tickvals": ticks, "ticktext": [human_bytes(t) for t in ticks]}
