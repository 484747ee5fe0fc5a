"""An incremental reader of one (possibly huge, possibly truncated) JSON document.

Package-private to ``artifacts.runs.parsers.nccl_tests``: upstream ``-J`` files put every result
row in one ``results`` list, which this walks element by element instead of loading whole.
Pure Python, no Django.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from typing import Any

from artifacts.parsers.base import ParseError

# A single JSON value (one result row, the env list...) may be buffered whole, up to this.
MAX_JSON_VALUE_CHARS = 256 * 1024 * 1024


class Truncated(Exception):
    """The JSON text ended in the middle of a value."""


class BadJson(Exception):
    """The JSON text is malformed at the current position."""


class JsonCursor:
    """Walks a (possibly huge, possibly truncated) JSON document value by value.

    Only one value is buffered at a time (plus one read chunk), so the ``results`` list of
    a big -J file is streamed element by element, and a cut file still yields every element
    that was complete.
    """

    def __init__(self, read: Callable[[int], bytes], initial: str) -> None:
        self._read = read
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._json = json.JSONDecoder()
        self._buf = initial
        self._pos = 0
        self._eof = False

    def _more(self) -> bool:
        if self._eof:
            return False
        pending = len(self._buf) - self._pos
        if pending > MAX_JSON_VALUE_CHARS:
            raise ParseError(
                f"a JSON value is larger than {MAX_JSON_VALUE_CHARS // (1024 * 1024)} MiB; "
                "refusing to buffer it"
            )
        # Read at least as much as is pending, so re-decoding a long value stays linear.
        chunk = self._read(max(1024 * 1024, pending))
        text = self._decoder.decode(chunk, final=not chunk)
        if not chunk:
            self._eof = True
        self._buf = self._buf[self._pos :] + text
        self._pos = 0
        return bool(chunk) or bool(text)

    def peek(self) -> str:
        while True:
            buf, pos, end = self._buf, self._pos, len(self._buf)
            while pos < end and buf[pos] in " \t\r\n":
                pos += 1
            self._pos = pos
            if pos < end:
                return buf[pos]
            if not self._more():
                return ""

    def expect(self, char: str) -> None:
        found = self.peek()
        if not found:
            raise Truncated
        if found != char:
            raise BadJson(f"expected {char!r}, found {found!r}")
        self._pos += 1

    def value(self) -> Any:
        if not self.peek():
            raise Truncated
        while True:
            try:
                value, end = self._json.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(self._buf) - 64
                if not near_end and not exc.msg.startswith("Unterminated string"):
                    raise BadJson(exc.msg) from None
            except RecursionError:
                raise BadJson("JSON nested too deeply") from None
            else:
                # A number that touches the end of the buffer may continue in the next chunk.
                if end < len(self._buf) or self._eof:
                    self._pos = end
                    return value
            if not self._more():
                raise Truncated

    def members(self) -> Iterator[str]:
        """Keys of an object; the caller must consume each value before asking for the next."""
        self.expect("{")
        if self.peek() == "}":
            self._pos += 1
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                raise BadJson("object key is not a string")
            self.expect(":")
            yield key
            if self._after_item("}"):
                return

    def elements(self) -> Iterator[None]:
        self.expect("[")
        if self.peek() == "]":
            self._pos += 1
            return
        while True:
            yield None
            if self._after_item("]"):
                return

    def _after_item(self, closer: str) -> bool:
        """Consume the separator after an item; True when it closed the container."""
        found = self.peek()
        if found in (",", closer):
            self._pos += 1
            return found == closer
        if not found:
            raise Truncated
        raise BadJson(f"expected ',' or {closer!r}, found {found!r}")

    def skip_value(self) -> None:
        """Consume a value without keeping it: big containers are walked, not buffered."""
        first = self.peek()
        if first == "{":
            for _ in self.members():
                self.skip_value()
        elif first == "[":
            for _ in self.elements():
                self.skip_value()
        else:
            self.value()
