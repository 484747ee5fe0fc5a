"""Fabric pages: login, filters, CSV/JSON, acknowledgement rights, bounded queries."""

from __future__ import annotations

import csv
import io
import itertools
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from artifacts.models import (
    Artifact,
    BenchmarkRun,
    CounterRate,
    CounterSnapshot,
    Finding,
    RunRank,
)
from tests.artifacts.fabric.conftest import evaluated, upload

pytestmark = pytest.mark.django_db

IBSTAT_DOWN = "counters/gpud_ibstat_h100_some_ports_down.txt"
T0 = datetime(2025, 3, 1, tzinfo=UTC)


def rows(response) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.mark.parametrize(
    "url",
    ["/fabric/", "/fabric/hosts/", "/fabric/hosts/h1/", "/fabric/fleet/", "/fabric/findings/1/"],
)
def test_anonymous_requests_go_to_login(client, url) -> None:
    response = client.get(url)
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_findings_list_filters_and_exports(viewer_client, pause_storm_pair) -> None:
    evaluated(upload(IBSTAT_DOWN, host="h100-b"))
    page = viewer_client.get("/fabric/").content.decode()
    assert "PFC pause storm on eth3 priority 3" in page and "Port mlx5_7/1 is DOWN" in page
    assert 'href="/fabric/"' in page and ">Fabric</a>" in page  # nav link
    only = viewer_client.get("/fabric/", {"rule": "port_down", "host": "h100"}).content.decode()
    assert "Port mlx5_7/1 is DOWN" in only and "PFC pause" not in only
    export = rows(viewer_client.get("/fabric/", {"format": "csv", "severity": "critical"}))
    assert {r["rule"] for r in export} == {"port_down", "pfc_pause_storm", "pfc_pause_duration"}
    assert all(r["severity"] == "critical" for r in export)


def test_finding_detail_shows_evidence_and_exports_json(viewer_client, pause_storm_pair) -> None:
    finding = Finding.objects.get(rule="pfc_pause_storm")
    page = viewer_client.get(f"/fabric/findings/{finding.pk}/").content.decode()
    assert "20,000 PFC pause frames per second on priority 3" in page
    assert "gpu-node-07" in page and "eth3-after.txt" in page and "eth3-before.txt" in page
    assert ">Acknowledge</button>" not in page  # viewers see no write controls
    body = json.loads(viewer_client.get(f"/fabric/findings/{finding.pk}/?format=json").content)
    assert body["evidence"]["value"] == 20000 and body["rule"] == "pfc_pause_storm"


def test_viewer_cannot_acknowledge(viewer_client, pause_storm_pair) -> None:
    finding = Finding.objects.get(rule="pfc_pause_storm")
    viewer_client.post(f"/fabric/findings/{finding.pk}/acknowledge/", {"note": "nope"})
    finding.refresh_from_db()
    assert finding.acknowledged_at is None


def test_editor_acknowledges_and_reopens(editor_client, pause_storm_pair) -> None:
    finding = Finding.objects.get(rule="pfc_pause_storm")
    url = f"/fabric/findings/{finding.pk}/acknowledge/"
    assert ">Acknowledge</button>" in editor_client.get(finding.get_absolute_url()).content.decode()
    editor_client.post(url, {"note": "switch firmware upgrade tonight"})
    finding.refresh_from_db()
    assert finding.acknowledged_at and finding.acknowledged_by.username == "eddie"
    page = editor_client.get(f"/fabric/findings/{finding.pk}/").content.decode()
    assert "switch firmware upgrade tonight" in page and "Re-open" in page
    open_only = editor_client.get("/fabric/", {"acknowledged": "no"}).content.decode()
    assert "PFC pause storm" not in open_only
    editor_client.post(url, {"action": "reopen"})
    finding.refresh_from_db()
    assert finding.acknowledged_at is None


def test_artifact_page_shows_the_fabric_panel(viewer_client, pause_storm_pair) -> None:
    _, second = pause_storm_pair
    page = viewer_client.get(f"/artifacts/{second.pk}/").content.decode()
    assert 'id="fabric-panel"' in page and "PFC pause storm on eth3 priority 3" in page
    assert f"/artifacts/{second.pk}/counters/" in page


def test_counters_page_lists_snapshots_rates_and_exports(viewer_client, pause_storm_pair) -> None:
    _, second = pause_storm_pair
    url = f"/artifacts/{second.pk}/counters/"
    page = viewer_client.get(url).content.decode()
    assert "rx_prio3_pause_duration_pct" in page and "gpu-node-07" in page
    export = rows(viewer_client.get(url, {"format": "csv", "counter": "rx_prio3_pause"}))
    values = {r["counter"]: float(r["value"]) for r in export}
    assert values["rx_prio3_pause"] == 20000
    samples = rows(viewer_client.get(url, {"format": "csv", "what": "samples"}))
    assert {r["counter"] for r in samples} >= {"rx_prio3_pause", "rx_discards_phy"}
    body = json.loads(viewer_client.get(url, {"format": "json", "derived": "1"}).content)
    assert {r["counter"] for r in body} == {"rx_prio3_pause_duration_pct"}


