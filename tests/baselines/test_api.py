"""Baselines REST API: reads for everyone signed in, writes for editors, the run comparison."""

import pytest
from rest_framework.test import APIClient

from artifacts.models import BenchmarkRun
from baselines.models import Alert, AlertSummary, Baseline, HardwareProfile, HostProfileMapping
from tests.baselines.baseline_fixtures import load_demo

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024


@pytest.fixture
def h200(eager_tasks, django_capture_on_commit_callbacks):
    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"])
    return HardwareProfile.objects.get(slug="h200-roce-2x8")


LISTS = [
    "/api/v1/profiles/",
    "/api/v1/host-mappings/",
    "/api/v1/stacks/",
    "/api/v1/series/",
    "/api/v1/baselines/",
    "/api/v1/alerts/",
    "/api/v1/alert-summaries/",
    "/api/v1/subscriptions/",
]


@pytest.mark.parametrize("url", [*LISTS, "/api/v1/runs/1/comparison/"])
def test_anonymous_calls_get_401(url):
    assert APIClient().get(url).status_code == 401


@pytest.mark.parametrize("url", LISTS)
def test_viewers_read_every_list(viewer_api, url):
    assert viewer_api.get(url).status_code == 200


def test_viewers_cannot_write(viewer_api, h200):
    alert = Alert.objects.first()
    assert viewer_api.patch(f"/api/v1/alerts/{alert.pk}/", {"status": "fixed"}).status_code == 403
    created = viewer_api.post("/api/v1/host-mappings/", {"pattern": "x*", "profile": h200.slug})
    assert created.status_code == 403
    run = BenchmarkRun.objects.first()
    assert viewer_api.post("/api/v1/baselines/", {"runs": [run.pk]}).status_code == 403
    alert.refresh_from_db()
    assert alert.status == "untriaged" and not HostProfileMapping.objects.exists()


def test_alerts_filter_and_triage(editor_api, editor, h200):
    listed = editor_api.get("/api/v1/alerts/", {"profile": h200.slug, "kind": "regression"})
    body = listed.json()
    assert body["count"] == Alert.objects.count() >= 6
    first = body["results"][0]
    assert first["series"]["collective"] == "all_reduce" and first["kind"] == "regression"
    assert first["low_pct"] < first["magnitude_pct"] < first["high_pct"] < 0
    assert editor_api.get("/api/v1/alerts/", {"kind": "improvement"}).json()["count"] == 0
    response = editor_api.patch(
        f"/api/v1/alerts/{first['id']}/",
        {"status": "acknowledged", "assignee": editor.username, "notes": "vendor case 123",
         "link_url": "https://vendor.example/case/123", "link_label": "case 123"},
        format="json",
    )  # fmt: skip
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "acknowledged"
    alert = Alert.objects.get(pk=first["id"])
    assert (alert.assignee, alert.link_label) == (editor, "case 123")
    bad = editor_api.patch(f"/api/v1/alerts/{alert.pk}/", {"status": "solved"}, format="json")
    assert bad.status_code == 400 and "status" in bad.json()
    assert editor_api.get("/api/v1/alerts/", {"status": "untriaged"}).json()["count"] == (
        Alert.objects.count() - 1
    )


def test_run_comparison_endpoint_gives_per_size_deltas_verdict_and_stack_diff(editor_api, h200):
    run = BenchmarkRun.objects.filter(nccl_version="2.23.4").order_by("measured_at").first()
    body = editor_api.get(f"/api/v1/runs/{run.pk}/comparison/").json()
    assert body["run"] == run.pk and body["stored"] is True and body["profile"] == h200.slug
    assert body["verdict"] == "regressed" and body["reference"] == "recent"
    big = next(s for s in body["sizes"] if s["size_bytes"] == 1024 * MiB)
    assert big["change"] == "regressed" and big["high_pct"] < 0 < big["n_reference"]
    small = next(s for s in body["sizes"] if s["size_bytes"] == 1 * MiB)
    assert small["change"] == "unchanged"
    assert body["ranges"][0]["direction"] == "regressed"
    assert body["ranges"][0]["high_bytes"] == 8 * 1024 * MiB
    changed = {c["name"]: (c["before"], c["after"]) for c in body["what_changed"]}
    assert changed["nccl"] == ("2.21.5", "2.23.4") and changed["cuda"] == ("12.4", "12.6")
    first = BenchmarkRun.objects.order_by("measured_at").first()
    assert editor_api.get(f"/api/v1/runs/{first.pk}/comparison/").status_code == 404


