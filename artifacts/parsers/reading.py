"""Reading a stored or local file the way every entry point does: sample, detect, clean, parse.

``manage.py parse`` and the Celery parse task both go through here, so a file gives the same
JSON from the command line as from an upload. Pure Python, no Django.
"""

from __future__ import annotations

import dataclasses
import inspect
import io
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, BinaryIO

from artifacts.parsers import OTHER, PARSERS, ParseError, detection, get_parser, normalize
from artifacts.parsers.cleaning import CleanStream
from artifacts.parsers.detection import Detection, sample
from artifacts.parsers.normalize import View

# A fresh decompressed stream of the file at its start, closed when its block ends.
Opener = Callable[[], AbstractContextManager[BinaryIO]]


def detect_file(open_stream: Opener, name: str, size: int | None = None) -> Detection:
    with open_stream() as stream:
        return detection.detect_sample(name, sample(stream, size))


def view_of(open_stream: Opener, stored: dict[str, Any] | None = None) -> View:
    """The cleaning a parse applies: the one detection chose (stored with the artifact), or,
    for a file whose kind was given, planned from a sample without sniffing it again."""
    if stored and isinstance(stored.get("view"), dict):
        return View.from_json(stored["view"])
    with open_stream() as stream:
        taken = sample(stream)
        # a long file's windows around its signature lines too: what detection plans from
        # when its head is unsure (here no head is asked, so always)
        windows = taken.scan() if taken.scan else taken.windows
    view = normalize.plan(b"\n".join((taken.head, *windows)))
    if taken.encoding != view.encoding and not view.binary:
        view = dataclasses.replace(view, encoding=taken.encoding, needed=True)
    return view


def clean_stream(stream: BinaryIO, view: View) -> BinaryIO:
    """The parser's input: the stream itself when there is nothing to clean."""
    if view.binary or not view.needed:
        return stream
    return io.BufferedReader(CleanStream(stream, view), buffer_size=256 * 1024)


def parse_file(
    open_stream: Opener, name: str, *, kind: str | None = None, size: int | None = None
) -> tuple[Detection, Any]:
    """(detection, ParseResult) of a file; ``kind`` skips the choice, not the cleaning."""
    found = detect_file(open_stream, name, size)
    kind = kind or found.kind
    if kind == OTHER:
        raise ParseError("no parser recognises this file; known kinds: " + ", ".join(PARSERS))
    return found, parse_as(open_stream, name, kind, found.view)


def parse_as(open_stream: Opener, name: str, kind: str, view: View) -> Any:
    parser = get_parser(kind)
    # parsers that take the upload's name (bare counter lists name their device by it)
    named = "name" in inspect.signature(parser.parse).parameters
    with open_stream() as stream:
        return parser.parse(clean_stream(stream, view), **({"name": name} if named else {}))
