"""Suggested timeline events from what the other apps derived from the evidence: counter and
fabric findings, baseline regression alerts, log events stored by the loaders, failed
nccl-tests runs. End to end: real samples go through ingest -> parse -> findings/baselines,
get attached, and the suggestions are accepted or rejected through the service, the API and
the page."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from artifacts.models import Artifact, Finding
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from baselines.models import Alert
from incidents import suggestions
from incidents.models import SuggestionDecision, TimelineEvent
from incidents.services import incident_attach_artifacts, suggestion_accept, suggestion_reject
from incidents.suggestions import suggestions_for
from tests.artifacts.fabric.conftest import evaluated, upload, upload_text
from tests.samples import all_samples, sample

pytestmark = pytest.mark.django_db

BYTEPS = "ethtool_rdma/byteps_issue179_mlx5_ethtool_S_grep_prio_before_after_EXCERPT.txt"
IBSTAT_DOWN = "counters/gpud_ibstat_h100_some_ports_down.txt"
DMESG_XID = "counters/gpud_dmesg_with_NVRM_Xid_119.log"
FABRIC_MANAGER = "counters/gpud_nvidia_fabricmanager.log"
NCCL_ROCE = "nccl_debug/ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log"


def attach(incident, editor, *artifacts) -> None:
    incident_attach_artifacts(incident=incident, artifact_ids=[a.pk for a in artifacts], by=editor)


def by_source(incident, source: str) -> list[suggestions.Suggestion]:
    return [s for s in suggestions_for(incident) if s.source == source]


def ethtool_reading(pauses: int, duration: int) -> str:
    return (
        "root@gpu-node-07:~# ethtool -S eth3\nNIC statistics:\n"
        f"     rx_prio3_pause: {pauses}\n     rx_prio3_pause_duration: {duration}\n"
        f"     rx_prio3_bytes: {pauses * 1000}\n     rx_discards_phy: 5\n"
        "     tx_pause_storm_warning_events: 0\n"
    )


@pytest.fixture
def pause_storm(db):
    """Two ethtool -S uploads of one NIC 60.5 s apart; 20k pauses/s on priority 3 between."""
    first = upload_text(
        "eth3-before.txt", ethtool_reading(1_000, 10_000),
        metadata={"captured_at": "2025-03-01T10:00:00.000Z"},
    )  # fmt: skip
    second = upload_text(
        "eth3-after.txt", ethtool_reading(1_211_000, 12_110_000),
        metadata={"captured_at": "2025-03-01T10:01:00.500Z"},
    )  # fmt: skip
    return evaluated(first), evaluated(second)


# --- counter and fabric findings ------------------------------------------------------------


def test_a_pfc_pause_storm_finding_is_suggested_with_its_subsecond_time(
    incident, editor, pause_storm
):
    _, after = pause_storm
    attach(incident, editor, after)
    [storm] = [s for s in by_source(incident, "finding") if ":pfc_pause_storm:" in s.key]
    finding = Finding.objects.get(artifact=after, rule="pfc_pause_storm")
    assert storm.at == datetime(2025, 3, 1, 10, 1, 0, 500000, tzinfo=UTC)  # the later snapshot
    assert storm.kind == "alert" and not storm.approximate_time
    assert "PFC pause storm on eth3 priority 3" in storm.text
    assert (storm.ref_kind, storm.ref_id) == ("finding", str(finding.pk))
    assert storm.link_url == finding.get_absolute_url()
    event = suggestion_accept(incident=incident, key=storm.key, by=editor)
    assert event.at.microsecond == 500000 and event.artifact == after
    assert (event.ref_kind, event.ref_id, event.link_url) == (
        "finding", str(finding.pk), f"/fabric/findings/{finding.pk}/",
    )  # fmt: skip


def test_the_earlier_upload_of_a_pair_also_suggests_the_finding(incident, editor, pause_storm):
    before, after = pause_storm
    attach(incident, editor, before)
    storm = [s for s in by_source(incident, "finding") if ":pfc_pause_storm:" in s.key]
    assert len(storm) == 1 and storm[0].artifact_id == after.pk  # the finding's own artifact


def test_finding_decisions_survive_a_reevaluation(incident, editor, pause_storm):
    _, after = pause_storm
    attach(incident, editor, after)
    key = next(s.key for s in by_source(incident, "finding") if ":pfc_pause_storm:" in s.key)
    suggestion_reject(incident=incident, key=key, by=editor)
    evaluated(after)  # the findings pass runs again: same fingerprint, same key
    assert key not in {s.key for s in suggestions_for(incident)}
    assert key in {s.key for s in suggestions_for(incident, include_decided=True)}


def test_ports_down_in_a_real_ibstat_become_critical_suggestions(incident, editor):
    artifact = evaluated(upload(IBSTAT_DOWN, host="h100-b"))
    attach(incident, editor, artifact)
    # (the efficiency rules also note a port below its adapter's speed: not this test's point)
    found = [s for s in by_source(incident, "finding") if "port_down" in s.key]
    assert sorted(s.text.split("**: ")[1].split(" (")[0] for s in found) == [
        "Port mlx5_2/1 is DOWN", "Port mlx5_7/1 is DOWN", "Port mlx5_8/1 is DOWN",
    ]  # fmt: skip
    # ibstat prints no time and the upload had no captured_at: the upload time is used
    assert all(s.kind == "alert" and s.approximate_time for s in found)


def test_the_byteps_before_after_excerpt_pairs_into_rates_but_raises_no_finding(incident, editor):
    # The excerpt has only rx/tx_prio*_bytes/packets (no pause counters): rates, no PFC
    # finding, so nothing beyond its capture/upload times is suggested.
    artifact = evaluated(
        upload(BYTEPS, host="worker-1", metadata={"snapshot_interval_s": 30,
                                                  "captured_at": "2025-03-01T10:00:00.25Z"})
    )  # fmt: skip
    attach(incident, editor, artifact)
    assert {s.source for s in suggestions_for(incident)} == {"artifact"}
    captured = next(s for s in suggestions_for(incident) if s.key.endswith(":captured"))
    assert captured.at == datetime(2025, 3, 1, 10, 0, 0, 250000, tzinfo=UTC)


# --- log events (kernel and NCCL) -------------------------------------------------------


def test_a_real_dmesg_xid_gives_timestamped_events_and_a_finding(incident, editor):
    artifact = evaluated(upload(DMESG_XID, metadata={"captured_at": "2025-02-23T16:31:00Z"}))
    attach(incident, editor, artifact)
    xids = by_source(incident, "dmesg")
    assert [s.at.strftime("%H:%M:%S") for s in xids] == [
        "16:24:18", "16:24:24", "16:24:30", "16:27:12", "16:30:13",
    ]  # fmt: skip  # each Xid line's own time ([Sun Feb 23 16:24:18 2025] ...)
    assert all(s.kind == "alert" and not s.approximate_time for s in xids)
    assert xids[0].text.startswith("GPU Xid 119 on 0000:9b:00: `NVRM: Xid (PCI:0000:9b:00): 119")
    [finding] = by_source(incident, "finding")
    assert "Xid 119" in finding.text and finding.at == xids[0].at


def test_a_fabric_manager_nvswitch_error_is_suggested_and_routine_lines_are_not(incident, editor):
    artifact = evaluated(upload(FABRIC_MANAGER))
    assert artifact.kind == "fabric_manager"
    attach(incident, editor, artifact)
    [sxid] = by_source(incident, "fabric_manager")  # one ERROR line among 54 entries
    assert sxid.at.replace(tzinfo=None) == datetime(2025, 2, 27, 15, 10, 2)
    assert sxid.kind == "alert"
    assert sxid.text.startswith("Fabric Manager: NVSwitch error")
    assert "non-fatal error 12028" in sxid.text


def nccl_log_with_errors() -> bytes:
    """The real RoCE NCCL INFO log with what a failing job adds: a WARN with a log shipper's
    ISO timestamp (microseconds) and PyTorch's watchdog timeout."""
    extra = (
        "2025-03-01T10:07:08.408271Z gdr114:1766944:1766955 [0] transport/net_ib.cc:1295 "
        "NCCL WARN NET/IB : Got completion from peer 10.20.10.116<35211> with error 12, "
        "opcode 0, len 0, vendor err 129 (Recv) localGid ::ffff:10.20.10.114\n"
        "[rank1]:[E301 10:17:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLGATHER, "
        "NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 "
        "milliseconds before timing out.\n"
    )
    return sample(NCCL_ROCE).read_bytes() + extra.encode()


