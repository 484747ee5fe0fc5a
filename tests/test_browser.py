"""The main journey in a real browser: log in, drop a file, watch it parse, see the chart."""

from __future__ import annotations

import pytest

from artifacts.models import Artifact
from tests.samples import sample
from tests.signin import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_upload_a_nccl_tests_file_and_see_its_chart(live_server, browser_page, editor, eager_tasks):
    page = browser_page
    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url
    page.fill("input[name=username]", "eddie")
    page.fill("input[name=password]", "pw-eddie")
    page.click("button[type=submit]")
    page.wait_for_selector("#dropzone")
    assert page.locator(".stats .stat b >> nth=0").inner_text() == "0"

    page.set_input_files("#upload-input", str(sample("nccl_tests/xxrjun_pair_N2_G8_ok.log")))
    page.wait_for_selector("#upload-list .state.status-parsed")
    assert Artifact.objects.get().status == Artifact.Status.PARSED
    # the row says what it was read as, and the home counters follow without a reload
    assert page.locator("#upload-list .detail").inner_text().startswith("as nccl-tests")
    page.wait_for_function("document.querySelector('.stats .stat b').textContent.trim() === '1'")

    page.click("#upload-list a")  # the artifact page
    page.click("table.data tbody a >> nth=0")  # its first run
    page.wait_for_selector("#busbw-chart[data-rendered=true]")
    assert page.locator("#busbw-chart .scatterlayer .trace").count() >= 2
    assert "busbw out-of-place" in page.content()
    # plotly.js (4.7 MB) is fetched after the load event: the page shows before the chart
    timing = page.evaluate(
        """() => ({
          load: performance.getEntriesByType('navigation')[0].loadEventEnd,
          plotly: performance.getEntriesByType('resource')
            .filter(r => r.name.includes('plotly.min')).map(r => r.startTime),
        })"""
    )
    assert len(timing["plotly"]) == 1 and timing["plotly"][0] >= timing["load"], timing


def test_a_page_without_charts_never_fetches_plotly(live_server, browser_page, editor):
    page = browser_page
    sign_in(page, live_server.url, "eddie")
    page.goto(f"{live_server.url}/baselines/matrix/")  # no profile yet: no chart on it
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)
    assert page.locator("[data-figure]").count() == 0
    fetched = page.evaluate(
        "() => performance.getEntriesByType('resource').map(r => r.name)"
        ".filter(name => name.includes('plotly.min'))"
    )
    assert fetched == []
