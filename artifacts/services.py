"""Writes on artifacts: ingest (every upload path calls this) and parse (the Celery task's body)."""

from __future__ import annotations

import hashlib
import inspect
import logging
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, BinaryIO

from django.conf import settings
from django.core.files import File
from django.db import IntegrityError, transaction
from django.utils import timezone

from baselines.tasks import after_parse

from .bundles import BUNDLE_KINDS, bundle_unpack
from .fabric.tasks import enqueue_findings, evaluate_findings
from .loaders import load_result
from .models import Artifact
from .parsers import OTHER, PARSERS, ParseError, detect_kind, get_parser
from .parsers.streams import HEAD_BYTES, open_decompressed
from .times import aware_datetime

log = logging.getLogger(__name__)
CHUNK = 1024 * 1024
# Progress is written to the database at most this often (bytes), to keep parse fast.
PROGRESS_STEP = 4 * 1024 * 1024
# Files of one kind that carry another kind's content too: nccl-tests run with NCCL_DEBUG=INFO
# interleave NCCL's debug lines with the benchmark table. Such a file keeps its kind (its
# runs are parsed by nccl_tests) and is read a second time by the other parser when that
# parser accepts the file's head, so the NCCL versions, transports and WARNs are stored too.
ALSO_PARSE: dict[str, tuple[str, ...]] = {"nccl_tests": ("nccl_debug",)}


class IngestError(Exception):
    """The upload was refused (too large, empty, bad kind); nothing was stored."""


@dataclass(frozen=True)
class IngestOutcome:
    artifact: Artifact
    created: bool

    @property
    def message(self) -> str:
        if self.created:
            return f"{self.artifact.original_name}: stored as artifact #{self.artifact.pk}"
        return (
            f"{self.artifact.original_name}: same bytes already uploaded as artifact "
            f"#{self.artifact.pk} ({self.artifact.original_name}); nothing new stored"
        )


def artifact_ingest(
    *,
    stream: IO[bytes],
    name: str,
    uploaded_by: Any = None,
    kind: str | None = None,
    label: str = "",
    host: str = "",
    metadata: Mapping[str, Any] | None = None,
    enqueue: bool = True,
    parent: Artifact | None = None,
    detected: str | None = None,
) -> IngestOutcome:
    """Store one uploaded file and enqueue its parse. Identical bytes return the existing row.

    ``enqueue=False`` leaves the parse to the caller (the demo loader parses in-process).
    ``parent``: the support bundle the file was cut out of (see bundles.py).
    ``detected``: what ``detect_kind`` already said of these bytes and this name (a bundle's
    part); it is stored as ``kind_detected`` and the file is not sniffed again.
    The file is spooled once to a temporary file while hashing, so the size limit is checked
    before anything reaches storage and detection can peek at the (decompressed) head.
    """
    if kind and kind not in PARSERS and kind != OTHER:
        raise IngestError(f"unknown kind {kind!r}; known kinds: {', '.join([*PARSERS, OTHER])}")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise IngestError("metadata must be a JSON object of key/value pairs")
    captured_at = _captured_at(metadata or {})
    limit = settings.PERFHUB_MAX_UPLOAD_BYTES
    with tempfile.TemporaryFile(dir=settings.FILE_UPLOAD_TEMP_DIR) as spool:
        digest, size = _spool(stream, spool, limit)
        if size == 0:
            raise IngestError(f"{name}: the file is empty")
        existing = Artifact.objects.filter(sha256=digest).first()
        if existing:
            return IngestOutcome(existing, created=False)
        spool.seek(0)
        if detected not in PARSERS and detected != OTHER:
            detected = detect_kind(name, _head(spool, size))
        spool.seek(0)
        chosen = kind or detected
        artifact = Artifact(
            captured_at=captured_at,
            original_name=_display_name(name),
            sha256=digest,
            size=size,
            kind=chosen,
            kind_detected=detected,
            status=Artifact.Status.PENDING if chosen != OTHER else Artifact.Status.STORED,
            uploaded_by=uploaded_by if getattr(uploaded_by, "pk", None) else None,
            label=label.strip()[:120],
            host=host.strip()[:255],
            metadata={str(k): v for k, v in (metadata or {}).items()},
            parent=parent,
        )
        # Stored under the hash, not the user's name: no path tricks, no collisions.
        artifact.file.save(f"{digest[:2]}/{digest}", File(spool), save=False)
    try:
        with transaction.atomic():
            artifact.save()
            if artifact.is_parseable and enqueue:
                _enqueue_parse(artifact.pk)
    except IntegrityError:
        # Someone uploaded the same bytes a moment ago; theirs wins, ours is dropped.
        artifact.file.delete(save=False)
        return IngestOutcome(Artifact.objects.get(sha256=digest), created=False)
    return IngestOutcome(artifact, created=True)


