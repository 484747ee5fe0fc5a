"""The incident journey in a real browser: open an incident, attach evidence, accept a
suggested event, write and publish a post-mortem with an embedded chart, build a bundle."""

from __future__ import annotations

import pytest

from incidents.models import EvidenceBundle, Incident, PostMortem, TimelineEvent
from tests.incidents.conftest import PAIR_FAIL, PAIR_OK, ingest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


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


def test_a_finding_becomes_a_timeline_event_and_a_postmortem_embed(
    live_server, browser_page, browser_editor
):
    from artifacts.fabric.services import fabric_refresh
    from artifacts.models import Finding
    from incidents.services import incident_create

    ibstat = ingest("counters/gpud_ibstat_h100_some_ports_down.txt", host="h100-b")
    fabric_refresh(artifact_id=ibstat.pk)
    finding = Finding.objects.filter(artifact=ibstat, rule="port_down").order_by("device")[0]
    incident = incident_create(title="ports down on h100-b", severity="SEV2", by=browser_editor)
    page = browser_page
    page.goto(f"{live_server.url}{incident.get_absolute_url()}")
    page.fill("input[name=username]", "eddie")
    page.fill("input[name=password]", "pw-eddie")
    page.click("button[type=submit]")

    page.select_option("#attach-form select[name=artifacts]", [str(ibstat.pk)])
    page.click("#attach-form button[type=submit]")
    # the three ports down are one group; its lines can still be accepted one by one
    page.wait_for_selector("#suggestion-table tr.suggestion-group")
    page.click("#suggestion-table tr.suggestion-group details.members summary")
    row = (
        f"#suggestion-table tr[data-key^='finding:']:has(a[href='/fabric/findings/{finding.pk}/'])"
    )
    page.click(f"{row} button.accept")
    page.wait_for_selector(f"#timeline-table a[href='/fabric/findings/{finding.pk}/']")
    event = TimelineEvent.objects.get(incident=incident)
    assert (event.ref_kind, event.ref_id) == ("finding", str(finding.pk))

    page.click("#postmortem-link")
    page.click("#edit-postmortem")
    page.fill("textarea[name=body]", f"## Root cause\n\n{{{{finding id={finding.pk}}}}}\n")
    page.wait_for_selector("#preview .embed-finding >> text=Port mlx5_2/1 is DOWN")
    page.fill("input[name=message]", "root cause")
    page.click("#save-postmortem")
    page.wait_for_selector("#postmortem-body .embed-finding")
    assert "pin=" in PostMortem.objects.get(incident=incident).body
