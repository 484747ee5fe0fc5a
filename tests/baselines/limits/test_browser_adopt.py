"""In a real browser: a multi-node run alone shows assumed candidates; one click adopts one
for its profile and the page states the efficiency."""

from __future__ import annotations

import pytest

from baselines.models import RunContext
from tests.baselines.limits.test_golden_efficiency import load

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_adopt_a_reference_design_from_the_run_page(live_server, editor, request):  # type: ignore[no-untyped-def]
    run = load("nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log").runs.get(
        collective="all_reduce"
    )
    profile = RunContext.objects.get(run=run).profile
    page = request.getfixturevalue("browser_page")  # after the database writes
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    page.fill("input[name=username]", "eddie")
    page.fill("input[name=password]", "pw-eddie")
    page.click("button[type=submit]")
    page.wait_for_selector("#assumed-candidates")
    row = page.locator("#assumed-candidates tr", has_text="NVIDIA DGX H100")
    assert "assumed" in row.inner_text() and "86.2 %" in row.inner_text()
    row.locator("button[name=adopt]").click()
    page.wait_for_selector("text=Peak bus bandwidth")
    assert page.locator("#assumed-candidates").count() == 0
    assert "86.2 %" in page.inner_text("#efficiency")
    profile.refresh_from_db()
    assert (profile.nics_per_node, profile.nic_speed_gbps) == (8, 400)
