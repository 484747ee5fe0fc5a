"""Incident pages: login, filters, CSV, detail sections, viewer rights, bounded queries."""

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from incidents.models import ActionItem, EvidenceBundle, Incident, TimelineEvent
from incidents.services import (
    action_item_create,
    correspondence_add,
    incident_attach_artifacts,
    incident_create,
    incident_set_milestone,
    ticket_create,
)
from incidents.suggestions import suggestions_for

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "url",
    ["/incidents/", "/incidents/new/", "/incidents/metrics/", "/action-items/", "/vendor-tickets/"],
)
def test_anonymous_page_requests_redirect_to_login(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_nav_has_an_incidents_link(editor_client):
    page = editor_client.get("/").content.decode()
    assert 'href="/incidents/"' in page and ">Incidents</a>" in page


def test_create_an_incident_from_the_form(editor_client):
    response = editor_client.post(
        "/incidents/new/",
        {
            "title": "Rack 7 stalls",
            "severity": "SEV1",
            "affected_hosts": "n1, n2\nn3",
            "tags": "nccl, RoCE",
            "detected_at": "2025-03-01T10:00:00.5",
        },
    )
    incident = Incident.objects.get()
    assert response.status_code == 302 and response.url == f"/incidents/{incident.pk}/"
    assert incident.affected_hosts == ["n1", "n2", "n3"]
    assert sorted(t.name for t in incident.tags.all()) == ["nccl", "roce"]
    assert incident.detected_at == datetime(2025, 3, 1, 10, 0, 0, 500000, tzinfo=UTC)


def test_list_filters_and_csv(editor_client, editor):
    a = incident_create(title="driver upgrade MFU", severity="SEV1", by=editor, tags=["driver"])
    incident_create(title="rack 7 stalls", severity="SEV3", by=editor, tags=["fabric"])
    incident_set_milestone(incident=a, milestone="detected", at=T0, by=editor)
    incident_set_milestone(incident=a, milestone="mitigated", at=T0 + timedelta(hours=2), by=editor)
    page = editor_client.get("/incidents/", {"severity": "SEV1"}).content.decode()
    assert "driver upgrade MFU" in page and "rack 7 stalls" not in page and "2h 0m" in page
    assert "rack 7" in editor_client.get("/incidents/", {"tag": "fabric"}).content.decode()
    assert (
        "No incidents match"
        in editor_client.get("/incidents/", {"until": "2020-01-01"}).content.decode()
    )
    assert (
        "driver"
        in editor_client.get(
            "/incidents/", {"since": "2025-03-01", "until": "2025-03-01"}
        ).content.decode()
    )
    rows = list(
        csv.DictReader(
            io.StringIO(editor_client.get("/incidents/", {"format": "csv"}).content.decode())
        )
    )
    assert len(rows) == 2
    driver = next(r for r in rows if r["tags"] == "driver")
    assert (
        driver["time_to_mitigate_s"] == "7200.0" and driver["detected_at"] == "2025-03-01T10:00:00Z"
    )


def test_detail_shows_lifecycle_timeline_evidence_and_suggestions(
    editor_client, incident, editor, failed_artifact
):
    incident_attach_artifacts(incident=incident, artifact_ids=[failed_artifact.pk], by=editor)
    page = editor_client.get(f"/incidents/{incident.pk}/").content.decode()
    for anchor in (
        "lifecycle",
        "timeline",
        "suggestions",
        "evidence",
        "action-items",
        "tickets",
        "bundles",
    ):
        assert f'id="{anchor}"' in page, anchor
    assert "remote process exited or there was a network error" in page  # a suggestion
    assert 'id="bundle-form"' in page and "Accept" in page
    key = next(s.key for s in suggestions_for(incident) if s.source == "nccl_tests")
    editor_client.post(f"/incidents/{incident.pk}/suggestions/accept/", {"key": key})
    page = editor_client.get(f"/incidents/{incident.pk}/").content.decode()
    assert 'id="timeline-chart"' in page and "timeline-figure" in page
    export = editor_client.get(f"/incidents/{incident.pk}/", {"format": "csv"}).content.decode()
    assert "remote process exited" in export and export.startswith("at,kind,key,source,author,text")


def test_add_events_filter_by_kind_and_mark_key(editor_client, incident):
    url = f"/incidents/{incident.pk}/"
    editor_client.post(
        url + "events/",
        {"at": "2025-03-01T10:00:00", "kind": "change", "text": "driver 550 rolled out"},
    )
    editor_client.post(
        url + "events/", {"at": "2025-03-01T09:00:00", "kind": "action", "text": "drained rack 7"}
    )
    event = TimelineEvent.objects.get(kind="change")
    editor_client.post(url + f"events/{event.pk}/", {"action": "key"})
    event.refresh_from_db()
    assert event.key
    page = editor_client.get(url, {"kind": "change"}).content.decode()
    assert "driver 550 rolled out" in page and "drained rack 7" not in page
    assert "drained rack 7" not in editor_client.get(url, {"key": "1"}).content.decode()


def test_viewers_see_no_write_controls_and_get_403_on_writes(viewer_client, incident):
    page = viewer_client.get(f"/incidents/{incident.pk}/").content.decode()
    assert (
        'id="status-form"' not in page
        and 'id="attach-form"' not in page
        and 'class="accept"' not in page
    )
    for url in ("/incidents/new/", f"/incidents/{incident.pk}/edit/"):
        assert viewer_client.get(url).status_code == 403
    for url in (
        f"/incidents/{incident.pk}/status/",
        f"/incidents/{incident.pk}/events/",
        f"/incidents/{incident.pk}/bundles/",
        f"/incidents/{incident.pk}/evidence/",
    ):
        assert viewer_client.post(url, {"status": "closed"}).status_code == 403
    incident.refresh_from_db()
    assert incident.status == "investigating"


def test_build_a_bundle_from_the_page_and_download_it(editor_client, incident, editor, ok_artifact):
    incident_attach_artifacts(incident=incident, artifact_ids=[ok_artifact.pk], by=editor)
    response = editor_client.post(
        f"/incidents/{incident.pk}/bundles/", {"artifacts": [ok_artifact.pk], "redact": "on"}
    )
    bundle = EvidenceBundle.objects.get()
    assert response.url == f"/bundles/{bundle.pk}/" and bundle.status == "ready"
    page = editor_client.get(response.url).content.decode()
    assert bundle.sha256 in page and 'id="bundle-download"' in page
    # a ready bundle says "complete", with no half-full bar beside "ready"
    assert "<dd>complete</dd>" in page and 'id="bundle-progress"' not in page
    download = editor_client.get(f"/bundles/{bundle.pk}/download/")
    assert download["Content-Disposition"].startswith("attachment;")
    preview = editor_client.post(
        f"/incidents/{incident.pk}/bundles/preview/", {"artifacts": [ok_artifact.pk]}
    )
    html = preview.content.decode()
    assert preview.status_code == 200 and "cnode2-001" in html and "host-00" in html


def test_the_redaction_preview_is_a_post_so_no_token_lands_in_a_url(
    editor_client, incident, editor, ok_artifact
):
    incident_attach_artifacts(incident=incident, artifact_ids=[ok_artifact.pk], by=editor)
    page = editor_client.get(f"/incidents/{incident.pk}/").content.decode()
    form = page[page.rindex("<form", 0, page.index('id="preview-redaction"')) :]
    assert 'method="post"' in form[: form.index(">")] and 'formmethod="get"' not in form
    # a GET (a bookmark, an old link with a token in it) ignores its query: the defaults show
    opened = editor_client.get(
        f"/incidents/{incident.pk}/bundles/preview/",
        {"artifacts": [ok_artifact.pk], "csrfmiddlewaretoken": "x"},
    ).content.decode()
    assert "host-00" not in opened and "Preview redaction" in opened


def test_vendor_ticket_pages_and_sent_bundle(editor_client, incident, editor, ok_artifact):
    incident_attach_artifacts(incident=incident, artifact_ids=[ok_artifact.pk], by=editor)
    response = editor_client.post(
        "/vendor-tickets/new/",
        {
            "title": "busbw low on CX-7",
            "vendor": "nvidia_networking",
            "case_number": "01234",
            "severity": "SEV2",
            "status": "open",
            "incidents": [incident.pk],
            "artifact_ids": str(ok_artifact.pk),
        },
    )
    assert response.status_code == 302, response.content
    ticket = incident.vendor_tickets.get()
    editor_client.post(
        f"/vendor-tickets/{ticket.pk}/bundles/", {"artifacts": [ok_artifact.pk], "redact": "on"}
    )
    bundle = EvidenceBundle.objects.get(ticket=ticket)
    editor_client.post(
        f"/vendor-tickets/{ticket.pk}/correspondence/",
        {"direction": "sent", "text": "logs attached", "bundle": bundle.pk},
    )
    page = editor_client.get(f"/vendor-tickets/{ticket.pk}/").content.decode()
    assert "logs attached" in page and bundle.sha256 in page
    timeline = editor_client.get(f"/incidents/{incident.pk}/").content.decode()
    assert "logs attached" in timeline and "sent to vendor" in timeline
    listing = editor_client.get(
        "/vendor-tickets/", {"vendor": "nvidia_networking"}
    ).content.decode()
    assert "busbw low on CX-7" in listing
    rows = list(
        csv.reader(
            io.StringIO(editor_client.get("/vendor-tickets/", {"format": "csv"}).content.decode())
        )
    )
    assert rows[1][1] == "NVIDIA Networking (Mellanox)" and rows[1][-2] == "1"


def test_action_item_list_closes_items_with_verification(
    editor_client, incident, editor, ok_artifact
):
    item = action_item_create(
        incident=incident, title="raise PFC headroom", by=editor, requires_verification=True
    )
    editor_client.post(f"/action-items/{item.pk}/", {"status": "done"})
    item.refresh_from_db()
    assert item.status == "open"
    editor_client.post(
        f"/action-items/{item.pk}/", {"status": "done", "verification_artifact": ok_artifact.pk}
    )
    item.refresh_from_db()
    assert item.status == "done" and item.closed_at
    editor_client.get("/incidents/")  # shows (and so clears) the messages
    assert "raise PFC headroom" not in editor_client.get("/action-items/").content.decode()
    assert (
        "raise PFC headroom"
        in editor_client.get("/action-items/", {"status": "any"}).content.decode()
    )


def test_metrics_page_medians_by_severity(editor_client, editor):
    for hours, severity in ((1, "SEV1"), (3, "SEV1"), (10, "SEV3")):
        incident = incident_create(
            title=f"{hours}h",
            severity=severity,
            by=editor,
            milestones={"impact_started": T0, "detected": T0},
        )
        incident_set_milestone(
            incident=incident, milestone="resolved", at=T0 + timedelta(hours=hours), by=editor
        )
    ticket = ticket_create(title="x", vendor="arista", by=editor, incident_ids=[incident.pk])
    correspondence_add(ticket=ticket, direction="note", text="n", by=editor)
    action_item_create(incident=incident, title="old item", by=editor)
    ActionItem.objects.update(created_at=datetime.now(UTC) - timedelta(days=40))
    page = editor_client.get("/incidents/metrics/").content.decode()
    assert "Arista" in page and "31 to 90 days" in page
    rows = list(
        csv.DictReader(
            io.StringIO(
                editor_client.get("/incidents/metrics/", {"format": "csv"}).content.decode()
            )
        )
    )
    sev1 = next(r for r in rows if r["split"] == "severity" and r["group"] == "SEV1")
    assert (sev1["incidents"], sev1["resolve_median"]) == ("2", "2.0")
    assert (
        next(r for r in rows if r["group"] == "all" and r["split"] == "severity")["incidents"]
        == "3"
    )


def _many(editor, n, offset=0):
    for i in range(n):
        incident = incident_create(
            title=f"incident {offset + i}",
            severity="SEV3",
            by=editor,
            tags=[f"t{i}", "common"],
            owner=editor,
        )
        action_item_create(incident=incident, title=f"item {i}", by=editor, owner=editor)
        ticket_create(title=f"ticket {i}", vendor="amd", by=editor, incident_ids=[incident.pk])


@pytest.mark.parametrize(
    "url", ["/incidents/", "/action-items/", "/vendor-tickets/", "/incidents/metrics/"]
)
def test_list_pages_use_a_bounded_number_of_queries(editor_client, editor, url):
    _many(editor, 2)
    editor_client.get(url)
    with CaptureQueriesContext(connection) as few:
        editor_client.get(url)
    _many(editor, 8, offset=2)
    with CaptureQueriesContext(connection) as more:
        assert editor_client.get(url).status_code == 200
    assert len(more) == len(few) <= 15, [q["sql"] for q in more.captured_queries]
