"""The Alertmanager and generic (Grafana) webhook receivers, with real-shaped payloads."""

from __future__ import annotations

import base64
import copy
import json
from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

from incidents.alerting.services import webhook_receiver_create
from incidents.models import AlertLink, Incident, MilestoneRecord, WebhookCall

pytestmark = pytest.mark.django_db
URL = "/api/v1/integrations/alertmanager/"
GENERIC_URL = "/api/v1/integrations/webhook/"

# What Alertmanager 0.27 POSTs (webhook_config, JSON version 4): two hosts of one group.
FIRING = {
    "receiver": "perfhub",
    "status": "firing",
    "alerts": [
        {
            "status": "firing",
            "labels": {
                "alertname": "NCCLAllReduceBusBwLow", "cluster": "ib-east",
                "instance": "h100-n001:9400",
                "job": "dcgm", "severity": "critical", "slurm_job_id": "1234",
            },
            "annotations": {"summary": "all_reduce busbw below 300 GB/s for 10m"},
            "startsAt": "2025-03-01T10:05:00.123Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus.ib-east:9090/graph?g0.expr=nccl_busbw",
            "fingerprint": "c5a8a3b1e1f0d001",
        },
        {
            "status": "firing",
            "labels": {
                "alertname": "NCCLAllReduceBusBwLow", "cluster": "ib-east",
                "instance": "h100-n002:9400",
                "job": "dcgm", "severity": "critical", "slurm_job_id": "1234",
            },
            "annotations": {"summary": "all_reduce busbw below 300 GB/s for 10m"},
            "startsAt": "2025-03-01T10:05:30Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus.ib-east:9090/graph?g0.expr=nccl_busbw",
            "fingerprint": "c5a8a3b1e1f0d002",
        },
    ],
    "groupLabels": {"alertname": "NCCLAllReduceBusBwLow"},
    "commonLabels": {"alertname": "NCCLAllReduceBusBwLow", "cluster": "ib-east", "job": "dcgm",
                     "severity": "critical"},
    "commonAnnotations": {"summary": "all_reduce busbw below 300 GB/s for 10m"},
    "externalURL": "http://alertmanager.ib-east:9093",
    "version": "4",
    "groupKey": '{}:{alertname="NCCLAllReduceBusBwLow"}',
    "truncatedAlerts": 0,
}  # fmt: skip


def resolved() -> dict:
    body = copy.deepcopy(FIRING)
    body["status"] = "resolved"
    for i, alert in enumerate(body["alerts"]):
        alert["status"] = "resolved"
        alert["endsAt"] = f"2025-03-01T10:4{i}:00Z"
    return body


@pytest.fixture
def token(db) -> str:
    return webhook_receiver_create(name="prod-alertmanager")[1]


def post(body, token: str, url: str = URL):
    client = APIClient()
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.post(url, data, content_type="application/json",
                       HTTP_AUTHORIZATION=f"Bearer {token}")  # fmt: skip


def test_a_firing_group_opens_one_incident_with_hosts_cluster_severity(token):
    answer = post(FIRING, token)
    assert answer.status_code == 200, answer.json()
    assert answer.json()["created"] == 1
    incident = Incident.objects.get()
    assert incident.title == "NCCLAllReduceBusBwLow: all_reduce busbw below 300 GB/s for 10m"
    assert (incident.severity, incident.cluster) == ("SEV1", "ib-east")
    assert incident.affected_hosts == ["h100-n001", "h100-n002"]
    assert incident.affected_jobs == ["1234"]
    assert incident.impact_started_at == datetime(2025, 3, 1, 10, 5, 0, 123000, tzinfo=UTC)
    assert incident.events.count() == 2 and AlertLink.objects.count() == 2
    sources = set(incident.milestones.values_list("source", flat=True))
    assert sources == {MilestoneRecord.Source.ALERTMANAGER}


def test_a_resent_or_repeated_firing_never_duplicates(token):
    post(FIRING, token)
    again = post(FIRING, token)
    assert again.status_code == 200 and again.json()["created"] == 0
    assert again.json()["updated"] == 1
    assert Incident.objects.count() == 1 and Incident.objects.get().events.count() == 2
    assert WebhookCall.objects.count() == 2  # both calls are logged


def test_a_new_alert_of_the_same_group_joins_the_incident(token):
    post(FIRING, token)
    body = copy.deepcopy(FIRING)
    third = copy.deepcopy(body["alerts"][0])
    third["labels"]["instance"] = "h100-n003:9400"
    third["fingerprint"] = "c5a8a3b1e1f0d003"
    body["alerts"].append(third)
    assert post(body, token).json()["created"] == 0
    incident = Incident.objects.get()
    assert incident.affected_hosts == ["h100-n001", "h100-n002", "h100-n003"]
    assert incident.events.count() == 3


