"""'Start from evidence': the post-mortem template filled with what PerfHub already knows.

The accepted timeline, the evidence list with sha256, the lifecycle durations, the affected
scope, and chart embeds for the attached runs, traces and findings; the sections only a
person can write (root cause, what went well...) keep their prompts. The result is offered in
the editor, not saved: the editor reads it, writes the narrative and saves a revision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from artifacts.models import BenchmarkRun, Finding
from incidents.bundles.docs import human_duration
from incidents.facts import ENVIRONMENT_FIELDS, LABELS, value_text
from incidents.models import ALL_MILESTONES, MILESTONE_LABELS

if TYPE_CHECKING:
    from incidents.models import Incident

MAX_RUN_CHARTS = 6
MAX_FINDINGS = 6
MAX_TIMELINE = 60
TRACE_KINDS = ("torch_trace",)


def draft_from_evidence(incident: Incident) -> str:
    sections = [
        ("Summary", _summary(incident)),
        ("Impact", _impact(incident)),
        ("Timeline", _timeline(incident)),
        ("Root cause", "_What broke, and why. Link the evidence below._"),
        ("Trigger", "_What set it off (a change, a load pattern, a failing part)._"),
        ("Contributing factors", ""),
        ("Detection", _detection(incident)),
        ("Resolution", ""),
        ("What went well", ""),
        ("What went badly", ""),
        ("Where we got lucky", ""),
        ("Action items", _action_items(incident)),
        ("Evidence", _evidence(incident)),
    ]
    return "\n".join(f"## {title}\n\n{text.strip()}\n" for title, text in sections)


def _summary(incident: Incident) -> str:
    return incident.summary.strip() or (
        f"_{incident.reference}: {incident.title}. What happened, in two or three sentences._"
    )


def _impact(incident: Incident) -> str:
    lines = [incident.impact.strip()] if incident.impact.strip() else []
    scope = [
        ("Severity", incident.get_severity_display()),
        ("Cluster", incident.cluster),
        ("Affected hosts", ", ".join(incident.affected_hosts)),
        ("Affected jobs", ", ".join(incident.affected_jobs)),
        (
            "Hardware",
            " ".join(p for p in (incident.hardware_profile, incident.hardware_generation) if p),
        ),
    ]
    environment = incident.environment or {}
    scope += [(LABELS[f], value_text(f, environment[f])) for f in ENVIRONMENT_FIELDS
              if environment.get(f)]  # fmt: skip
    lines += [f"- **{label}**: {value}" for label, value in scope if value]
    return "\n".join(lines) or "_Who or what was affected, for how long, how much._"


def _timeline(incident: Incident) -> str:
    events = list(incident.events.order_by("at", "id")[: MAX_TIMELINE + 1])
    if not events:
        return "_No timeline events yet: accept the suggested events on the incident page._"
    rows = ["| time (UTC) | kind | event |", "|---|---|---|"]
    for event in events[:MAX_TIMELINE]:
        text = " ".join(event.text.split()).replace("|", "\\|")
        sources = f" ({len(event.sources)} sources)" if event.sources else ""
        star = " ★" if event.key else ""
        rows.append(f"| {event.at:%Y-%m-%d %H:%M:%S} | {event.kind}{star} | {text}{sources} |")
    if len(events) > MAX_TIMELINE:
        rows.append(f"\n_…and more on the incident page (first {MAX_TIMELINE} shown)._")
    return "\n".join(rows)


def _detection(incident: Incident) -> str:
    lines = [
        f"- **{MILESTONE_LABELS[m]}**: {incident.milestone(m):%Y-%m-%d %H:%M:%S} UTC"
        for m in ALL_MILESTONES
        if incident.milestone(m)
    ]
    durations = [
        f"- **Time to {name}**: {human_duration(value)}"
        for name, value in incident.durations.items()
        if value is not None
    ]
    text = "\n".join(lines + durations)
    return (text + "\n\n" if text else "") + "_How we found out, and how we could sooner._"


def _action_items(incident: Incident) -> str:
    items = list(incident.action_items.all())
    if not items:
        return "_Add action items on the incident page._"
    return "\n".join(
        f"- [{'x' if i.status == 'done' else ' '}] {i.title} ({i.get_type_display()}"
        f"{', ' + i.owner.get_username() if i.owner else ''})"
        for i in items
    )


def _evidence(incident: Incident) -> str:
    links = list(incident.evidence.select_related("artifact"))
    if not links:
        return "_No evidence attached._"
    artifacts = [link.artifact for link in links]
    lines = ["| # | file | kind | sha256 |", "|---|---|---|---|"]
    lines += [f"| {a.pk} | {a.original_name} | {a.kind} | `{a.sha256}` |" for a in artifacts]
    embeds: list[str] = []
    runs = BenchmarkRun.objects.filter(artifact__in=artifacts).order_by("artifact_id", "index")
    embeds += [f"{{{{chart run={run.pk}}}}}" for run in runs[:MAX_RUN_CHARTS]]
    embeds += [f"{{{{trace id={a.pk}}}}}" for a in artifacts if a.kind in TRACE_KINDS]
    # The findings the timeline points at (a group event points at each of its members).
    refs = [(e.ref_kind, e.ref_id) for e in incident.events.all()] + [
        (s.get("ref_kind"), s.get("ref_id")) for e in incident.events.all() for s in e.sources
    ]
    finding_ids = [int(i) for kind, i in refs if kind == "finding" and str(i).isdigit()]
    if not finding_ids:
        finding_ids = list(
            Finding.objects.filter(artifact__in=artifacts)
            .exclude(severity=Finding.Severity.INFO)
            .values_list("pk", flat=True)[:MAX_FINDINGS]
        )
    embeds += [f"{{{{finding id={i}}}}}" for i in list(dict.fromkeys(finding_ids))[:MAX_FINDINGS]]
    if not embeds:
        embeds = [f"{{{{artifact id={a.pk}}}}}" for a in artifacts[:MAX_RUN_CHARTS]]
    return "\n".join(lines) + "\n\n" + "\n\n".join(embeds)
