"""The whole generic reading of one file, as an upload and ``manage.py parse --generic`` get
it: the reading (reader.py) and the nearest kinds (nearest.py), over the same cleaning.

Pure Python, no Django.
"""

from __future__ import annotations

import io
from collections.abc import Collection
from typing import Any, BinaryIO

from artifacts.parsers.cleaning import CleanStream
from artifacts.parsers.generic.nearest import TRY_BYTES, nearest_kinds
from artifacts.parsers.generic.reader import read_generic
from artifacts.parsers.normalize import View
from artifacts.parsers.reading import Opener


def read_unknown(
    open_stream: Opener, name: str, *, encoding: str = "utf-8", skip: Collection[str] = ()
) -> dict[str, Any]:
    """``read_generic``'s JSON with ``nearest``: the kinds nearest to the file, those in
    ``skip`` (already ranked elsewhere) left out. Only the detected ``encoding`` is applied:
    prefix layers detection guessed were confirmed by no parser, and may be content."""
    view = View(encoding=encoding)
    with open_stream() as stream:
        body = read_generic(stream, view).to_json()
    with open_stream() as stream:
        head = _clean_head(stream, view)
    body["nearest"] = nearest_kinds(name, head, skip=skip)
    return body


def _clean_head(stream: BinaryIO, view: View) -> bytes:
    if view.binary:
        return stream.read(TRY_BYTES)
    return io.BufferedReader(CleanStream(stream, view)).read(TRY_BYTES)
