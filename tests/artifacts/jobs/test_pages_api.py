"""Job pages and API: behind login, editors change membership, facts show agreement."""

from __future__ import annotations

import io

import pytest

from artifacts.jobs.models import Job, JobMember
from tests.artifacts.jobs.evidence import nccl_debug_text, nccl_tests_text, upload

pytestmark = pytest.mark.django_db
AT = "2024-10-18T10:00:00Z"


def _job_with_disagreeing_logs() -> Job:
    upload(nccl_tests_text(["n1", "n2"]), "r.txt", metadata={"job": "k1", "captured_at": AT})
    upload(nccl_debug_text(["n1", "n2"], hca="mlx5_0"), "a.log", metadata={"job": "k1"})
    upload(nccl_debug_text(["n1", "n2"], hca="mlx5_9"), "b.log", metadata={"job": "k1"})
    return Job.objects.get(key="id:k1")


def test_pages_and_api_need_a_login(client) -> None:
    job = _job_with_disagreeing_logs()
    assert client.get("/jobs/").status_code == 302
    assert client.get(f"/jobs/{job.pk}/").status_code == 302
    assert client.get("/api/v1/jobs/").status_code == 401


def test_the_job_page_lists_evidence_hosts_and_where_facts_disagree(viewer_client) -> None:
    job = _job_with_disagreeing_logs()
    page = viewer_client.get(f"/jobs/{job.pk}/").content.decode()
    assert "r.txt" in page and "a.log" in page and "b.log" in page
    assert "states job id &#x27;k1&#x27;" in page
    assert "n1, n2" in page
    assert "nccl.env.NCCL_IB_HCA" in page and "mlx5_0" in page and "mlx5_9" in page
    assert "<b>disagree</b>" in page
    assert "take out" not in page  # viewers read
    assert "job k1" in viewer_client.get("/jobs/").content.decode()


def test_the_api_gives_members_and_facts_and_editors_move_files(
    viewer_api, editor_api, eager_tasks
) -> None:
    job = _job_with_disagreeing_logs()
    body = viewer_api.get(f"/api/v1/jobs/{job.pk}/").json()
    assert {m["file"] for m in body["members"]} == {"r.txt", "a.log", "b.log"}
    hca = next(f for f in body["facts"] if f["name"] == "nccl.env.NCCL_IB_HCA")
    assert hca["agree"] is False and {v["value"] for v in hca["values"]} == {"mlx5_0", "mlx5_9"}
    wrong = JobMember.objects.get(artifact__original_name="b.log").artifact_id
    denied = viewer_api.post(
        f"/api/v1/jobs/{job.pk}/members/", {"artifact": wrong, "action": "remove"}
    )
    assert denied.status_code == 403
    moved = editor_api.post(
        f"/api/v1/jobs/{job.pk}/members/", {"artifact": wrong, "action": "remove"}, format="json"
    )
    assert moved.status_code == 200, moved.content
    member = JobMember.objects.get(artifact_id=wrong)
    assert member.pinned and member.job_id != job.pk
    facts = viewer_api.get(f"/api/v1/jobs/{job.pk}/").json()["facts"]
    assert next(f for f in facts if f["name"] == "nccl.env.NCCL_IB_HCA")["agree"] is True


def test_the_upload_api_and_the_ingest_command_take_a_job(editor_api, tmp_path) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command

    from artifacts.models import Artifact

    upload_file = SimpleUploadedFile("api.txt", nccl_tests_text(["q1"], tag="api"))
    response = editor_api.post("/api/v1/artifacts/", {"file": upload_file, "job": "ci-55"})
    assert response.status_code == 201, response.content
    assert Artifact.objects.get(pk=response.json()["id"]).metadata["job"] == "ci-55"
    path = tmp_path / "cli.txt"
    path.write_bytes(nccl_tests_text(["q1"], tag="cli"))
    call_command("ingest", str(path), "--job", "ci-55", stdout=io.StringIO())
    assert Artifact.objects.get(original_name="cli.txt").metadata["job"] == "ci-55"