def test_host_view_shows_findings_rates_facts_and_artifacts(viewer_client, pause_storm_pair):
    page = viewer_client.get("/fabric/hosts/gpu-node-07/").content.decode()
    assert "PFC pause storm on eth3 priority 3" in page
    assert 'id="rate-chart"' in page and "eth3-before.txt" in page
    hosts = viewer_client.get("/fabric/hosts/").content.decode()
    assert "/fabric/hosts/gpu-node-07/" in hosts
    export = rows(viewer_client.get("/fabric/hosts/gpu-node-07/", {"format": "csv"}))
    assert any(r["counter"] == "rx_prio3_pause" for r in export)


def _counter_fleet(values: dict[str, float]) -> None:
    artifact = Artifact.objects.create(
        original_name="fleet.txt", sha256="f" * 64, size=1, kind="ethtool_stats"
    )
    for index, (host, value) in enumerate(values.items()):
        before = CounterSnapshot.objects.create(
            artifact=artifact, index=2 * index, source="ethtool_stats", host=host,
            device="eth3", taken_at=T0, time_source="file",
        )  # fmt: skip
        after = CounterSnapshot.objects.create(
            artifact=artifact, index=2 * index + 1, source="ethtool_stats", host=host,
            device="eth3", taken_at=T0 + timedelta(seconds=10), time_source="file",
        )  # fmt: skip
        CounterRate.objects.create(
            before=before, after=after, host=host, device="eth3", counter="rx_prio3_pause",
            delta=value * 10, dt_seconds=10, value=value, unit="frames/s",
            at=after.taken_at,
        )  # fmt: skip


def test_fleet_counter_comparison_names_the_outlier(viewer_client) -> None:
    _counter_fleet({f"node{i}": 10.0 + i for i in range(7)} | {"node-bad": 9000.0})
    response = viewer_client.get("/fabric/fleet/", {"counter": "rx_prio3_pause"})
    page = response.content.decode()
    assert "Outlying host: " in page and "/fabric/hosts/node-bad/" in page
    assert 'id="host-bars"' in page
    body = json.loads(
        viewer_client.get("/fabric/fleet/", {"counter": "rx_prio3_pause", "format": "json"}).content
    )
    assert body["outliers"] == ["node-bad"] and len(body["hosts"]) == 8


def _pairwise_fleet(slow: str) -> None:
    hosts = [f"cnode-{i}" for i in range(1, 7)]
    artifact = Artifact.objects.create(
        original_name="pairs.log", sha256="e" * 64, size=1, kind="nccl_tests"
    )
    for index, (a, b) in enumerate(itertools.combinations(hosts, 2)):
        busbw = 20.0 if slow in (a, b) else 47.0 + index * 0.05
        run = BenchmarkRun.objects.create(
            artifact=artifact, index=index, collective="all_reduce", nranks=2, nhosts=2,
            avg_busbw_gbps=busbw, measured_at=T0,
        )  # fmt: skip
        RunRank.objects.create(run=run, rank=0, host=a)
        RunRank.objects.create(run=run, rank=1, host=b)


def test_fleet_pairwise_heatmap_names_the_slow_node(viewer_client) -> None:
    _pairwise_fleet("cnode-4")
    page = viewer_client.get("/fabric/fleet/", {"mode": "pairwise"}).content.decode()
    assert 'id="pair-heatmap"' in page and "Outlying host: " in page
    assert "/fabric/hosts/cnode-4/" in page.split('id="verdict"')[1].split("</section>")[0]
    export = rows(viewer_client.get("/fabric/fleet/", {"mode": "pairwise", "format": "csv"}))
    slow = [r for r in export if r["outlier"] == "True"]
    assert [r["host"] for r in slow] == ["cnode-4"] and float(slow[0]["value"]) == 20.0


def test_fleet_page_without_data_says_so(viewer_client) -> None:
    page = viewer_client.get("/fabric/fleet/").content.decode()
    assert "Pick a counter" in page


@pytest.mark.parametrize("url", ["/fabric/", "/fabric/hosts/"])
def test_list_pages_use_a_bounded_number_of_queries(viewer_client, pause_storm_pair, url):
    viewer_client.get(url)
    with CaptureQueriesContext(connection) as few:
        viewer_client.get(url)
    evaluated(upload(IBSTAT_DOWN, host="h100-b"))
    evaluated(upload("counters/gpud_nvidia-smi_q_560.35.03.txt", host="gpu-a"))
    with CaptureQueriesContext(connection) as more:
        viewer_client.get(url)
    assert Finding.objects.count() >= 5
    assert len(more) == len(few) <= 12


def test_artifact_page_with_panel_stays_bounded(viewer_client, pause_storm_pair) -> None:
    _, second = pause_storm_pair
    url = f"/artifacts/{second.pk}/"
    viewer_client.get(url)
    with CaptureQueriesContext(connection) as queries:
        viewer_client.get(url)
    assert len(queries) <= 16
