"""Evidence bundles: a deterministic zip of an incident's (or vendor case's) evidence.

Layout inside the archive (all under one folder named after the incident/case):

    README.md                what this is, the summary, lifecycle, key timeline, file list
    summary.html             self-contained (inline CSS + inline SVG charts, loads nothing)
    manifest.json            every file with sha256 + size, parser versions, environment
    timeline.csv             the exported timeline
    redaction-report.json    only when redacting: counts by category and file, no originals
    raw/NN-<name>            the evidence files (redacted text copies when redacting)
    parsed/NN-<name>/...     result.json (canonical parser JSON) and nccl-tests CSVs

Deterministic: entries sorted by name, fixed timestamps (1980-01-01) and permissions, a
fixed compression level, and contents that depend only on the inputs. Binary raw files
(NUL bytes in their first 64 KiB) cannot be redacted: they are left out when redacting and
listed in the manifest and report; without redaction every raw file is included as stored.

A redacted bundle is audited before it is published: every entry of the finished zip is
read back, decompressed, for every original identifier (``bundle_identifiers`` plus what
the redactor found); one left anywhere fails the bundle, with the leaks listed masked.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import tempfile
import unicodedata
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from artifacts.bundles.models import BundleMember
from artifacts.fabric.models import CounterSnapshot, Finding, HostFact, LogEvent
from artifacts.models.core import Artifact
from artifacts.nsight.models import NsightReport
from artifacts.parsers.streams import HEAD_BYTES, open_decompressed
from artifacts.runs.models import RunRank
from artifacts.traces.models import TraceSummary
from incidents.bundles import docs as bundle_docs
from incidents.bundles.docs import Subject
from incidents.models import EvidenceBundle, Incident, RedactionPattern, VendorTicket
from incidents.redaction import (
    CATEGORIES,
    GUID,
    HOST,
    SERIAL,
    USER,
    Leak,
    LeakAudit,
    Redactor,
    compile_pattern,
    identifiers_in,
)
from incidents.services import IncidentError
from perfhub import dispatch

log = logging.getLogger(__name__)

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
COMPRESS_LEVEL = 6
CHUNK = 1024 * 1024
# Lines longer than this are cut at a separator that never occurs inside a host name or an
# address (whitespace, quotes, commas, ...), so redaction never sees half a name.
MAX_CHUNK = 1024 * 1024
_SEPARATORS = re.compile(rb'[\s",;<>()\[\]{}]')
PROGRESS_STEP = 4 * 1024 * 1024
# Bundles of inputs up to this size are built in the request (the answer carries the sha256);
# larger ones go to the Celery task "incidents.build_bundle" and report progress.
DEFAULT_INLINE_BYTES = 16 * 1024 * 1024
PREVIEW_SAMPLE_BYTES = 4 * 1024 * 1024
BINARY_EXCLUDED = "binary file: cannot be redacted, left out"


# --- requesting ---------------------------------------------------------------------------


def bundle_request(
    *,
    by: Any,
    artifact_ids: Sequence[int] | None = None,
    incident: Incident | None = None,
    ticket: VendorTicket | None = None,
    redact: bool = True,
    patterns: Sequence[str] = (),
) -> EvidenceBundle:
    """Record a bundle and build it (now if small, else in Celery). Returns the row."""
    if incident is None and ticket is None:
        raise IncidentError("a bundle belongs to an incident or a vendor ticket")
    artifacts = _chosen_artifacts(incident, ticket, artifact_ids)
    clean_patterns = _check_patterns(patterns)
    with transaction.atomic():
        bundle = EvidenceBundle.objects.create(
            incident=incident, ticket=ticket, redact=redact, patterns=clean_patterns,
            created_by=by if getattr(by, "pk", None) else None,
            progress_total=sum(a.size for a in artifacts),
        )  # fmt: skip
        bundle.artifacts.set(artifacts)
        inline = bundle.progress_total <= getattr(
            settings, "PERFHUB_BUNDLE_INLINE_BYTES", DEFAULT_INLINE_BYTES
        )
        if not inline:
            dispatch.enqueue("incidents.build_bundle", bundle.pk, on_failure=_not_queued(bundle.pk))
    if inline:
        bundle = bundle_build(bundle_id=bundle.pk)
    return bundle


def _not_queued(bundle_id: int) -> dispatch.OnFailure:
    def mark(reason: str) -> None:
        EvidenceBundle.objects.filter(pk=bundle_id).update(
            status=EvidenceBundle.Status.FAILED,
            error=f"not built: {reason}; build it again once the queue is back",
            finished_at=timezone.now(),
        )

    return mark


def _chosen_artifacts(
    incident: Incident | None, ticket: VendorTicket | None, artifact_ids: Sequence[int] | None
) -> list[Artifact]:
    allowed: set[int] = set()
    if incident is not None:
        allowed |= set(incident.evidence.values_list("artifact_id", flat=True))
    if ticket is not None:
        allowed |= set(ticket.artifacts.values_list("pk", flat=True))
        for linked in ticket.incidents.all():
            allowed |= set(linked.evidence.values_list("artifact_id", flat=True))
    wanted = sorted(allowed) if artifact_ids is None else sorted({int(i) for i in artifact_ids})
    if not wanted:
        raise IncidentError("choose at least one artifact for the bundle")
    if stray := sorted(set(wanted) - allowed):
        raise IncidentError(
            f"artifact(s) {', '.join(map(str, stray))} are not evidence of this "
            + ("incident" if incident is not None else "ticket")
            + "; attach them first"
        )
    return list(Artifact.objects.filter(pk__in=wanted).order_by("pk"))


def _check_patterns(patterns: Sequence[str]) -> list[str]:
    clean = [p for p in (str(p).strip() for p in patterns) if p]
    for pattern in clean:
        try:
            compile_pattern(pattern)
        except ValueError as exc:
            raise IncidentError(str(exc)) from None
    return clean


# --- building -----------------------------------------------------------------------------


def bundle_build(*, bundle_id: int) -> EvidenceBundle:
    """Build (or rebuild) one bundle; the Celery task and inline requests both call this."""
    bundle = EvidenceBundle.objects.select_related("incident", "ticket").get(pk=bundle_id)
    if bundle.status == EvidenceBundle.Status.READY and bundle.sha256:
        return bundle  # idempotent: a redelivered task does nothing
    EvidenceBundle.objects.filter(pk=bundle.pk).update(
        status=EvidenceBundle.Status.BUILDING, progress_done=0, error=""
    )
    progress = _Progress(bundle.pk, total=bundle.progress_total * (2 if bundle.redact else 1))
    try:
        with tempfile.TemporaryDirectory(dir=settings.FILE_UPLOAD_TEMP_DIR) as tmp:
            staged = _stage(bundle, Path(tmp), progress)
            archive = Path(tmp) / "bundle.zip"
            write_deterministic_zip(archive, staged.files)
            if staged.redactor is not None:
                # Before the file is stored anywhere: a leaking bundle never exists outside
                # this temporary folder.
                audit = audit_archive(archive, staged.redactor)
                staged.report["audit"] = audit_summary(audit)
                if not audit.clean:
                    raise RedactionLeakError(audit.leaks)
            digest, size = _sha256_file(archive)
            with archive.open("rb") as handle:
                bundle.file.save(f"{bundle.pk}/{bundle.filename}", File(handle), save=False)
    except RedactionLeakError as exc:
        log.warning("bundle %s refused: %s", bundle.pk, exc)  # masked: safe to log
        EvidenceBundle.objects.filter(pk=bundle.pk).update(
            status=EvidenceBundle.Status.FAILED,
            error=str(exc)[:2000],
            report=staged.report,
            finished_at=timezone.now(),
        )
        bundle.refresh_from_db()
        return bundle
    except Exception as exc:
        log.exception("bundle %s failed", bundle.pk)
        EvidenceBundle.objects.filter(pk=bundle.pk).update(
            status=EvidenceBundle.Status.FAILED, error=str(exc)[:2000], finished_at=timezone.now()
        )
        bundle.refresh_from_db()
        return bundle
    bundle.sha256, bundle.size = digest, size
    bundle.report = staged.report
    bundle.status = EvidenceBundle.Status.READY
    bundle.progress_done = bundle.progress_total
    bundle.finished_at = timezone.now()
    bundle.error = ""
    bundle.save()
    return bundle


@dataclass
class _Staged:
    files: list[tuple[str, Path]]  # archive path, staged file
    report: dict[str, Any]
    redactor: Redactor | None = None  # its originals are what the audit looks for


@dataclass
class _Raw:
    artifact: Artifact
    position: int
    text: bool
    name: str = ""  # archive file name, set once names are redacted


def _stage(bundle: EvidenceBundle, tmp: Path, progress: _Progress) -> _Staged:
    subject = Subject(bundle.incident, bundle.ticket)
    artifacts = list(bundle.artifacts.order_by("pk"))
    root = safe_name(subject.reference) + "-evidence"
    raws = [_Raw(a, i, _is_text(a)) for i, a in enumerate(artifacts, start=1)]
    redactor = _redactor(bundle, subject, artifacts) if bundle.redact else None
    parsed = {raw.position: _parsed_documents(raw.artifact) for raw in raws}

    if redactor is not None:  # pass 1: learn names everywhere, in archive order
        documents = _documents(subject, artifacts, raws, redacted=True)
        texts = [*documents.values(), *(d for p in parsed.values() for d in p.values())]
        for raw in raws:
            redactor.discover(raw.artifact.original_name)
        for text in texts:
            for line in text.decode("utf-8", "surrogateescape").splitlines():
                redactor.discover(line)
        for raw in raws:
            if raw.text:
                for line in _text_lines(raw.artifact, progress):
                    redactor.discover(line)

    for raw in raws:
        name = raw.artifact.original_name
        if redactor is not None:
            name = _strip_gz(redactor.redact(name, "(file names)"))
        raw.name = f"{raw.position:02d}-{safe_name(name)}"

    # The documents name the artifacts: generate them again with the final names.
    generated = _documents(subject, artifacts, raws, redacted=bundle.redact)
    for raw in raws:
        for name, data in parsed[raw.position].items():
            generated[f"parsed/{raw.name}/{name}"] = data
    files: list[tuple[str, Path]] = []
    for path, data in sorted(generated.items()):
        if redactor is not None:
            text = data.decode("utf-8", "surrogateescape")
            data = redactor.redact_text(text, path).encode("utf-8", "surrogateescape")
        files.append((f"{root}/{path}", _write(tmp, path, data)))
    excluded: list[dict[str, Any]] = []
    for raw in raws:
        archive_path = f"raw/{raw.name}"
        if redactor is None:
            files.append((f"{root}/{archive_path}", _copy_raw(raw.artifact, tmp, progress)))
        elif raw.text:
            target = tmp / "staged" / archive_path
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("wb") as out:
                for line in _text_lines(raw.artifact, progress):
                    redacted = redactor.redact(line, archive_path)
                    out.write(redacted.encode("utf-8", "surrogateescape"))
            files.append((f"{root}/{archive_path}", target))
        else:
            excluded.append({"position": raw.position, "reason": BINARY_EXCLUDED})

    report: dict[str, Any] = {"redacted": redactor is not None, "excluded": excluded}
    if redactor is not None:
        report.update(redactor.report())
        body = (json.dumps(report, indent=1, sort_keys=True) + "\n").encode()
        files.append((f"{root}/redaction-report.json", _write(tmp, "redaction-report.json", body)))
    manifest = _manifest(subject, raws, excluded, redactor, files, root)
    files.append((f"{root}/manifest.json", _write(tmp, "manifest.json", manifest)))
    return _Staged(sorted(files), report, redactor)


def _documents(
    subject: Subject, artifacts: list[Artifact], raws: list[_Raw], *, redacted: bool
) -> dict[str, bytes]:
    """README, summary and timeline: cheap, so built twice (before and after naming)."""
    timeline, label = bundle_docs.exported_timeline(subject)
    rows = [_artifact_row(r) for r in raws]
    env = bundle_docs.environment(subject, artifacts)
    return {
        "README.md": bundle_docs.readme(
            subject, artifacts=rows, timeline=timeline, timeline_label=label, redacted=redacted
        ),
        "summary.html": bundle_docs.summary_html(
            subject,
            artifacts=artifacts,
            artifact_rows=rows,
            timeline=timeline,
            timeline_label=label,
            env=env,
            redacted=redacted,
        ),
        "timeline.csv": bundle_docs.timeline_csv(timeline),
    }


def _parsed_documents(artifact: Artifact) -> dict[str, bytes]:
    """nccl-tests CSVs from the database and the canonical JSON of a fresh parse."""
    docs = dict(bundle_docs.run_csvs(artifact))
    parsed, _why = bundle_docs.parse_json(artifact)
    if parsed is not None:
        docs["result.json"] = parsed
    return docs


def _artifact_row(raw: _Raw) -> dict[str, Any]:
    a = raw.artifact
    return {
        "position": raw.position,
        "name": raw.name or a.original_name,
        "kind": a.kind,
        "original_sha256": a.sha256,
        "size": a.size,
        "status": a.status,
        "parser_version": a.parser_version,
        "captured_at": bundle_docs.iso(a.captured_at),
    }


def _manifest(
    subject: Subject,
    raws: list[_Raw],
    excluded: list[dict[str, Any]],
    redactor: Redactor | None,
    files: list[tuple[str, Path]],
    root: str,
) -> bytes:
    excluded_positions = {e["position"] for e in excluded}
    body: dict[str, Any] = {
        "format": bundle_docs.FORMAT,
        "subject": {
            "reference": subject.reference,
            "title": subject.title,
            "incident": _incident_facts(subject.incident),
            "vendor_ticket": _ticket_facts(subject.ticket),
        },
        "redacted": redactor is not None,
        "artifacts": [
            {
                **_artifact_row(raw),
                "raw_path": None if raw.position in excluded_positions else f"raw/{raw.name}",
                "excluded": BINARY_EXCLUDED if raw.position in excluded_positions else None,
                "summary": raw.artifact.summary,
            }
            for raw in raws
        ],
        "environment": bundle_docs.environment(subject, [r.artifact for r in raws]),
        "parser_versions": bundle_docs.parser_versions(),
    }
    text = json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False, default=str)
    if redactor is not None:
        text = redactor.redact_text(text, "manifest.json")
    manifest = json.loads(text)
    manifest["files"] = [
        {"path": path.removeprefix(root + "/"), "sha256": digest, "size": size}
        for path, staged in sorted(files)
        for digest, size in [_sha256_file(staged)]
    ]
    return (json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _incident_facts(incident: Incident | None) -> dict[str, Any] | None:
    if incident is None:
        return None
    return {
        "reference": incident.reference,
        "severity": incident.severity,
        "status": incident.status,
        "cluster": incident.cluster,
        "affected_hosts": incident.affected_hosts,
        "affected_jobs": incident.affected_jobs,
        "hardware_profile": incident.hardware_profile,
        "hardware_generation": incident.hardware_generation,
        "lifecycle": dict(bundle_docs.lifecycle_rows(incident)),
    }


def _ticket_facts(ticket: VendorTicket | None) -> dict[str, Any] | None:
    if ticket is None:
        return None
    return {
        "vendor": ticket.vendor_label,
        "case_number": ticket.case_number,
        "title": ticket.title,
        "status": ticket.status,
        "fixed_in_version": ticket.fixed_in_version,
    }


def _redactor(bundle: EvidenceBundle, subject: Subject, artifacts: list[Artifact]) -> Redactor:
    known = bundle_identifiers(artifacts, incident=subject.incident)
    patterns = [(p.name, p.regex) for p in RedactionPattern.objects.filter(enabled=True)]
    patterns += [(f"custom{i}", rx) for i, rx in enumerate(bundle.patterns, start=1)]
    return Redactor(known=known, patterns=patterns)


# --- identifiers and the audit ------------------------------------------------------------

# Host facts whose value is itself an identifier, by the end of the fact name.
_FACT_CATEGORIES = (
    ((".serial", ".serial_number", ".board_serial", ".chassis_serial"), SERIAL),
    ((".uuid", ".guid", ".node_guid", ".port_guid", ".sys_image_guid"), GUID),
    ((".hostname", ".host_name", ".nodename"), HOST),
    ((".user", ".username", ".user_name"), USER),
)
# Support bundles hold their sections as child artifacts (nested: a snapshot in a bundle).
_MAX_NESTING = 3


def bundle_identifiers(
    artifacts: Sequence[Artifact], *, incident: Incident | None = None
) -> dict[str, set[str]]:
    """Every host, address, GUID, MAC, serial and user name parsed out of the evidence.

    Read from the rows the loaders wrote (artifact hosts, rank hosts, host facts, log
    events, counter snapshots, findings, Nsight reports, traces), for the artifacts and the
    parts cut out of support bundles among them, plus the incident's affected hosts. These
    are certain, so the redactor replaces them as substrings wherever they occur.
    """
    ids = _with_parts([a.pk for a in artifacts])
    found: dict[str, set[str]] = {category: set() for category in CATEGORIES}
    hosts = found[HOST]
    hosts.update(Artifact.objects.filter(pk__in=ids).values_list("host", flat=True))
    hosts.update(RunRank.objects.filter(run__artifact__in=ids).values_list("host", flat=True))
    for model in (HostFact, LogEvent, CounterSnapshot, Finding, NsightReport, TraceSummary):
        rows = model.objects.filter(artifact__in=ids).order_by().values_list("host", flat=True)
        hosts.update(rows.distinct())
    if incident is not None:
        hosts.update(str(h) for h in incident.affected_hosts or ())
    facts = (
        HostFact.objects.filter(artifact__in=ids)
        .order_by()
        .values_list("name", "device", "value", "extra")
    )
    for name, device, value, extra in facts.iterator(chunk_size=2000):
        dotted = "." + name.lower()  # "serial" alone counts like "gpu.serial"
        for suffixes, category in _FACT_CATEGORIES:
            if dotted.endswith(suffixes):
                found[category].update(v.strip() for v in value.split(",") if v.strip())
        # Addresses and ids inside other facts: "eth0<10.0.0.7>", a GUID named device...
        for text in (device, value, *_strings(extra)):
            for category, identifier in identifiers_in(text):
                found[category].add(identifier)
    return {category: {v for v in values if v} for category, values in found.items() if values}


def _with_parts(ids: list[int]) -> set[int]:
    every, frontier = set(ids), set(ids)
    for _ in range(_MAX_NESTING):
        children = set(Artifact.objects.filter(parent__in=frontier).values_list("pk", flat=True))
        children |= set(
            BundleMember.objects.filter(bundle__in=frontier, artifact__isnull=False).values_list(
                "artifact_id", flat=True
            )
        )
        frontier = children - every
        if not frontier:
            break
        every |= frontier
    return every


def _strings(value: Any) -> list[str]:
    """The strings inside a JSON value (a fact's ``extra``), keys excluded."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class RedactionLeakError(Exception):
    """The finished bundle still holds an original: it must not be published."""

    def __init__(self, leaks: list[Leak]) -> None:
        self.leaks = leaks
        total = sum(leak.count for leak in leaks)
        listed = "; ".join(
            f"{leak.category} {leak.masked} x{leak.count} in {leak.file}" for leak in leaks
        )
        super().__init__(
            f"refused to publish: the redaction audit found {total} original identifier(s) "
            f"left in the bundle: {listed}"
        )


def audit_archive(archive: Path, redactor: Redactor) -> LeakAudit:
    """Read every entry of the zip back, decompressed and streaming, for every original."""
    audit = LeakAudit(redactor.audit_terms(), redactor.pseudonyms())
    with zipfile.ZipFile(archive) as zf:
        for number, info in enumerate(zf.infolist(), start=1):
            # A leaking entry name must not be repeated in the list of leaks either.
            named = audit.scan_bytes("(entry names)", info.filename.encode(), count_file=False) == 0
            label = info.filename.split("/", 1)[-1] if named else f"(entry {number})"
            with zf.open(info) as member:
                audit.scan(label, member)
    return audit


def audit_summary(audit: LeakAudit) -> dict[str, Any]:
    """What goes into ``EvidenceBundle.report``: counts and masked leaks, no originals."""
    return {
        "passed": audit.clean,
        "identifiers": audit.terms,
        "entries": audit.files,
        "bytes": audit.bytes_read,
        "leaks": [
            {"category": x.category, "identifier": x.masked, "file": x.file, "count": x.count}
            for x in audit.leaks
        ],
    }


# --- preview ------------------------------------------------------------------------------


@dataclass
class RedactionPreview:
    replacements: list[Any]
    samples: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # file -> before/after
    excluded: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)


