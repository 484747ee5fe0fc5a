"""Incident facts proposed from the evidence, accepted as proposed or edited, with source."""

from __future__ import annotations

import pytest

from incidents.facts import propose
from incidents.models import FactRecord
from incidents.services import IncidentError, incident_accept_fact, incident_attach_artifacts
from tests.incidents.test_grouped_suggestions import watchdog_artifact

pytestmark = pytest.mark.django_db


@pytest.fixture
def bare_incident(editor):
    from incidents.services import incident_create

    return incident_create(title="job 1234 hangs", severity="SEV2", by=editor)


def proposals(incident):
    return {p.field: p for p in propose(incident)}


def test_the_watchdog_log_proposes_hosts_nics_nccl_cluster_and_job(bare_incident, editor):
    artifact = watchdog_artifact(metadata={"cluster": "ib-east", "job_id": "1234"})
    incident_attach_artifacts(incident=bare_incident, artifact_ids=[artifact.pk], by=editor)
    found = proposals(bare_incident)
    assert found["affected_hosts"].value == ["h100-n001", "h100-n002"]
    assert found["affected_hosts"].source.startswith("hosts with a symptom in ")
    assert found["affected_hosts"].artifact_id == artifact.pk
    assert found["nccl"].value == "2.21.5"
    assert found["cuda"].value == "12.4"  # NCCL's "cudaDriverVersion 12040" on every rank
    assert found["gpus"].value == ["h100-n001: 4 GPUs", "h100-n002: 4 GPUs"]
    assert "mlx5_0:1/IB" in found["nics"].value
    assert found["cluster"].value == "ib-east" and found["affected_jobs"].value == ["1234"]


def test_accepting_writes_the_field_and_records_the_source(bare_incident, editor):
    artifact = watchdog_artifact(metadata={"cluster": "ib-east"})
    incident_attach_artifacts(incident=bare_incident, artifact_ids=[artifact.pk], by=editor)
    hosts = proposals(bare_incident)["affected_hosts"]
    incident_accept_fact(
        incident=bare_incident, field="affected_hosts", value=hosts.value, by=editor,
        source=hosts.source, artifact_id=hosts.artifact_id,
    )  # fmt: skip
    nccl = proposals(bare_incident)["nccl"]
    incident_accept_fact(incident=bare_incident, field="nccl", value="2.21.5+cuda12.4", by=editor,
                         source=nccl.source, edited=True)  # fmt: skip
    bare_incident.refresh_from_db()
    assert bare_incident.affected_hosts == ["h100-n001", "h100-n002"]
    assert bare_incident.environment["nccl"] == "2.21.5+cuda12.4"
    record = FactRecord.objects.get(incident=bare_incident, field="affected_hosts")
    assert record.artifact == artifact and record.source == hosts.source and not record.edited
    assert FactRecord.objects.get(field="nccl").edited
    left = proposals(bare_incident)
    assert "affected_hosts" not in left and "cluster" in left


def test_the_impact_window_sets_impact_started(bare_incident, editor):
    incident_accept_fact(
        incident=bare_incident, field="impact_window", by=editor, source="log",
        value="2025-03-01T10:05:11+00:00 to 2025-03-01T10:07:09+00:00",
    )  # fmt: skip
    bare_incident.refresh_from_db()
    assert bare_incident.impact_started_at.isoformat() == "2025-03-01T10:05:11+00:00"
    assert bare_incident.environment["impact_window"]["last"] == "2025-03-01T10:07:09+00:00"
    with pytest.raises(IncidentError, match="two ISO times"):
        incident_accept_fact(incident=bare_incident, field="impact_window", value="soon", by=editor)


def test_the_page_shows_proposals_to_editors(bare_incident, editor, editor_client):
    artifact = watchdog_artifact(metadata={"cluster": "ib-east"})
    incident_attach_artifacts(incident=bare_incident, artifact_ids=[artifact.pk], by=editor)
    html = editor_client.get(bare_incident.get_absolute_url()).content.decode()
    assert 'id="fact-affected_hosts"' in html and "h100-n001, h100-n002" in html
    answer = editor_client.post(
        f"/incidents/{bare_incident.pk}/facts/",
        {"field": "cluster", "value": "ib-east-2", "proposed": "ib-east", "source": "meta"},
    )
    assert answer.status_code == 302
    bare_incident.refresh_from_db()
    assert bare_incident.cluster == "ib-east-2" and FactRecord.objects.get().edited
