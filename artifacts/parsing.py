"""Parsing a stored artifact: the body of the ``artifacts.parse`` task.

Reads the file with its kind's parser, loads the rows in one transaction (artifacts/loaders.py
picks the family's loader), then queues what follows a parse: baselines filing and alerts,
the fabric findings pass, and the unpacking of support bundles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from artifacts.bundles.services import BUNDLE_KINDS, bundle_unpack
from artifacts.bundles.transcripts import transcript_unpack
from artifacts.fabric.services import enqueue_findings
from artifacts.generic import artifact_read_generically
from artifacts.jobs.services import job_assign
from artifacts.loaders import load_result
from artifacts.models.core import Artifact
from artifacts.parsers import ParseError, get_parser
from artifacts.parsers.cleaning import clean_bytes
from artifacts.parsers.detection import HEAD_BYTES
from artifacts.parsers.normalize import View
from artifacts.parsers.reading import parse_as, view_of
from artifacts.parsers.streams import open_decompressed
from perfhub import dispatch

# Progress is written to the database at most this often (bytes), to keep parse fast.
PROGRESS_STEP = 4 * 1024 * 1024


# Files of one kind that carry another kind's content too: nccl-tests run with NCCL_DEBUG=INFO
# interleave NCCL's debug lines with the benchmark table. Such a file keeps its kind (its
# runs are parsed by nccl_tests) and is read a second time by the other parser when that
# parser accepts the file's sample, so the NCCL versions, transports and WARNs are stored too.
ALSO_PARSE: dict[str, tuple[str, ...]] = {"nccl_tests": ("nccl_debug",)}


def artifact_parse(*, artifact_id: int, worker: str = "") -> Artifact:
    """Parse the stored file and replace its derived rows, all in one transaction.

    A ParseError marks the artifact failed with the parser's message; the raw file is kept
    and re-parse is always possible. A crash mid-parse leaves the old rows untouched.
    ``worker`` (the Celery worker's name) and the progress times let a parse whose worker
    died be found and re-queued (artifacts/stalls.py).
    """
    artifact = Artifact.objects.get(pk=artifact_id)
    if not artifact.is_parseable:  # kept as evidence, read generically (artifacts/generic.py)
        return artifact_read_generically(artifact)
    parser = get_parser(artifact.kind)
    Artifact.objects.filter(pk=artifact.pk).update(
        status=Artifact.Status.PARSING,
        parse_started_at=timezone.now(),
        parse_worker=worker[:200],
        progress_at=timezone.now(),
        progress_bytes=0,
        progress_total=artifact.size,
        error="",
    )
    try:
        view = view_of(lambda: _open(artifact), artifact.detection)
        result = _read_as(artifact, parser, view, progress=_progress_writer(artifact.pk))
    except ParseError as exc:
        _mark_failed(artifact, exc.message)
        if not exc.permanent:
            raise
        # refused, not lost: what can be read of it, and the kinds nearest to it
        return artifact_read_generically(_refresh(artifact))
    except OSError as exc:  # storage unreachable: worth a retry
        _mark_failed(artifact, f"could not read the stored file: {exc}")
        raise ParseError(str(exc), permanent=False) from exc
    also = _also_parse(artifact, view)
    _progress_writer(artifact.pk)(artifact.size)  # read: loading the rows is the last step
    with transaction.atomic():
        locked = Artifact.objects.select_for_update().get(pk=artifact.pk)
        load_result(locked, result)
        locked.status = Artifact.Status.PARSED
        locked.summary = result.summary()
        locked.warnings = [*view.describe(), *result.warnings]
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
        locked.generic = {}  # a parser took it: the generic reading no longer applies
        locked.save()
        # Which job this evidence belongs to, from what it states (artifacts/jobs/services.py):
        # baselines' filing lets job facts (NCCL_* env, NCCL version) travel only inside it.
        job_assign(artifact=locked)
    dispatch.enqueue("baselines.after_parse", locked.pk)  # baselines: file, compare, alert
    enqueue_findings(locked)  # fabric: pair snapshots into rates, evaluate findings rules
    if any(not isinstance(extra, str) for _, extra in also):
        dispatch.enqueue("artifacts.findings", locked.pk)  # NCCL rules
    if locked.kind in BUNDLE_KINDS or locked.bundle_members.exists():
        # each section/member becomes its own artifact, with the kinds this parse chose
        bundle_unpack(bundle=locked, known=getattr(result, "parts", ()))
    # a terminal transcript's other commands, each stored as its own evidence
    transcript_unpack(artifact=locked)
    return locked


@contextmanager
def _open(artifact: Artifact, progress: Callable[[int], None] | None = None) -> Iterator[IO[bytes]]:
    """The stored file, gunzipped and bomb-guarded, from its start (closed on exit)."""
    with artifact.file.open("rb") as raw:
        yield open_decompressed(
            _ProgressReader(raw, progress) if progress else raw,
            compressed_size=artifact.size,
            max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
            max_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
        )


def _read_as(
    artifact: Artifact, parser: Any, view: View, *, progress: Callable[[int], None] | None = None
) -> Any:
    """Run one parser over the stored file, cleaned as detection decided (normalize.py)."""
    return parse_as(lambda: _open(artifact, progress), artifact.original_name, parser.KIND, view)


def _also_parse(artifact: Artifact, view: View) -> list[tuple[str, Any]]:
    """Second readings (see ALSO_PARSE): (kind, result) or (kind, why it was refused)."""
    out: list[tuple[str, Any]] = []
    for kind in ALSO_PARSE.get(artifact.kind, ()):
        if not _accepted(artifact, kind, view):
            continue
        try:
            out.append((kind, _read_as(artifact, get_parser(kind), view)))
        except ParseError as exc:
            out.append((kind, exc.message))
        except OSError as exc:  # the main reading is stored; the second is a bonus
            out.append((kind, f"could not read the stored file again: {exc}"))
    return out


def _accepted(artifact: Artifact, kind: str, view: View) -> bool:
    """Whether ``kind``'s sniffer accepted the file: as detection recorded it, or asked now."""
    stored = (artifact.detection or {}).get("candidates") or []
    if any(c.get("kind") == kind for c in stored):
        return True
    try:  # detection stops at a certain candidate: the others were not asked
        with _open(artifact) as stream:
            head = clean_bytes(stream.read(HEAD_BYTES), view)
    except (OSError, ParseError):
        return False
    return get_parser(kind).accepts(artifact.original_name, head)


def _mark_failed(artifact: Artifact, message: str) -> None:
    Artifact.objects.filter(pk=artifact.pk).update(
        status=Artifact.Status.FAILED, error=message[:5000], parsed_at=timezone.now()
    )


def _refresh(artifact: Artifact) -> Artifact:
    artifact.refresh_from_db()
    return artifact


def _progress_writer(artifact_id: int) -> Callable[[int], None]:
    def write(done: int) -> None:
        Artifact.objects.filter(pk=artifact_id).update(
            progress_bytes=done, progress_at=timezone.now()
        )

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
