"""The generic reading's section and the lines view pass axe-core in a real browser (no
serious or critical violations), as the main pages do (tests/test_accessibility.py)."""

from __future__ import annotations

import io

import pytest

from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from tests.artifacts.test_generic_pages import CONFIG
from tests.test_accessibility import _axe_script, _violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_generic_reading_and_a_cited_line_are_accessible(live_server, editor, browser_page):  # type: ignore[no-untyped-def]
    script = _axe_script()
    stored = artifact_ingest(stream=io.BytesIO(CONFIG), name="rack-notes.txt", enqueue=False)
    artifact = artifact_parse(artifact_id=stored.artifact.pk)
    assert artifact.generic["pairs"]
    page = browser_page
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", editor.username)
    page.fill("input[name=password]", f"pw-{editor.username}")
    page.click("button[type=submit]")
    page.wait_for_load_state("load")
    found = []
    for path in (artifact.get_absolute_url(), f"/artifacts/{artifact.pk}/lines/?line=4"):
        page.goto(live_server.url + path, wait_until="load")
        assert page.locator("#generic, #file-lines").count() == 1, path
        found += [f"{path}: {v}" for v in _violations(page, script)]
    assert not found, "\n".join(found)
