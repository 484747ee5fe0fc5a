"""``manage.py parse FILE [--kind K]``: print the canonical JSON of a ParseResult; store nothing."""

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

    def handle(self, *args: Any, file: str, kind: str | None, **options: Any) -> None:
        try:
            result = parse_path(Path(file), kind)
        except ParseError as exc:
            self.stderr.write(f"{file}: {exc.message}")
            sys.exit(2)
        # one write: Django's OutputWrapper ends every write() with a newline
        self.stdout.write(json.dumps(result.to_json(), indent=2, ensure_ascii=False))


def parse_path(path: Path, kind: str | None) -> Any:
    """The same reading as an upload's (artifacts/parsers/reading.py): sample, detect, clean,
    parse; ``kind`` skips the choice, not the cleaning."""

    @contextmanager
    def open_stream() -> Iterator[BinaryIO]:
        with path.open("rb") as raw:
            yield open_decompressed(
                raw,
                compressed_size=size,
                max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
                max_bytes=settings.PERFHUB_MAX_DECOMPRESSED_BYTES,
            )

    try:
        size = path.stat().st_size
        return parse_file(open_stream, path.name, kind=kind, size=size)[1]
    except OSError as exc:
        raise ParseError(exc.strerror or str(exc)) from exc
