"""Timeline suggestions from an incident's evidence: one function per evidence source.

A suggester takes an artifact and yields ``Suggestion``s; ``SUGGESTERS`` maps an artifact
kind to its suggesters ("*" applies to every artifact). Adding a source is one function and
one line in the dict. Keys are stable across re-parses and re-evaluations (they name the
artifact by sha256 and the item by its position in the file, or by the fingerprint the
findings and baselines apps keep stable), so a decision taken on a suggestion sticks.

Sources: capture/upload times (every artifact), failed nccl-tests runs, NCCL WARNs and
PyTorch watchdog errors (nccl_debug), kernel events such as Xids (dmesg), counter and fabric
findings (every kind the findings pass evaluates) and baseline regression alerts on the
artifact's runs.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from django.db.models import Q

from artifacts.fabric.fault_events import FAULT_EVENT_KINDS
from artifacts.fabric.services import FINDINGS_KINDS
from artifacts.models import Artifact, Finding, LogEvent
from artifacts.times import aware_datetime
from baselines.models import Alert

if TYPE_CHECKING:
    from incidents.models import Incident

log = logging.getLogger(__name__)

# Log event kinds worth a timeline entry (the faults), with the timeline kind they get.
LOG_EVENT_KINDS = dict.fromkeys(FAULT_EVENT_KINDS, "alert")
# Which log a kind's events come from: the suggestion key prefix and source name.
LOG_SOURCES = {"dmesg": ("log", "dmesg"), "fabric_manager": ("fm", "fabric_manager")}
MAX_PER_ARTIFACT = 100


@dataclass(frozen=True)
class Suggestion:
    key: str
    at: datetime
    kind: str  # a TimelineEvent.Kind value
    text: str
    source: str  # what produced it, e.g. "nccl_debug", "finding", "baseline_alert"
    artifact_id: int
    run_id: int | None = None
    approximate_time: bool = False  # the source had no timestamp; the artifact's time is used
    # What the accepted event links to besides the artifact/run (TimelineEvent.ref_*).
    ref_kind: str = ""
    ref_id: str = ""
    link_url: str = ""
    # What grouping.py folds suggestions by: the same symptom ("watchdog_timeout|ALLGATHER|1")
    # reported by many ranks, hosts or runs is one moment on the timeline. Blank: never folded.
    symptom: str = ""
    symptom_label: str = ""  # "NCCL watchdog timeout in ALLGATHER seq 1"
    host: str = ""
    rank: int | None = None
    detail: str = ""  # what the group text adds, e.g. "120 s" for a watchdog timeout

    # A single suggestion reads like a group of one (grouping.SuggestionGroup).
    is_group: ClassVar[bool] = False
    count: ClassVar[int] = 1
    members: ClassVar[tuple[Suggestion, ...]] = ()


Suggester = Callable[[Artifact], Iterable[Suggestion]]


def from_artifact_times(artifact: Artifact) -> Iterator[Suggestion]:
    """When the evidence was captured (upload metadata) and when it reached PerfHub."""
    tag = artifact.sha256[:16]
    if artifact.captured_at:
        yield Suggestion(
            key=f"artifact:{tag}:captured",
            at=artifact.captured_at,
            kind="evidence",
            text=f"Evidence captured: `{artifact.original_name}` ({artifact.get_kind_display()})",
            source="artifact",
            artifact_id=artifact.pk,
        )
    yield Suggestion(
        key=f"artifact:{tag}:uploaded",
        at=artifact.uploaded_at,
        kind="evidence",
        text=f"Evidence uploaded to PerfHub: `{artifact.original_name}`",
        source="artifact",
        artifact_id=artifact.pk,
    )


def from_failed_runs(artifact: Artifact) -> Iterator[Suggestion]:
    """nccl-tests runs that failed (errors) or stopped before their footer."""
    tag = artifact.sha256[:16]
    # The loader falls back to the artifact's capture/upload time when the run printed none.
    fallback_times = {artifact.captured_at, artifact.uploaded_at}
    for run in artifact.runs.all():
        what = f"{run.collective or run.benchmark} on {run.nranks or '?'} ranks"
        if run.errors:
            text = f"nccl-tests {what} failed: `{str(run.errors[0])[:300]}`"
            if len(run.errors) > 1:
                text += f" (+{len(run.errors) - 1} more)"
        elif not run.complete:
            text = f"nccl-tests {what} stopped before its footer (truncated output)"
        else:
            continue
        yield Suggestion(
            key=f"run:{tag}:{run.index}:failed",
            at=run.measured_at,
            kind="observation",
            text=text,
            source="nccl_tests",
            artifact_id=artifact.pk,
            run_id=run.pk,
            approximate_time=run.measured_at in fallback_times,
        )


def from_log_events(artifact: Artifact) -> Iterator[Suggestion]:
    """NCCL WARNs, aborts, PyTorch watchdog timeouts and kernel events (Xid, NIC link,
    AER, OOM) with their own timestamps, sub-second when the line had them."""
    tag = artifact.sha256[:16]
    prefix, source = LOG_SOURCES.get(artifact.kind, ("nccl", "nccl_debug"))
    fallback = artifact.captured_at or artifact.uploaded_at
    count = 0
    for event in logged_events(artifact):
        kind = str(event.get("kind"))
        details = event.get("details") or {}
        timeline_kind = _timeline_kind(kind, details)
        if timeline_kind is None:
            continue
        at, approximate = _event_time(event.get("time"), fallback)
        where = " ".join(
            part
            for part in (
                f"on {event['host']}" if event.get("host") else "",
                f"rank {event['rank']}" if event.get("rank") is not None else "",
            )
            if part
        )
        repeats = details.get("repeats", 1)
        text = f"{_event_label(kind, details)}{' ' + where if where else ''}: "
        text += f"`{_code_span(str(event.get('text', ''))[:400])}`"
        if repeats and repeats > 1:
            text += f" (repeated {repeats} times)"
        symptom, label, detail = log_symptom(kind, details, str(event.get("text", "")))
        yield Suggestion(
            key=f"{prefix}:{tag}:{event.get('line', count)}:{kind}",
            at=at,
            kind=timeline_kind,
            text=text,
            source=source,
            artifact_id=artifact.pk,
            approximate_time=approximate,
            symptom=f"{source}|{symptom}",
            symptom_label=label,
            host=str(event.get("host") or ""),
            rank=event.get("rank") if isinstance(event.get("rank"), int) else None,
            detail=detail,
        )
        count += 1
        if count >= MAX_PER_ARTIFACT:
            return


def from_findings(artifact: Artifact) -> Iterator[Suggestion]:
    """Counter and fabric findings (PFC pause storms, ports down, Xids, socket fallback...)
    of the artifact, or of a later upload whose rates were paired with it."""
    findings = (
        Finding.objects.filter(Q(artifact=artifact) | Q(related_artifacts=artifact))
        .select_related("artifact")
        .distinct()
        .order_by("observed_at", "id")[:MAX_PER_ARTIFACT]
    )
    for finding in findings:
        where = " ".join(p for p in (finding.host, finding.device) if p)
        text = f"**{finding.get_severity_display()} finding**: {finding.title}"
        if where and where not in finding.title:
            text += f" ({where})"
        text += f". {_first_sentence(finding.explanation)}"
        # The fingerprint is what the findings pass keeps stable across re-evaluations.
        name = f"{finding.artifact.sha256[:16]}:{finding.rule}:{_digest(finding.fingerprint)}"
        source = finding.artifact
        # Rules without a time of their own fall back to the upload time: say so.
        approximate = source.captured_at is None and finding.observed_at == source.uploaded_at
        yield Suggestion(
            key=f"finding:{name}",
            at=finding.observed_at,
            approximate_time=approximate,
            kind="observation" if finding.severity == Finding.Severity.INFO else "alert",
            text=text,
            source="finding",
            artifact_id=finding.artifact_id,
            ref_kind="finding",
            ref_id=str(finding.pk),
            link_url=finding.get_absolute_url(),
            # One rule raised on many hosts (ports down on 12 hosts) folds into one group.
            symptom=f"finding|{finding.rule}|{finding.severity}",
            symptom_label=f"{finding.get_severity_display().capitalize()} finding: "
            f"{finding.rule.replace('_', ' ')}",
            host=finding.host,
        )


def from_baseline_alerts(artifact: Artifact) -> Iterator[Suggestion]:
    """Baseline regression (and variance/improvement) alerts raised on the artifact's runs.

    One suggestion per run, change and alert kind: a change that regressed seven message
    sizes of one run is one moment on the timeline, described by its worst alert.
    """
    runs = {run.pk: run for run in artifact.runs.all()}  # prefetched: no query without runs
    if not runs:
        return
    alerts = (
        Alert.objects.filter(run_id__in=runs)
        .exclude(status=Alert.Status.INVALID)  # triaged as noise: not worth a timeline entry
        .select_related("series", "summary")
        .order_by("measured_at", "id")
    )
    groups: dict[tuple[int, int, str], list[Alert]] = {}
    for alert in alerts[: MAX_PER_ARTIFACT * 10]:
        groups.setdefault((alert.run_id, alert.summary_id, alert.kind), []).append(alert)
    for (run_id, _, kind), group in list(groups.items())[:MAX_PER_ARTIFACT]:
        worst = max(group, key=lambda a: abs(a.magnitude_pct))
        series, summary, run = worst.series, worst.summary, runs[run_id]
        text = (
            f"**Baseline {worst.get_kind_display()}** {worst.magnitude_pct:+.1f}% on "
            f"{series.identity_text()}"
        )
        if worst.value_before is not None and worst.value_after is not None:
            text += f" ({worst.value_before:.1f} → {worst.value_after:.1f} {series.unit})"
        if len(group) > 1:
            low, high = sorted(
                (min(a.magnitude_pct for a in group), max(a.magnitude_pct for a in group))
            )
            text += f", and [{len(group) - 1} more series]({summary.get_absolute_url()}) "
            text += f"({low:+.1f}% to {high:+.1f}%)"
        if summary.change_text:
            text += f" after {summary.change_text}"
        text += f"; alert status: {worst.get_status_display()}"
        yield Suggestion(
            # The summary key names the change; the run is named by its place in the file,
            # which a re-parse keeps (alerts are re-pointed at the new run rows).
            key=f"alert:{artifact.sha256[:16]}:{run.index}:{kind}:{_digest(summary.key)}",
            at=worst.measured_at,
            kind="observation" if kind == Alert.Kind.IMPROVEMENT else "alert",
            text=text,
            source="baseline_alert",
            artifact_id=artifact.pk,
            run_id=run_id,
            ref_kind="alert",
            ref_id=str(worst.pk),
            link_url=worst.get_absolute_url(),
            # Alerts of one alert summary (one change, many runs/artifacts) fold together.
            symptom=f"alert|{summary.pk}|{kind}",
            symptom_label=f"Baseline {worst.get_kind_display()} "
            f"({summary.change_text or 'alert summary'})",
            host=artifact.host,
        )


SUGGESTERS: dict[str, list[Suggester]] = {
    "*": [from_artifact_times, from_baseline_alerts],
    "nccl_tests": [from_failed_runs, from_log_events],
    "nccl_debug": [from_log_events],
    "dmesg": [from_log_events],
    "fabric_manager": [from_log_events],
}
for _kind in sorted(FINDINGS_KINDS):  # every kind the findings pass evaluates
    SUGGESTERS.setdefault(_kind, []).append(from_findings)


def logged_events(artifact: Artifact) -> list[dict[str, Any]]:
    """The timeline-worthy log events of an artifact, as dicts.

    From ``Artifact.summary["events"]`` when a parser stored them there, else from the
    ``LogEvent`` rows the loaders wrote (nccl_debug, dmesg, fabric_manager, and nccl-tests
    output run with ``NCCL_DEBUG``, which the parse reads a second time: see
    ``artifacts.parsing.ALSO_PARSE``). A page view never reads the stored file.
    """
    if isinstance(artifact.summary.get("events"), list):
        return artifact.summary["events"]
    rows = [
        {
            "kind": e.kind,
            "time": e.time,
            "host": e.host,
            "rank": e.rank,
            "text": e.text,
            "line": e.line,
            "details": e.extra,
        }
        for e in LogEvent.objects.filter(artifact=artifact, kind__in=LOG_EVENT_KINDS).order_by(
            "line", "id"
        )[: MAX_PER_ARTIFACT * 2]
    ]
    return rows


def suggestions_for(incident: Incident, *, include_decided: bool = False) -> list[Suggestion]:
    """All open suggestions for an incident's evidence, oldest first."""
    artifacts = [
        link.artifact
        for link in incident.evidence.select_related("artifact").prefetch_related("artifact__runs")
    ]
    decided = set() if include_decided else set(incident.decisions.values_list("key", flat=True))
    found: dict[str, Suggestion] = {}
    for artifact in artifacts:
        for suggester in [*SUGGESTERS["*"], *SUGGESTERS.get(artifact.kind, [])]:
            for suggestion in suggester(artifact):
                if suggestion.key not in decided:
                    found.setdefault(suggestion.key, suggestion)
    return sorted(found.values(), key=lambda s: (s.at, s.key))