def artifact_request_parse(*, artifact: Artifact, kind: str | None = None) -> Artifact:
    """Queue a (re-)parse, optionally with a different kind. Derived rows stay until it lands."""
    if kind:
        if kind not in PARSERS and kind != OTHER:
            raise IngestError(f"unknown kind {kind!r}")
        artifact.kind = kind
    if not artifact.is_parseable:
        artifact.status = Artifact.Status.STORED
        artifact.save(update_fields=["kind", "status"])
        return artifact
    with transaction.atomic():
        artifact.status = Artifact.Status.PENDING
        artifact.error = ""
        artifact.progress_bytes = 0
        artifact.save(update_fields=["kind", "status", "error", "progress_bytes"])
        _enqueue_parse(artifact.pk)
    return artifact


def artifact_parse(*, artifact_id: int) -> Artifact:
    """Parse the stored file and replace its derived rows, all in one transaction.

    A ParseError marks the artifact failed with the parser's message; the raw file is kept
    and re-parse is always possible. A crash mid-parse leaves the old rows untouched.
    """
    artifact = Artifact.objects.get(pk=artifact_id)
    if not artifact.is_parseable:
        return artifact
    parser = get_parser(artifact.kind)
    Artifact.objects.filter(pk=artifact.pk).update(
        status=Artifact.Status.PARSING,
        parse_started_at=timezone.now(),
        progress_bytes=0,
        progress_total=artifact.size,
        error="",
    )
    try:
        result = _read_as(artifact, parser, progress=_progress_writer(artifact.pk))
    except ParseError as exc:
        _mark_failed(artifact, exc.message)
        if not exc.permanent:
            raise
        return _refresh(artifact)
    except OSError as exc:  # storage unreachable: worth a retry
        _mark_failed(artifact, f"could not read the stored file: {exc}")
        raise ParseError(str(exc), permanent=False) from exc
    also = _also_parse(artifact)
    with transaction.atomic():
        locked = Artifact.objects.select_for_update().get(pk=artifact.pk)
        load_result(locked, result)
        locked.status = Artifact.Status.PARSED
        locked.summary = result.summary()
        locked.warnings = list(result.warnings)
        for kind, extra in also:
            if isinstance(extra, str):  # the second parser refused after all: say why
                locked.warnings.append(f"{kind}: {extra}")
                continue
            load_result(locked, extra)
            locked.summary.update({f"{kind}_{k}": v for k, v in extra.summary().items()})
            locked.warnings.extend(f"{kind}: {w}" for w in extra.warnings)
        locked.parser_version = str(parser.VERSION)
        locked.parsed_at = timezone.now()
        locked.progress_bytes = locked.size
        locked.error = ""
        locked.save()
    transaction.on_commit(lambda: after_parse.delay(locked.pk))  # baselines: file, compare, alert
    enqueue_findings(locked)  # fabric: pair snapshots into rates, evaluate findings rules
    if any(not isinstance(extra, str) for _, extra in also):
        transaction.on_commit(lambda: evaluate_findings.delay(locked.pk))  # NCCL rules
    if locked.kind in BUNDLE_KINDS or locked.bundle_members.exists():
        # each section/member becomes its own artifact, with the kinds this parse chose
        bundle_unpack(bundle=locked, known=getattr(result, "parts", ()))
    return locked


