"""Backlinks on the page view ("used in incidents", "cited by pages") and "pages that apply"
on hardware-profile, run and incident pages."""

from __future__ import annotations

import pytest
from django.utils import timezone

from knowledge.citations import backlinks
from knowledge.querysets import incident_facts, pages_citing_page, profile_facts
from knowledge.services import citation_add

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(editor):  # type: ignore[no-untyped-def]
    from incidents.services import incident_create

    return incident_create(title="PFC storm on rack 7", severity="SEV2", by=editor,
                           hardware_generation="H100")  # fmt: skip


@pytest.fixture
def profile(db):  # type: ignore[no-untyped-def]
    from baselines.models import HardwareProfile

    return HardwareProfile.objects.create(
        slug="h100-cx7-roce", name="H100 SXM, CX-7, RoCE", gpu_model="H100",
        nic_model="ConnectX-7", fabric="roce_v2",
    )  # fmt: skip


# --- backlinks -------------------------------------------------------------------------------


def test_incidents_linking_a_page_are_listed_as_used_in_incidents(make_page, incident, editor,
                                                                  editor_client):  # fmt: skip
    from incidents.postmortems import postmortem_save
    from incidents.services import incident_create, timeline_event_create

    page = make_page(title="RoCE lossless setup")
    make_page(title="RoCE lossless setup, old")  # slug roce-lossless-setup-old: no false hit
    timeline_event_create(incident=incident, at=timezone.now(), by=editor,
                          text=f"followed [the recipe]({page.get_absolute_url()})")  # fmt: skip
    other = incident_create(title="second", severity="SEV3", by=editor)
    postmortem_save(incident=other, body="See /kb/roce-lossless-setup) for the fix.\n",
                    base_revision=0, by=editor)  # fmt: skip
    incident_create(title="unrelated", severity="SEV4", by=editor,
                    summary="see /kb/roce-lossless-setup-old/")  # fmt: skip
    groups = dict(backlinks(page))
    used = groups["Used in incidents"]
    assert [link.url for link in used] == [other.get_absolute_url(), incident.get_absolute_url()]
    assert "post-mortem" in used[0].detail and "timeline" in used[1].detail
    html = editor_client.get(page.get_absolute_url()).content.decode()
    assert "Used in incidents" in html and f"INC-{incident.pk}: PFC storm on rack 7" in html


def test_pages_citing_or_linking_a_page_are_cited_by(make_page, editor, editor_client):
    target = make_page(title="Xid triage")
    citing = make_page(title="Slow node runbook")
    citation_add(page=citing, kind="page", object_id=target.slug, by=editor)
    linking = make_page(
        title="NPI template", body=f"Start with [Xid]({target.get_absolute_url()}).\n"
    )
    make_page(title="Near miss", body="see /kb/xid-triage-2/ instead\n")
    assert [p.title for p in pages_citing_page(target)] == ["NPI template", "Slow node runbook"]
    html = editor_client.get(target.get_absolute_url()).content.decode()
    assert linking.get_absolute_url() in html and citing.get_absolute_url() in html
    assert "Near miss" not in html


# --- pages that apply ------------------------------------------------------------------------


def test_profile_and_incident_facts(profile, incident):
    assert profile_facts(profile) == {"gpu": "H100", "nic": "ConnectX-7", "fabric": "roce"}
    assert incident_facts(incident) == {"gpu": "H100"}
    incident.hardware_profile = "h100-cx7-roce"
    incident.hardware_generation = ""
    assert incident_facts(incident) == {"gpu": "H100", "nic": "ConnectX-7", "fabric": "roce"}


def test_the_profile_page_lists_pages_that_apply(make_page, profile, editor_client):
    make_page(title="RoCE on CX-7", applies_to={"nic": ["ConnectX-7"], "fabric": ["roce"]})
    make_page(title="IB only", applies_to={"fabric": ["infiniband"]})
    make_page(title="MI300X tuning", applies_to={"gpu": ["MI300X"]})
    html = editor_client.get(profile.get_absolute_url()).content.decode()
    assert 'id="kb-applicable"' in html and "RoCE on CX-7" in html
    assert "IB only" not in html and "MI300X tuning" not in html


def test_the_incident_page_lists_pages_that_apply(make_page, incident, editor_client):
    make_page(title="H100 NCCL env", applies_to={"gpu": ["H100"]})
    make_page(title="B200 NCCL env", applies_to={"gpu": ["B200"]})
    html = editor_client.get(incident.get_absolute_url()).content.decode()
    assert 'id="kb-applicable"' in html and "H100 NCCL env" in html and "B200 NCCL env" not in html


def test_an_incident_without_hardware_says_so(editor, editor_client):
    from incidents.services import incident_create

    bare = incident_create(title="no hardware", severity="SEV4", by=editor)
    html = editor_client.get(bare.get_absolute_url()).content.decode()
    assert "Nothing known about the hardware here" in html


def test_the_run_page_keeps_its_knowledge_card(make_page, parsed_run, editor_client):
    run = parsed_run()
    html = editor_client.get(run.get_absolute_url()).content.decode()
    assert 'id="kb-run-knowledge"' in html
