"""Behaviour added while auditing issue #7 against the code: list filters and search, the
lifecycle and post-mortem diff/restore API, safe timeline links, environment facts in
bundles, sub-second times on the page."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from incidents.bundles.services import bundle_request
from incidents.postmortems import postmortem_save
from incidents.services import (
    IncidentError,
    incident_attach_artifacts,
    incident_create,
    ticket_create,
    timeline_event_create,
)
from tests.artifacts.fabric.conftest import evaluated, upload

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)


# --- list filters and search --------------------------------------------------------------


@pytest.fixture
def three_incidents(editor):
    a = incident_create(
        title="MFU drop after driver upgrade", severity="SEV1", by=editor, cluster="cluster-b",
        hardware_generation="H100", affected_hosts=["gpu-node-07", "gpu-node-08"],
        affected_jobs=["llama-70b-pretrain"],
    )  # fmt: skip
    b = incident_create(
        title="all-reduce stalls on rack 7", severity="SEV2", by=editor, cluster="cluster-a",
        hardware_generation="B200", tags=["roce"],
    )  # fmt: skip
    c = incident_create(title="slow checkpoint", severity="SEV3", by=editor, cluster="cluster-a")
    ticket_create(
        title="NCCL hang", vendor="nvidia_networking", by=editor, incident_ids=[b.pk],
        case_number="00987654",
    )  # fmt: skip
    return a, b, c


def titles(client, **params) -> set[str]:
    rows = client.get("/api/v1/incidents/", params).json()["results"]
    return {r["title"] for r in rows}


def test_the_list_filters_by_cluster_generation_vendor_and_open(
    editor_api, editor_client, three_incidents
):
    a, b, c = three_incidents
    assert titles(editor_api, cluster="cluster-a") == {b.title, c.title}
    assert titles(editor_api, hardware_generation="h100") == {a.title}
    assert titles(editor_api, vendor="nvidia_networking") == {b.title}
    c.status = "closed"
    c.save()
    assert titles(editor_api, open="1") == {a.title, b.title}
    page = editor_client.get("/incidents/", {"vendor": "nvidia_networking"}).content.decode()
    assert b.title in page and a.title not in page and c.title not in page
    for name in ("cluster", "hardware_generation", "vendor", "open"):
        assert f'name="{name}"' in page  # the page offers the filters the API has


def test_search_finds_hosts_jobs_tags_and_case_numbers(editor_api, three_incidents):
    a, b, _ = three_incidents
    assert titles(editor_api, q="gpu-node-07") == {a.title}
    assert titles(editor_api, q="llama-70b") == {a.title}
    assert titles(editor_api, q="roce") == {b.title}
    assert titles(editor_api, q="00987654") == {b.title}
    assert titles(editor_api, q="nothing like this") == set()


# --- lifecycle API ------------------------------------------------------------------------


def test_the_lifecycle_api_says_who_set_each_time_and_how(editor_api, editor, ok_artifact):
    incident = incident_create(
        title="x", severity="SEV2", by=editor, milestones={"detected": T0 + timedelta(hours=1)}
    )
    url = f"/api/v1/incidents/{incident.pk}/lifecycle/"
    refused = editor_api.post(
        url, {"milestone": "impact_started", "artifact": ok_artifact.pk}, format="json"
    )
    assert refused.status_code == 400 and "attached evidence" in refused.json()["detail"]
    incident_attach_artifacts(incident=incident, artifact_ids=[ok_artifact.pk], by=editor)
    derived = editor_api.post(
        url, {"milestone": "impact_started", "artifact": ok_artifact.pk}, format="json"
    )
    assert derived.status_code == 201
    newest = derived.json()[0]
    assert newest["milestone"] == "impact_started" and newest["source"] == "artifact"
    assert newest["artifact"] == ok_artifact.pk and newest["set_by"] == editor.username
    assert newest["at"] == "2025-03-01T10:00:00Z"  # the artifact's capture time
    late = {"milestone": "mitigated", "at": "2025-03-01T09:00:00Z"}
    out_of_order = editor_api.post(url, late, format="json")
    assert out_of_order.status_code == 400 and "before" in out_of_order.json()["detail"]
    forced = editor_api.post(url, {**late, "override": True, "note": "clock skew"}, format="json")
    assert forced.status_code == 201
    assert forced.json()[0]["override"] is True and forced.json()[0]["note"] == "clock skew"
    assert [r["milestone"] for r in editor_api.get(url).json()][:2] == [
        "mitigated", "impact_started",
    ]  # fmt: skip


def test_viewers_cannot_set_lifecycle_times(viewer_api, editor):
    incident = incident_create(title="x", severity="SEV2", by=editor)
    url = f"/api/v1/incidents/{incident.pk}/lifecycle/"
    assert viewer_api.get(url).status_code == 200
    assert viewer_api.post(url, {"milestone": "resolved"}, format="json").status_code == 403


# --- post-mortem diff and restore through the API ------------------------------------------


def test_postmortem_diff_and_restore_api(editor_api, editor, viewer_api):
    incident = incident_create(title="x", severity="SEV2", by=editor)
    postmortem_save(incident=incident, body="root cause: PFC\n", base_revision=0, by=editor)
    postmortem_save(incident=incident, body="root cause: ECN\n", base_revision=1, by=editor)
    base = f"/api/v1/incidents/{incident.pk}/postmortem/"
    diff = editor_api.get(base + "diff/", {"a": 1, "b": 2}).json()
    assert ["del", "-root cause: PFC"] in diff["lines"]
    assert ["add", "+root cause: ECN"] in diff["lines"]
    assert editor_api.get(base + "diff/", {"a": 1, "b": 9}).status_code == 404
    stale = editor_api.post(base + "restore/", {"number": 1, "revision": 1}, format="json")
    assert stale.status_code == 409 and stale.json()["body"] == "root cause: ECN\n"
    assert viewer_api.post(base + "restore/", {"number": 1, "revision": 2}).status_code == 403
    restored = editor_api.post(base + "restore/", {"number": 1, "revision": 2}, format="json")
    assert restored.status_code == 200
    assert restored.json()["revision"] == 3 and restored.json()["body"] == "root cause: PFC\n"
    revisions = editor_api.get(base + "revisions/").json()
    assert revisions[0]["message"] == "Restore revision 1"


def test_the_new_endpoints_are_in_the_openapi_schema(editor_api):
    schema = editor_api.get("/api/v1/schema/", {"format": "json"}).content.decode()
    for path in ("lifecycle/", "postmortem/diff/", "postmortem/restore/"):
        assert f"/api/v1/incidents/{{id}}/{path}" in schema


# --- timeline links -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,<b>", "//evil.example/x",
     "/\\evil.example", "vbscript:x", "http:/x", " /incidents/"],
)  # fmt: skip
def test_hostile_timeline_links_are_refused(editor, url):
    incident = incident_create(title="x", severity="SEV2", by=editor)
    with pytest.raises(IncidentError, match="link_url"):
        timeline_event_create(incident=incident, at=T0, text="t", by=editor, link_url=url)


def test_safe_timeline_links_are_kept_and_the_api_refuses_the_rest(editor_api, editor):
    incident = incident_create(title="x", severity="SEV2", by=editor)
    for url in ("/fabric/findings/3/", "https://nvbugs.example/4711"):
        event = timeline_event_create(incident=incident, at=T0, text="t", by=editor, link_url=url)
        assert event.link_url == url
    bad = editor_api.post(
        f"/api/v1/incidents/{incident.pk}/timeline/",
        {"at": "2025-03-01T10:00:00Z", "kind": "alert", "text": "x", "link_url": "javascript:1"},
        format="json",
    )
    assert bad.status_code == 400 and "link_url" in bad.json()["detail"]


# --- bundle environment and page times ------------------------------------------------------


def test_bundles_carry_hardware_and_software_facts_from_the_evidence(editor, incident):
    smi = evaluated(upload("counters/gpud_nvidia-smi_q_560.35.03.txt", host="gpu-node-07"))
    ibstat = evaluated(upload("counters/gpud_ibstat_h100_some_ports_down.txt", host="gpu-node-07"))
    incident_attach_artifacts(incident=incident, artifact_ids=[smi.pk, ibstat.pk], by=editor)
    bundle = bundle_request(by=editor, incident=incident, redact=True)
    with bundle.file.open("rb") as handle:
        archive = zipfile.ZipFile(io.BytesIO(handle.read()))
    root = f"INC-{incident.pk}-evidence/"
    facts = json.loads(archive.read(root + "manifest.json"))["environment"]["host_facts"]
    assert facts["gpu.driver_version"] == ["560.35.03"]
    assert facts["gpu.cuda_version"] == ["12.6"]
    assert "NVIDIA TITAN V" in facts["gpu.name"]
    assert "28.39.1002" in facts["hca.firmware"]
    summary = archive.read(root + "summary.html").decode()
    assert "<th>gpu.driver_version</th><td>560.35.03</td>" in summary
    assert "gpu-node-07" not in archive.read(root + "manifest.json").decode()  # redacted


def test_the_timeline_and_suggestions_show_subsecond_times(editor_client, editor, incident):
    at = datetime(2025, 3, 1, 10, 7, 8, 408271, tzinfo=UTC)
    timeline_event_create(incident=incident, at=at, text="NCCL WARN", by=editor, kind="alert")
    timeline_event_create(incident=incident, at=T0, text="typed by hand", by=editor)
    page = editor_client.get(reverse("incident-detail", args=[incident.pk])).content.decode()
    table = page.split('id="timeline-table"')[1]
    assert "2025-03-01 10:07:08.408271" in table
    assert "2025-03-01 10:00:00<" in table  # no made-up fraction on a whole second
