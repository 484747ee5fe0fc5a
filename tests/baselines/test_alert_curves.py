"""Alert and alert-summary pages draw the curve that regressed (baseline band vs the
candidate per size) and the series over time with the change point marked."""

from __future__ import annotations

import json

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
