"""``manage.py parse FILE [--kind K | --generic]``: print the canonical JSON of a ParseResult,
or with ``--generic`` the generic reading an upload no parser takes gets; store nothing."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from django.conf import settings
from django.core.management.base import BaseCommand

from artifacts.parsers import PARSERS, ParseError
from artifacts.parsers.reading import parse_file
from artifacts.parsers.streams import open_decompressed


class Command(BaseCommand):
    help = "Parse one file and print the result as JSON (exit 0), or 'FILE: why' (exit 2)."
    # Parsing reads no database, URL or template: the system checks would import every view,
    # DRF and pandas (~2 s and 60 MB) before the first byte is read.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file")
        parser.add_argument("--kind", choices=sorted(PARSERS), help="skip detection")
        parser.add_argument(
            "--generic",
            action="store_true",
            help="print the generic reading (pairs, tables, numbers, nearest kinds) instead "
            "(docs/formats.md, 'Generic reading')",
        )

    def handle(
        self, *args: Any, file: str, kind: str | None, generic: bool = False, **options: Any
    ) -> None:
        try:
            body = read_path(Path(file)) if generic else parse_path(Path(file), kind).to_json()
        except ParseError as exc:
            hint = "" if generic else " (--generic prints what can be read of it)"
            self.stderr.write(f"{file}: {exc.message}{hint}")
            sys.exit(2)
        # one write: Django's OutputWrapper ends every write() with a newline
        self.stdout.write(json.dumps(body, indent=2, ensure_ascii=False))


def parse_path(path: Path, kind: str | None) -> Any:
    """The same reading as an upload's (artifacts/parsers/reading.py): sample, detect, clean,
    parse; ``kind`` skips the choice, not the cleaning."""
    try:
        return parse_file(_opener(path), path.name, kind=kind, size=path.stat().st_size)[1]
    except OSError as exc:
        raise ParseError(exc.strerror or str(exc)) from exc


def read_path(path: Path) -> dict[str, Any]:
    """The generic reading an upload of this file gets when no parser takes it: pairs,
    tables and numbers with their lines, and the nearest kinds (artifacts/generic.py)."""
    from artifacts.parsers.generic.unknown import read_unknown
    from artifacts.parsers.reading import detect_file

    open_stream = _opener(path)
    try:
        found = detect_file(open_stream, path.name, path.stat().st_size)
        shown = {c.kind for c in found.candidates}
        body = read_unknown(open_stream, path.name, encoding=found.view.encoding, skip=shown)
    except OSError as exc:
        raise ParseError(exc.strerror or str(exc)) from exc
    return {"kind": found.kind, **body}


def _opener(path: Path) -> Any:
    @contextmanager
    def open_stream() -> Iterator[BinaryIO]:
        with path.open("rb") as raw:
            yield open_decompressed(
                raw,
                compressed_size=path.stat().st_size,
                max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
                max_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
            )

    return open_stream
