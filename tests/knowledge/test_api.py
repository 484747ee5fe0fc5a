"""The pages and search API: create, read with sanitized html, filter, 409 on stale revision."""

import pytest

from knowledge.models import Page
from knowledge.services import page_verify

pytestmark = pytest.mark.django_db

NEW = {
    "title": "RoCE lossless on ConnectX-7",
    "body": "PFC on priority 3, **DSCP** trust.\n\n<script>alert(1)</script>\n",
    "type": "tuning_recipe",
    "topic": "network",
    "status": "published",
    "tags": ["roce", "pfc"],
    "applies_to": {
        "gpu": ["H100", "H200"],
        "nic": ["ConnectX-7"],
        "fabric": ["roce"],
        "nccl": ">=2.19",
    },
    "settings": [{"kind": "env", "name": "NCCL_IB_GID_INDEX", "value": "3"}],
}


def test_anonymous_calls_get_401(client):
    assert client.get("/api/v1/pages/").status_code == 401
    assert client.get("/api/v1/search/?q=x").status_code == 401


def test_create_returns_id_slug_revision_and_detail_has_sanitized_html(editor_api):
    response = editor_api.post("/api/v1/pages/", NEW, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["slug"] == "roce-lossless-on-connectx-7" and body["revision"] == 1
    assert body["id"] == Page.objects.get().pk
    detail = editor_api.get(f"/api/v1/pages/{body['slug']}/").json()
    assert "<strong>DSCP</strong>" in detail["html"] and "<script" not in detail["html"]
    assert detail["applies_to"]["gpu"] == ["H100", "H200"] and detail["revision"] == 1
    assert detail["settings"] == [{"kind": "env", "name": "NCCL_IB_GID_INDEX", "value": "3"}]
    assert {"label": "NIC", "text": "ConnectX-7", "dimension": "nic"} in detail["badges"]
    assert detail["stale"] is True and detail["stale_reasons"] == ["never verified"]


def test_invalid_create_is_400_with_field_errors(editor_api):
    bad = {
        **NEW,
        "applies_to": {"nccl": ">=two"},
        "settings": [{"kind": "env", "name": "bad name", "value": "1"}],
    }
    response = editor_api.post("/api/v1/pages/", bad, format="json")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"applies_to", "settings"}
    assert (
        editor_api.post("/api/v1/pages/", {**NEW, "type": "essay"}, format="json").status_code
        == 400
    )


def test_viewers_read_but_cannot_write(viewer_api, editor_api):
    slug = editor_api.post("/api/v1/pages/", NEW, format="json").json()["slug"]
    assert viewer_api.get(f"/api/v1/pages/{slug}/").status_code == 200
    assert viewer_api.post("/api/v1/pages/", NEW, format="json").status_code == 403
    assert (
        viewer_api.patch(
            f"/api/v1/pages/{slug}/", {"revision": 1, "title": "x"}, format="json"
        ).status_code
        == 403
    )


def test_update_with_the_current_revision_then_409_with_a_stale_one(editor_api):
    slug = editor_api.post("/api/v1/pages/", NEW, format="json").json()["slug"]
    ok = editor_api.patch(
        f"/api/v1/pages/{slug}/", {"revision": 1, "body": "Alice\n", "message": "m"}, format="json"
    )
    assert ok.status_code == 200 and ok.json()["revision"] == 2
    stale = editor_api.patch(
        f"/api/v1/pages/{slug}/", {"revision": 1, "body": "Bob\n"}, format="json"
    )
    assert stale.status_code == 409
    conflict = stale.json()
    assert conflict["current_revision"] == 2 and conflict["base_revision"] == 1
    assert conflict["current"]["body"] == "Alice\n"
    assert Page.objects.get().body == "Alice\n"
    missing = editor_api.patch(f"/api/v1/pages/{slug}/", {"body": "no revision\n"}, format="json")
    assert missing.status_code == 400 and "revision" in missing.json()
    revisions = editor_api.get(f"/api/v1/pages/{slug}/revisions/").json()
    assert [r["number"] for r in revisions] == [2, 1] and revisions[0]["message"] == "m"