def ingest_log(name: str, data: bytes, **kwargs):
    outcome = artifact_ingest(
        stream=io.BytesIO(data), name=name, enqueue=False,
        metadata={"captured_at": "2025-03-01T10:20:00Z"}, **kwargs,
    )  # fmt: skip
    return artifact_parse(artifact_id=outcome.artifact.pk)


def assert_warn_and_timeout(found: list[suggestions.Suggestion]) -> suggestions.Suggestion:
    by_label = {s.text.split(":")[0]: s for s in found}
    warn = by_label["NCCL WARN on gdr114"]
    assert warn.at == datetime(2025, 3, 1, 10, 7, 8, 408271, tzinfo=UTC)  # microseconds kept
    assert warn.kind == "alert" and not warn.approximate_time
    assert "Got completion from peer" in warn.text
    timeout = next(s for k, s in by_label.items() if k.startswith("PyTorch watchdog timeout"))
    assert timeout.kind == "alert" and "SeqNum=1580" in timeout.text
    assert timeout.approximate_time  # glog's "E301 10:17:08" has no year: not guessed
    return warn


def test_nccl_debug_warns_and_watchdog_timeouts_come_from_the_stored_log_events(incident, editor):
    artifact = ingest_log("job-1234.log", nccl_log_with_errors(), kind="nccl_debug")
    assert artifact.log_events.filter(kind="nccl_warn").exists()
    attach(incident, editor, artifact)
    warn = assert_warn_and_timeout(by_source(incident, "nccl_debug"))
    event = suggestion_accept(incident=incident, key=warn.key, by=editor)
    assert event.at == warn.at and event.ref_kind == "nccl_debug"
    assert event.at.microsecond == 408271


