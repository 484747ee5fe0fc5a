"""The incident timeline chart: lane labels fit, times to the second (incidents/figures.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from incidents.figures import timeline_figure


def test_lanes_make_room_for_their_labels_and_times_show_no_microseconds():
    at = datetime(2026, 12, 3, 13, 5, 7, 123456, tzinfo=UTC)
    events = pd.DataFrame(
        [{"at": at, "kind": "observation", "text": "busbw down 9 %", "key": True},
         {"at": at, "kind": "vendor", "text": "case opened", "key": False}]
    )  # fmt: skip
    figure = timeline_figure(events, [("detected", at)])
    assert figure.layout.yaxis.automargin is True  # "observation" is never cut off
    assert list(figure.layout.yaxis.categoryarray) == ["vendor", "observation", "lifecycle"]
    for trace in figure.data:
        assert "%{x|%Y-%m-%d %H:%M:%S}" in trace.hovertemplate
        assert "%{x}" not in trace.hovertemplate  # plotly's default prints microseconds
    assert "%f" not in figure.layout.xaxis.tickformat