def test_list_filters_by_generation_type_topic_and_stale(editor_api, editor):
    editor_api.post("/api/v1/pages/", NEW, format="json")
    editor_api.post(
        "/api/v1/pages/",
        {
            **NEW,
            "title": "A100 NCCL",
            "topic": "nccl",
            "type": "runbook",
            "applies_to": {"gpu": ["A100"]},
        },
        format="json",
    )
    editor_api.post(
        "/api/v1/pages/",
        {
            **NEW,
            "title": "Hopper NUMA",
            "topic": "kernel",
            "type": "best_practice",
            "applies_to": {"gpu": ["Hopper"]},
        },
        format="json",
    )
    page_verify(page=Page.objects.get(title="A100 NCCL"), by=editor, note="ran nccl-tests, ok")

    def titles(**params):
        return sorted(
            p["title"] for p in editor_api.get("/api/v1/pages/", params).json()["results"]
        )

    assert titles(generation="H100") == ["Hopper NUMA", "RoCE lossless on ConnectX-7"]
    assert titles(generation="Hopper") == ["Hopper NUMA", "RoCE lossless on ConnectX-7"]
    assert titles(generation="a100") == ["A100 NCCL"]
    assert titles(type="runbook") == ["A100 NCCL"]
    assert titles(topic="kernel") == ["Hopper NUMA"]
    assert titles(stale="true") == ["Hopper NUMA", "RoCE lossless on ConnectX-7"]
    assert titles(stale="false") == ["A100 NCCL"]
    assert titles(fabric="roce", nic="cx7") == ["RoCE lossless on ConnectX-7"]


def test_search_api_shape(editor_api):
    editor_api.post("/api/v1/pages/", NEW, format="json")
    body = editor_api.get("/api/v1/search/", {"q": "dscp trust"}).json()
    assert body["count"] == 1
    hit = body["results"][0]
    assert {"type", "title", "url", "snippet"} <= set(hit)
    assert (
        hit["type"] == "page"
        and hit["title"] == NEW["title"]
        and hit["url"] == "/kb/roce-lossless-on-connectx-7/"
    )
    assert "<mark>" in hit["snippet"] and "<script" not in hit["snippet"]
    assert body["facets"]["type"] == [{"value": "page", "count": 1, "selected": False}]


def test_applicable_endpoint_lists_pages_for_facts(editor_api):
    editor_api.post("/api/v1/pages/", NEW, format="json")
    found = editor_api.get(
        "/api/v1/pages/applicable/", {"gpu": "NVIDIA H200", "nccl": "2.23.4"}
    ).json()
    assert [f["slug"] for f in found] == ["roce-lossless-on-connectx-7"]
    states = {v["dimension"]: v["state"] for v in found[0]["verdicts"]}
    assert states == {"gpu": "match", "nic": "unknown", "fabric": "unknown", "nccl": "match"}
    assert editor_api.get("/api/v1/pages/applicable/", {"gpu": "A100"}).json() == []


def test_verify_and_cite_endpoints(editor_api, parsed_run):
    slug = editor_api.post("/api/v1/pages/", NEW, format="json").json()["slug"]
    verified = editor_api.post(
        f"/api/v1/pages/{slug}/verify/",
        {"note": "nccl-tests 2x8 ok", "versions": {"nccl": "2.23.4"}},
        format="json",
    )
    assert verified.status_code == 201 and verified.json()["stale"] is False
    assert (
        editor_api.post(f"/api/v1/pages/{slug}/verify/", {"note": ""}, format="json").status_code
        == 400
    )
    run = parsed_run()
    cited = editor_api.post(
        f"/api/v1/pages/{slug}/citations/", {"kind": "run", "object_id": str(run.pk)}, format="json"
    )
    assert cited.status_code == 201
    assert cited.json()["citations"][0]["pinned"]["artifact_sha256"] == run.artifact.sha256
    assert cited.json()["evidence_count"] == 1
    bad = editor_api.post(
        f"/api/v1/pages/{slug}/citations/", {"kind": "run", "object_id": "999999"}, format="json"
    )
    assert bad.status_code == 400 and "no benchmark run" in bad.json()["detail"]


def test_the_endpoints_are_in_the_openapi_schema(editor_api):
    schema = editor_api.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    for path in [
        "/api/v1/pages/",
        "/api/v1/pages/{slug}/",
        "/api/v1/search/",
        "/api/v1/pages/applicable/",
        "/api/v1/pages/{slug}/verify/",
        "/api/v1/pages/{slug}/citations/",
        "/api/v1/pages/{slug}/revisions/",
    ]:
        assert path in schema["paths"], path
    assert "409" in schema["paths"]["/api/v1/pages/{slug}/"]["patch"]["responses"]
