"""Incidents, post-mortems and vendor tickets in the one search (SQLite FTS5 or PostgreSQL).

Every type is indexed when it is saved (signals, whichever code path saved it), found by
its own words, answered by ``GET /api/v1/search/`` as ``{"type", "title", "url", "snippet"}``,
counted in the facets, and removed when it is deleted.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from artifacts.services import artifact_ingest
from knowledge.models import SearchEntry
from knowledge.search import search

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(editor):  # type: ignore[no-untyped-def]
    from incidents.services import incident_create

    return incident_create(
        title="all-reduce stalls on rack 7",
        severity="SEV2",
        by=editor,
        summary="busbw dropped from 180 to 40 GB/s after the **switchover**",
        cluster="kestrel",
        hardware_generation="H200",
        tags=["roce"],
    )


def _types(query: str) -> list[str]:
    return [h.type for h in search(query).hits]


def test_an_incident_is_found_by_title_summary_cluster_and_tags(incident):
    for query in ["stalls", "switchover", "kestrel", "roce"]:
        hits = search(query).hits
        assert [h.type for h in hits] == ["incident"], query
        assert hits[0].url == f"/incidents/{incident.pk}/"
        assert hits[0].title_text == f"INC-{incident.pk}: all-reduce stalls on rack 7"
    # Markdown is indexed as text: the snippet shows the word, not the ** around it
    snippet = search("switchover").hits[0].snippet
    assert "<mark>switchover</mark>" in snippet and "**" not in snippet


def test_timeline_events_are_indexed_and_unindexed(incident, editor):
    from django.utils import timezone

    from incidents.services import timeline_event_create

    event = timeline_event_create(
        incident=incident, at=timezone.now(), text="reseated the OSFP on leaf-12", by=editor
    )
    assert _types("reseated") == ["incident"]
    event.delete()
    assert search("reseated").total == 0 and _types("stalls") == ["incident"]


def test_incident_updates_reach_the_index(incident, editor):
    from incidents.services import incident_update

    incident_update(incident=incident, by=editor, title="PFC storm on rack 7")
    assert _types("storm") == ["incident"] and search("stalls").total == 0


def test_a_postmortem_is_found_and_its_shortcodes_are_not_text(incident, editor):
    from incidents.postmortems import postmortem_save

    postmortem_save(
        incident=incident,
        body="## Root cause\nA misconfigured **DSCP trust** mode on the leaf.\n",
        base_revision=0,
        by=editor,
    )
    hits = search("misconfigured").hits
    assert [h.type for h in hits] == ["postmortem"]
    assert hits[0].url == f"/incidents/{incident.pk}/postmortem/"
    assert hits[0].title_text == f"Post-mortem INC-{incident.pk}: all-reduce stalls on rack 7"
    assert hits[0].generations == ("H200",)
    # the incident's own words stay with the incident, the post-mortem's with it
    assert _types("stalls") == ["incident", "postmortem"] or _types("stalls") == [
        "postmortem",
        "incident",
    ]


def test_a_vendor_ticket_is_found_by_case_number_and_correspondence(incident, editor):
    from incidents.services import correspondence_add, ticket_create

    ticket = ticket_create(
        title="CX-7 firmware drops CNPs",
        vendor="nvidia_networking",
        case_number="NVB-4417",
        contacts="jane.doe@vendor.example",
        by=editor,
        incident_ids=[incident.pk],
    )
    assert _types("NVB-4417") == ["vendor_ticket"]
    assert search("NVB-4417").hits[0].url == f"/vendor-tickets/{ticket.pk}/"
    correspondence_add(
        ticket=ticket, direction="received", text="Fixed in firmware 28.41.1000.", by=editor
    )
    assert _types("28.41.1000") == ["vendor_ticket"]
    assert search("jane.doe").total == 0  # contacts are not indexed
    # the linked incident's generation becomes the ticket's facet
    assert search("NVB-4417", generation="H200").total == 1


def test_the_api_answers_every_type_in_one_shape(incident, editor, editor_api, make_page):
    from incidents.postmortems import postmortem_save
    from incidents.services import ticket_create

    make_page(title="Quokka recipe", body="quokka tuning\n")
    postmortem_save(incident=incident, body="quokka in the post-mortem\n", base_revision=0,
                    by=editor)  # fmt: skip
    ticket_create(title="quokka case", vendor="nvidia", case_number="quokka-7", by=editor)
    artifact_ingest(
        stream=io.BytesIO(b"x\n"), name="quokka.txt", label="quokka sweep", enqueue=False
    )
    from incidents.services import incident_update

    incident_update(incident=incident, by=editor, summary="a quokka was seen")
    body = editor_api.get("/api/v1/search/", {"q": "quokka"}).json()
    by_type = {r["type"]: r for r in body["results"]}
    assert set(by_type) == {"page", "incident", "postmortem", "vendor_ticket", "artifact"}
    for result in body["results"]:
        assert {"type", "title", "url", "snippet"} <= set(result)
        assert "<mark>" in result["snippet"], result
    assert by_type["incident"]["url"] == f"/incidents/{incident.pk}/"
    assert {f["value"]: f["count"] for f in body["facets"]["type"]} == {
        "page": 1, "incident": 1, "postmortem": 1, "vendor_ticket": 1, "artifact": 1,
    }  # fmt: skip
    only = editor_api.get("/api/v1/search/", {"q": "quokka", "type": "vendor_ticket"}).json()
    assert [r["type"] for r in only["results"]] == ["vendor_ticket"]


def test_the_search_page_labels_the_new_types(incident, editor, editor_client):
    from incidents.services import ticket_create

    page = editor_client.get("/search/", {"q": "stalls"}).content.decode()
    assert f"/incidents/{incident.pk}/" in page and "Incident" in page
    assert "SEV2 (major)" in page  # the subtype's display name
    ticket_create(title="stalls case", vendor="nvidia", status="waiting_vendor", by=editor)
    page = editor_client.get("/search/", {"q": "stalls", "type": "vendor_ticket"}).content.decode()
    assert "Vendor ticket" in page and "waiting on vendor" in page and "waiting_vendor" not in page


def test_deleting_removes_every_type(incident, editor):
    from incidents.postmortems import postmortem_save
    from incidents.services import ticket_create

    postmortem_save(incident=incident, body="gone soon\n", base_revision=0, by=editor)
    ticket = ticket_create(title="gone ticket", vendor="nvidia", by=editor)
    ticket.delete()
    incident.delete()
    assert not SearchEntry.objects.filter(source__in=["incident", "postmortem", "vendor_ticket"])


def test_reindex_rebuilds_the_incident_sources(incident, editor):
    from incidents.services import ticket_create

    ticket_create(title="rebuilt ticket", vendor="amd", by=editor)
    SearchEntry.objects.all().delete()
    out = io.StringIO()
    call_command("search_reindex", "incident", "postmortem", "vendor_ticket", stdout=out)
    assert "incident: 1" in out.getvalue() and "vendor_ticket: 1" in out.getvalue()
    assert _types("stalls") == ["incident"] and _types("rebuilt") == ["vendor_ticket"]
