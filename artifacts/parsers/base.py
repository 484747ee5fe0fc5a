"""What every parser shares: the one error type and the result base class.

Pure Python: nothing here (or in any parser module) may import Django, so parsers can be
used from the CLI, a notebook or a benchmark without settings.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterator
from typing import Any, BinaryIO, ClassVar


class ParseError(Exception):
    """The file could not be parsed.

    ``permanent=True`` (the usual case) means retrying cannot help: the bytes are wrong.
    ``permanent=False`` means the failure came from outside the file (storage hiccup) and
    the task may retry.
    """

    def __init__(self, message: str, *, permanent: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.permanent = permanent


@dataclasses.dataclass(frozen=True)
class ParseResult:
    """Base of every kind's result. Subclasses set ``kind`` and add their own fields."""

    kind: ClassVar[str] = ""
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The canonical JSON shape (documented in docs/formats.md): kind first, then fields."""
        body = _jsonable(dataclasses.asdict(self))
        warnings = body.pop("warnings")
        return {"kind": self.kind, **body, "warnings": warnings}

    def summary(self) -> dict[str, Any]:
        """A few headline facts stored on the artifact and shown in lists. Override per kind."""
        return {"warnings": len(self.warnings)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value != value:  # NaN has no JSON spelling
        return None
    return value


def iter_text_lines(stream: BinaryIO) -> Iterator[str]:
    """Decode a binary stream line by line; bad UTF-8 becomes U+FFFD instead of failing."""
    text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline=None)
    try:
        for line in text:
            yield line.rstrip("\r\n")
    finally:
        text.detach()  # leave the caller's stream open: they own it
