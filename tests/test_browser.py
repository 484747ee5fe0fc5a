"""The main journey in a real browser: log in, drop a file, watch it parse, see the chart."""

from __future__ import annotations

import os
import shutil

import pytest

from artifacts.models import Artifact
from tests.samples import sample

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser_page():
    if not os.path.exists(CHROMIUM):
        pytest.skip("no chromium at /usr/bin/chromium (apt-get install chromium); CI installs it")
    playwright_api = pytest.importorskip("playwright.sync_api")
    # Playwright's sync API runs an event loop; Django must allow ORM calls from this thread.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        page = browser.new_page()
        page.set_default_timeout(30_000)
        yield page
        browser.close()


def test_upload_a_nccl_tests_file_and_see_its_chart(live_server, browser_page, editor, eager_tasks):
    page = browser_page
    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url
    page.fill("input[name=username]", "eddie")
    page.fill("input[name=password]", "pw-eddie")
    page.click("button[type=submit]")
    page.wait_for_selector("#dropzone")

    page.set_input_files("#upload-input", str(sample("nccl_tests/xxrjun_pair_N2_G8_ok.log")))
    page.wait_for_selector("#upload-list .state.status-parsed")
    assert Artifact.objects.get().status == Artifact.Status.PARSED

    page.click("#upload-list a")  # the artifact page
    page.click("table.data tbody a >> nth=0")  # its first run
    page.wait_for_selector("#busbw-chart[data-rendered=true]")
    assert page.locator("#busbw-chart .scatterlayer .trace").count() >= 2
    assert "busbw out-of-place" in page.content()
