"""The incidents REST API: the contract from the issue, roles, and the OpenAPI schema."""

import io
import zipfile

import pytest
from rest_framework.test import APIClient

from incidents.models import Correspondence, Incident, PostMortem, TimelineEvent
from incidents.querysets import incident_timeline

pytestmark = pytest.mark.django_db


def create(api, **fields):
    return api.post(
        "/api/v1/incidents/",
        {"title": "MFU dropped 18%", "severity": "SEV2", **fields},
        format="json",
    )


def test_create_an_incident_answers_201_with_its_id(editor_api):
    response = create(
        editor_api,
        cluster="b",
        tags=["driver"],
        affected_hosts=["node-1"],
        impact_started_at="2025-03-01T09:00:00Z",
        detected_at="2025-03-01T09:30:00.250Z",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    incident = Incident.objects.get(pk=body["id"])
    assert body["status"] == "investigating" and body["tags"] == ["driver"]
    assert body["durations"]["detect"] == 1800.25 and incident.detected_at.microsecond == 250000
    assert body["url"].endswith(f"/api/v1/incidents/{incident.pk}/")


def test_bad_incidents_are_400_with_a_reason(editor_api):
    assert create(editor_api, severity="SEV7").status_code == 400
    response = create(
        editor_api, impact_started_at="2025-03-02T00:00:00Z", detected_at="2025-03-01T00:00:00Z"
    )
    assert response.status_code == 400 and "out of order" in response.json()["detail"]
    assert (
        create(
            editor_api,
            impact_started_at="2025-03-02T00:00:00Z",
            detected_at="2025-03-01T00:00:00Z",
            override=True,
        ).status_code
        == 201
    )


def test_patch_changes_status_and_lifecycle(editor_api):
    incident_id = create(editor_api).json()["id"]
    url = f"/api/v1/incidents/{incident_id}/"
    body = editor_api.patch(url, {"status": "mitigated", "tags": ["a", "b"]}, format="json").json()
    assert body["status"] == "mitigated" and body["mitigated_at"] and body["tags"] == ["a", "b"]
    body = editor_api.patch(url, {"resolved_at": "2020-01-01T00:00:00Z"}, format="json")
    assert body.status_code == 400


def test_attach_artifacts_suggest_and_accept(editor_api, failed_artifact):
    incident_id = create(editor_api).json()["id"]
    base = f"/api/v1/incidents/{incident_id}/"
    attached = editor_api.post(
        base + "artifacts/", {"artifact_ids": [failed_artifact.pk]}, format="json"
    )
    assert attached.status_code == 201
    assert [e["artifact"]["id"] for e in attached.json()] == [failed_artifact.pk]
    assert (
        editor_api.post(base + "artifacts/", {"artifact_ids": [9999]}, format="json").status_code
        == 400
    )
    suggested = editor_api.get(base + "suggested-events/").json()
    failed = next(s for s in suggested if s["source"] == "nccl_tests")
    accepted = editor_api.post(
        base + "suggested-events/accept/", {"key": failed["key"], "key_event": True}, format="json"
    )
    assert accepted.status_code == 201
    event = TimelineEvent.objects.get(pk=accepted.json()["id"])
    assert event.artifact_id == failed_artifact.pk and event.key
    assert failed["key"] not in [
        s["key"] for s in editor_api.get(base + "suggested-events/").json()
    ]
    again = editor_api.post(
        base + "suggested-events/accept/", {"key": failed["key"]}, format="json"
    )
    assert again.status_code == 400 and "already decided" in again.json()["detail"]
    reject_key = editor_api.get(base + "suggested-events/").json()[0]["key"]
    assert (
        editor_api.post(
            base + "suggested-events/reject/", {"key": reject_key}, format="json"
        ).status_code
        == 204
    )
    timeline = editor_api.get(base + "timeline/", {"key": "1"}).json()
    assert [e["id"] for e in timeline] == [event.pk]


def test_postmortem_get_put_and_409_on_a_stale_revision(editor_api):
    incident_id = create(editor_api).json()["id"]
    url = f"/api/v1/incidents/{incident_id}/postmortem/"
    empty = editor_api.get(url).json()
    assert empty["revision"] == 0 and "## Root cause" in empty["body"]
    saved = editor_api.put(url, {"body": "# v1", "revision": 0, "message": "first"}, format="json")
    assert saved.status_code == 200
    assert (saved.json()["revision"], saved.json()["message"]) == (1, "first")
    assert "<h1>v1</h1>" in saved.json()["html"]
    stale = editor_api.put(
        url, {"body": "# mine", "revision": 0, "status": "published"}, format="json"
    )
    assert stale.status_code == 409
    assert (stale.json()["revision"], stale.json()["body"]) == (1, "# v1")
    pm = PostMortem.objects.get(incident_id=incident_id)
    assert (pm.body, pm.revision, pm.status) == ("# v1", 1, "draft")  # nothing overwritten
    published = editor_api.put(
        url, {"body": "# v2", "revision": 1, "status": "published"}, format="json"
    )
    assert published.json()["status"] == "published"
    revisions = editor_api.get(url + "revisions/").json()
    assert [r["number"] for r in revisions] == [2, 1] and revisions[1]["author"] == "eddie"


def test_bundles_answer_201_with_id_sha256_and_a_download_url(editor_api, ok_artifact):
    incident_id = create(editor_api).json()["id"]
    base = f"/api/v1/incidents/{incident_id}/"
    editor_api.post(base + "artifacts/", {"artifact_ids": [ok_artifact.pk]}, format="json")
    response = editor_api.post(
        base + "bundles/", {"artifact_ids": [ok_artifact.pk], "redact": True}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert {"id", "sha256", "download_url"} <= body.keys() and len(body["sha256"]) == 64
    download = editor_api.get(body["download_url"])
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    assert download["Content-Disposition"].startswith("attachment;")
    assert download["X-Content-Type-Options"] == "nosniff"
    data = b"".join(download.streaming_content)
    assert zipfile.ZipFile(io.BytesIO(data)).testzip() is None
    import hashlib

    assert hashlib.sha256(data).hexdigest() == body["sha256"]
    assert editor_api.get(base + "bundles/").json()[0]["id"] == body["id"]
    bad = editor_api.post(
        base + "bundles/", {"artifact_ids": [ok_artifact.pk + 100]}, format="json"
    )
    assert bad.status_code == 400


def test_action_items_with_verification_before_done(editor_api, ok_artifact):
    incident_id = create(editor_api).json()["id"]
    created = editor_api.post(
        "/api/v1/action-items/",
        {
            "incident": incident_id,
            "title": "pin NCCL_IB_QPS_PER_CONNECTION",
            "type": "prevent",
            "owner": "eddie",
            "due_date": "2025-04-01",
            "requires_verification": True,
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    url = f"/api/v1/action-items/{created.json()['id']}/"
    refused = editor_api.patch(url, {"status": "done"}, format="json")
    assert refused.status_code == 400 and "verification" in str(refused.json())
    done = editor_api.patch(
        url, {"status": "done", "verification_artifact": ok_artifact.pk}, format="json"
    )
    assert done.status_code == 200 and done.json()["closed_at"]
    assert editor_api.get("/api/v1/action-items/").json()["count"] == 0  # open by default
    assert editor_api.get("/api/v1/action-items/", {"status": "any"}).json()["count"] == 1


def test_vendor_tickets_and_correspondence_on_the_incident_timeline(editor_api):
    incident_id = create(editor_api).json()["id"]
    ticket = editor_api.post(
        "/api/v1/vendor-tickets/",
        {
            "vendor": "nvidia_networking",
            "case_number": "00123456",
            "title": "CX-7 link flaps",
            "incident_ids": [incident_id],
            "case_url": "https://support.example/case/00123456",
        },
        format="json",
    )
    assert ticket.status_code == 201, ticket.content
    ticket_id = ticket.json()["id"]
    assert Incident.objects.get(pk=incident_id).vendor_engaged_at is not None
    sent = editor_api.post(
        f"/api/v1/vendor-tickets/{ticket_id}/correspondence/",
        {
            "direction": "received",
            "text": "Please send mlxlink -m output",
            "at": "2025-03-02T08:00:00Z",
        },
        format="json",
    )
    assert sent.status_code == 201
    assert Correspondence.objects.get().ticket_id == ticket_id
    timeline = incident_timeline(Incident.objects.get(pk=incident_id))
    assert [(i.kind, i.source) for i in timeline] == [("vendor", "vendor ticket")]
    assert "Please send mlxlink -m output" in timeline[0].text
    listed = editor_api.get("/api/v1/vendor-tickets/", {"vendor": "nvidia_networking"}).json()
    assert listed["count"] == 1 and listed["results"][0]["incident_ids"] == [incident_id]


def test_viewers_get_403_on_every_write(viewer_api, editor_api, ok_artifact):
    incident_id = create(editor_api).json()["id"]
    base = f"/api/v1/incidents/{incident_id}/"
    writes = [
        ("post", "/api/v1/incidents/", {"title": "x", "severity": "SEV3"}),
        ("patch", base, {"title": "y"}),
        ("put", base, {"title": "y", "severity": "SEV3"}),
        ("post", base + "artifacts/", {"artifact_ids": [ok_artifact.pk]}),
        ("delete", base + f"artifacts/{ok_artifact.pk}/", None),
        ("post", base + "suggested-events/accept/", {"key": "k"}),
        ("post", base + "suggested-events/reject/", {"key": "k"}),
        ("post", base + "timeline/", {"at": "2025-01-01T00:00:00Z", "kind": "action", "text": "t"}),
        ("put", base + "postmortem/", {"body": "x", "revision": 0}),
        ("post", base + "bundles/", {"redact": True}),
        ("post", "/api/v1/action-items/", {"incident": incident_id, "title": "x"}),
        ("post", "/api/v1/vendor-tickets/", {"vendor": "amd", "title": "x"}),
    ]
    for method, url, data in writes:
        response = getattr(viewer_api, method)(url, data, format="json")
        assert response.status_code == 403, (method, url, response.status_code)
    assert viewer_api.get(base).status_code == 200
    assert viewer_api.get(base + "postmortem/").status_code == 200
    assert PostMortem.objects.count() == 0


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/incidents/",
        "/api/v1/incidents/1/postmortem/",
        "/api/v1/action-items/",
        "/api/v1/vendor-tickets/",
        "/api/v1/bundles/",
    ],
)
def test_anonymous_calls_get_401(url):
    api = APIClient()
    assert api.get(url).status_code == 401
    assert api.post(url, {}, format="json").status_code == 401


def test_the_endpoints_are_in_the_openapi_schema(editor_api):
    schema = editor_api.get("/api/v1/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    for path in (
        "/api/v1/incidents/",
        "/api/v1/incidents/{id}/artifacts/",
        "/api/v1/incidents/{id}/suggested-events/",
        "/api/v1/incidents/{id}/suggested-events/accept/",
        "/api/v1/incidents/{id}/postmortem/",
        "/api/v1/incidents/{id}/bundles/",
        "/api/v1/action-items/",
        "/api/v1/vendor-tickets/",
        "/api/v1/bundles/{id}/download/",
    ):
        assert path in paths, path
    assert "409" in paths["/api/v1/incidents/{id}/postmortem/"]["put"]["responses"]
