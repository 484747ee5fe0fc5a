"""Knowledge pages by symptom: pages declare what they explain; incidents, findings, runs
and alerts list the pages whose symptoms they show."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from knowledge import symptoms
from knowledge.importexport import export_page, parse_page
from knowledge.models import Page, PageStatus
from knowledge.services import PageError, page_set_symptoms
from knowledge.symptoms import Observed, SymptomError, clean, matches

pytestmark = pytest.mark.django_db


@pytest.fixture
def starter_pages(db):  # type: ignore[no-untyped-def]
    call_command("load_kb", stdout=io.StringIO())


@pytest.fixture
def incident(editor):  # type: ignore[no-untyped-def]
    from incidents.services import incident_create

    return incident_create(title="job 1234 hangs in all_gather", severity="SEV2", by=editor)


def test_declarations_are_validated_and_normalised():
    assert clean("Log:Watchdog_Timeout, xid:79\ntext:NET/IB") == [
        "log:watchdog_timeout", "xid:79", "text:NET/IB",
    ]  # fmt: skip
    for bad in ("watchdog", "xid:abc", "colour:red", "log:"):
        with pytest.raises(SymptomError):
            clean([bad])


def test_matching_is_exact_for_kinds_and_substring_for_texts():
    seen = Observed({"log:watchdog_timeout", "xid:79"}, ["NCCL WARN NET/IB : Got completion"])
    assert matches(["log:watchdog_timeout", "xid:48", "text:net/ib"], seen) == [
        "log:watchdog_timeout", "text:net/ib",
    ]  # fmt: skip
    assert matches(["rule:port_down"], seen) == []


def test_every_starter_declaration_names_a_real_rule_or_event_kind(starter_pages):
    from artifacts.fabric.fault_events import FAULT_EVENT_KINDS
    from artifacts.fabric.rules import RULES_BY_ID
    from baselines.models import Alert

    declared = [s for p in Page.objects.all() for s in p.symptoms]
    assert len(declared) > 60
    for symptom in declared:
        kind, _, value = symptom.partition(":")
        if kind == "rule":
            assert value in RULES_BY_ID, symptom
        elif kind == "log":
            assert value in FAULT_EVENT_KINDS, symptom
        elif kind == "alert":
            assert value in Alert.Kind.values, symptom


def test_the_nccl_log_page_matches_a_watchdog_timeout_log(starter_pages, incident, editor):
    from incidents.services import incident_attach_artifacts
    from tests.incidents.test_grouped_suggestions import watchdog_artifact

    incident_attach_artifacts(incident=incident, artifact_ids=[watchdog_artifact().pk], by=editor)
    found = {page.slug: hits for page, hits in symptoms.pages_for_symptoms(
        symptoms.observed_for(incident))}  # fmt: skip
    assert "log:watchdog_timeout" in found["reading-nccl-debug-logs"]
    assert "text:NET/IB" in found["reading-nccl-debug-logs"]
    assert "log:watchdog_exception" in found["pytorch-nccl-errors-and-flight-recorder"]


def test_the_incident_page_lists_pages_for_its_symptoms(
    starter_pages, incident, editor, editor_client
):
    from incidents.services import incident_attach_artifacts
    from tests.incidents.test_grouped_suggestions import watchdog_artifact

    incident_attach_artifacts(incident=incident, artifact_ids=[watchdog_artifact().pk], by=editor)
    html = editor_client.get(incident.get_absolute_url()).content.decode()
    assert 'id="kb-symptoms"' in html and "/kb/reading-nccl-debug-logs/" in html


def test_a_finding_page_lists_pages_for_its_rule(starter_pages, editor_client):
    from artifacts.fabric.services import fabric_refresh
    from artifacts.models import Finding
    from tests.incidents.conftest import ingest

    ibstat = ingest("counters/gpud_ibstat_h100_some_ports_down.txt", host="h100-b")
    fabric_refresh(artifact_id=ibstat.pk)
    finding = Finding.objects.filter(artifact=ibstat).first()
    html = editor_client.get(finding.get_absolute_url()).content.decode()
    assert 'id="kb-symptoms"' in html and "/kb/infiniband-link-health/" in html


def test_symptoms_round_trip_through_front_matter_and_refuse_junk(make_page, editor):
    page = make_page(status=PageStatus.PUBLISHED)
    assert page_set_symptoms(page=page, symptoms="log:nccl_warn, xid:79")
    assert not page_set_symptoms(page=page, symptoms=["log:nccl_warn", "xid:79"])
    parsed = parse_page(export_page(page))
    assert parsed.symptoms == ["log:nccl_warn", "xid:79"]
    with pytest.raises(PageError):
        page_set_symptoms(page=page, symptoms="nonsense")


def test_the_editor_sets_symptoms(make_page, editor_client):
    page = make_page(status=PageStatus.PUBLISHED)
    form = editor_client.get(f"/kb/{page.slug}/edit/").content.decode()
    assert 'name="symptoms"' in form


def test_run_and_alert_subjects_show_their_symptoms(starter_pages, parsed_run, editor_client):
    from baselines.models import Alert

    run = parsed_run()
    html = editor_client.get(run.get_absolute_url()).content.decode()
    assert 'id="kb-symptoms"' in html
    alert = Alert(kind=Alert.Kind.REGRESSION)
    found = [p.slug for p, _ in symptoms.pages_for_symptoms(symptoms.observed_for(alert))]
    assert "slow-node-triage-runbook" in found and "nccl-tests-methodology" in found
