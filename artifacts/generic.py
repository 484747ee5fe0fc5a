"""The generic reading of a stored file no parser took (docs/formats.md, "Generic reading").

A file of kind "other", or one whose parser refused it, is still read: its key/value pairs,
tables and labelled numbers (artifacts/parsers/generic/reader.py) and the kinds nearest to
it with why each declined (nearest.py) are stored as ``Artifact.generic``, shown on its
page, returned by the API and indexed for search (the save fires knowledge's indexing).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from django.conf import settings

from artifacts.models.core import Artifact
from artifacts.parsers import ParseError
from artifacts.parsers.generic.unknown import read_unknown
from artifacts.parsers.normalize import View
from artifacts.parsers.streams import open_decompressed

log = logging.getLogger(__name__)


EXCERPT_LINES = 120  # lines an excerpt shows
EXCERPT_BEFORE = 20  # of them before the cited line
EXCERPT_CHARS = 2000  # of one line


@contextmanager
def open_stored(artifact: Artifact) -> Iterator[IO[bytes]]:
    """The stored file, gunzipped behind the bomb guard, from its start."""
    with artifact.file.open("rb") as raw:
        yield open_decompressed(
            raw,
            compressed_size=artifact.size,
            max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
            max_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
        )


def artifact_read_generically(artifact: Artifact) -> Artifact:
    """Read the stored file generically and save the reading on the artifact. A file that
    cannot be read at all (storage gone, a gzip bomb) gets a reading that says why
    (``{"unreadable": reason}``), so the page and ``ingest --wait`` stop waiting for one: the
    parse's own outcome (stored, failed) is what the page reports first."""
    detection = artifact.detection or {}
    stored_view = detection.get("view")
    encoding = View.from_json(stored_view).encoding if isinstance(stored_view, dict) else "utf-8"
    # The kinds detection ranked are listed with their reasons already (the detection
    # panel); the kind that just failed says why in the artifact's error.
    shown = {c.get("kind") for c in detection.get("candidates") or []} | {artifact.kind}
    try:
        reading = read_unknown(
            lambda: open_stored(artifact),
            artifact.original_name,
            encoding=encoding,
            skip={k for k in shown if k},
        )
    except (OSError, ParseError, ValueError) as exc:
        log.warning("artifact %s: no generic reading: %s", artifact.pk, exc)
        reading = {"unreadable": str(exc)[:500]}
    artifact.generic = reading
    artifact.save(update_fields=["generic"])
    return artifact


def artifact_excerpt(artifact: Artifact, first: int, last: int) -> list[tuple[int, str]]:
    """Lines ``first``..``last`` (1-based) of the file as uploaded, decoded in the file's
    encoding, each cut at EXCERPT_CHARS; lines end at ``\\n`` only, as the reading counts."""
    encoding = str(((artifact.detection or {}).get("view") or {}).get("encoding") or "utf-8")
    if encoding == "binary":
        encoding = "latin-1"
    out: list[tuple[int, str]] = []
    try:
        with open_stored(artifact) as stream:
            text = io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline="\n")
            number = 0
            while number < last:
                line = text.readline(EXCERPT_CHARS)
                if not line:
                    break
                shown = line
                while not line.endswith("\n") and line:  # the rest of a long line
                    line = text.readline(EXCERPT_CHARS * 4)
                number += 1
                if number >= first:
                    out.append((number, shown.rstrip("\r\n")))
    except (OSError, ParseError, LookupError) as exc:
        log.warning("artifact %s: no excerpt: %s", artifact.pk, exc)
    return out
