"""The incident journey in a real browser: open an incident, attach evidence, accept a
suggested event, write and publish a post-mortem with an embedded chart, build a bundle."""

from __future__ import annotations

import os
import shutil

import pytest

from incidents.models import EvidenceBundle, Incident, PostMortem, TimelineEvent

from .conftest import PAIR_FAIL, PAIR_OK, ingest

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


@pytest.fixture(scope="module")
def roles_restored_afterwards(django_db_blocker):
    """A transactional test ends with a flush, which also empties the role groups that the
    roles migration created; put them back for the tests that run after this module."""
    yield
    from django.contrib.auth.models import Group

    from perfhub.roles import GROUPS

    with django_db_blocker.unblock():
        for name in GROUPS:
            Group.objects.get_or_create(name=name)


@pytest.fixture
def browser_editor(roles_restored_afterwards):
    """An editor. The group is made if missing: an earlier transactional test may have
    flushed the rows the roles migration created."""
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username="eddie", password="pw-eddie")
    user.groups.add(Group.objects.get_or_create(name="editor")[0])
    return user


def test_incident_to_postmortem_to_bundle(live_server, browser_page, browser_editor):
    ok = ingest(PAIR_OK)
    failed = ingest(PAIR_FAIL, metadata={"captured_at": "2025-03-01T10:05:00Z"})
    run = ok.runs.get(collective="sendrecv")
    page = browser_page
    page.goto(f"{live_server.url}/incidents/")
    page.fill("input[name=username]", "eddie")
    page.fill("input[name=password]", "pw-eddie")
    page.click("button[type=submit]")

    page.click("#new-incident")
    page.fill("input[name=title]", "alltoall fails between cnode2-005 and cnode2-016")
    page.select_option("select[name=severity]", "SEV2")
    page.fill("textarea[name=summary]", "nccl-tests **alltoall** dies with a network error")
    page.click("#incident-form button[type=submit]")
    page.wait_for_selector("#incident-title")
    incident = Incident.objects.get()

    page.select_option("#attach-form select[name=artifacts]", [str(ok.pk), str(failed.pk)])
    page.click("#attach-form button[type=submit]")
    page.wait_for_selector("#suggestion-table tr[data-key^='run:'] button.accept")
    page.click("#suggestion-table tr[data-key^='run:'] button.accept")
    page.wait_for_selector("#timeline-table >> text=remote process exited")
    event = TimelineEvent.objects.get(incident=incident)
    assert event.run == failed.runs.get() and event.artifact == failed

    page.click("#postmortem-link")
    page.click("#edit-postmortem")
    body = (
        "## Summary\n\nThe fabric dropped the alltoall.\n\n## Evidence\n\n"
        f"{{{{chart run={run.pk}}}}}\n"
    )
    page.fill("textarea[name=body]", body)
    page.wait_for_selector("#preview .embed-chart [data-rendered=true]")  # live preview, drawn
    page.fill("input[name=message]", "first draft with the chart")
    page.select_option("select[name=status]", "published")
    page.click("#save-postmortem")
    page.wait_for_selector("#postmortem-body .embed-chart [data-rendered=true]")
    pm = PostMortem.objects.get(incident=incident)
    assert (pm.status, pm.revision) == ("published", 1) and "pin=" in pm.body
    assert page.locator("#postmortem-body .scatterlayer .trace").count() >= 1

    page.goto(f"{live_server.url}{incident.get_absolute_url()}")
    page.click("#build-bundle")
    page.wait_for_selector("#bundle-download")
    bundle = EvidenceBundle.objects.get()
    assert bundle.status == "ready" and bundle.redact
    assert page.inner_text("#bundle-sha256") == bundle.sha256
    with page.expect_download() as download:
        page.click("#bundle-download")
    assert download.value.suggested_filename == bundle.filename
