"""The sweep chart: a curve per setting value with its spread, wins marked, crossovers drawn."""

from __future__ import annotations

import json

from charts.figures import figure_json, sweep_curves_spec


def test_a_curve_per_value_wins_and_crossovers() -> None:
    spec = sweep_curves_spec(
        [
            {"value": "(default)", "sizes": [8, 1024, 1 << 20], "means": [0.1, 5.0, 100.0],
             "sds": [None, 0.1, 1.0], "wins": [False, False, True]},
            {"value": "Tree", "sizes": [8, 1024, 1 << 20], "means": [0.1, 7.0, 90.0],
             "sds": [None, 0.2, 2.0], "wins": [False, True, False]},
        ],
        crossovers=[32768],
    )  # fmt: skip
    default, tree = spec["data"]
    assert (default["name"], tree["name"]) == ("(default)", "Tree")
    assert tree["marker"]["size"] == [4, 9, 4] and default["error_y"]["array"] == [0, 0.1, 1.0]
    [line] = spec["layout"]["shapes"]
    assert line["x0"] == line["x1"] == 32768
    buttons = spec["layout"]["updatemenus"][0]["buttons"]
    assert [b["args"][0]["yaxis.type"] for b in buttons] == ["linear", "log"]
    assert spec["layout"]["xaxis"]["type"] == "log"
    json.loads(figure_json(spec))
