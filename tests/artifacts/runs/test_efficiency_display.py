"""The efficiency of a run on its page and in the API (GET /api/v1/runs/{id}/efficiency/)."""

from __future__ import annotations

import json

import pytest

from tests.baselines.limits.test_golden_efficiency import load

pytestmark = pytest.mark.django_db


def test_api_returns_the_contract_shape(viewer_api):  # type: ignore[no-untyped-def]
    run = load("nccl_tests/xxrjun_singlenode_G8_h100.log").runs.get(collective="all_gather")
    response = viewer_api.get(f"/api/v1/runs/{run.pk}/efficiency/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert {"peak_busbw_gbps", "bottleneck", "model", "sizes"} <= set(body)
    assert (body["peak_busbw_gbps"], body["bottleneck"]) == (450.0, "nvlink")
    assert body["sizes"][-1] == {
        "size_bytes": 17179869184,
        "busbw_gbps": 361.86,
        "pct_of_peak": 80.4,
    }
    inputs = body["model"]
    assert all({"value", "unit", "source"} <= set(v) for v in inputs.values())
    assert [inputs[k]["value"] for k in ("ranks", "nodes", "gpus_per_node_used")] == [8, 1, 8]


def test_api_says_why_when_the_hardware_is_unknown(viewer_api):  # type: ignore[no-untyped-def]
    artifact = load(
        "nccl_tests/coreweave_readme_gb200_nvl72_single_rack_fragment.txt",
        metadata={"profile": "mystery"},
    )
    response = viewer_api.get(f"/api/v1/runs/{artifact.runs.first().pk}/efficiency/")
    assert response.status_code == 404
    assert "limits unknown" in response.json()["detail"]


def test_api_needs_a_login(client):  # type: ignore[no-untyped-def]
    run = load("nccl_tests/xxrjun_singlenode_G8_h100.log").runs.first()
    assert client.get(f"/api/v1/runs/{run.pk}/efficiency/").status_code in (401, 403)


def test_the_endpoint_is_in_the_openapi_schema(viewer_api):  # type: ignore[no-untyped-def]
    response = viewer_api.get("/api/v1/schema/", {"format": "json"})
    schema = json.loads(response.content)
    operation = schema["paths"]["/api/v1/runs/{id}/efficiency/"]["get"]
    assert {"200", "404"} <= set(operation["responses"])


def test_run_page_shows_the_peak_line_and_a_percent_column(viewer_client):  # type: ignore[no-untyped-def]
    run = load("nccl_tests/xxrjun_singlenode_G8_h100.log").runs.get(collective="alltoall")
    page = viewer_client.get(f"/runs/{run.pk}/").content.decode()
    assert "Against the hardware" in page and "% of peak" in page
    assert "77.3 %" in page  # 348.03 / 450
    # the chart's reference line (plotly writes "/" as \\u002f)
    assert "peak 450 GB\\\\u002fs (intra-node NVLink" in page
    assert "H100 datasheet" in page
