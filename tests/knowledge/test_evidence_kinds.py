"""A page cites incidents, findings and reports (pinned), besides runs and artifacts."""

from __future__ import annotations

import io

import pytest
from django.utils import timezone

from knowledge.citations import KINDS, CitationError, resolve_all
from knowledge.services import citation_add

pytestmark = pytest.mark.django_db


def test_the_kinds_are_registered():
    assert {"run", "artifact", "page", "incident", "finding", "report"} <= set(KINDS)


def test_citing_an_incident_pins_what_it_said(make_page, editor, editor_client):
    from incidents.services import incident_create, incident_update

    incident = incident_create(title="PFC storm", severity="SEV2", by=editor,
                               hardware_generation="H100")  # fmt: skip
    page = make_page()
    citation_add(page=page, kind="incident", object_id=incident.pk, by=editor, note="the origin")
    incident_update(incident=incident, by=editor, title="PFC storm, rack 7")
    [cited] = resolve_all(list(page.citations.all()))
    assert cited.title == f"INC-{incident.pk}: PFC storm"  # pinned at citing time
    assert cited.url == incident.get_absolute_url() and "SEV2" in cited.summary
    assert cited.measurements == 0 and not cited.missing
    html = editor_client.get(page.get_absolute_url()).content.decode()
    assert incident.get_absolute_url() in html and "evidence: 0 measurements" in html
    number = incident.pk
    incident.delete()
    [gone] = resolve_all(list(page.citations.all()))
    assert gone.missing and gone.title == f"INC-{number}: PFC storm" and gone.url == ""


def test_citing_a_finding_and_a_report(make_page, editor):
    from artifacts.models import Finding
    from artifacts.services import artifact_ingest
    from reports.models import Report

    artifact = artifact_ingest(stream=io.BytesIO(b"x\n"), name="c.txt", enqueue=False).artifact
    finding = Finding.objects.create(
        artifact=artifact, rule="pfc_pause_storm", fingerprint="f1", severity="critical",
        title="PFC pause storm on eth3 priority 3", explanation="...", host="h1",
        observed_at=timezone.now(),
    )  # fmt: skip
    report = Report.objects.create(kind="compare", title="CX-7 vs CX-6", status="ready",
                                   summary=["busbw +12 %"])  # fmt: skip
    page = make_page()
    citation_add(page=page, kind="finding", object_id=finding.pk, by=editor)
    citation_add(page=page, kind="report", object_id=report.pk, by=editor)
    finding_c, report_c = resolve_all(list(page.citations.all()))
    assert finding_c.title == "PFC pause storm on eth3 priority 3"
    assert finding_c.summary == "critical · pfc_pause_storm · h1"
    assert report_c.title == "CX-7 vs CX-6 (v1)" and report_c.summary == "busbw +12 %"
    assert report_c.url == report.get_absolute_url()


def test_unknown_objects_and_unbuilt_reports_are_refused(make_page, editor):
    from reports.models import Report

    page = make_page()
    with pytest.raises(CitationError, match="no incident #4242"):
        citation_add(page=page, kind="incident", object_id="4242", by=editor)
    pending = Report.objects.create(kind="compare", title="later")
    with pytest.raises(CitationError, match="not built yet"):
        citation_add(page=page, kind="report", object_id=pending.pk, by=editor)