def bundle_preview(
    *,
    artifact_ids: Sequence[int] | None = None,
    incident: Incident | None = None,
    ticket: VendorTicket | None = None,
    patterns: Sequence[str] = (),
    sample_bytes: int = PREVIEW_SAMPLE_BYTES,
    samples_per_file: int = 5,
) -> RedactionPreview:
    """What redaction would replace, from the first ``sample_bytes`` of each raw file."""
    artifacts = _chosen_artifacts(incident, ticket, artifact_ids)
    fake = EvidenceBundle(incident=incident, ticket=ticket, patterns=_check_patterns(patterns))
    subject = Subject(incident, ticket)
    redactor = _redactor(fake, subject, artifacts)
    preview = RedactionPreview(replacements=[])
    texts: list[tuple[str, list[str]]] = []
    for artifact in artifacts:
        if not _is_text(artifact):
            preview.excluded.append(artifact.original_name)
            continue
        lines, seen = [], 0
        with closing(_text_lines(artifact, None)) as reader:
            for line in reader:
                seen += len(line)
                lines.append(line)
                if seen >= sample_bytes:
                    preview.truncated.append(artifact.original_name)
                    break
        texts.append((artifact.original_name, lines))
    for name, lines in texts:
        redactor.discover(name)
        for line in lines:
            redactor.discover(line)
    for name, lines in texts:
        shown = preview.samples.setdefault(name, [])
        for line in lines:
            after = redactor.redact(line, name)
            if after != line and len(shown) < samples_per_file:
                shown.append((line.rstrip("\n"), after.rstrip("\n")))
    preview.replacements = redactor.replacements()
    return preview


