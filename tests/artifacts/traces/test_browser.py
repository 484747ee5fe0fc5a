"""Traces in a real browser: upload a trace, open its trace page from the artifact page, see
the breakdown chart and switch it to µs; open a job with a straggler and see it highlighted."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.artifacts.traces.factory import ingest_job
from tests.samples import sample
from tests.signin import sign_in

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _editor():  # type: ignore[no-untyped-def]
    """An editor, creating the group when an earlier transactional test flushed the rows of
    the roles migration (the shared ``editor`` fixture expects them)."""
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username="eddie", password="pw-eddie")
    user.groups.add(Group.objects.get_or_create(name="editor")[0])
    return user


@pytest.fixture
def signed_in(live_server):  # type: ignore[no-untyped-def]
    if not os.path.exists(CHROMIUM):
        pytest.skip("no chromium at /usr/bin/chromium (apt-get install chromium); CI installs it")
    playwright_api = pytest.importorskip("playwright.sync_api")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    _editor()
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(30_000)
        sign_in(page, live_server.url, "eddie")
        yield page
        browser.close()


def test_upload_a_trace_and_read_its_breakdown(signed_in, eager_tasks) -> None:  # type: ignore[no-untyped-def]
    page = signed_in
    page.set_input_files(
        "#upload-input", str(sample("torch_profiler/hta_nccl_data_world2_rank0.json.gz"))
    )
    page.wait_for_selector("#upload-list .state.status-parsed")
    page.click("#upload-list a")  # the artifact page
    page.click("#trace-panel a.button >> nth=0")  # "Open the trace page"
    chart = page.locator("#breakdown [data-figure]")
    page.wait_for_selector("#breakdown [data-figure][data-rendered=true]")
    assert chart.locator(".barlayer .trace").count() == 4  # the visible % bars
    page.click("#breakdown .updatemenu-button >> text=µs")
    page.wait_for_function("document.querySelector('#breakdown .xtitle').textContent === 'µs'")
    page.click("#kernels a >> text=/^communication/")
    assert set(page.locator("#kernel-table tbody td:nth-child(2)").all_inner_texts()) == {
        "communication"
    }


def test_the_job_page_highlights_the_straggler(signed_in, live_server) -> None:  # type: ignore[no-untyped-def]
    ingest_job(5, slowdowns=[1.0, 1.0, 1.0, 1.4, 1.0], label="browser-job")
    page = signed_in
    page.goto(f"{live_server.url}/traces/jobs/")
    page.click("text=browser-job")
    page.wait_for_selector("[data-figure='job-steps'][data-rendered=true]")
    assert "rank 3 on node-0" in page.locator("#stragglers").inner_text()
    assert page.locator("#rank-table tr.straggler td:first-child").all_inner_texts() == ["3"]
