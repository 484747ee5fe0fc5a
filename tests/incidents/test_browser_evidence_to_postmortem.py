"""From a pile of evidence to a reviewed post-mortem, in a real browser: upload the NCCL
watchdog-timeout log, open an incident from it, accept the grouped suggestion and the
proposed facts, start the post-mortem from the evidence, publish it after a review, build
the evidence bundle."""

from __future__ import annotations

import pytest

from artifacts.models import Artifact
from incidents.models import EvidenceBundle, Incident, PostMortem, PostMortemReview
from tests.incidents.test_browser_incidents import (  # noqa: F401  (fixtures)
    browser_editor,
    roles_restored_afterwards,
)
from tests.incidents.test_grouped_suggestions import WATCHDOG_LOG

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_watchdog_log_to_published_postmortem_and_bundle(
    live_server,
    browser_page,
    browser_editor,  # noqa: F811
    eager_tasks,
):
    page = browser_page
    page.goto(f"{live_server.url}/")
    page.fill("input[name=username]", "eddie")
    page.fill("input[name=password]", "pw-eddie")
    page.click("button[type=submit]")
    page.wait_for_selector("#dropzone")

    # upload the log, with the cluster and job as upload metadata
    page.fill("#upload-metadata", '{"cluster": "ib-east", "job_id": "1234"}')
    page.set_input_files("#upload-input", str(WATCHDOG_LOG))
    page.wait_for_selector("#upload-list .state.status-parsed")
    artifact = Artifact.objects.get()
    assert artifact.kind == "nccl_debug"

    # open an incident from it
    page.click("#upload-list a")
    page.click("#open-incident")
    page.wait_for_selector("#source-artifact")
    page.select_option("select[name=severity]", "SEV2")
    page.click("#incident-form button[type=submit]")
    page.wait_for_selector("#incident-title")
    incident = Incident.objects.get()
    assert list(incident.artifacts.all()) == [artifact]

    # one grouped suggestion for the eight ranks' watchdog timeouts, expandable to the lines
    group = (
        "#suggestion-table tr.suggestion-group"
        ":has-text('NCCL watchdog timeout in ALLGATHER seq 1 on 8 ranks of 2 hosts, 120 s')"
    )
    page.wait_for_selector(group)
    page.click(f"{group} details.members summary")
    assert page.locator(f"{group} details.members tr").count() == 8
    page.click(f"{group} button.accept-group")
    page.wait_for_selector("#timeline-table >> text=NCCL watchdog timeout in ALLGATHER seq 1")
    event = incident.events.get()
    assert len(event.sources) == 8

    # the facts the log states, accepted as proposed
    for field in ("affected_hosts", "nccl", "cluster"):
        page.click(f"#fact-{field} button.accept")
        page.wait_for_selector(f"#fact-{field}", state="detached")
    incident.refresh_from_db()
    assert incident.affected_hosts == ["h100-n001", "h100-n002"]
    assert incident.environment["nccl"] == "2.21.5" and incident.cluster == "ib-east"
    assert incident.fact_records.count() == 3

    # the pages that explain the symptom
    assert page.locator("#kb-symptoms").count() == 1

    # start the post-mortem from the evidence, write a line of narrative, save
    page.click("#postmortem-link")
    page.click("#edit-postmortem")
    page.click("#start-from-evidence")
    body = page.input_value("textarea[name=body]")
    assert "NCCL watchdog timeout in ALLGATHER seq 1" in body and artifact.sha256 in body
    page.fill(
        "textarea[name=body]",
        body.replace("_What broke, and why. Link the evidence below._", "An HCA on h100-n001."),
    )
    page.click("#save-postmortem")
    page.wait_for_selector("#review-form")

    # a review asks for changes on the root cause; publishing waits until it is resolved
    option = page.locator("#review-form select[name=paragraph] option", has_text="An HCA on")
    page.select_option("#review-form select[name=paragraph]", option.get_attribute("value"))
    page.fill("#review-form textarea[name=text]", "Which HCA, and which port?")
    page.select_option("#review-form select[name=verdict]", "changes")
    page.click("#review-form button[type=submit]")
    page.wait_for_selector("#publish-blockers")
    page.click("#publish")
    page.wait_for_selector("text=cannot publish yet")
    assert PostMortem.objects.get(incident=incident).status == "draft"
    page.click("button.resolve-review")
    page.wait_for_selector("li.review.resolved")
    page.click("#publish")
    page.wait_for_selector("#postmortem-status >> text=published")
    assert PostMortem.objects.get(incident=incident).status == "published"
    assert PostMortemReview.objects.get().resolved_at is not None

    # and the bundle for the vendor
    page.goto(f"{live_server.url}{incident.get_absolute_url()}")
    page.click("#build-bundle")
    page.wait_for_selector("#bundle-download")
    bundle = EvidenceBundle.objects.get()
    assert bundle.status == "ready" and bundle.sha256