def suggestion_by_key(incident: Incident, key: str) -> Suggestion | None:
    return next((s for s in suggestions_for(incident, include_decided=True) if s.key == key), None)


_EVENT_LABELS = {
    "nccl_warn": "NCCL WARN",
    "comm_abort": "NCCL communicator aborted",
    "watchdog_timeout": "PyTorch watchdog timeout",
    "watchdog_exception": "PyTorch watchdog exception",
    "work_timeout": "NCCL work timeout",
    "nccl_error": "NCCL error",
    "dist_backend_error": "DistBackendError",
    "watchdog_stuck": "Watchdog stuck",
    "sxid": "NVSwitch SXid",
    "gpu_off_bus": "GPU fell off the bus",
    "pcie_aer": "PCIe AER error",
    "oom_kill": "OOM kill",
    "fm_nvswitch_fatal": "Fabric Manager: fatal NVSwitch error",
    "fm_nvswitch_non_fatal": "Fabric Manager: NVSwitch error",
    "fm_nvlink_failure": "Fabric Manager: NVLink failure",
    "fm_error": "Fabric Manager error",
}


# Addresses, ports, pointers and pids differ between ranks reporting the same NCCL WARN;
# dropping them lets "Got completion from peer 10.1.0.1<48221> with error 12" on 8 ranks
# read as one symptom. Error codes and vendor errors stay: they tell symptoms apart.
_VOLATILE = re.compile(
    r"(?:\b\d{1,3}(?:\.\d{1,3}){3}\b|::ffff:\S+|<\d+>|\b0x[0-9a-fA-F]+\b|"
    r"\b[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}\b)"
)
_WARN_HEAD = re.compile(r".*?NCCL WARN\s*")