def test_nccl_tests_output_with_nccl_debug_lines_also_suggests_its_warns(incident, editor):
    # The real sample is an nccl-tests all_gather run with NCCL_DEBUG=INFO: detected as
    # nccl_tests, whose parser keeps the run and not the WARN lines; the parse reads it a
    # second time with the nccl_debug parser, which stores them as log events.
    artifact = ingest_log("job-1234.log", nccl_log_with_errors())
    assert artifact.kind == "nccl_tests" and artifact.runs.exists()
    attach(incident, editor, artifact)
    assert_warn_and_timeout(by_source(incident, "nccl_debug"))


# --- nccl-tests failures -------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    # both sample folders alike (../shared/more-samples adds a failed 16-rank Sophia run)
    [*all_samples("nccl_tests", "*FAIL*"), *all_samples("nccl_tests", "*TRUNCATED*")],
    ids=lambda p: p.name,
)
def test_failed_and_truncated_nccl_tests_samples_are_suggested(incident, editor, path):
    with path.open("rb") as stream:
        outcome = artifact_ingest(
            stream=stream, name=path.name, enqueue=False,
            metadata={"captured_at": "2025-03-01T10:05:00.125Z"},
        )  # fmt: skip
    artifact = artifact_parse(artifact_id=outcome.artifact.pk)
    attach(incident, editor, artifact)
    failed = by_source(incident, "nccl_tests")
    runs = {r.pk: r for r in artifact.runs.all()}
    assert failed and all(s.run_id in runs for s in failed)
    if "FAIL" in path.name:
        assert all(str(runs[s.run_id].errors[0])[:60] in s.text for s in failed)
        if path.name.startswith("xxrjun"):
            assert all("remote process exited or there was a network error" in s.text
                       for s in failed)  # fmt: skip
    else:
        assert all("stopped before its footer" in s.text for s in failed)
    # these logs print no start time: the capture time stands in, and the page says "≈"
    assert all(s.approximate_time and s.at.microsecond == 125000 for s in failed)


# --- baseline regression alerts -------------------------------------------------------------


@pytest.fixture
def regressed_artifact(eager_tasks, django_capture_on_commit_callbacks):
    """The demo history of h200-roce-2x8 through ingest -> parse -> baselines: the first
    nccl-tests file on NCCL 2.23.4 raises regression alerts on its run."""
    from tests.baselines.baseline_fixtures import load_demo

    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"])
    first = Alert.objects.filter(kind="regression", run__isnull=False).order_by("measured_at")[0]
    return first.run.artifact


def test_regression_alerts_on_the_artifacts_runs_are_one_suggestion_per_run(
    incident, editor, regressed_artifact
):
    attach(incident, editor, regressed_artifact)
    found = by_source(incident, "baseline_alert")
    run = regressed_artifact.runs.get()
    alerts = Alert.objects.filter(run=run, kind="regression")
    assert len(found) == 1 and found[0].run_id == run.pk and found[0].kind == "alert"
    worst = max(alerts, key=lambda a: abs(a.magnitude_pct))
    assert found[0].ref_id == str(worst.pk) and found[0].link_url == worst.get_absolute_url()
    assert f"{worst.magnitude_pct:+.1f}% on all_reduce" in found[0].text
    assert f"{alerts.count() - 1} more series" in found[0].text
    assert "NCCL 2.21.5 → 2.23.4" in found[0].text
    assert found[0].at == worst.measured_at


