"""Accessibility: axe-core (the copy the axe-playwright-python package ships, served from
disk, no CDN) on every main page, in a real browser; serious or critical violations fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.baselines.baseline_fixtures import load_demo

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MAIN_PAGES = (
    "/", "/artifacts/", "/runs/", "/baselines/", "/baselines/matrix/", "/baselines/alerts/",
    "/reports/", "/reports/new/", "/incidents/", "/incidents/new/", "/kb/", "/search/?q=nccl",
    "/account/token/",
)  # fmt: skip
BLOCKING = {"serious", "critical"}


def _axe_script() -> str:
    axe = pytest.importorskip("axe_playwright_python")
    return (Path(axe.__file__).parent / "axe.min.js").read_text()


def _violations(page, script: str) -> list[str]:  # type: ignore[no-untyped-def]
    page.evaluate(script)
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {v['nodes'][0]['target']}"
        for v in result["violations"]
        if v.get("impact") in BLOCKING
    ]


def test_main_pages_have_no_serious_accessibility_violations(
    live_server, eager_tasks, django_capture_on_commit_callbacks, editor, browser_page
):  # type: ignore[no-untyped-def]
    script = _axe_script()
    artifacts = load_demo(django_capture_on_commit_callbacks, days=2, profiles=["h200-roce-2x8"])
    from artifacts.models import BenchmarkRun

    run = BenchmarkRun.objects.order_by("pk").first()
    pages = [*MAIN_PAGES, artifacts[0].get_absolute_url(), run.get_absolute_url()]
    page = browser_page
    page.goto(f"{live_server.url}/login/")
    found = _violations(page, script)  # the sign-in page, before signing in
    page.fill("input[name=username]", editor.username)
    page.fill("input[name=password]", f"pw-{editor.username}")
    page.click("button[type=submit]")
    page.wait_for_load_state("load")
    for path in pages:
        page.goto(live_server.url + path, wait_until="load")
        found += [f"{path}: {v}" for v in _violations(page, script)]
    assert not found, "\n".join(found)