# --- archive ------------------------------------------------------------------------------


def safe_name(name: str, *, limit: int = 100) -> str:
    """A file name that is safe inside an archive on any OS: no folders, no dot files."""
    base = unicodedata.normalize("NFKC", str(name)).replace("\\", "/").rsplit("/", 1)[-1]
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._-")
    clean = re.sub(r"\.{2,}", ".", clean)
    if len(clean) > limit:
        stem, dot, ext = clean.rpartition(".")
        clean = (
            (stem[: limit - len(ext) - 1] + dot + ext) if dot and len(ext) <= 10 else clean[:limit]
        )
    return clean or "file"


def check_archive_path(path: str) -> str:
    """Refuse anything that could escape the extraction folder (zip-slip)."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\\" in path
        or ":" in path
        or any(p in ("", ".", "..") for p in parts)
    ):
        raise ValueError(f"unsafe archive path {path!r}")
    return path


def write_deterministic_zip(target: Path, files: Sequence[tuple[str, Path]]) -> None:
    with zipfile.ZipFile(
        target, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL
    ) as zf:
        for path, source in sorted(files):
            info = zipfile.ZipInfo(check_archive_path(path), date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, whatever the building machine is
            info.external_attr = 0o100644 << 16  # regular file, rw-r--r--
            info.file_size = source.stat().st_size  # lets zipfile pick zip64 up front
            with source.open("rb") as src, zf.open(info, "w") as dst:
                shutil.copyfileobj(src, dst, CHUNK)


# --- helpers ------------------------------------------------------------------------------


class _Progress:
    def __init__(self, bundle_id: int | None, *, total: int) -> None:
        self.bundle_id, self.total, self.done, self._next = bundle_id, total, 0, PROGRESS_STEP

    def add(self, n: int) -> None:
        self.done += n
        if self.bundle_id is not None and self.done >= self._next:
            self._next = self.done + PROGRESS_STEP
            EvidenceBundle.objects.filter(pk=self.bundle_id).update(
                progress_done=min(self.done, self.total), progress_total=self.total
            )


def _open_content(artifact: Artifact) -> tuple[IO[bytes], BinaryIO]:
    raw = artifact.file.open("rb")
    stream = open_decompressed(
        raw,
        compressed_size=artifact.size,
        max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
        max_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
    )
    return raw, stream


def _is_text(artifact: Artifact) -> bool:
    raw, stream = _open_content(artifact)
    try:
        head = stream.read(HEAD_BYTES)
    except Exception:  # corrupt gzip and the like: not something we can redact
        return False
    finally:
        raw.close()
    return b"\x00" not in head


def _text_lines(artifact: Artifact, progress: _Progress | None) -> Iterator[str]:
    """Decoded lines (surrogateescape: bytes survive the round trip) with a length cap."""
    raw, stream = _open_content(artifact)
    try:
        for chunk in _bounded_lines(stream):
            if progress is not None:
                progress.add(len(chunk))
            yield chunk.decode("utf-8", "surrogateescape")
    finally:
        raw.close()


def _bounded_lines(stream: BinaryIO) -> Iterator[bytes]:
    carry = b""
    while True:
        line = stream.readline(MAX_CHUNK)
        if not line:
            if carry:
                yield carry
            return
        line = carry + line
        carry = b""
        if line.endswith(b"\n") or len(line) < MAX_CHUNK:
            yield line
            continue
        cut = _last_separator(line)
        yield line[:cut]
        carry = line[cut:]


def _last_separator(data: bytes) -> int:
    ends = [m.end() for m in _SEPARATORS.finditer(data, max(0, len(data) - 64 * 1024))]
    return ends[-1] if ends else len(data)


def _copy_raw(artifact: Artifact, tmp: Path, progress: _Progress) -> Path:
    target = tmp / "raw-copies" / f"{artifact.pk}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with artifact.file.open("rb") as src, target.open("wb") as dst:
        while chunk := src.read(CHUNK):
            dst.write(chunk)
            progress.add(len(chunk))
    return target


def _write(tmp: Path, path: str, data: bytes) -> Path:
    target = tmp / "generated" / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def _strip_gz(name: str) -> str:
    return name[:-3] if name.lower().endswith(".gz") and len(name) > 3 else name


def _sha256_file(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size
