"""In a real browser: edit a knowledge page, then find it with the header search box."""

from __future__ import annotations

import pytest

from knowledge.models import Page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_edit_a_page_and_find_it_by_search(live_server, browser_page, make_page):
    kb_page = make_page(title="RoCE lossless checklist", body="PFC on priority 3.\n")
    page = browser_page
    page.goto(f"{live_server.url}/kb/{kb_page.slug}/")
    assert "/login/" in page.url
    page.fill("input[name=username]", "eddie")
    page.fill("input[name=password]", "pw-eddie")
    page.click("button[type=submit]")
    page.wait_for_selector("#kb-edit")

    page.click("#kb-edit")
    page.wait_for_selector("textarea[name=body]")
    page.fill(
        "textarea[name=body]", "PFC on priority 3.\n\nWatch the quasarflux counter during incast.\n"
    )
    page.fill("input[name=message]", "add the counter to watch")
    page.click("#kb-preview-toggle")  # the server-rendered preview of the new text
    page.wait_for_selector("#kb-preview:has-text('quasarflux')")
    page.click("#kb-save")
    page.wait_for_selector("text=Saved revision 2")
    assert "quasarflux" in page.inner_text("#kb-body")
    assert Page.objects.get().revision == 2

    page.fill("#top-search", "quasarflux")
    page.press("#top-search", "Enter")
    page.wait_for_selector("#kb-results .kb-hit")
    hit = page.locator("#kb-results .kb-hit").first
    assert hit.locator("a.kb-hit-title").inner_text() == "RoCE lossless checklist"
    assert hit.locator("mark").first.inner_text().lower() == "quasarflux"
    hit.locator("a.kb-hit-title").click()
    page.wait_for_selector("#kb-body")
    assert page.url.endswith(f"/kb/{kb_page.slug}/")