def test_editors_pin_a_baseline_from_runs_and_bad_sets_are_400(editor_api, h200):
    runs = list(BenchmarkRun.objects.filter(nccl_version="2.21.5").values_list("pk", flat=True))
    response = editor_api.post(
        "/api/v1/baselines/",
        {"name": "2.21.5 ref", "runs": runs, "tolerance_pct": 2},
        format="json",
    )
    assert response.status_code == 201, response.content
    baseline = Baseline.objects.get()
    assert baseline.profile == h200 and baseline.stack.nccl == "2.21.5"
    assert sorted(response.json()["runs"]) == sorted(runs)
    from artifacts.models import Artifact

    other = Artifact.objects.create(sha256="0" * 64, size=1, original_name="x")
    foreign = BenchmarkRun.objects.create(artifact=other, index=0, measured_at=baseline.created_at)
    mixed = editor_api.post("/api/v1/baselines/", {"runs": [runs[0], foreign.pk]}, format="json")
    assert mixed.status_code == 400 and "not filed" in str(mixed.json())
    patched = editor_api.patch(
        f"/api/v1/baselines/{baseline.pk}/", {"active": False}, format="json"
    )
    assert patched.status_code == 200 and patched.json()["active"] is False


def test_series_and_points(editor_api, h200):
    listed = editor_api.get("/api/v1/series/", {"profile": h200.slug, "size_bytes": 1024 * MiB})
    (series,) = listed.json()["results"]
    points = editor_api.get(f"/api/v1/series/{series['id']}/points/").json()
    assert len(points) == 6 and points[0]["nccl"] == "2.21.5" and points[-1]["nccl"] == "2.23.4"
    assert points[0]["measured_at"] < points[-1]["measured_at"]


def test_summaries_and_profiles_read(editor_api, h200):
    (summary,) = editor_api.get("/api/v1/alert-summaries/").json()["results"]
    assert summary["title"] == AlertSummary.objects.get().title
    assert "?summary=" in summary["alerts"]
    profile = editor_api.get(f"/api/v1/profiles/{h200.pk}/").json()
    assert profile["slug"] == h200.slug and profile["gpu_model"] == "H200"
    updated = editor_api.patch(
        f"/api/v1/profiles/{h200.pk}/", {"fabric": "roce_v2", "nic_model": "ConnectX-7"},
        format="json",
    )  # fmt: skip
    assert updated.status_code == 200 and updated.json()["fabric"] == "roce_v2"


def test_stacks_are_listed_in_version_order_and_edits_cannot_duplicate(editor_api, h200):
    stacks = editor_api.get("/api/v1/stacks/").json()["results"]
    assert [s["nccl"] for s in stacks] == ["2.21.5", "2.23.4"]
    clash = editor_api.patch(
        f"/api/v1/stacks/{stacks[1]['id']}/",
        {"nccl": "2.21.5", "cuda": "12.4", "nccl_tests": "2.17.6"},
        format="json",
    )
    assert clash.status_code == 400 and "identical stack" in str(clash.json())
    env = editor_api.patch(
        f"/api/v1/stacks/{stacks[1]['id']}/", {"nccl_env": {"NCCL_ALGO": "Ring"}}, format="json"
    )
    assert env.status_code == 200 and env.json()["nccl_env"] == {"NCCL_ALGO": "Ring"}
    bad = editor_api.patch(
        f"/api/v1/stacks/{stacks[1]['id']}/", {"nccl_env": {"PATH": "/bin"}}, format="json"
    )
    assert bad.status_code == 400


def test_the_openapi_schema_lists_the_baselines_endpoints(editor_api):
    paths = editor_api.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    for path in [
        "/api/v1/profiles/", "/api/v1/stacks/", "/api/v1/series/", "/api/v1/series/{id}/points/",
        "/api/v1/baselines/", "/api/v1/alerts/", "/api/v1/alerts/{id}/",
        "/api/v1/alert-summaries/", "/api/v1/subscriptions/", "/api/v1/host-mappings/",
        "/api/v1/runs/{id}/comparison/",
    ]:  # fmt: skip
        assert path in paths, path
    assert "patch" in paths["/api/v1/alerts/{id}/"]
