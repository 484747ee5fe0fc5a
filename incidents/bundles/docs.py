"""The generated files of an evidence bundle: README.md, summary.html, timeline.csv, parsed
data (CSV from the database, canonical JSON from a fresh parse) and the manifest body.

Everything here is a pure function of the incident/ticket and artifacts: no build time, no
bundle id, no user who clicked, times in UTC ISO 8601. That is what makes two builds of the
same inputs byte-identical.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
from django.conf import settings
from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from artifacts.models import Artifact, BenchmarkRun, HostFact, RunRank
from artifacts.parsers import PARSERS, ParseError, get_parser
from artifacts.parsers.streams import open_decompressed
from artifacts.runs import exports
from charts.svg import busbw_svg
from documents.embeds import render_with_embeds
from incidents.models import (
    MILESTONE_LABELS,
    MILESTONES,
    VENDOR_ENGAGED,
    Incident,
    PostMortem,
    VendorTicket,
)
from incidents.postmortems import pins_of
from incidents.querysets import TimelineItem, incident_timeline

FORMAT = "perfhub-evidence-bundle/1"
MAX_CHARTS = 24


@dataclass(frozen=True)
class Subject:
    """What the bundle is about: an incident, a vendor ticket, or both."""

    incident: Incident | None
    ticket: VendorTicket | None

    @property
    def reference(self) -> str:
        if self.incident is not None:
            return self.incident.reference
        assert self.ticket is not None
        return f"{self.ticket.vendor}-case-{self.ticket.case_number or self.ticket.pk}"

    @property
    def title(self) -> str:
        if self.incident is not None:
            return self.incident.title
        assert self.ticket is not None
        return self.ticket.title


def iso(value: datetime | None) -> str:
    if value is None:
        return ""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def human_duration(delta: timedelta | None) -> str:
    if delta is None:
        return "—"
    seconds = int(delta.total_seconds())
    sign, seconds = ("-" if seconds < 0 else ""), abs(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days}d {hours}h {minutes}m"
    if hours:
        return f"{sign}{hours}h {minutes}m"
    return f"{sign}{minutes}m {secs}s"


def exported_timeline(subject: Subject) -> tuple[list[TimelineItem], str]:
    """Key events when some are marked (that is what they are for), else every event."""
    if subject.incident is None:
        return [], "none"
    key = incident_timeline(subject.incident, key_only=True)
    if key:
        return key, "key events"
    return incident_timeline(subject.incident), "all events (none marked as key)"


def timeline_csv(items: list[TimelineItem]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["at_utc", "kind", "key", "source", "text"])
    for item in items:
        writer.writerow([iso(item.at), item.kind, int(item.key), item.source, item.text])
    return buffer.getvalue().encode()


def run_csvs(artifact: Artifact) -> dict[str, bytes]:
    """runs.csv, ranks.csv and measurements.csv of an nccl-tests artifact (database rows)."""
    runs = list(artifact.runs.order_by("index").prefetch_related("ranks", "measurements"))
    if not runs:
        return {}
    run_columns = [c for c in exports.RUN_COLUMNS if c not in ("id", "artifact_id")]
    files = {
        "runs.csv": _csv(
            ["run_index", *run_columns, "errors"],
            (
                [r.index, *[_cell(getattr(r, c)) for c in run_columns], "; ".join(r.errors)]
                for r in runs
            ),
        ),
        "ranks.csv": _csv(
            ["run_index", "rank", "host", "device", "busid", "gpu"],
            (
                [r.index, k.rank, k.host, k.device, k.busid, k.gpu]
                for r in runs
                for k in r.ranks.all()
            ),
        ),
        "measurements.csv": _csv(
            ["run_index", *exports.MEASUREMENT_COLUMNS],
            (
                [r.index, *[_cell(getattr(m, c)) for c in exports.MEASUREMENT_COLUMNS]]
                for r in runs
                for m in r.measurements.all()
            ),
        ),
    }
    return files


def parse_json(artifact: Artifact) -> tuple[bytes | None, str]:
    """The canonical ParseResult JSON (docs/formats.md), from parsing the stored file again."""
    if artifact.kind not in PARSERS or artifact.status != Artifact.Status.PARSED:
        return None, "not parsed"
    try:
        with artifact.file.open("rb") as raw:
            stream = open_decompressed(
                raw,
                compressed_size=artifact.size,
                max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
                max_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
            )
            result = get_parser(artifact.kind).parse(stream)
    except (ParseError, OSError) as exc:
        return None, f"parse failed: {exc}"
    text = json.dumps(result.to_json(), indent=1, sort_keys=True, ensure_ascii=False)
    return (text + "\n").encode(), "ok"


def environment(subject: Subject, artifacts: list[Artifact]) -> dict[str, Any]:
    """Hardware/software facts found in the evidence (for the manifest and summary)."""
    runs = BenchmarkRun.objects.filter(artifact__in=artifacts)
    facts: dict[str, Any] = {
        "gpus": sorted(set(runs.exclude(gpu="").values_list("gpu", flat=True))),
        "nccl_versions": sorted(
            set(runs.exclude(nccl_version="").values_list("nccl_version", flat=True))
        ),
        "nccl_tests_versions": sorted(
            set(runs.exclude(nccl_tests_version="").values_list("nccl_tests_version", flat=True))
        ),
        "rank_counts": sorted({n for n in runs.values_list("nranks", flat=True) if n}),
        "hosts": sorted(
            set(
                RunRank.objects.filter(run__artifact__in=artifacts)
                .exclude(host="")
                .values_list("host", flat=True)
            )
            | {a.host for a in artifacts if a.host}
        ),
    }
    for artifact in artifacts:
        for key in ("nccl_versions", "transports"):
            values = artifact.summary.get(key)
            if isinstance(values, list):
                facts.setdefault(f"log_{key}", set()).update(str(v) for v in values)
    for key in ("log_nccl_versions", "log_transports"):
        if key in facts:
            facts[key] = sorted(facts[key])
    if host_facts := _host_facts(artifacts):
        facts["host_facts"] = host_facts
    if subject.incident is not None:
        facts["cluster"] = subject.incident.cluster
        facts["hardware_profile"] = subject.incident.hardware_profile
        facts["hardware_generation"] = subject.incident.hardware_generation
    return facts


# Hardware and software facts a vendor asks for first, as the fabric/host parsers name them.
ENVIRONMENT_FACTS = (
    "hardware.name", "gpu.name", "gpu.driver_version", "gpu.cuda_version", "kernel.version",
    "nccl.version", "nccl.transports", "nccl.plugin", "nic.type", "nic.part", "nic.driver",
    "nic.driver_version", "nic.firmware", "hca.type", "hca.firmware", "link.firmware",
    "port.rate_gbps", "port.link_layer",
)  # fmt: skip
MAX_FACT_VALUES = 20


def _host_facts(artifacts: list[Artifact]) -> dict[str, list[str]]:
    """Distinct values of the environment facts the parsers read from the evidence files
    (ethtool -i, nvidia-smi, ibstat, NCCL INFO, dmesg...), sorted so bundles stay
    deterministic."""
    values: dict[str, set[str]] = {}
    rows = (
        HostFact.objects.filter(artifact__in=artifacts, name__in=ENVIRONMENT_FACTS)
        .exclude(value="")
        .values_list("name", "value")
        .distinct()
    )
    for name, value in rows:
        values.setdefault(name, set()).add(value[:200])
    return {name: sorted(v)[:MAX_FACT_VALUES] for name, v in sorted(values.items())}


def parser_versions() -> dict[str, str]:
    return {kind: str(get_parser(kind).VERSION) for kind in sorted(PARSERS)}


def lifecycle_rows(incident: Incident) -> list[tuple[str, str]]:
    return [
        (MILESTONE_LABELS[m], iso(incident.milestone(m)))
        for m in (*MILESTONES, VENDOR_ENGAGED)
        if incident.milestone(m)
    ]


def readme(
    subject: Subject,
    *,
    artifacts: list[dict[str, Any]],
    timeline: list[TimelineItem],
    timeline_label: str,
    redacted: bool,
) -> bytes:
    lines = [f"# Evidence bundle: {subject.reference} — {subject.title}", ""]
    incident, ticket = subject.incident, subject.ticket
    if incident is not None:
        lines += [
            f"- Severity: {incident.severity}",
            f"- Status: {incident.get_status_display()}",
            f"- Cluster: {incident.cluster or '—'}",
            f"- Hardware: {incident.hardware_profile or incident.hardware_generation or '—'}",
            "",
            "## Summary",
            "",
            incident.summary.strip() or "(no summary)",
            "",
        ]
        if incident.impact.strip():
            lines += ["## Impact", "", incident.impact.strip(), ""]
        lines += ["## Lifecycle (UTC)", "", "| milestone | time |", "|---|---|"]
        lines += [f"| {label} | {at} |" for label, at in lifecycle_rows(incident)]
        durations = incident.durations
        lines += [
            "",
            "| time to | duration |",
            "|---|---|",
            *[f"| {name} | {human_duration(d)} |" for name, d in durations.items()],
            "",
        ]
    if ticket is not None:
        lines += [
            "## Vendor case",
            "",
            f"- Vendor: {ticket.vendor_label}",
            f"- Case: {ticket.case_number or '—'}",
            f"- Title: {ticket.title}",
            f"- Status: {ticket.get_status_display()}",
            "",
        ]
    if timeline:
        lines += [f"## Timeline ({timeline_label}, UTC)", ""]
        lines += [f"- {iso(i.at)} [{i.kind}] {_one_line(i.text)}" for i in timeline]
        lines.append("")
    lines += [
        "## Files",
        "",
        "- `summary.html`: this summary with charts; opens offline, loads nothing.",
        "- `manifest.json`: every file with sha256 and size, parser versions, environment.",
        "- `timeline.csv`: the timeline above.",
        "- `raw/`: the evidence files as uploaded"
        + (" (redacted copies of the text files; binary files left out)" if redacted else ""),
        "- `parsed/`: what PerfHub read from them: canonical parser JSON, nccl-tests as CSV.",
    ]
    if redacted:
        lines += [
            "- `redaction-report.json`: what was replaced, by category and file (pseudonyms only).",
            "",
            "Host names, IP and MAC addresses, user names, GUIDs/serials and configured "
            "patterns were replaced by consistent pseudonyms (the same original gets the same "
            "pseudonym in every file).",
        ]
    lines += ["", "## Evidence", "", "| # | file | kind | original sha256 |", "|---|---|---|---|"]
    lines += [
        f"| {a['position']} | {a['name']} | {a['kind']} | `{a['original_sha256']}` |"
        for a in artifacts
    ]
    return ("\n".join(lines) + "\n").encode()


def summary_html(
    subject: Subject,
    *,
    artifacts: list[Artifact],
    artifact_rows: list[dict[str, Any]],
    timeline: list[TimelineItem],
    timeline_label: str,
    env: dict[str, Any],
    redacted: bool,
) -> bytes:
    incident = subject.incident
    charts = []
    runs = BenchmarkRun.objects.filter(artifact__in=artifacts).order_by("artifact_id", "index")
    for run in runs[:MAX_CHARTS]:
        frame = pd.DataFrame(exports.run_measurement_rows(run), columns=exports.MEASUREMENT_COLUMNS)
        svg = busbw_svg(frame)
        if svg:
            charts.append(
                {
                    "title": f"{run.collective or run.benchmark} · {run.nranks or '?'} ranks",
                    "facts": f"{run.gpu or 'GPU ?'} · NCCL {run.nccl_version or '?'} · avg busbw "
                    + (f"{run.avg_busbw_gbps:.2f} GB/s" if run.avg_busbw_gbps else "—"),
                    "svg": svg,
                }
            )
    postmortem = None
    if incident is not None:
        pm = PostMortem.objects.filter(incident=incident).first()
        if pm and pm.status == PostMortem.Status.PUBLISHED:
            postmortem = render_with_embeds(
                pm.body, pins=pins_of(incident), interactive=False, strip_images=True
            )
    context = {
        "subject": subject,
        "incident": incident,
        "ticket": subject.ticket,
        "summary": _export_markdown(incident.summary if incident else ""),
        "impact": _export_markdown(incident.impact if incident else ""),
        "lifecycle": lifecycle_rows(incident) if incident else [],
        "durations": [(k, human_duration(v)) for k, v in incident.durations.items()]
        if incident
        else [],
        "timeline": [
            {"at": iso(i.at), "kind": i.kind, "text": _export_markdown(i.text)} for i in timeline
        ],
        "timeline_label": timeline_label,
        "env": _env_rows(env),
        "charts": charts,
        "artifacts": artifact_rows,
        "postmortem": postmortem,
        "redacted": redacted,
        "css": _CSS,
    }
    return render_to_string("incidents/bundle_summary.html", context).encode()


def _env_rows(env: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, value) rows of the environment table; host facts get one row per fact."""
    rows: list[tuple[str, Any]] = []
    for key, value in env.items():
        if isinstance(value, dict):
            rows += [(name, ", ".join(map(str, v))) for name, v in value.items()]
        else:
            rows.append((key, ", ".join(map(str, value)) if isinstance(value, list) else value))
    return rows


