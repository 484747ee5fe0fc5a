"""Reports API: the POST/GET/export contract, roles, clear errors, the schema."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from reports import services
from reports.models import Report

pytestmark = pytest.mark.django_db


def post(api, pair, **fields):
    body = {"title": "G1 vs G8", "kind": "runs", "artifact_ids": [a.pk for a in pair], **fields}
    return api.post("/api/v1/reports/", body, format="json")


def test_post_builds_a_report_and_answers_201_with_id_url_version(editor_api, pair):
    response = post(editor_api, pair)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["version"] == 1 and body["status"] == "ready"
    assert body["url"].endswith(f"/api/v1/reports/{body['id']}/")
    assert body["page_url"].endswith(f"/reports/{body['id']}/")
    detail = editor_api.get(body["url"]).json()
    assert set(detail["tables"]) == {"verdicts", "deltas", "curves", "runs", "efficiency"}
    first = detail["tables"]["deltas"]["rows"][0]
    assert (first["collective"], first["size_bytes"], first["delta_pct"]) == (
        "alltoall",
        33554432,
        74.01,
    )
    assert detail["versions"] == [
        {"id": body["id"], "version": 1, "status": "ready", "url": body["url"]}
    ]
    assert len(detail["inputs"]["artifacts"]) == 2 and detail["summary"]


def test_a_kind_whose_evidence_has_no_models_answers_not_available_yet(
    editor_api, pair, monkeypatch
):
    from reports import kinds

    monkeypatch.setitem(kinds.KINDS, "runs", "tests.reports.unavailable_kind")
    response = post(editor_api, pair)
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "report kind 'runs' is not available yet: its evidence has no models yet (test)"
    )


def test_run_ids_work_as_well_as_artifact_ids(editor_api, pair):
    run_ids = [r.pk for a in pair for r in a.runs.filter(collective="alltoall")]
    response = editor_api.post(
        "/api/v1/reports/", {"title": "a2a", "kind": "runs", "run_ids": run_ids}, format="json"
    )
    assert response.status_code == 201
    report = Report.objects.get(pk=response.json()["id"])
    assert report.summary[0].startswith("alltoall:") and len(report.summary) == 1


def test_anonymous_is_401_and_a_viewer_reads_but_cannot_write(viewer_api, pair, editor):
    anonymous = APIClient()
    assert anonymous.get("/api/v1/reports/").status_code == 401
    assert post(anonymous, pair).status_code == 401
    assert post(viewer_api, pair).status_code == 403
    report = services.report_create(
        kind="runs", title="t", artifact_ids=[a.pk for a in pair], created_by=editor
    )
    assert viewer_api.get(f"/api/v1/reports/{report.pk}/").status_code == 200
    assert viewer_api.get(f"/api/v1/reports/{report.pk}/export/?format=csv").status_code == 200
    assert viewer_api.post(f"/api/v1/reports/{report.pk}/rebuild/").status_code == 403
    assert anonymous.get(f"/api/v1/reports/{report.pk}/export/?format=json").status_code == 401


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "traces"}, "not a parsed trace"),
        ({"kind": "counters"}, "have no counter rates"),
        ({"artifact_ids": [], "run_ids": []}, "needs run_ids or artifact_ids"),
        ({"artifact_ids": [424242]}, "no such artifact: 424242"),
        ({"kind": "profiles"}, "needs profile_ids"),
        ({"kind": "weather"}, "not a valid choice"),
        ({"title": ""}, "may not be blank"),
    ],
)
def test_bad_requests_are_400_with_a_reason(editor_api, pair, fields, message):
    response = post(editor_api, pair, **fields)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Report.objects.exists()


@pytest.mark.parametrize(
    ("fmt", "content_type"),
    [
        ("html", "text/html"),
        ("csv", "application/zip"),
        ("json", "application/json"),
        ("md", "text/markdown"),
    ],
)
def test_export_answers_an_attachment(editor_api, pair, fmt, content_type):
    report_id = post(editor_api, pair).json()["id"]
    response = editor_api.get(f"/api/v1/reports/{report_id}/export/", {"format": fmt})
    assert response.status_code == 200
    assert response["Content-Type"].startswith(content_type)
    assert response["Content-Disposition"].startswith(
        f'attachment; filename="report-{report_id}-v1-'
    )
    one = editor_api.get(
        f"/api/v1/reports/{report_id}/export/", {"format": "csv", "table": "deltas"}
    )
    assert one["Content-Type"].startswith("text/csv") and one.content.startswith(b"collective,")
    bad = editor_api.get(f"/api/v1/reports/{report_id}/export/", {"format": "xls"})
    assert bad.status_code == 400


def test_rebuild_makes_the_next_version_and_versions_link_each_other(editor_api, pair):
    first = post(editor_api, pair).json()
    second = editor_api.post(f"/api/v1/reports/{first['id']}/rebuild/")
    assert second.status_code == 201 and second.json()["version"] == 2
    versions = editor_api.get(first["url"]).json()["versions"]
    assert [v["version"] for v in versions] == [1, 2]
    listed = editor_api.get("/api/v1/reports/").json()["results"]
    assert [r["id"] for r in listed] == [second.json()["id"]]  # latest version only
    everything = editor_api.get("/api/v1/reports/", {"versions": "all"}).json()["results"]
    assert len(everything) == 2


def test_big_reports_are_built_by_the_worker(editor_api, pair, monkeypatch, eager_tasks):
    monkeypatch.setattr(services, "INLINE_MAX_POINTS", 0)
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=False) as callbacks:
        body = post(editor_api, pair).json()
    assert body["status"] == "pending" and len(callbacks) == 1
    callbacks[0]()  # the on-commit enqueue; eager: the task runs here
    assert Report.objects.get(pk=body["id"]).status == "ready"


def test_the_schema_documents_the_reports_endpoints(editor_api):
    schema = editor_api.get("/api/v1/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    assert {
        "/api/v1/reports/",
        "/api/v1/reports/{id}/",
        "/api/v1/reports/{id}/export/",
        "/api/v1/reports/{id}/rebuild/",
    } <= set(paths)
    create = paths["/api/v1/reports/"]["post"]
    assert "ReportCreate" in str(create["requestBody"]) and "201" in create["responses"]
    params = {p["name"] for p in paths["/api/v1/reports/{id}/export/"]["get"]["parameters"]}
    assert {"format", "table", "chart"} <= params
