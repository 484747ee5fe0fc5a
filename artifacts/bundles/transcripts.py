"""Terminal transcripts: the other commands of a pasted session, each its own artifact.

Detection cuts a file whose prompt lines separate several commands into parts and keeps the
main one (the best-recognised kind, with any runs of the same tool around it) as this
artifact's content. Every other part whose kind is known is stored here, after the parse,
as a child artifact (like a support bundle's sections), titled with its command line.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import PurePath
from typing import Any

from django.conf import settings

from artifacts.bundles.models import BundleMember
from artifacts.models.core import Artifact
from artifacts.parsers.normalize import Part, View
from artifacts.parsers.reading import clean_stream
from artifacts.parsers.registry import OTHER
from artifacts.parsers.streams import open_decompressed
from artifacts.services import IngestError, artifact_ingest


def transcript_parts(artifact: Artifact) -> list[dict[str, Any]]:
    """The parts detection found beside the main one, with a known kind."""
    parts = (artifact.detection or {}).get("parts") or []
    return [p for p in parts if not p.get("main") and p.get("kind") not in (None, OTHER)]


def transcript_unpack(*, artifact: Artifact) -> list[BundleMember]:
    """Store each other command's output as a child artifact and list it. Idempotent: the
    listing is rebuilt and parts already stored are found again by their hash."""
    parts = transcript_parts(artifact)
    if not parts or not isinstance(artifact.detection.get("view"), dict):
        return []
    artifact.bundle_members.all().delete()
    view = View.from_json(artifact.detection["view"])
    stem = PurePath(artifact.original_name).stem
    rows = []
    for position, part in enumerate(parts, 1):
        span = Part(title=part["title"], start=int(part["start"]), end=int(part["end"]))
        body = _text_of(artifact, dataclasses.replace(view, part=span, needed=True))
        member, note = None, ""
        try:
            outcome = artifact_ingest(
                stream=io.BytesIO(body),
                name=f"{stem}.part{position}.txt",
                uploaded_by=artifact.uploaded_by,
                kind=part["kind"],
                detected=part["kind"],
                label=artifact.label,
                host=artifact.host,
                metadata={"transcript": artifact.pk, "command": span.title},
                parent=artifact,
            )
        except IngestError as exc:
            note = str(exc)[:255]
        else:
            member = outcome.artifact
        rows.append(
            BundleMember(
                bundle=artifact,
                artifact=member,
                position=position,
                name=(span.title or "(before the first prompt)")[:500],
                kind=part["kind"],
                size=len(body),
                line_start=span.start,
                line_end=span.end,
                note=note,
            )
        )
    return BundleMember.objects.bulk_create(rows)


def _text_of(artifact: Artifact, view: View) -> bytes:
    with artifact.file.open("rb") as raw:
        stream = open_decompressed(
            raw,
            compressed_size=artifact.size,
            max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
            max_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
        )
        return clean_stream(stream, view).read(settings.PERFHUB_MAX_UPLOAD_BYTES)