def _export_markdown(text: str) -> SafeString:
    """Sanitized Markdown without images (self-contained export) and links as plain text."""
    html = str(render_with_embeds(text or "", pins={}, interactive=False, strip_images=True))
    return _unlink(html)


def _unlink(html: str) -> SafeString:
    def text_of(match: re.Match[str]) -> str:
        href, label = match.group(1) or "", match.group(2)
        return f"{label} ({escape(href)})" if href and href not in label else label

    return mark_safe(re.sub(r'<a(?: href="([^"]*)")?[^>]*>(.*?)</a>', text_of, html, flags=re.S))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cell(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, bool):
        return int(value)
    return "" if value is None else value


def _csv(header: list[str], rows: Any) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue().encode()


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:14px;color:#1f2937;
max-width:1100px;margin:0 auto;padding:16px 24px;background:#f8fafc}
h1{font-size:22px}h2{font-size:16px;margin-top:24px}
table{border-collapse:collapse;background:#fff;margin:8px 0}
th,td{border:1px solid #e5e7eb;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f1f5f9}code{font-family:ui-monospace,Menlo,monospace;font-size:12px}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:10px 14px;margin:10px 0}
.muted{color:#6b7280}.kind{font-size:12px;background:#e2e8f0;border-radius:8px;padding:0 6px}
figure{margin:8px 0}figcaption{color:#6b7280;font-size:12px}
"""
