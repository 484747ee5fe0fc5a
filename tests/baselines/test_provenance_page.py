"""The run page names every fact's source and why it applies; editors detach a wrong one."""

from __future__ import annotations

import pytest
from django.test import Client

from baselines.models import FactDetachment, RunContext
from tests.artifacts.jobs.evidence import nccl_debug_text, nccl_tests_text, upload

pytestmark = pytest.mark.django_db
AT = "2024-10-18T10:00:00Z"


def _run_and_log():  # type: ignore[no-untyped-def]
    run_file = upload(
        nccl_tests_text(["p1", "p2"]), "r.txt", metadata={"job": "77", "captured_at": AT}
    )
    log = upload(nccl_debug_text(["p1", "p2"], hca="mlx5_8"), "l.log", metadata={"job": "77"})
    return run_file.runs.get(), log


def test_the_run_page_shows_source_line_and_scope_of_each_fact(viewer_client) -> None:
    run, log = _run_and_log()
    page = viewer_client.get(f"/runs/{run.pk}/").content.decode()
    assert "Where the facts came from" in page
    assert f"nccl_debug artifact #{log.pk}" in page
    assert f"same job #{log.job_membership.job_id}" in page
    assert "NCCL_IB_HCA" in page and "mlx5_8" in page
    assert ">detach<" not in page  # viewers read


def test_an_editor_detaches_a_source_and_the_run_is_refiled(editor_client, viewer) -> None:
    run, log = _run_and_log()
    assert ">detach<" in editor_client.get(f"/runs/{run.pk}/").content.decode()
    other = Client()
    other.force_login(viewer)
    other.post(f"/baselines/runs/{run.pk}/detach/", {"source": log.pk, "key": "NCCL_IB_HCA"})
    assert not FactDetachment.objects.exists()  # viewers change nothing
    response = editor_client.post(
        f"/baselines/runs/{run.pk}/detach/", {"source": log.pk, "key": "NCCL_IB_HCA"}
    )
    assert response.status_code == 302
    context = RunContext.objects.select_related("stack").get(run=run)
    assert context.stack.nccl_env == {}
    page = editor_client.get(f"/runs/{run.pk}/").content.decode()
    assert "Detached by a person" in page and "re-attach" in page
    detachment = FactDetachment.objects.get()
    editor_client.post(f"/baselines/detachments/{detachment.pk}/reattach/")
    context.refresh_from_db()
    assert context.stack.nccl_env == {"NCCL_IB_HCA": "mlx5_8"}


def test_the_comparison_page_and_api_name_the_sources(viewer_client) -> None:
    run, log = _run_and_log()
    page = viewer_client.get(f"/baselines/runs/{run.pk}/comparison/").content.decode()
    assert "Where the facts came from" in page and f"nccl_debug artifact #{log.pk}" in page
    # the API answers 404 without a reference, so give it one: a second run of the job
    second = upload(
        nccl_tests_text(["p1", "p2"], tag="again"),
        "r2.txt",
        metadata={"job": "77", "captured_at": "2024-10-18T10:05:00Z"},
    ).runs.get()
    body = viewer_client.get(f"/api/v1/runs/{second.pk}/comparison/").json()
    used = {e["key"]: e for e in body["provenance"] if e["used"]}
    assert used["NCCL_IB_HCA"]["artifact"] == log.pk
    assert used["NCCL_IB_HCA"]["why"].startswith("same job #")


def test_the_series_page_says_where_its_stacks_versions_came_from(viewer_client) -> None:
    from baselines.models import Series

    run, log = _run_and_log()
    series = Series.objects.filter(points__run=run).first()
    page = viewer_client.get(f"/baselines/series/{series.pk}/").content.decode()
    assert "Where its stacks" in page
    assert f"NCCL_IB_HCA mlx5_8 from nccl_debug artifact #{log.pk} (same job #" in page
