"""Alert and alert-summary pages draw the curve that regressed (baseline band vs the
candidate per size) and the series over time with the change point marked."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from baselines.alert_charts import alert_charts, summary_charts
from baselines.models import Alert, AlertSummary
from tests.baselines.test_pages import h200  # noqa: F401  (the demo-history fixture)

pytestmark = pytest.mark.django_db


def regression(h200):  # noqa: F811
    return (
        Alert.objects.filter(kind=Alert.Kind.REGRESSION, series__size_bytes__gt=0)
        .select_related("series", "summary")
        .first()
    )


def test_the_regressed_curve_has_the_band_the_reference_and_the_candidate(h200):  # noqa: F811
    alert = regression(h200)
    charts = alert_charts(alert)
    curve = json.loads(charts["curve_json"])
    names = [t.get("name", "") for t in curve["data"]]
    assert f"run #{alert.run_id}" in names
    assert any(n.startswith(("baseline", "previous run")) for n in names)
    assert any(n.endswith("min to max") for n in names)
    assert curve["layout"]["shapes"], "the alerted sizes are shaded"
    history = json.loads(charts["history_json"])
    assert any("change point" in a.get("text", "") for a in history["layout"]["annotations"])


def test_alert_and_summary_pages_show_both_charts(editor_client, h200):  # noqa: F811
    alert = regression(h200)
    page = editor_client.get(alert.get_absolute_url()).content.decode()
    assert 'id="alert-curve"' in page and 'id="alert-history"' in page
    assert "vendor/plotly.min.js" in page
    summary = AlertSummary.objects.get()
    assert summary_charts(summary)["chart_alert"].kind == Alert.Kind.REGRESSION
    page = editor_client.get(summary.get_absolute_url()).content.decode()
    assert 'id="alert-curve"' in page and 'id="alert-history"' in page


def embedded(page: str, script_id: str) -> dict:
    """A figure as the page embeds it: the JSON object itself, parsed once."""
    start = f'<script id="{script_id}" type="application/json">'
    return json.loads(page.split(start)[1].split("</script>")[0])


def test_the_summary_page_draws_band_candidate_shading_and_change_point(
    editor_client,
    h200,  # noqa: F811
):
    summary = AlertSummary.objects.get()
    worst = summary_charts(summary)["chart_alert"]
    page = editor_client.get(summary.get_absolute_url()).content.decode()

    curve = embedded(page, "alert-curve-figure")
    names = [t["name"] for t in curve["data"]]
    assert f"run #{worst.run_id}" in names
    assert any(n.startswith(("baseline", "previous run")) for n in names)
    (band,) = [t for t in curve["data"] if t["name"].endswith("min to max")]
    assert band["fill"] == "toself" and len(band["x"]) == len(band["y"]) > 2
    alerted = Alert.objects.filter(summary=summary, run_id=worst.run_id).exclude(
        kind=Alert.Kind.IMPROVEMENT
    )
    spans = [(s["x0"], s["x1"]) for s in curve["layout"]["shapes"] if s["type"] == "rect"]
    for size in alerted.values_list("series__size_bytes", flat=True):
        assert any(low < size < high for low, high in spans), size
    assert curve["layout"]["yaxis"]["title"]["text"] == worst.series.unit
    assert curve["layout"]["template"]["layout"]["colorway"]  # plotly_white's look, expanded

    history = embedded(page, "alert-history-figure")
    (line,) = [s for s in history["layout"]["shapes"] if s["line"].get("color") == "#dc2626"]
    at = worst.series.points.get(run_id=worst.run_id).measured_at
    assert line["x0"] == line["x1"] and datetime.fromisoformat(line["x0"]) == at
    (note,) = [a for a in history["layout"]["annotations"] if "change point" in a["text"]]
    assert note["x"] == line["x0"] and f"{worst.magnitude_pct:+.1f}%" in note["text"]
    assert "regression alert" in [t["name"] for t in history["data"]]
    assert sum(len(t["x"]) for t in history["data"] if t["mode"] == "markers+lines") == (
        worst.series.points.count()
    )


def test_the_alert_table_links_each_alert_its_series_profile_and_summary(
    editor_client,
    h200,  # noqa: F811
):
    summary = AlertSummary.objects.get()
    page = editor_client.get(summary.get_absolute_url()).content.decode()
    table = page.split("<th>Kind</th>")[1].split("</table>")[0]  # the rows after the header
    alerts = list(summary.alerts.select_related("series__profile"))
    assert table.count("<tr>") == len(alerts)
    for alert in alerts:
        assert f'<a href="{alert.get_absolute_url()}">{alert.pk}</a>' in table
        assert f'<a href="{alert.series.get_absolute_url()}">' in table
        assert f"{alert.series.identity_text()}</a>" in table
    assert f'<a href="{summary.profile.get_absolute_url()}">{summary.profile.slug}</a>' in table
    assert f'<a href="{summary.get_absolute_url()}">' in table
    untriaged = summary.alerts.filter(status=Alert.Status.UNTRIAGED).count()
    assert table.count('<span class="status status-failed">untriaged</span>') == untriaged
