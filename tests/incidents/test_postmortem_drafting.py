"""'Start from evidence' fills the post-mortem template; reviews gate publishing."""

from __future__ import annotations

import pytest

from incidents.drafting import draft_from_evidence
from incidents.grouping import grouped_for
from incidents.models import PostMortemReview
from incidents.postmortems import postmortem_save, postmortem_set_status
from incidents.reviews import paragraphs, publish_blockers, review_add, review_resolve
from incidents.services import IncidentError, incident_attach_artifacts, suggestion_accept
from tests.incidents.test_grouped_suggestions import watchdog_artifact

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_evidence(incident, editor, ok_artifact):
    artifact = watchdog_artifact()
    incident_attach_artifacts(
        incident=incident, artifact_ids=[artifact.pk, ok_artifact.pk], by=editor
    )
    group = next(s for s in grouped_for(incident) if s.is_group and "timeout" in s.text)
    suggestion_accept(incident=incident, key=group.key, by=editor, key_event=True)
    return incident, artifact


def test_the_draft_carries_timeline_scope_lifecycle_evidence_and_charts(with_evidence, ok_artifact):
    incident, artifact = with_evidence
    body = draft_from_evidence(incident)
    assert "## Timeline" in body and "NCCL watchdog timeout in ALLGATHER seq 1" in body
    assert "(8 sources)" in body and "★" in body
    assert f"`{artifact.sha256}`" in body and f"`{ok_artifact.sha256}`" in body
    assert "- **Affected hosts**: cnode2-005" in body and "- **Cluster**: b" in body
    assert "- **Detected**:" in body
    run = ok_artifact.runs.order_by("index").first()
    assert f"{{{{chart run={run.pk}}}}}" in body
    assert "## Root cause" in body and "## What went well" in body


def test_the_draft_saves_with_its_charts_pinned(with_evidence, editor):
    incident, _ = with_evidence
    revision = postmortem_save(
        incident=incident, body=draft_from_evidence(incident), base_revision=0, by=editor
    )
    assert "pin=" in revision.body


def test_the_editor_offers_the_draft_without_saving(with_evidence, editor_client):
    incident, _ = with_evidence
    page = editor_client.get(f"/incidents/{incident.pk}/postmortem/edit/?from=evidence")
    html = page.content.decode()
    assert page.status_code == 200 and "NCCL watchdog timeout in ALLGATHER" in html
    assert not incident.__class__.objects.get(pk=incident.pk).__dict__.get("postmortem")
    answer = editor_client.get(f"/api/v1/incidents/{incident.pk}/postmortem/draft-from-evidence/")
    assert answer.status_code == 401 or "## Evidence" in answer.json()["body"]


def test_changes_requested_block_publishing_until_resolved(incident, editor, viewer):
    postmortem_save(incident=incident, body="## Summary\n\nIt broke.\n\n## Root cause\n\nIB.",
                    base_revision=0, by=editor)  # fmt: skip
    assert paragraphs(incident.postmortem.body)[3] == "IB."
    review = review_add(incident=incident, by=viewer, text="Which HCA?",
                        verdict=PostMortemReview.Verdict.CHANGES, paragraph=3)  # fmt: skip
    assert review.quote == "IB." and review.revision == 1
    assert publish_blockers(incident.postmortem) == [
        "changes requested by vera on paragraph 4 are not resolved"
    ]
    with pytest.raises(IncidentError, match="cannot publish yet: changes requested"):
        postmortem_set_status(incident=incident, status="published", base_revision=1, by=editor)
    review_resolve(review=review, by=editor)
    postmortem_set_status(incident=incident, status="published", base_revision=1, by=editor)
    incident.postmortem.refresh_from_db()
    assert incident.postmortem.status == "published"


def test_approval_mode_needs_an_approval_by_someone_else(incident, editor, viewer, settings):
    settings.PERFHUB_POSTMORTEM_REVIEW = "approved"
    postmortem_save(incident=incident, body="## Summary\n\nok", base_revision=0, by=editor)
    review_add(incident=incident, by=editor, text="", verdict="approved")  # the author
    with pytest.raises(IncidentError, match="approving review by someone other"):
        postmortem_set_status(incident=incident, status="published", base_revision=1, by=editor)
    review_add(incident=incident, by=viewer, text="", verdict="approved")
    postmortem_set_status(incident=incident, status="published", base_revision=1, by=editor)


def test_off_mode_publishes_despite_open_change_requests(incident, editor, settings):
    settings.PERFHUB_POSTMORTEM_REVIEW = "off"
    postmortem_save(incident=incident, body="text", base_revision=0, by=editor)
    review_add(incident=incident, by=editor, text="fix it", verdict="changes")
    postmortem_set_status(incident=incident, status="published", base_revision=1, by=editor)


def test_reviews_need_a_saved_text_and_a_real_paragraph(incident, editor):
    with pytest.raises(IncidentError, match="no saved post-mortem"):
        review_add(incident=incident, by=editor, text="hm")
    postmortem_save(incident=incident, body="one\n\ntwo", base_revision=0, by=editor)
    with pytest.raises(IncidentError, match="no paragraph 5"):
        review_add(incident=incident, by=editor, text="hm", paragraph=4)


def test_review_pages_and_api(incident, editor, editor_client, editor_api):
    postmortem_save(incident=incident, body="one\n\ntwo", base_revision=0, by=editor)
    answer = editor_client.post(
        f"/incidents/{incident.pk}/postmortem/reviews/",
        {"paragraph": "1", "text": "say more", "verdict": "changes"},
    )
    assert answer.status_code == 302
    html = editor_client.get(f"/incidents/{incident.pk}/postmortem/").content.decode()
    assert "Cannot publish yet" in html and "say more" in html
    listed = editor_api.get(f"/api/v1/incidents/{incident.pk}/postmortem/reviews/").json()
    assert listed[0]["verdict"] == "changes" and listed[0]["is_open"]
    resolved = editor_api.post(
        f"/api/v1/incidents/{incident.pk}/postmortem/reviews/{listed[0]['id']}/resolve/"
    )
    assert resolved.status_code == 200 and not resolved.json()["is_open"]
    added = editor_api.post(
        f"/api/v1/incidents/{incident.pk}/postmortem/reviews/",
        {"text": "fine", "verdict": "approved"}, format="json",
    )  # fmt: skip
    assert added.status_code == 201
