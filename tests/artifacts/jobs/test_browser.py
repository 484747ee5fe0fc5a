"""The newcomer's case in a real browser: five files dropped at once under one label. The
H100 runs keep their own stack (no NCCL_* environment of the unrelated V100 log), their run
page says where each fact came from, and the V100 log's job page lists its own evidence."""

from __future__ import annotations

import pytest

from artifacts.models import Artifact, BenchmarkRun
from baselines.models import RunContext
from tests.samples import sample
from tests.signin import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FILES = [
    "nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log",
    "nccl_tests/xxrjun_singlenode_G8_h100.log",
    "nccl_debug/ssbandjl_2node_4gpu_NCCL_DEBUG_TRACE_roce.log",
    "torch_profiler/hta_nccl_data_world2_rank0.json.gz",
    "nccl_tests/xxrjun_smoke_N2_G1.log",
]


@pytest.fixture
def newcomer():  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username="newcomer", password="pw-newcomer")
    user.groups.add(Group.objects.get_or_create(name="editor")[0])
    return user


def test_one_label_lends_no_stack_between_unrelated_uploads(
    live_server, eager_tasks, newcomer, browser_page
):  # type: ignore[no-untyped-def]
    # Eager tasks register on first use; five uploads at once would race to import them in
    # the live server's threads (perfhub.dispatch.send), so register them here first.
    from perfhub.celery import app

    app.loader.import_default_modules()
    page = browser_page
    sign_in(page, live_server.url, "newcomer")
    page.fill("#upload-label", "nightly")
    page.set_input_files("#upload-input", [str(sample(f)) for f in FILES])
    page.wait_for_function(
        "document.querySelectorAll('#upload-list .state.status-parsed, "
        "#upload-list .state.status-failed').length >= 5",
        timeout=120_000,
    )
    v100 = Artifact.objects.get(original_name=FILES[2].split("/")[1])
    h100 = Artifact.objects.get(original_name=FILES[0].split("/")[1])
    run = BenchmarkRun.objects.filter(artifact=h100).order_by("index").first()
    context = RunContext.objects.select_related("stack").get(run=run)
    assert context.stack.nccl_env == {} and context.stack.nccl == "2.29.2"

    page.goto(f"{live_server.url}/runs/{run.pk}/")
    page.wait_for_selector("#provenance-table")
    table = page.inner_text("#provenance-table")
    assert "2.29.2" in table and "the run's own output" in table
    assert f"#{v100.pk}" not in table and "NCCL_IB_DISABLE" not in table

    page.goto(f"{live_server.url}/artifacts/{v100.pk}/")
    job_link = page.locator(f"a[href='/jobs/{v100.job_membership.job_id}/']")
    job_link.click()
    page.wait_for_selector("#job-members")
    members = page.inner_text("#job-members")
    assert v100.original_name in members and h100.original_name not in members
