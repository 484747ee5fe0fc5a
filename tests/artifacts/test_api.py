"""REST API: auth, roles, upload contract, filters, reparse, schema."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from artifacts.models import Artifact
from artifacts.parsing import artifact_parse
from tests.samples import sample

pytestmark = pytest.mark.django_db

PAIR_OK = "nccl_tests/xxrjun_pair_N2_G1_ok.log"


def upload(api, relative=PAIR_OK, **fields):
    path = sample(relative)
    file = SimpleUploadedFile(path.name, path.read_bytes())
    return api.post("/api/v1/artifacts/", {"file": file, **fields}, format="multipart")


def test_anonymous_api_calls_get_401():
    api = APIClient()
    assert api.get("/api/v1/artifacts/").status_code == 401
    assert api.post("/api/v1/artifacts/", {}).status_code == 401
    assert api.get("/api/v1/schema/").status_code == 401


def test_token_authentication_works(editor):
    token = Token.objects.create(user=editor)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.get("/api/v1/artifacts/").status_code == 200
    api.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert api.get("/api/v1/artifacts/").status_code == 401


def test_upload_answers_201_with_the_contract_fields(editor_api):
    response = upload(editor_api, label="nightly", metadata='{"cluster": "b"}')
    assert response.status_code == 201, response.content
    body = response.json()
    assert {"id", "sha256", "kind", "status", "url"} <= body.keys()
    assert (body["kind"], body["status"], body["duplicate"]) == ("nccl_tests", "pending", False)
    artifact = Artifact.objects.get(pk=body["id"])
    assert artifact.metadata == {"cluster": "b"} and artifact.label == "nightly"
    assert body["url"].endswith(f"/api/v1/artifacts/{artifact.pk}/")


def test_duplicate_upload_answers_200_with_the_existing_artifact(editor_api):
    first = upload(editor_api).json()
    again = upload(editor_api)
    assert again.status_code == 200
    assert again.json()["id"] == first["id"] and again.json()["duplicate"] is True
    assert "already uploaded" in again.json()["detail"]


def test_bad_metadata_and_bad_kind_are_400_with_a_reason(editor_api):
    response = upload(editor_api, metadata="{not json")
    assert response.status_code == 400 and "metadata" in response.json()
    response = upload(editor_api, kind="pcap")
    assert response.status_code == 400 and "kind" in response.json()
    assert Artifact.objects.count() == 0


def test_viewers_read_but_cannot_write(viewer_api, editor_api):
    artifact_id = upload(editor_api).json()["id"]
    assert viewer_api.get("/api/v1/artifacts/").status_code == 200
    assert upload(viewer_api).status_code == 403
    assert viewer_api.post(f"/api/v1/artifacts/{artifact_id}/reparse/").status_code == 403


def test_list_filters_and_pagination(editor_api, settings):
    upload(editor_api, label="nightly")
    upload(editor_api, "nccl_tests/xxrjun_smoke_N2_G1.log", label="adhoc")
    upload(editor_api, "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log", kind="other")
    body = editor_api.get("/api/v1/artifacts/", {"label": "nightly"}).json()
    assert body["count"] == 1 and body["results"][0]["label"] == "nightly"
    assert editor_api.get("/api/v1/artifacts/", {"kind": "other"}).json()["count"] == 1
    assert editor_api.get("/api/v1/artifacts/", {"status": "pending"}).json()["count"] == 2
    page = editor_api.get("/api/v1/artifacts/", {"page_size": 1})  # fixed page size: ignored
    assert page.json()["count"] == 3


def test_detail_includes_parse_summary_and_runs(editor_api):
    artifact_id = upload(editor_api).json()["id"]
    artifact_parse(artifact_id=artifact_id)
    body = editor_api.get(f"/api/v1/artifacts/{artifact_id}/").json()
    assert body["status"] == "parsed"
    assert body["summary"]["runs"] == 2
    assert [r["collective"] for r in body["runs"]] == ["alltoall", "sendrecv"]
    run = editor_api.get(body["runs"][0]["url"]).json()
    assert len(run["measurements"]) == 10 and len(run["ranks"]) == 2


def test_reparse_endpoint_queues_a_parse(editor_api):
    artifact_id = upload(editor_api).json()["id"]
    artifact_parse(artifact_id=artifact_id)
    response = editor_api.post(f"/api/v1/artifacts/{artifact_id}/reparse/", {}, format="json")
    assert response.status_code == 202 and response.json()["status"] == "pending"


def test_run_list_filters(editor_api):
    artifact_parse(artifact_id=upload(editor_api).json()["id"])
    assert editor_api.get("/api/v1/runs/", {"collective": "sendrecv"}).json()["count"] == 1
    assert editor_api.get("/api/v1/runs/", {"host": "cnode2-002"}).json()["count"] == 2
    assert editor_api.get("/api/v1/runs/", {"nranks": 8}).json()["count"] == 0


def test_openapi_schema_lists_the_endpoints(editor_api):
    response = editor_api.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert {
        "/api/v1/artifacts/",
        "/api/v1/artifacts/{id}/",
        "/api/v1/artifacts/{id}/reparse/",
    } <= set(paths)
