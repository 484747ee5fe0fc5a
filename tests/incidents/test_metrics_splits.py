"""Incident metrics: MTTD/MTTA/MTTM/MTTR median and p90 per severity, cluster and month, as
charts, exported as CSV and JSON."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from incidents.services import incident_create, incident_set_milestone

pytestmark = pytest.mark.django_db
MARCH = datetime(2025, 3, 1, 10, tzinfo=UTC)
APRIL = datetime(2025, 4, 2, 10, tzinfo=UTC)


@pytest.fixture
def history(editor):
    for start, hours, cluster in (
        (MARCH, 1, "ib-east"),
        (MARCH, 3, "ib-east"),
        (APRIL, 10, "roce-west"),
    ):
        incident = incident_create(
            title=f"{hours}h", severity="SEV2", by=editor, cluster=cluster,
            milestones={"impact_started": start, "detected": start + timedelta(minutes=30)},
        )  # fmt: skip
        incident_set_milestone(
            incident=incident, milestone="resolved", at=start + timedelta(hours=hours), by=editor
        )


def test_json_export_has_every_split_with_median_and_p90(editor_client, history):
    body = editor_client.get("/incidents/metrics/", {"format": "json"}).json()
    assert body["unit"] == "hours" and body["durations"]["resolve"] == "MTTR"
    assert set(body["splits"]) >= {"severity", "cluster", "month"}
    east = next(r for r in body["splits"]["cluster"] if r["group"] == "ib-east")
    assert (east["incidents"], east["resolve_median"], east["detect_median"]) == (2, 2.0, 0.5)
    months = {r["group"]: r for r in body["splits"]["month"]}
    assert months["2025-03"]["incidents"] == 2 and months["2025-04"]["resolve_p90"] == 10.0


def test_the_page_draws_a_chart_per_split_and_names_mttx(editor_client, history):
    html = editor_client.get("/incidents/metrics/").content.decode()
    assert 'id="chart-cluster"' in html and 'id="chart-month"' in html
    assert "MTTD median" in html and "MTTR p90" in html and 'id="metrics-json"' in html
    csv = editor_client.get("/incidents/metrics/", {"format": "csv"}).content.decode()
    assert "\ncluster,ib-east,2," in csv