def test_resolved_sets_mitigated_and_resolved_with_alertmanager_provenance(token):
    post(FIRING, token)
    answer = post(resolved(), token)
    assert answer.status_code == 200 and answer.json()["resolved"] == 1
    incident = Incident.objects.get()
    end = datetime(2025, 3, 1, 10, 41, tzinfo=UTC)
    assert incident.mitigated_at == end and incident.resolved_at == end
    assert incident.status == "resolved"
    record = incident.milestones.filter(milestone="resolved").first()
    assert record.source == "alertmanager" and record.get_source_display() == "from Alertmanager"
    assert post(resolved(), token).json()["resolved"] == 0  # re-sent: nothing changes


def test_a_resolved_alert_never_seen_firing_opens_nothing(token):
    assert post(resolved(), token).status_code == 200
    assert not Incident.objects.exists()


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("{not json", "body is not JSON"),
        ({**FIRING, "version": "3"}, "unsupported Alertmanager webhook version '3'"),
        ({k: v for k, v in FIRING.items() if k != "groupKey"}, "groupKey is missing"),
        ({**FIRING, "alerts": []}, "alerts must be a non-empty list"),
        ({**FIRING, "alerts": [{"status": "firing", "labels": {}}]}, "alerts[0].labels"),
        ({**FIRING, "alerts": [{**FIRING["alerts"][0], "startsAt": "yesterday"}]}, "startsAt"),
        ({**FIRING, "status": "pending"}, "status must be firing or resolved"),
    ],
)
def test_malformed_payloads_get_400_with_the_reason(token, body, reason):
    answer = post(body, token)
    assert answer.status_code == 400
    assert reason in answer.json()["detail"]
    assert not Incident.objects.exists()
    assert WebhookCall.objects.get().status_code == 400


def test_an_unknown_or_missing_token_gets_401(token):
    answer = post(FIRING, "not-the-token")
    assert answer.status_code == 401 and "Bearer" in answer["WWW-Authenticate"]
    assert APIClient().post(URL, FIRING, format="json").status_code == 401
    assert not Incident.objects.exists()
    assert WebhookCall.objects.filter(status_code=401, receiver=None).count() == 2


def test_basic_auth_password_and_token_scheme_work_too(token):
    basic = base64.b64encode(f"alertmanager:{token}".encode()).decode()
    client = APIClient()
    answer = client.post(URL, FIRING, format="json", HTTP_AUTHORIZATION=f"Basic {basic}")
    assert answer.status_code == 200
    answer = client.post(URL, FIRING, format="json", HTTP_AUTHORIZATION=f"Token {token}")
    assert answer.status_code == 200 and Incident.objects.count() == 1


def test_the_label_map_is_editable(db):
    _, token = webhook_receiver_create(
        name="custom",
        label_map={"hosts": ["node"], "severity_values": {"critical": "SEV2"}},
    )
    body = copy.deepcopy(FIRING)
    for alert in body["alerts"]:
        alert["labels"]["node"] = alert["labels"].pop("instance").split(":")[0].upper()
    post(body, token)
    incident = Incident.objects.get()
    assert incident.severity == "SEV2" and incident.affected_hosts == ["H100-N001", "H100-N002"]


def test_a_logged_call_replays_without_duplicating(token, editor_api, viewer_api):
    first = post(FIRING, token).json()
    assert viewer_api.get("/api/v1/integrations/calls/").status_code == 200
    assert viewer_api.post(f"/api/v1/integrations/calls/{first['call']}/replay/").status_code == 403
    replay = editor_api.post(f"/api/v1/integrations/calls/{first['call']}/replay/")
    assert replay.status_code == 200 and replay.json()["created"] == 0
    assert Incident.objects.count() == 1
    assert WebhookCall.objects.get(pk=replay.json()["call"]).replay_of_id == first["call"]


