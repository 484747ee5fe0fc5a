"""Traces API: list/detail, jobs, job view with stragglers, diff, grouping; 401/403; schema."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from artifacts.models import TraceSummary
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from tests.artifacts.traces.factory import ingest_job
from tests.samples import sample

pytestmark = pytest.mark.django_db

NCCL = "torch_profiler/hta_nccl_data_world2_rank0.json.gz"


def load_nccl():  # type: ignore[no-untyped-def]
    path = sample(NCCL)
    with path.open("rb") as stream:
        artifact = artifact_ingest(stream=stream, name=path.name, label="exp").artifact
    return artifact_parse(artifact_id=artifact.pk).trace


@pytest.mark.parametrize(
    "url",
    ["/api/v1/traces/", "/api/v1/traces/1/", "/api/v1/traces/jobs/",
     "/api/v1/traces/job/?job=x", "/api/v1/traces/diff/?a=1&b=2"],
)  # fmt: skip
def test_anonymous_calls_get_401(url: str) -> None:
    assert APIClient().get(url).status_code == 401
    assert APIClient().post("/api/v1/traces/assign-job/", {}).status_code == 401


def test_list_and_detail(viewer_api) -> None:  # type: ignore[no-untyped-def]
    trace = load_nccl()
    ingest_job(3, label="job-a")
    listing = viewer_api.get("/api/v1/traces/", {"job": "exp"}).json()
    assert listing["count"] == 1
    row = listing["results"][0]
    assert row["id"] == trace.pk and row["rank"] == 0 and row["world_size"] == 2
    assert row["compute_pct"] == trace.compute_pct and row["page_url"].endswith(
        f"/traces/{trace.pk}/"
    )
    assert viewer_api.get("/api/v1/traces/", {"rank": 2}).json()["count"] == 1
    detail = viewer_api.get(f"/api/v1/traces/{trace.pk}/").json()
    assert detail["breakdowns"]["trace"]["span_us"] == trace.span_us
    assert detail["breakdowns"]["steps"]["idle_us"] == trace.steps_idle_us
    assert detail["breakdowns"]["steps"]["window"] == "steps"
    assert len(detail["kernels"]) == trace.kernels.count()
    assert detail["kernels"][0]["sum_us"] >= detail["kernels"][1]["sum_us"]
    assert [s["step"] for s in detail["steps"]] == list(trace.steps.values_list("step", flat=True))
    assert detail["collectives"][0]["name"] in {"allreduce", "broadcast"}
    assert detail["devices"][0]["name"] == "NVIDIA A100-PG509-200"
    assert viewer_api.get("/api/v1/traces/999999/").status_code == 404


def test_jobs_and_job_view_with_stragglers(viewer_api) -> None:  # type: ignore[no-untyped-def]
    ingest_job(6, slowdowns=[1.0, 1.0, 1.0, 1.0, 1.5, 1.0], label="job-a")
    jobs = viewer_api.get("/api/v1/traces/jobs/").json()
    assert jobs["count"] == 1 and jobs["results"][0]["label"] == "job-a"
    assert jobs["results"][0]["ranks"] == 6 and jobs["results"][0]["query"] == "job=job-a"
    assert viewer_api.get("/api/v1/traces/jobs/", {"q": "JOB-A"}).json()["count"] == 1
    assert viewer_api.get("/api/v1/traces/jobs/", {"kind": "batch"}).json()["count"] == 0
    assert viewer_api.get("/api/v1/traces/jobs/", {"min_ranks": "7"}).json()["count"] == 0
    body = viewer_api.get("/api/v1/traces/job/", {"job": "job-a", "window": "steps"}).json()
    assert body["window"] == "steps" and len(body["ranks"]) == 6
    assert {(s["rank"], s["signal"]) for s in body["stragglers"]} == {
        (4, "step_compute"),
        (4, "collective_lateness"),
    }
    assert body["stragglers"][0]["host"] == "node-0"
    slow = body["ranks"][4]
    assert slow["straggler"] == "step_compute;collective_lateness" and slow["comm_wait_us"] == 0
    assert body["ranks"][0]["comm_wait_us"] == 4 * 2000.0
    bad = viewer_api.get("/api/v1/traces/job/", {"job": "nope"})
    assert bad.status_code == 400 and "no trace has the job label" in bad.json()["detail"]


def test_diff(viewer_api) -> None:  # type: ignore[no-untyped-def]
    a = ingest_job(3, label="a")
    b = ingest_job(3, label="b", slowdowns=[1.5, 1.5, 1.5])
    body = viewer_api.get(
        "/api/v1/traces/diff/", {"a": a[0].pk, "b": b[0].pk, "per": "trace", "top": 1}
    ).json()
    assert body["per_step"] is False and len(body["kernels"]) == 1
    gemm = body["kernels"][0]
    assert gemm["name"] == "sm90_xmma_gemm_bf16bf16_bf16f32" and gemm["change"] == "slower"
    assert gemm["delta_us"] == 4 * 2 * 1000.0  # 8 GEMMs, each 1 ms longer
    compute = next(r for r in body["breakdown"] if r["metric"] == "compute_us")
    assert compute["delta_pct"] == 50.0
    jobs = viewer_api.get("/api/v1/traces/diff/", {"a_job": "a", "b_job": "b"}).json()
    assert jobs["per_step"] is True and len(jobs["a"]["trace_ids"]) == 3
    assert viewer_api.get("/api/v1/traces/diff/", {"a": a[0].pk}).status_code == 400


def test_grouping_needs_the_editor_role(viewer_api, editor_api) -> None:  # type: ignore[no-untyped-def]
    arts = ingest_job(3, label="")
    payload = {"traces": [a.pk for a in arts], "job": "run-9"}
    assert viewer_api.post("/api/v1/traces/assign-job/", payload, format="json").status_code == 403
    response = editor_api.post("/api/v1/traces/assign-job/", payload, format="json")
    assert response.status_code == 200 and response.json() == {"changed": 3, "job": "run-9"}
    assert TraceSummary.objects.filter(job_label="run-9").count() == 3
    missing = editor_api.post(
        "/api/v1/traces/assign-job/", {"traces": [999999], "job": "x"}, format="json"
    )
    assert missing.status_code == 400 and "no trace with id 999999" in missing.json()["detail"]
    ungroup = editor_api.post(
        "/api/v1/traces/assign-job/", {"traces": [arts[0].pk], "job": ""}, format="json"
    )
    assert ungroup.status_code == 200
    assert TraceSummary.objects.get(pk=arts[0].pk).job_label == ""


def test_writes_other_than_grouping_are_not_allowed(editor_api) -> None:  # type: ignore[no-untyped-def]
    trace = load_nccl()
    assert editor_api.delete(f"/api/v1/traces/{trace.pk}/").status_code == 405
    assert editor_api.post("/api/v1/traces/", {}).status_code == 405


def test_openapi_schema_lists_the_trace_endpoints(editor_api) -> None:  # type: ignore[no-untyped-def]
    schema = editor_api.get("/api/v1/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    for name in ("", "{id}/", "jobs/", "job/", "diff/", "assign-job/"):
        assert f"/api/v1/traces/{name}" in paths, name
    job_params = {p["name"] for p in paths["/api/v1/traces/job/"]["get"]["parameters"]}
    assert {"job", "ids", "window"} <= job_params
    components = schema["components"]["schemas"]
    assert "straggler" in components["JobRank"]["properties"]
    assert "breakdowns" in components["TraceDetail"]["properties"]
