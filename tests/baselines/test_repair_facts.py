"""The repair: runs filed when facts travelled by label are derived again and re-filed."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client

from artifacts.jobs.models import JobMember
from baselines.filing import stack_get_or_create
from baselines.models import RunContext, SeriesPoint
from baselines.provenance.repair import facts_repair
from tests.artifacts.jobs.evidence import nccl_debug_text, nccl_tests_text, upload

pytestmark = pytest.mark.django_db
AT = "2024-10-18T10:00:00Z"


def _as_filed_by_label_borrowing():  # type: ignore[no-untyped-def]
    """Two unrelated uploads of one label, filed the old way: the run carries the log's
    NCCL_* environment and its automatic profile learned the log's RoCE fabric."""
    run_file = upload(nccl_tests_text(["ib-n1", "ib-n2"]), "r.txt", label="nightly",
                      metadata={"captured_at": AT})  # fmt: skip
    log = upload(nccl_debug_text(["v-a", "v-b"], hca="mlx5_3"), "v.log", label="nightly",
                 metadata={"captured_at": AT})  # fmt: skip
    context = RunContext.objects.select_related("profile", "stack").get(run__artifact=run_file)
    own = context.stack
    borrowed = stack_get_or_create(versions=own.versions(), nccl_env={"NCCL_IB_HCA": "mlx5_3"})
    context.stack = borrowed
    context.stack_sources = {"nccl": f"nccl_debug artifact #{log.pk}"}
    context.save()
    SeriesPoint.objects.filter(run=context.run).update(stack=borrowed)
    profile = context.profile
    profile.fabric = "roce_v2"
    profile.save()
    # ... and before jobs existed.
    JobMember.objects.all().delete()
    return context, own


def test_the_repair_gives_runs_back_their_own_stack_and_profiles_their_fabric() -> None:
    context, own = _as_filed_by_label_borrowing()
    report = facts_repair()
    context.refresh_from_db()
    assert context.stack_id == own.pk and context.stack.nccl_env == {}
    assert context.profile.fabric == "other"  # nothing of its hosts says what it is
    assert SeriesPoint.objects.filter(run=context.run, stack=own).exists()
    text = "\n".join(report.lines())
    assert f"run {context.run_id}: stack" in text and "NCCL_IB_HCA=mlx5_3" in text
    assert "fabric roce_v2 -> other" in text
    assert report.jobs_assigned == 2 and JobMember.objects.count() == 2
    assert facts_repair().moved == []  # idempotent


def test_the_dry_run_reports_and_changes_nothing() -> None:
    context, _ = _as_filed_by_label_borrowing()
    out = io.StringIO()
    call_command("repair_facts", "--dry-run", stdout=out, stderr=io.StringIO())
    assert f"run {context.run_id}: stack" in out.getvalue()
    assert "1 would move" in out.getvalue()
    before = context.stack_id
    context.refresh_from_db()
    assert context.stack_id == before and context.profile.fabric == "roce_v2"
    assert not JobMember.objects.exists()


def test_the_suspects_are_runs_that_cite_other_artifacts_or_learned_profiles() -> None:
    context, _ = _as_filed_by_label_borrowing()
    report = facts_repair(suspects_only=True)
    assert [m.run_id for m in report.moved] == [context.run_id]


def test_the_editors_button_queues_the_repair(
    editor_client, viewer, eager_tasks, django_capture_on_commit_callbacks
) -> None:
    context, own = _as_filed_by_label_borrowing()
    viewer_client = Client()  # editor_client is the default client, logged in as the editor
    viewer_client.force_login(viewer)
    assert "Repair stacks and profiles" not in viewer_client.get("/baselines/").content.decode()
    viewer_client.post("/baselines/repair/")
    context.refresh_from_db()
    assert context.stack_id != own.pk  # viewers change nothing
    assert "Repair stacks and profiles" in editor_client.get("/baselines/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        editor_client.post("/baselines/repair/")
    context.refresh_from_db()
    assert context.stack_id == own.pk