def test_the_generic_webhook_reads_grafana_alerting_payloads(db):
    _, token = webhook_receiver_create(name="grafana", kind="generic")
    # Grafana 10 webhook contact point: the Alertmanager shape plus title/state/message.
    grafana = {
        "receiver": "perfhub", "status": "firing", "orgId": 1, "state": "alerting",
        "title": "[FIRING:1] PFC pause storm ib-east", "message": "**Firing** ...",
        "groupKey": '{}/{__grafana_autogenerated__="true"}:{alertname="PFC pause storm"}',
        "truncatedAlerts": 0, "externalURL": "https://grafana.example/", "version": "1",
        "groupLabels": {"alertname": "PFC pause storm"},
        "commonLabels": {"alertname": "PFC pause storm", "hostname": "h100-n007"},
        "commonAnnotations": {}, "alerts": [{
            "status": "firing", "labels": {"alertname": "PFC pause storm", "hostname": "h100-n007",
                                           "severity": "warning"},
            "annotations": {"description": "rx_prio3_pause > 1e5/s"},
            "startsAt": "2025-03-02T08:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "https://grafana.example/alerting/grafana/abc/view",
            "fingerprint": "7e5d3a0b9c1f2e44", "values": {"B": 123456.0},
        }],
    }  # fmt: skip
    answer = post(grafana, token, GENERIC_URL)
    assert answer.status_code == 200, answer.json()
    incident = Incident.objects.get()
    assert incident.severity == "SEV3" and incident.affected_hosts == ["h100-n007"]
    assert incident.title.startswith("[FIRING:1] PFC pause storm ib-east")
    assert incident.milestones.filter(source="webhook").exists()
    # an alertmanager token on the generic URL (and back) is refused
    assert post(grafana, token, URL).status_code == 400


def test_the_integrations_page_lists_calls_and_replays_one(token, viewer, editor_client):
    from django.test import Client

    post(FIRING, token)
    post("{broken", token)
    reader = Client()
    reader.force_login(viewer)
    html = reader.get("/incidents/integrations/").content.decode()
    assert "prod-alertmanager" in html and "body is not JSON" in html and "Replay" not in html
    call = WebhookCall.objects.filter(status_code=200).get()
    assert reader.post(f"/incidents/integrations/calls/{call.pk}/replay/").status_code == 403
    answer = editor_client.post(f"/incidents/integrations/calls/{call.pk}/replay/")
    assert answer.status_code == 302
    assert WebhookCall.objects.filter(replay_of=call).count() == 1
    assert Incident.objects.count() == 1


def test_a_receiver_made_in_the_admin_shows_its_token_once(admin_client):
    answer = admin_client.post(
        "/admin/incidents/webhookreceiver/add/",
        {"name": "am-prod", "kind": "alertmanager", "enabled": "on", "label_map": "{}",
         "new_token": ""},
        follow=True,
    )  # fmt: skip
    text = answer.content.decode()
    assert "shown once" in text
    token = text.split("(shown once): ")[1].split("<")[0].strip()
    assert post(FIRING, token).status_code == 200
    bad = admin_client.post(
        "/admin/incidents/webhookreceiver/add/",
        {"name": "bad", "kind": "generic", "label_map": '{"colour": []}', "new_token": "x"},
    )  # fmt: skip
    assert "unknown label map key" in bad.content.decode()


def test_firing_again_after_resolved_reopens_the_same_incident(token):
    post(FIRING, token)
    post(resolved(), token)
    again = copy.deepcopy(FIRING)
    for alert in again["alerts"]:
        alert["startsAt"] = "2025-03-01T12:00:00Z"
    assert post(again, token).json()["created"] == 0
    incident = Incident.objects.get()
    assert incident.status == "investigating" and incident.resolved_at is not None
    assert incident.events.filter(kind="alert").count() == 6  # 2 firing, 2 resolved, 2 again


def test_truncated_alerts_are_said_in_the_outcome(token):
    body = {**FIRING, "truncatedAlerts": 3}
    assert "3 more alert(s) truncated" in post(body, token).json()["detail"]


def test_old_calls_that_changed_nothing_are_pruned_and_provenance_stays(token, settings):
    from datetime import timedelta

    from django.utils import timezone

    settings.PERFHUB_WEBHOOK_LOG_DAYS = 30
    opened = post(FIRING, token)  # opens an incident: provenance
    refused = post("{not json", token)  # changed nothing
    assert (opened.status_code, refused.status_code) == (200, 400)
    long_ago = timezone.now() - timedelta(days=31)
    WebhookCall.objects.update(received_at=long_ago)
    recent = post(FIRING, token)  # a repeat: changes nothing new, but it is recent
    kept = set(WebhookCall.objects.values_list("pk", flat=True))
    assert opened.json()["call"] in kept and recent.json()["call"] in kept
    assert refused.json()["call"] not in kept
    settings.PERFHUB_WEBHOOK_LOG_DAYS = 0  # keep everything
    WebhookCall.objects.update(received_at=long_ago)
    post("{not json", token)
    assert WebhookCall.objects.count() == len(kept) + 1


def test_a_client_calling_too_often_gets_429(token, monkeypatch):
    from django.core.cache import cache
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"webhooks": "2/min"})
    cache.clear()
    answers = [post(FIRING, token).status_code for _ in range(3)]
    assert answers == [200, 200, 429]
    cache.clear()
