"""Figures built as plain dicts read in plotly.js as the graph objects they replace did, and
reports still get graph objects with the same content."""

from __future__ import annotations

import datetime
import json
import math

import pandas as pd
import plotly.graph_objects as go

from reports.figures import comparison_curves, comparison_curves_spec, figure_json


def means() -> pd.DataFrame:
    rows = [
        ("A", 1024, 3, 1.5, 2.0, 10.0),
        ("A", 2048, 3, 2.5, math.nan, 11.0),
        ("B", 1024, 1, 1.4, 1.9, 12.0),
        ("B", 2048, 1, 2.4, 2.1, 13.0),
    ]
    return pd.DataFrame(
        rows, columns=["side", "size_bytes", "runs", "busbw_gbps", "algbw_gbps", "time_us"]
    )


def as_graph_object(spec: dict) -> dict:
    return json.loads(go.Figure(spec).to_json())


def test_figure_json_writes_what_a_graph_object_writes():
    at = datetime.datetime(2026, 3, 1, 4, 5, tzinfo=datetime.UTC)
    spec = {
        "data": [{"type": "scatter", "x": [at, at], "y": [1.0, math.nan], "name": "a</b>"}],
        "layout": {"template": "plotly_white", "height": 300},
    }
    text = figure_json(spec)
    assert "</" not in text  # safe inside a <script> element
    ours, theirs = json.loads(text), as_graph_object(spec)
    assert ours["data"][0]["x"] == theirs["data"][0]["x"] == [at.isoformat()] * 2
    assert ours["data"][0]["y"] == [1.0, None]  # NaN is null, as plotly writes it
    assert ours["data"][0]["name"] == "a</b>"
    # the template is expanded: plotly.js knows no names, the colours come from it
    assert ours["layout"]["template"] == theirs["layout"]["template"]
    assert spec["layout"]["template"] == "plotly_white"  # the caller's dict is left alone


def test_figure_json_applies_plotlys_default_template_when_none_is_named():
    spec = {"data": [], "layout": {"height": 300}}
    ours = json.loads(figure_json(spec))
    theirs = json.loads(go.Figure(spec, _validate=False).to_json())
    assert ours["layout"]["template"] == theirs["layout"]["template"]


def test_comparison_curves_for_reports_hold_the_plain_figure():
    spans = {"regressed": [[1024, 1024]], "improved": [[2048, 2048]]}
    spec = comparison_curves_spec(means(), title="t", **spans)
    figure = json.loads(comparison_curves(means(), title="t", **spans).to_json())
    plain = json.loads(figure_json(spec))
    assert [t["name"] for t in figure["data"]] == [t["name"] for t in plain["data"]]
    assert figure["layout"]["shapes"] == plain["layout"]["shapes"]
    assert figure["layout"]["updatemenus"] == plain["layout"]["updatemenus"]
    assert figure["layout"]["template"] == plain["layout"]["template"]
    # busbw shown first, one trace per side and metric, the buttons switch them
    assert [t["visible"] for t in plain["data"]] == [True, True] + [False] * 4
    red, green = plain["layout"]["shapes"]
    assert red["x0"] < 1024 < red["x1"] and green["x0"] < 2048 < green["x1"]
    assert red["yref"] == "y domain" and red["layer"] == "below"
