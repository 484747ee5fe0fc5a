"""Nsight API: token/session auth (401), read-only for everyone (403 for viewers' writes),
the numbers of the rows, pagination, and the OpenAPI schema."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.artifacts.nsight.helpers import NCU_TORCH, NO_CUDA, parsed, parsed_bytes, parsed_path
from tests.artifacts.nsight.parsers import nsys_synthetic
from tests.artifacts.nsight.parsers.test_ncu_csv import NEW_DETAILS

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(tmp_path):
    return parsed_path(nsys_synthetic.build(tmp_path / "job.sqlite"))


@pytest.mark.parametrize(
    "url",
    ["/api/v1/nsight/systems/1/", "/api/v1/nsight/compute/1/", "/api/v1/nsight/compute/1/kernels/"],
)
def test_anonymous_calls_get_401(url):
    assert APIClient().get(url).status_code == 401


def test_writes_are_403_for_viewers_and_not_allowed_for_editors(viewer_api, editor_api, job):
    url = f"/api/v1/nsight/systems/{job.pk}/"
    assert viewer_api.post(url, {}).status_code == 403
    assert viewer_api.delete(url).status_code == 403
    assert editor_api.post(url, {}).status_code == 405


def test_systems_summary_holds_the_rows(viewer_api, job):
    body = viewer_api.get(f"/api/v1/nsight/systems/{job.pk}/").json()
    assert (body["kind"], body["status"], body["driver_version"]) == (
        "nsys_sqlite",
        "parsed",
        "550.54.15",
    )
    nccl, gemm = body["kernels"]
    assert nccl["is_nccl"] and (gemm["count"], gemm["total_ns"], gemm["med_ns"]) == (5, 1600, 300)
    assert gemm["avg_launch_ns"] == 100 and gemm["launch_api"] == "cudaLaunchKernel"
    assert [m["name"] for m in body["memory"]][-1] == "[CUDA memset]"
    assert {a["name"] for a in body["cuda_api"]} >= {"cudaLaunchKernel", "cudaMalloc"}
    assert body["os_runtime"][0]["name"] == "ioctl"
    assert {r["style"] for r in body["ranges"]} == {"PushPop", "StartEnd"}
    assert [u["device_id"] for u in body["utilisation"]] == [0, 1]
    assert len(body["utilisation"][0]["busy_pct"]) == 100
    assert body["nccl_pct"] == pytest.approx(100 * 1700 / 3300)


def test_systems_summary_of_an_export_without_cuda(viewer_api):
    artifact = parsed(NO_CUDA)
    body = viewer_api.get(f"/api/v1/nsight/systems/{artifact.pk}/").json()
    assert body["kernels"] == [] and any("no CUDA activity" in w for w in body["warnings"])


def test_wrong_kind_is_404(viewer_api, job):
    assert viewer_api.get(f"/api/v1/nsight/compute/{job.pk}/").status_code == 404
    assert viewer_api.get("/api/v1/nsight/systems/999999/").status_code == 404


def test_compute_summary_and_paginated_kernels(viewer_api):
    artifact = parsed(NCU_TORCH)
    summary = viewer_api.get(f"/api/v1/nsight/compute/{artifact.pk}/").json()
    assert summary["kernels"] == 14 and summary["summary"]["page"] == "details"
    assert summary["kernels_url"].endswith(f"/api/v1/nsight/compute/{artifact.pk}/kernels/")
    page = viewer_api.get(summary["kernels_url"]).json()
    assert page["count"] == 14
    first = page["results"][0]
    assert (first["duration_ns"], first["sm_throughput_pct"], first["grid"]) == (5824, 12.14, "117")
    assert first["metrics"][2] == [
        "Command line profiler metrics",
        "gpu__time_duration.sum",
        "nsecond",
        5824,
    ]
    sgemm = viewer_api.get(summary["kernels_url"], {"q": "sgemm"}).json()
    assert sgemm["count"] == 1 and sgemm["results"][0]["registers_per_thread"] == 86


def test_compute_kernels_carry_rule_messages(viewer_api, tmp_path):
    artifact = parsed_bytes(NEW_DETAILS.encode(), "details.csv", tmp_path)
    kernels = viewer_api.get(f"/api/v1/nsight/compute/{artifact.pk}/kernels/").json()["results"]
    [launch] = kernels[1]["rules"]
    assert (launch["type"], launch["name"], launch["speedup_pct"]) == (
        "WRN",
        "LaunchConfiguration",
        93.94,
    )


def test_endpoints_are_in_the_openapi_schema(viewer_api):
    schema = viewer_api.get("/api/v1/schema/", {"format": "json"}).json()
    for path in (
        "/api/v1/nsight/systems/{id}/",
        "/api/v1/nsight/compute/{id}/",
        "/api/v1/nsight/compute/{id}/kernels/",
    ):
        assert path in schema["paths"], path