def log_symptom(kind: str, details: dict[str, Any], text: str) -> tuple[str, str, str]:
    """(symptom id, label, detail) of a log event: what makes two lines the same problem.

    A watchdog timeout is one symptom per collective and sequence number (every rank of the
    job reports it); a WARN per message with the addresses taken out; an Xid per number.
    """
    if kind == "watchdog_timeout":
        collective, seq = details.get("collective") or "?", details.get("seq")
        timeout = details.get("timeout_ms")
        detail = f"{timeout / 1000:g} s" if isinstance(timeout, int | float) else ""
        label = f"NCCL watchdog timeout in {collective} seq {seq}"
        return f"{kind}|{collective}|{seq}", label, detail
    if kind in ("watchdog_exception", "work_timeout"):
        seq = details.get("seq")
        label = f"{_EVENT_LABELS.get(kind, kind)} at work {seq}"
        return f"{kind}|{details.get('pg')}|{seq}", label, ""
    if kind == "xid":
        return f"xid|{details.get('xid')}", f"GPU Xid {details.get('xid', '?')}", ""
    if kind == "nic_link":
        state = str(details.get("state") or "change")
        return f"nic_link|{state}", f"NIC link {state}", ""
    if kind in ("nccl_warn", "nccl_error", "dist_backend_error", "comm_abort"):
        message = _VOLATILE.sub("…", _WARN_HEAD.sub("", text, count=1)).strip()[:160]
        label = f"{_EVENT_LABELS.get(kind, kind)}: {message}" if message else _EVENT_LABELS[kind]
        return f"{kind}|{message}", label, ""
    return kind, _event_label(kind, details), ""


