"""Fabric API: token/session login (401), editor-only writes (403), filters, OpenAPI."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from artifacts.models import Finding
from tests.artifacts.fabric.conftest import evaluated, upload

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/findings/",
        "/api/v1/counter-rates/?host=x",
        "/api/v1/counter-samples/?artifact=1",
        "/api/v1/log-events/",
        "/api/v1/hosts/",
    ],
)
def test_anonymous_calls_get_401(url) -> None:
    assert APIClient().get(url).status_code == 401


def test_findings_list_filter_and_detail(viewer_api, pause_storm_pair) -> None:
    body = viewer_api.get("/api/v1/findings/", {"severity": "critical"}).json()
    rules = {f["rule"] for f in body["results"]}
    assert rules == {"pfc_pause_storm", "pfc_pause_duration"}
    storm = next(f for f in body["results"] if f["rule"] == "pfc_pause_storm")
    assert storm["title"] == "PFC pause storm on eth3 priority 3" and not storm["acknowledged"]
    detail = viewer_api.get(f"/api/v1/findings/{storm['id']}/").json()
    assert detail["related_artifacts"] == [pause_storm_pair[0].pk]
    assert detail["evidence"]["unit"] == "frames/s"
    empty = viewer_api.get("/api/v1/findings/", {"host": "nowhere"}).json()
    assert empty["count"] == 0


def test_acknowledge_needs_the_editor_role(viewer_api, editor_api, pause_storm_pair) -> None:
    finding = Finding.objects.get(rule="pfc_pause_storm")
    url = f"/api/v1/findings/{finding.pk}/acknowledge/"
    assert viewer_api.post(url, {"note": "x"}, format="json").status_code == 403
    response = editor_api.post(url, {"note": "cable swapped"}, format="json")
    assert response.status_code == 200 and response.json()["acknowledged"] is True
    assert response.json()["acknowledgement_note"] == "cable swapped"
    acked = editor_api.get("/api/v1/findings/", {"acknowledged": "yes"}).json()
    assert [f["id"] for f in acked["results"]] == [finding.pk]
    too_long = editor_api.post(url, {"note": "x" * 501}, format="json")
    assert too_long.status_code == 400
    reopened = editor_api.post(f"/api/v1/findings/{finding.pk}/reopen/")
    assert reopened.status_code == 200 and reopened.json()["acknowledged"] is False


def test_counter_samples_and_rates_of_an_artifact(viewer_api, pause_storm_pair) -> None:
    _, second = pause_storm_pair
    samples = viewer_api.get("/api/v1/counter-samples/", {"artifact": second.pk}).json()
    by_name = {s["counter"]: s for s in samples["results"]}
    assert by_name["rx_prio3_pause"]["value"] == 1_201_000
    assert by_name["rx_prio3_pause"]["host"] == "gpu-node-07"
    assert by_name["rx_prio3_pause"]["time_source"] == "metadata"
    rates = viewer_api.get(
        "/api/v1/counter-rates/", {"artifact": second.pk, "counter": "rx_prio3_pause"}
    ).json()
    values = {r["counter"]: r["value"] for r in rates["results"]}
    assert values["rx_prio3_pause"] == 20_000
    host_rates = viewer_api.get("/api/v1/counter-rates/", {"host": "gpu-node-07"}).json()
    assert host_rates["count"] == rates["count"] + 3  # + bytes, drops, storm counters


def test_samples_and_rates_need_a_scope(viewer_api) -> None:
    response = viewer_api.get("/api/v1/counter-samples/")
    assert response.status_code == 400 and "artifact" in response.json()
    assert viewer_api.get("/api/v1/counter-rates/").status_code == 400


def test_log_events_and_hosts(viewer_api) -> None:
    artifact = evaluated(upload("nccl_debug/raddet_nccl_info_socket_garbled_interleave.log"))
    events = viewer_api.get("/api/v1/log-events/", {"artifact": artifact.pk}).json()
    assert events["count"] == artifact.log_events.count() > 0
    hosts = viewer_api.get("/api/v1/hosts/").json()
    assert [h["host"] for h in hosts] == ["ljm"] and hosts[0]["findings"] == 1


def test_the_endpoints_are_in_the_openapi_schema(viewer_api) -> None:
    schema = viewer_api.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    for path in (
        "/api/v1/findings/",
        "/api/v1/findings/{id}/",
        "/api/v1/findings/{id}/acknowledge/",
        "/api/v1/counter-samples/",
        "/api/v1/counter-rates/",
        "/api/v1/log-events/",
        "/api/v1/hosts/",
    ):
        assert path in paths, path
    params = {p["name"] for p in paths["/api/v1/findings/"]["get"]["parameters"]}
    assert {"severity", "rule", "host", "acknowledged"} <= params
