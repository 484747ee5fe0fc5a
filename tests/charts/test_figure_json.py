"""Figures built as plain dicts read in plotly.js as the graph objects they replace did, and
reports still get graph objects with the same content."""

from __future__ import annotations

import datetime
import json
import math

import pandas as pd
import plotly.graph_objects as go

from charts.figures import (
    bandwidth_curve,
    bandwidth_curve_spec,
    comparison_curves,
    comparison_curves_spec,
    delta_band,
    delta_band_spec,
    figure_json,
)


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


def test_bandwidth_curve_keeps_present_series_and_draws_the_peak_as_a_labelled_line():
    rows = pd.DataFrame(
        {
            "size_bytes": [1024, 1 << 20, 1 << 30],
            "oop_busbw_gbps": [0.1, 20.0, 361.9],
            "ip_busbw_gbps": [math.nan] * 3,  # no in-place results: left out
            "oop_algbw_gbps": [0.1, 11.0, 190.0],
        }
    )
    spec = bandwidth_curve_spec(rows, peak_gbps=450.0, peak_label="peak 450 GB/s (NVLink)")
    assert [t["name"] for t in spec["data"]] == ["busbw out-of-place", "algbw out-of-place"]
    assert spec["data"][0]["y"] == [0.1, 20.0, 361.9]
    assert spec["data"][0]["customdata"] == ["1 KiB", "1 MiB", "1 GiB"]
    (line,) = spec["layout"]["shapes"]
    assert (line["y0"], line["y1"], line["xref"]) == (450.0, 450.0, "x domain")
    assert spec["layout"]["annotations"][0]["text"] == "peak 450 GB/s (NVLink)"
    assert spec["layout"]["xaxis"]["type"] == "log"
    # the graph object for reports and embeds holds the same traces and line
    figure = json.loads(bandwidth_curve(rows, peak_gbps=450.0).to_json())
    assert [t["y"] for t in figure["data"]] == [t["y"] for t in spec["data"]]
    assert figure["layout"]["shapes"][0]["y0"] == 450.0
    assert "shapes" not in bandwidth_curve_spec(rows)["layout"]  # no peak known: no line


def test_delta_band_draws_the_uncertainty_band_and_colours_changed_sizes():
    deltas = pd.DataFrame(
        {
            "candidate": ["run"] * 3,
            "size_bytes": [4096, 1024, 2048],
            "delta_pct": [-9.0, 0.5, -1.0],
            "low_pct": [-10.0, -0.5, -2.0],
            "high_pct": [-8.0, 1.5, 0.0],
            "change": ["regressed", "same", "same"],
        }
    )
    band, curve = delta_band_spec(deltas)["data"]
    assert band["x"] == [1024, 2048, 4096, 4096, 2048, 1024]  # sorted, then back
    assert band["y"] == [1.5, 0.0, -8.0, -10.0, -2.0, -0.5]
    assert curve["y"] == [0.5, -1.0, -9.0]
    assert curve["marker"]["color"] == ["#1f77b4", "#1f77b4", "#d62728"]
    plain = json.loads(figure_json(delta_band_spec(deltas)))
    assert plain["data"][1]["y"] == json.loads(delta_band(deltas).to_json())["data"][1]["y"]


def test_an_image_export_draws_the_chart_alone_without_its_buttons(monkeypatch):
    from charts.figures import static_figure, trace_breakdown_bars
    from reports import exports

    frame = pd.DataFrame(
        [{"label": "rank 0", "span_us": 100.0, "compute_us": 60.0, "exposed_comm_us": 20.0,
          "memory_other_us": 10.0, "idle_us": 10.0}]
    )  # fmt: skip
    figure = trace_breakdown_bars(frame)
    assert figure.layout.updatemenus  # the page's "% of span / µs" buttons
    still = static_figure(figure)
    assert "updatemenus" not in still["layout"] and still["data"] == figure.to_plotly_json()["data"]
    assert static_figure({"data": [], "layout": {"sliders": [{}], "title": "t"}})["layout"] == {
        "title": "t"
    }
    drawn: list[dict] = []

    class Scope:  # stands in for kaleido's headless browser: records what it was asked to draw
        def transform(self, fig, **_kw):  # type: ignore[no-untyped-def]
            drawn.append(fig)
            return b"<svg/>"

    monkeypatch.setattr(exports, "_image_scope", lambda: Scope())
    assert exports.render_image(figure, "svg") == b"<svg/>"
    assert "updatemenus" not in drawn[0]["layout"]