def _timeline_kind(kind: str, details: dict[str, Any]) -> str | None:
    """The timeline kind of a log event; None for routine ones. A link coming back up or a
    corrected PCIe error is worth noting, not an alert."""
    timeline_kind = LOG_EVENT_KINDS.get(kind)
    if kind == "nic_link" and str(details.get("state", "")).lower() in ("up", "active"):
        return "observation"
    if kind == "pcie_aer" and str(details.get("severity", "")).lower().startswith("corrected"):
        return "observation"
    return timeline_kind


def _event_label(kind: str, details: dict[str, Any]) -> str:
    if kind == "xid":
        return f"GPU Xid {details.get('xid', '?')}" + (
            f" on {details['device']}" if details.get("device") else ""
        )
    if kind == "nic_link":
        return f"NIC {details.get('device') or ''} link {details.get('state') or 'change'}".replace(
            "  ", " "
        )
    return _EVENT_LABELS.get(kind, kind)


def _event_time(value: Any, fallback: datetime) -> tuple[datetime, bool]:
    if isinstance(value, datetime):
        return value, False
    if value:
        try:
            return aware_datetime(str(value)), False
        except ValueError:
            pass
    return fallback, True


def _digest(text: str) -> str:
    """A short stable name for a long fingerprint (decision keys are at most 200 chars)."""
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _first_sentence(text: str, limit: int = 300) -> str:
    head = text.strip().split(". ", 1)[0].rstrip(".")
    return (head[: limit - 1] + "…" if len(head) > limit else head) + "."


def _code_span(text: str) -> str:
    # A backtick inside a log line would end the Markdown code span early.
    return text.replace("`", "'")
