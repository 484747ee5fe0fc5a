"""Symptoms a knowledge page explains, and which pages explain what a subject shows.

A page declares its symptoms (front matter ``symptoms:``, the editor's "Symptoms" field) as
``kind:value`` strings:

| declaration | matches |
|---|---|
| ``rule:port_down`` | a finding raised by that rule (artifacts/fabric/rules.py) |
| ``log:watchdog_timeout`` | a log event of that kind (nccl_warn, xid, nic_link...) |
| ``text:NET/IB`` | a timeline-worthy log line containing the text (case-insensitive) |
| ``xid:79`` | a GPU Xid with that number (from dmesg lines or Xid findings) |
| ``alert:regression`` | a baseline alert of that kind (regression, variance, drift, improvement) |

Subjects (an incident, a finding, a run, a baseline alert) are turned into an ``Observed``
set by ``observed_for`` (database reads, lazily imported); ``matches`` is pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

KINDS = ("rule", "log", "text", "xid", "alert")
MAX_SYMPTOMS = 40
MAX_TEXTS = 2000  # log lines looked at per subject


class SymptomError(ValueError):
    pass


@dataclass
class Observed:
    """What a subject shows: exact symptoms (``log:watchdog_timeout``) and log texts."""

    symptoms: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.symptoms or self.texts)


def clean(raw: Any) -> list[str]:
    """Validated, normalised declarations (a list, or a comma/newline-separated text)."""
    items = raw.replace("\n", ",").split(",") if isinstance(raw, str) else list(raw or [])
    out: list[str] = []
    for item in items:
        text = str(item).strip()
        if not text:
            continue
        kind, sep, value = text.partition(":")
        kind, value = kind.strip().lower(), value.strip()
        if not sep or kind not in KINDS or not value:
            raise SymptomError(
                f"symptom {text!r}: write kind:value with kind one of {', '.join(KINDS)} "
                "(e.g. log:watchdog_timeout, xid:79, rule:port_down, text:NET/IB)"
            )
        if kind == "xid" and not value.isdigit():
            raise SymptomError(f"symptom {text!r}: an Xid is a number")
        out.append(f"{kind}:{value if kind == 'text' else value.lower()}")
    out = list(dict.fromkeys(out))
    if len(out) > MAX_SYMPTOMS:
        raise SymptomError(f"at most {MAX_SYMPTOMS} symptoms per page")
    return out


def matches(declared: Iterable[str], observed: Observed) -> list[str]:
    """The declarations that the observed symptoms satisfy (empty: the page does not match)."""
    lowered = [t.lower() for t in observed.texts]
    hits = []
    for symptom in declared:
        if symptom.startswith("text:"):
            needle = symptom[5:].lower()
            if any(needle in t for t in lowered):
                hits.append(symptom)
        elif symptom in observed.symptoms:
            hits.append(symptom)
    return hits


def label(symptom: str) -> str:
    kind, _, value = symptom.partition(":")
    return {
        "rule": f"finding {value}",
        "log": f"log {value.replace('_', ' ')}",
        "text": f"“{value}” in a log",
        "xid": f"Xid {value}",
        "alert": f"baseline {value}",
    }.get(kind, symptom)


# --- what subjects show (database reads) --------------------------------------------------


def observed_for(subject: Any) -> Observed:
    """The symptoms of an incident (its evidence), a finding, a run or a baseline alert."""
    # By model label, not class: knowledge does not import the incidents app's models.
    label = getattr(getattr(subject, "_meta", None), "label", "")
    if label == "incidents.Incident":
        artifact_ids = list(subject.evidence.values_list("artifact_id", flat=True))
        return observed_in_artifacts(artifact_ids)
    if label == "artifacts.Finding":
        seen = Observed({f"rule:{subject.rule}"})
        _xid_of_finding(subject, seen)
        return seen
    if label == "artifacts.BenchmarkRun":
        # the run's own file and the other evidence of its job (the same hosts close in time)
        from artifacts.runs.querysets import job_artifact_ids

        return observed_in_artifacts(job_artifact_ids(subject), runs=[subject.pk])
    if label == "baselines.Alert":
        return Observed({f"alert:{subject.kind}"})
    if label == "baselines.AlertSummary":
        kinds = subject.alerts.values_list("kind", flat=True).distinct()
        return Observed({f"alert:{k}" for k in kinds})
    return Observed()


def pages_for_symptoms(observed: Observed, *, limit: int = 12) -> list[tuple[Any, list[str]]]:
    """Published pages whose declared symptoms the subject shows, most matches first, with
    the declarations that matched."""
    from knowledge.models import Page, PageStatus

    if not observed:
        return []
    found = []
    for page in Page.objects.filter(status=PageStatus.PUBLISHED).only(
        "title", "slug", "type", "topic", "symptoms"
    ):
        hits = matches(page.symptoms or [], observed)
        if hits:
            found.append((page, hits))
    found.sort(key=lambda item: (-len(item[1]), item[0].title))
    return found[:limit]


def observed_in_artifacts(artifact_ids: list[int], runs: list[int] | None = None) -> Observed:
    from artifacts.fabric.fault_events import FAULT_EVENT_KINDS
    from artifacts.models import Finding, LogEvent
    from baselines.models import Alert

    seen = Observed()
    if not artifact_ids:
        return seen
    events = LogEvent.objects.filter(artifact_id__in=artifact_ids, kind__in=FAULT_EVENT_KINDS)
    for kind, text, extra in events.values_list("kind", "text", "extra")[:MAX_TEXTS]:
        seen.symptoms.add(f"log:{kind}")
        seen.texts.append(text)
        if kind == "xid" and isinstance(extra, dict) and extra.get("xid") is not None:
            seen.symptoms.add(f"xid:{extra['xid']}")
    for finding in Finding.objects.filter(artifact_id__in=artifact_ids).only("rule", "evidence"):
        seen.symptoms.add(f"rule:{finding.rule}")
        _xid_of_finding(finding, seen)
    alerts = Alert.objects.filter(run__artifact_id__in=artifact_ids).exclude(
        status=Alert.Status.INVALID
    )
    if runs is not None:
        alerts = alerts.filter(run_id__in=runs)
    seen.symptoms.update(f"alert:{k}" for k in alerts.values_list("kind", flat=True).distinct())
    return seen


def _xid_of_finding(finding: Any, seen: Observed) -> None:
    extra = getattr(finding, "evidence", None)
    if isinstance(extra, dict):
        for key in ("xid", "xids"):
            values = extra.get(key)
            for value in values if isinstance(values, list) else [values]:
                if value is not None and str(value).isdigit():
                    seen.symptoms.add(f"xid:{value}")