def test_accepting_an_alert_from_the_page_links_the_event_to_the_alert(
    editor_client, incident, editor, regressed_artifact
):
    attach(incident, editor, regressed_artifact)
    page = editor_client.get(reverse("incident-detail", args=[incident.pk])).content.decode()
    [suggestion] = by_source(incident, "baseline_alert")
    assert f'data-key="{suggestion.key}"' in page
    assert f'href="{suggestion.link_url}" class="ref-link">alert #{suggestion.ref_id}' in page
    response = editor_client.post(
        reverse("incident-suggestion", args=[incident.pk, "accept"]), {"key": suggestion.key}
    )
    assert response.status_code == 302
    event = TimelineEvent.objects.get(incident=incident, suggestion_key=suggestion.key)
    assert (event.ref_kind, event.ref_id, event.run_id) == (
        "alert",
        suggestion.ref_id,
        suggestion.run_id,
    )
    page = editor_client.get(reverse("incident-detail", args=[incident.pk])).content.decode()
    assert f'data-key="{suggestion.key}"' not in page  # decided: no longer suggested
    assert f">alert #{suggestion.ref_id}</a>" in page.split('id="timeline-table"')[1]


def test_alert_decisions_survive_a_reparse(
    incident, editor, regressed_artifact, django_capture_on_commit_callbacks
):
    attach(incident, editor, regressed_artifact)
    [suggestion] = by_source(incident, "baseline_alert")
    suggestion_reject(incident=incident, key=suggestion.key, by=editor)
    with django_capture_on_commit_callbacks(execute=True):  # new run rows, alerts re-pointed
        artifact_parse(artifact_id=regressed_artifact.pk)
    again = suggestions_for(incident, include_decided=True)
    assert suggestion.key in {s.key for s in again if s.source == "baseline_alert"}
    assert not by_source(incident, "baseline_alert")


def test_invalid_alerts_are_not_suggested(incident, editor, regressed_artifact):
    Alert.objects.filter(run__artifact=regressed_artifact).update(status="invalid")
    attach(incident, editor, regressed_artifact)
    assert not by_source(incident, "baseline_alert")


# --- API ----------------------------------------------------------------------------------


def test_api_lists_accepts_and_rejects_finding_suggestions(editor_api, editor, incident):
    artifact = evaluated(upload(IBSTAT_DOWN, host="h100-b"))
    url = f"/api/v1/incidents/{incident.pk}/"
    assert (
        editor_api.post(
            url + "artifacts/", {"artifact_ids": [artifact.pk]}, format="json"
        ).status_code
        == 201
    )
    listed = editor_api.get(url + "suggested-events/").json()
    # three ports down: one rule, so one group whose members are the three findings
    (group,) = [s for s in listed if s["source"] == "finding" and s["key"].startswith("group:")]
    assert group["key"].startswith("group:") and group["count"] == 3
    findings = group["members"]
    assert len(findings) == 3 and all(
        s["link_url"].startswith("/fabric/findings/") for s in findings
    )
    accepted = editor_api.post(
        url + "suggested-events/accept/",
        {"key": findings[0]["key"], "key_event": True},
        format="json",
    )
    assert accepted.status_code == 201
    body = accepted.json()
    assert body["ref_kind"] == "finding" and body["ref_id"] == findings[0]["ref_id"] and body["key"]
    assert body["link_url"] == findings[0]["link_url"]
    rejected = editor_api.post(
        url + "suggested-events/reject/", {"key": findings[1]["key"]}, format="json"
    )
    assert rejected.status_code == 204
    left = {s["key"] for s in editor_api.get(url + "suggested-events/").json()}
    assert group["key"] not in left  # what is left of the group is one finding
    assert findings[0]["key"] not in left and findings[1]["key"] not in left
    assert findings[2]["key"] in left
    assert SuggestionDecision.objects.filter(incident=incident).count() == 2


def test_viewers_cannot_decide_suggestions(viewer_api, incident, editor):
    artifact = evaluated(upload(IBSTAT_DOWN, host="h100-b"))
    attach(incident, editor, artifact)
    key = by_source(incident, "finding")[0].key
    url = f"/api/v1/incidents/{incident.pk}/suggested-events/"
    assert viewer_api.get(url).status_code == 200
    assert viewer_api.post(url + "accept/", {"key": key}, format="json").status_code == 403
    assert viewer_api.post(url + "reject/", {"key": key}, format="json").status_code == 403
    assert not Artifact.objects.get(pk=artifact.pk).incidents.get().events.exists()
