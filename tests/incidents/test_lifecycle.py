"""Incident lifecycle: status changes stamp milestones, order is checked, durations derive."""

from datetime import UTC, datetime, timedelta

import pytest

from incidents.models import Incident, MilestoneRecord
from incidents.services import (
    IncidentError,
    incident_create,
    incident_set_milestone,
    incident_set_status,
    incident_update,
    milestone_problems,
)

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)


def test_a_new_incident_is_investigating_and_detected_now(editor):
    incident = incident_create(title="MFU dropped 18%", severity="SEV1", by=editor, tags=["MFU"])
    assert incident.status == Incident.Status.INVESTIGATING
    assert incident.detected_at is not None
    record = incident.milestones.get(milestone="detected")
    assert (record.source, record.set_by) == (MilestoneRecord.Source.STATUS, editor)
    assert [t.name for t in incident.tags.all()] == ["mfu"]


def test_bad_input_is_refused_with_a_reason(editor):
    with pytest.raises(IncidentError, match="title"):
        incident_create(title="  ", severity="SEV1", by=editor)
    with pytest.raises(IncidentError, match="severity"):
        incident_create(title="x", severity="SEV9", by=editor)
    with pytest.raises(IncidentError, match="list of strings"):
        incident_create(title="x", severity="SEV3", by=editor, affected_hosts="node1")
    assert Incident.objects.count() == 0


def test_status_changes_stamp_the_milestones_they_imply_once(incident, editor):
    at = T0 + timedelta(hours=2)
    incident_set_milestone(incident=incident, milestone="detected", at=T0, by=editor)
    incident_set_status(incident=incident, status="mitigated", by=editor, at=at)
    assert incident.acknowledged_at == at and incident.mitigated_at == at
    later = at + timedelta(hours=5)
    incident_set_status(incident=incident, status="closed", by=editor, at=later)
    assert incident.mitigated_at == at  # already set: not moved
    assert incident.resolved_at == incident.closed_at == later
    sources = set(incident.milestones.filter(milestone="closed").values_list("source", flat=True))
    assert sources == {MilestoneRecord.Source.STATUS}
    # reopening keeps the history
    incident_set_status(incident=incident, status="investigating", by=editor)
    assert incident.closed_at == later


def test_out_of_order_times_need_an_explicit_override(incident, editor):
    incident_set_milestone(incident=incident, milestone="detected", at=T0, by=editor)
    with pytest.raises(IncidentError, match=r"Mitigated .* is before Detected"):
        incident_set_milestone(
            incident=incident, milestone="mitigated", at=T0 - timedelta(hours=1), by=editor
        )
    incident.refresh_from_db()
    assert incident.mitigated_at is None
    incident_set_milestone(
        incident=incident,
        milestone="mitigated",
        at=T0 - timedelta(hours=1),
        by=editor,
        override=True,
        note="clock skew on the alerting host",
    )
    assert incident.milestones.filter(milestone="mitigated", override=True).exists()


def test_problems_name_both_milestones():
    problems = milestone_problems({"detected": T0, "resolved": T0 - timedelta(minutes=1)})
    assert problems == ["Resolved (2025-03-01 09:59:00) is before Detected (2025-03-01 10:00:00)"]
    assert milestone_problems({"impact_started": T0, "vendor_engaged": T0 - timedelta(1)})


def test_durations_from_impact_start_with_detection_as_fallback(incident, editor):
    incident_set_milestone(incident=incident, milestone="detected", at=T0, by=editor)
    incident_set_milestone(
        incident=incident, milestone="mitigated", at=T0 + timedelta(hours=3), by=editor
    )
    assert incident.durations["mitigate"] == timedelta(hours=3)
    assert incident.durations["detect"] is None
    incident_set_milestone(
        incident=incident, milestone="impact_started", at=T0 - timedelta(minutes=30), by=editor
    )
    incident_set_milestone(
        incident=incident, milestone="acknowledged", at=T0 + timedelta(minutes=5), by=editor
    )
    incident_set_milestone(
        incident=incident, milestone="resolved", at=T0 + timedelta(days=1), by=editor
    )
    d = incident.durations
    assert d["detect"] == timedelta(minutes=30)
    assert d["acknowledge"] == timedelta(minutes=5)
    assert d["mitigate"] == timedelta(hours=3, minutes=30)
    assert d["resolve"] == timedelta(days=1, minutes=30)


def test_a_milestone_can_be_derived_from_an_artifact(incident, editor, ok_artifact):
    incident_set_milestone(
        incident=incident, milestone="impact_started", at=None, by=editor, artifact=ok_artifact
    )
    assert incident.impact_started_at == datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
    record = incident.milestones.get(milestone="impact_started")
    assert record.source == MilestoneRecord.Source.ARTIFACT and record.artifact == ok_artifact


def test_update_changes_fields_and_tags(incident, editor):
    incident_update(incident=incident, by=editor, title="rack 7 stalls", tags=["fabric"])
    incident.refresh_from_db()
    assert incident.title == "rack 7 stalls"
    assert [t.name for t in incident.tags.all()] == ["fabric"]
    with pytest.raises(IncidentError, match="unknown incident field"):
        incident_update(incident=incident, by=editor, status="closed")
