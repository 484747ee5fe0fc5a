"""Support bundles (nvidia-bug-report logs, sysinfo-snapshot archives, archives of profiler
traces): facts and unpacking.

A bundle is parsed twice over, on purpose. Its own parser (artifacts/bundles/parsers/) lists
the parts and reads the facts only the bundle carries (script version, kernel and driver
versions, lspci links); loaders.py stores those inside the parse transaction. Then,
after that transaction, ``bundle_unpack`` cuts the bundle into its parts and ingests each
one through ``artifact_ingest`` with ``parent`` = the bundle, so every part is an artifact
like any upload: deduplicated by hash, parsed by its own kind's parser in the worker, with
progress, failures, re-parse and findings exactly as for a file uploaded alone. A
``BundleMember`` row per part records the provenance (section header or member path, line
range) and what became of it; parts not stored on their own are listed with the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO

from django.conf import settings

from artifacts.bundles.parsers import nvidia_bug_report, sysinfo_snapshot, trace_archive
from artifacts.bundles.parsers.common import MAX_PART_BYTES, BundlePart, Limits
from artifacts.models import Artifact, BundleMember
from artifacts.parsers import ParseError
from artifacts.parsers.streams import open_decompressed
from artifacts.services import IngestError, artifact_ingest

log = logging.getLogger(__name__)

PartIterator = Callable[
    [BinaryIO, Limits, Sequence[BundlePart]], Iterator[tuple[BundlePart, BinaryIO | None]]
]
BUNDLE_PARTS: dict[str, PartIterator] = {
    "nvidia_bug_report": nvidia_bug_report.iter_parts,
    "sysinfo_snapshot": sysinfo_snapshot.iter_parts,
    "trace_archive": trace_archive.iter_parts,
}
BUNDLE_KINDS = frozenset(BUNDLE_PARTS)


def bundle_unpack(*, bundle: Artifact, known: Sequence[BundlePart] = ()) -> list[BundleMember]:
    """Store every part of a parsed bundle as its own artifact and list them. Idempotent:
    the listing is rebuilt, and parts already stored are found again by their hash.

    ``known``: the parts the bundle's parse just listed. Their kinds (and what detection
    said) are reused, so no member is sniffed again, neither by the walk nor by ingest.
    """
    bundle.bundle_members.all().delete()  # also when it was re-parsed as a non-bundle kind
    iter_parts = BUNDLE_PARTS.get(bundle.kind)
    if iter_parts is None:
        return []
    limits = Limits(
        max_part_bytes=min(MAX_PART_BYTES, settings.PERFHUB_MAX_UPLOAD_BYTES),
        max_total_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
    )
    rows: list[BundleMember] = []
    problem = ""
    try:
        with bundle.file.open("rb") as raw:
            stream = open_decompressed(
                raw,
                compressed_size=bundle.size,
                max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
                max_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
            )
            for part, body in iter_parts(stream, limits, known):
                member, note = None, part.note
                if body is not None:
                    try:
                        outcome = artifact_ingest(
                            stream=body,
                            name=part.name,
                            uploaded_by=bundle.uploaded_by,
                            kind=part.kind,
                            detected=_detected(part, body),
                            label=bundle.label,
                            host=bundle.host,
                            metadata=_member_metadata(bundle, part),
                            parent=bundle,
                        )
                    except IngestError as exc:
                        note = str(exc)[:255]
                    else:
                        member = outcome.artifact
                        if not outcome.created and member.parent_id != bundle.pk:
                            note = f"same bytes as artifact #{member.pk}, stored earlier"
                rows.append(_row(bundle, part, member, note))
    except (ParseError, OSError) as exc:
        # The parse already read the whole bundle, so this is storage trouble or a file
        # changed under us; keep what was unpacked and say so on the bundle.
        problem = f"unpacking stopped after {len(rows)} part(s): {exc}"
        log.warning("bundle %s: %s", bundle.pk, problem)
    BundleMember.objects.bulk_create(rows, batch_size=1000)
    if problem:
        warnings = [*bundle.warnings, problem]
        Artifact.objects.filter(pk=bundle.pk).update(warnings=warnings)
        bundle.warnings = warnings
    return rows


def _detected(part: BundlePart, body: BinaryIO) -> str | None:
    """What detection said of the part, when ingest would sniff exactly the same thing:
    ingest sees a gzip member decompressed, and the name cut to 200 characters."""
    if not part.detected or len(part.name) >= 200:
        return None
    magic = body.read(2)
    body.seek(0)
    return None if magic == b"\x1f\x8b" else part.detected


def _member_metadata(bundle: Artifact, part: BundlePart) -> dict[str, Any]:
    meta: dict[str, Any] = {"bundle": bundle.pk, "bundle_part": part.title}
    if part.line_start is not None:
        meta["bundle_lines"] = f"{part.line_start}-{part.line_end}"
    if bundle.captured_at:
        meta["captured_at"] = bundle.captured_at.isoformat()
    return meta


def _row(bundle: Artifact, part: BundlePart, member: Artifact | None, note: str) -> BundleMember:
    return BundleMember(
        bundle=bundle,
        artifact=member,
        position=part.index,
        name=part.title[:500],
        kind=part.kind,
        size=part.size,
        line_start=part.line_start,
        line_end=part.line_end,
        note=note[:255],
    )