def _read_as(
    artifact: Artifact, parser: Any, *, progress: Callable[[int], None] | None = None
) -> Any:
    """Run one parser over the stored file (gunzipped, bomb-guarded)."""
    with artifact.file.open("rb") as raw:
        counted = _ProgressReader(raw, progress) if progress else raw
        stream = open_decompressed(
            counted,
            compressed_size=artifact.size,
            max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
            max_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
        )
        # parsers that take the upload's name (bare counter lists name their device by it)
        named = "name" in inspect.signature(parser.parse).parameters
        return parser.parse(stream, **({"name": artifact.original_name} if named else {}))


def _also_parse(artifact: Artifact) -> list[tuple[str, Any]]:
    """Second readings (see ALSO_PARSE): (kind, result) or (kind, why it was refused)."""
    kinds = ALSO_PARSE.get(artifact.kind, ())
    if not kinds:
        return []
    try:
        with artifact.file.open("rb") as raw:
            head = _head(raw, artifact.size)
    except OSError:
        return []
    out: list[tuple[str, Any]] = []
    for kind in kinds:
        parser = get_parser(kind)
        if not parser.accepts(artifact.original_name, head):
            continue
        try:
            out.append((kind, _read_as(artifact, parser)))
        except ParseError as exc:
            out.append((kind, exc.message))
        except OSError as exc:  # the main reading is stored; the second is a bonus
            out.append((kind, f"could not read the stored file again: {exc}"))
    return out


def _mark_failed(artifact: Artifact, message: str) -> None:
    Artifact.objects.filter(pk=artifact.pk).update(
        status=Artifact.Status.FAILED, error=message[:5000], parsed_at=timezone.now()
    )


def _refresh(artifact: Artifact) -> Artifact:
    artifact.refresh_from_db()
    return artifact


def _enqueue_parse(artifact_id: int) -> None:
    from .tasks import parse_artifact  # tasks import services; keep the cycle lazy

    transaction.on_commit(lambda: parse_artifact.delay(artifact_id))


def _spool(stream: IO[bytes], spool: BinaryIO, limit: int) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    while chunk := stream.read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise IngestError(
                f"the file is larger than the upload limit of {limit} bytes "
                "(PERFHUB_MAX_UPLOAD_BYTES)"
            )
        digest.update(chunk)
        spool.write(chunk)
    spool.flush()
    return digest.hexdigest(), size


def _head(spool: BinaryIO, size: int) -> bytes:
    try:
        return open_decompressed(spool, compressed_size=size).read(HEAD_BYTES)
    except ParseError:
        return b""


def _captured_at(metadata: Mapping[str, Any]) -> datetime | None:
    """``captured_at`` in upload metadata: an ISO date or date-time (naive means UTC)."""
    raw = metadata.get("captured_at")
    if raw in (None, ""):
        return None
    try:
        return aware_datetime(str(raw))
    except ValueError:
        raise IngestError(
            f"metadata captured_at={raw!r} is not an ISO 8601 date or date-time"
        ) from None


def _display_name(name: str) -> str:
    """Keep only the last path component: browsers and CLIs may send full paths."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    return (base or "upload")[:255]


def _progress_writer(artifact_id: int) -> Callable[[int], None]:
    def write(done: int) -> None:
        Artifact.objects.filter(pk=artifact_id).update(progress_bytes=done)

    return write


class _ProgressReader:
    """Counts bytes read from the raw (compressed) file and reports them now and then."""

    def __init__(self, raw: IO[bytes], report: Callable[[int], None]) -> None:
        self._raw = raw
        self._report = report
        self._done = 0
        self._next = PROGRESS_STEP

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        self._done += len(data)
        if self._done >= self._next:
            self._next = self._done + PROGRESS_STEP
            self._report(self._done)
        return data
