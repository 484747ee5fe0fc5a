"""Writes on artifacts: ingest (every upload path calls this) and the request to (re-)parse.

The parse itself is the Celery task's body, in artifacts/parsing.py.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, BinaryIO

from django.conf import settings
from django.core.files import File
from django.db import IntegrityError, transaction
from django.utils import timezone

from artifacts.models import Artifact
from artifacts.parsers import OTHER, PARSERS
from artifacts.parsers.reading import detect_file
from artifacts.parsers.streams import open_decompressed
from artifacts.times import aware_datetime
from perfhub import dispatch

log = logging.getLogger(__name__)
CHUNK = 1024 * 1024


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
        found = None
        if detected not in PARSERS and detected != OTHER:
            found = detect_file(lambda: _unzipped(spool, size), name, size)
            detected = found.kind
        spool.seek(0)
        chosen = kind or detected
        artifact = Artifact(
            captured_at=captured_at,
            original_name=_display_name(name),
            sha256=digest,
            size=size,
            kind=chosen,
            kind_detected=detected,
            detection=found.to_json() if found else {},
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
            if enqueue:  # a file of no kind is read generically by the same task
                _enqueue_parse(artifact)
    except IntegrityError:
        # Someone uploaded the same bytes a moment ago; theirs wins, ours is dropped.
        artifact.file.delete(save=False)
        return IngestOutcome(Artifact.objects.get(sha256=digest), created=False)
    return IngestOutcome(artifact, created=True)


def artifact_request_parse(
    *, artifact: Artifact, kind: str | None = None, by: Any = None
) -> Artifact:
    """Queue a (re-)parse, optionally with a different kind. Derived rows stay until it lands.

    A kind a person chose ("parse as") is kept with the detection record, with who chose it
    and when, so later re-parses and the artifact page say the kind was not guessed.
    """
    if kind:
        if kind not in PARSERS and kind != OTHER:
            raise IngestError(f"unknown kind {kind!r}")
        artifact.kind = kind
        artifact.detection = {
            **(artifact.detection or {}),
            "chosen_kind": kind,
            "chosen_by": getattr(by, "username", "") or "",
            "chosen_at": timezone.now().isoformat(timespec="seconds"),
        }
    if not artifact.is_parseable:
        artifact.status = Artifact.Status.STORED
        with transaction.atomic():
            artifact.save(update_fields=["kind", "status", "detection"])
            _enqueue_parse(artifact)  # read generically (artifacts/generic.py)
        return artifact
    with transaction.atomic():
        artifact.status = Artifact.Status.PENDING
        artifact.error = ""
        artifact.progress_bytes = 0
        artifact.requeued_at = None  # a new request may be re-queued once more if it stalls
        artifact.save(
            update_fields=["kind", "status", "error", "progress_bytes", "detection", "requeued_at"]
        )
        _enqueue_parse(artifact)
    return artifact


def _enqueue_parse(artifact: Artifact) -> None:
    def not_queued(reason: str) -> None:
        # the caller's copy too: the upload's answer and `manage.py ingest` say it at once
        artifact.status = Artifact.Status.FAILED
        artifact.error = (
            f"Stored, but its parse was not queued: {reason}. Re-parse it once the workers' "
            "queue is back."
        )
        Artifact.objects.filter(pk=artifact.pk).update(status=artifact.status, error=artifact.error)

    dispatch.enqueue("artifacts.parse", artifact.pk, on_failure=not_queued)


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


@contextmanager
def _unzipped(spool: BinaryIO, size: int) -> Iterator[BinaryIO]:
    """The spooled upload, decompressed, from its start (the spool itself stays open)."""
    spool.seek(0)
    yield open_decompressed(spool, compressed_size=size)


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
