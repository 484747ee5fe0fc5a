"""API conventions: one root listing every group, operations tagged by area, uploads typed
as files, docs that link back to the app."""

from __future__ import annotations

import pytest
import yaml

pytestmark = pytest.mark.django_db


def test_the_api_root_lists_every_endpoint_group(viewer_api) -> None:  # type: ignore[no-untyped-def]
    body = viewer_api.get("/api/v1/").json()
    # one group per app at least, not only the artifacts router's two
    for group in ("artifacts", "runs", "profiles", "alerts", "incidents", "vendor-tickets",
                  "reports", "pages", "traces", "findings", "integrations/calls"):  # fmt: skip
        assert body[group].endswith(f"/api/v1/{group}/"), group
    assert body["schema"].endswith("/api/v1/schema/") and body["docs"].endswith("/api-docs/")
    for group, url in body.items():  # every listed group answers: a list, or what it needs
        if group not in {"schema", "docs"}:
            response = viewer_api.get(url)
            assert response.status_code in (200, 400), group
            assert response.status_code == 200 or response.json(), group  # says which filter


def test_the_api_root_needs_a_login(client) -> None:  # type: ignore[no-untyped-def]
    assert client.get("/api/v1/").status_code == 401


def test_operations_are_tagged_by_area_and_uploads_are_files(viewer_api) -> None:  # type: ignore[no-untyped-def]
    schema = yaml.safe_load(viewer_api.get("/api/v1/schema/").content)
    tags = {
        path: {tag for op in ops.values() if isinstance(op, dict) for tag in op.get("tags", ())}
        for path, ops in schema["paths"].items()
    }
    assert tags["/api/v1/artifacts/"] == {"artifacts"}
    assert tags["/api/v1/runs/{id}/"] == {"runs"}
    assert tags["/api/v1/profiles/"] == {"baselines"}
    assert tags["/api/v1/incidents/"] == {"incidents"}
    assert tags["/api/v1/findings/"] == {"fabric"}
    assert "api" not in set().union(*tags.values())
    assert {t["name"] for t in schema["tags"]} >= {"artifacts", "baselines", "incidents"}
    upload = schema["paths"]["/api/v1/artifacts/"]["post"]["requestBody"]["content"]
    ref = upload["multipart/form-data"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert schema["components"]["schemas"][ref]["properties"]["file"] == {
        "type": "string",
        "format": "binary",
    }
    assert "[Back to PerfHub](/)" in schema["info"]["description"]
