"""Suggestions of one symptom fold into one group: an 8-rank watchdog timeout is one
timeline event linked to every rank's line, not sixteen."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifacts.parsing import artifact_parse
from incidents.grouping import GROUP_PREFIX, grouped_for
from incidents.models import SuggestionDecision
from incidents.services import incident_attach_artifacts, suggestion_accept, suggestion_reject
from incidents.suggestions import suggestions_for
from tests.incidents.conftest import ingest_bytes

pytestmark = pytest.mark.django_db

# Constructed (no real watchdog-timeout log is among the shared samples): 8 ranks on two
# hosts, NCCL 2.21.5 over IB, two NET/IB completion errors, then every rank's watchdog fires
# on ALLGATHER seq 1 (timeout 120 s) and reports the exception.
WATCHDOG_LOG = (
    Path(__file__).parents[1]
    / "fixtures"
    / "incidents"
    / ("nccl_watchdog_timeout_8ranks_2hosts.log")
)


CAPTURED = "2025-03-01T10:20:00Z"


def watchdog_artifact(metadata=None):
    artifact = ingest_bytes(
        WATCHDOG_LOG.name,
        WATCHDOG_LOG.read_bytes(),
        metadata={"captured_at": CAPTURED, **(metadata or {})},
    )
    return artifact_parse(artifact_id=artifact.pk)


def attach(incident, editor, artifact):
    incident_attach_artifacts(incident=incident, artifact_ids=[artifact.pk], by=editor)


def test_the_watchdog_log_folds_into_one_suggestion_per_symptom(incident, editor):
    artifact = watchdog_artifact()
    assert artifact.kind == "nccl_debug"
    attach(incident, editor, artifact)
    assert len(suggestions_for(incident)) == 20  # what the page used to list: one per line
    items = grouped_for(incident)
    groups = [s for s in items if s.is_group]
    assert len(groups) == 3  # the WARN on two ranks, the timeout, the exception
    timeout = next(g for g in groups if "watchdog timeout" in g.text)
    assert timeout.text.startswith(
        "**NCCL watchdog timeout in ALLGATHER seq 1** on 8 ranks of 2 hosts, 120 s, first at "
    )
    # The lines' own times when the reading keeps the collector's ISO stamps; else the
    # capture time, marked approximate (PyTorch's glog time has no year).
    assert timeout.at.year == 2025 and "2025-03-01 10:" in timeout.text
    assert timeout.count == 8 and timeout.ranks == tuple(range(8))
    assert timeout.hosts == ("h100-n001", "h100-n002") and timeout.key.startswith(GROUP_PREFIX)
    warn = next(g for g in groups if "NCCL WARN" in g.text)
    assert warn.count == 2 and "Got completion from peer" in warn.text
    assert len(items) == 5  # + the capture and upload times


def test_accepting_a_group_makes_one_event_linked_to_all_its_lines(incident, editor):
    attach(incident, editor, watchdog_artifact())
    group = next(s for s in grouped_for(incident) if s.is_group and "timeout" in s.text)
    event = suggestion_accept(incident=incident, key=group.key, by=editor, key_event=True)
    assert event.at == group.at
    assert len(event.sources) == 8 and {s["rank"] for s in event.sources} == set(range(8))
    assert {s["host"] for s in event.sources} == {"h100-n001", "h100-n002"}
    assert incident.events.count() == 1
    # every member counts as decided: none comes back one by one
    decided = set(
        SuggestionDecision.objects.filter(incident=incident).values_list("key", flat=True)
    )
    assert {m.key for m in group.members} <= decided
    assert all("watchdog timeout" not in s.text for s in grouped_for(incident))


def test_rejecting_a_group_rejects_its_members(incident, editor):
    attach(incident, editor, watchdog_artifact())
    group = next(s for s in grouped_for(incident) if s.is_group and "exception" in s.text.lower())
    suggestion_reject(incident=incident, key=group.key, by=editor)
    assert len(grouped_for(incident)) == 4
    assert SuggestionDecision.objects.filter(incident=incident, decision="rejected").count() == 9


def test_the_api_lists_groups_with_counts_hosts_and_members(incident, editor, editor_api):
    attach(incident, editor, watchdog_artifact())
    base = f"/api/v1/incidents/{incident.pk}/"
    items = editor_api.get(base + "suggested-events/").json()
    timeout = next(i for i in items if "watchdog timeout" in i["text"])
    assert timeout["count"] == 8 and timeout["hosts"] == ["h100-n001", "h100-n002"]
    assert timeout["ranks"] == list(range(8)) and len(timeout["members"]) == 8
    answer = editor_api.post(
        base + "suggested-events/accept/", {"key": timeout["key"]}, format="json"
    )
    assert answer.status_code == 201 and len(answer.json()["sources"]) == 8


def test_the_page_shows_the_group_expandable_to_its_lines(incident, editor, editor_client):
    attach(incident, editor, watchdog_artifact())
    html = editor_client.get(incident.get_absolute_url()).content.decode()
    assert html.count('class="suggestion-group"') == 3
    assert "8 individual lines" in html and "Accept group" in html


def test_an_incident_opened_from_the_artifact_page_has_it_as_evidence(editor_client):
    artifact = watchdog_artifact()
    page = editor_client.get(artifact.get_absolute_url()).content.decode()
    assert f'href="/incidents/new/?artifact={artifact.pk}"' in page
    form = editor_client.get(f"/incidents/new/?artifact={artifact.pk}").content.decode()
    assert 'id="source-artifact"' in form and f"Investigate {WATCHDOG_LOG.name}" in form
    answer = editor_client.post(
        "/incidents/new/",
        {"title": "hang", "severity": "SEV2", "attach_artifact": str(artifact.pk)},
    )
    assert answer.status_code == 302
    from incidents.models import Incident

    incident = Incident.objects.get()
    assert list(incident.artifacts.all()) == [artifact]
    assert any(s.is_group for s in grouped_for(incident))


def test_a_real_roce_log_with_every_rank_timing_out_is_one_group(incident, editor):
    # The real 2-node, 4-rank RoCE NCCL INFO log with what a hang adds on every rank:
    # PyTorch's watchdog timeout of the same collective.
    from tests.samples import sample

    real = sample("nccl_debug/ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log").read_bytes()
    hang = "".join(
        f"[rank{r}]:[E301 10:17:08.40827{r}257 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLGATHER, "
        "NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 "
        "milliseconds before timing out.\n"
        for r in range(4)
    )
    artifact = ingest_bytes("job-1234.log", real + hang.encode(), kind="nccl_debug")
    artifact = artifact_parse(artifact_id=artifact.pk)
    attach(incident, editor, artifact)
    (group,) = [s for s in grouped_for(incident) if s.is_group and "timeout" in s.text]
    # (the hosts join the text when the parse maps PyTorch's ranks to NCCL's hosts)
    assert group.text.startswith("**NCCL watchdog timeout in ALLGATHER seq 1580** on 4 ranks")
    assert ", 600 s, first at " in group.text and group.ranks == (0, 1, 2, 3)
