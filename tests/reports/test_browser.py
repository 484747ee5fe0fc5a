"""The exported HTML file in a real browser, from disk, with the network cut off."""

from __future__ import annotations

import pytest

from reports import exports
from reports.services import report_create

# Every database write happens before the browser starts: Playwright runs in greenlets, and
# ORM calls from there would open a second connection that waits on this test's transaction.
pytestmark = [pytest.mark.browser, pytest.mark.django_db]


def test_exported_html_opens_from_a_file_and_draws_every_chart_offline(tmp_path, request):
    pair = request.getfixturevalue("pair")  # built before the browser starts
    report = report_create(kind="runs", title="G1 vs G8", artifact_ids=[a.pk for a in pair])
    path = tmp_path / "report.html"
    path.write_bytes(exports.report_html(report))
    browser_page = request.getfixturevalue("browser_page")
    requested: list[str] = []

    def refuse_network(route):  # any request that is not the file itself is a failure
        requested.append(route.request.url)
        route.abort()

    browser_page.route("http*://**/*", refuse_network)
    browser_page.goto(path.as_uri())
    browser_page.wait_for_function(
        "document.querySelectorAll('[data-figure][data-rendered=true]').length === 4"
    )
    assert requested == []
    assert browser_page.locator("#chart-curves-alltoall .scatterlayer .trace").count() == 2
    assert "alltoall: 16 ranks · g8 vs 2 ranks · g1" in browser_page.inner_text(".verdicts")
