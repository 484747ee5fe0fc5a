"""Text helpers shared by the line-oriented parsers: bounded line reading, timestamps, safe XML.

Pure Python, no Django. Everything here is defensive: uploads are real-world files (gigantic
lines from progress bars, binary junk, odd encodings) and must never make a parser raise
anything but ParseError, nor hold more than one bounded line in memory.
"""

from __future__ import annotations

import functools
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import BinaryIO

from artifacts.parsers.base import ParseError

# A line longer than this is cut; the rest of it is skipped (and counted as a warning).
MAX_LINE_BYTES = 256 * 1024


def read_or_fail(read: Callable[[int], bytes], size: int) -> bytes:
    """``read(size)``, with a failing stream (a truncated gzip, a closed file) turned into a
    retryable ParseError: the file may be fine on the next attempt, so nothing is marked
    permanently unreadable."""
    try:
        return read(size)
    except ParseError:
        raise
    except (OSError, ValueError, EOFError) as exc:
        raise ParseError(f"could not read the file: {exc}", permanent=False) from exc


class LineReader:
    """Iterate a binary stream as text lines, with counters for what had to be repaired.

    - ``\\r\\n``, ``\\n`` and lone ``\\r`` (progress bars) all end a line;
    - invalid UTF-8 becomes U+FFFD (``decode_errors`` counts such lines);
    - a line longer than ``max_line_bytes`` is cut (``truncated`` counts them), so memory
      stays bounded whatever the file looks like.
    ``line_no`` is the 1-based number of the physical line last read.
    """

    def __init__(self, stream: BinaryIO, *, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._stream = stream
        self._max = max_line_bytes
        self.line_no = 0
        self.truncated = 0
        self.decode_errors = 0

    def __iter__(self) -> Iterator[str]:
        while True:
            raw = self._readline()
            if not raw:
                return
            self.line_no += 1
            if not raw.endswith(b"\n") and len(raw) >= self._max:
                self.truncated += 1
                self._skip_rest_of_line()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                self.decode_errors += 1
                text = raw.decode("utf-8", errors="replace")
            text = text.rstrip("\r\n")
            if "\r" in text:
                yield from text.split("\r")
            else:
                yield text

    def _readline(self) -> bytes:
        return read_or_fail(self._stream.readline, self._max)

    def _skip_rest_of_line(self) -> None:
        while True:
            rest = self._readline()
            if not rest or rest.endswith(b"\n"):
                return

    def repair_warnings(self) -> list[str]:
        """Human-readable warnings about what the reader had to repair."""
        return repair_notes(self.truncated, self.decode_errors, self._max)


def repair_notes(truncated: int, decode_errors: int, max_line_bytes: int) -> list[str]:
    """What a line reader had to repair, as warnings (shared by every reader of lines)."""
    out = []
    if truncated:
        out.append(f"{truncated} over-long line(s) were cut at {max_line_bytes} bytes")
    if decode_errors:
        out.append(f"{decode_errors} line(s) held bytes that are not UTF-8")
    return out


def head_text(head: bytes) -> str:
    """The detection head as text (bad bytes replaced), for sniffing.

    Cached: detect_kind hands the same head to every sniffer, and decoding 64 KiB thirty
    times was a tenth of detection's cost. bytes hash once per object, so a hit is cheap;
    a bytearray or memoryview (unhashable) is decoded each time.
    """
    if type(head) is bytes:
        return _decoded_head(head)
    return bytes(head).decode("utf-8", errors="replace")


@functools.lru_cache(maxsize=4)
def _decoded_head(head: bytes) -> str:
    return head.decode("utf-8", errors="replace")


# --- timestamps -----------------------------------------------------------------------------

_ISO = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}:\d{2})"
    r"(?:[.,](?P<frac>\d{1,9}))?\s?(?P<tz>Z|[+-]\d{2}:?\d{2}|UTC|GMT)?"
)
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    )
}
# ctime()/date(1) style, as printed by `date`, nvidia-smi -q and perf stat:
# "Fri Oct 18 10:13:00 2024", "Tue Jun 18 10:00:00 UTC 2024".
_CTIME = re.compile(
    r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*,? +"
    r"(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w* +(?P<day>\d{1,2}) +"
    r"(?P<time>\d{2}:\d{2}:\d{2})(?: +(?P<tz>[A-Z]{2,5}|[+-]\d{4}))? +(?P<year>\d{4})\b"
)


def _tz_suffix(tz: str | None) -> str:
    if not tz:
        return ""
    if tz in ("Z", "UTC", "GMT"):
        return "+00:00"
    if tz[0] in "+-" and tz[1:].replace(":", "").isdigit():
        digits = tz[1:].replace(":", "")
        return f"{tz[0]}{digits[:2]}:{digits[2:4]}"
    return ""  # a zone abbreviation we cannot resolve: keep local (naive) time


def find_timestamp(text: str) -> tuple[str, int, int] | None:
    """The first full (dated) timestamp in ``text`` as (ISO 8601 string, start, end).

    Times without a year (syslog, glog ``E0501 12:00:00``) are not returned: they cannot be
    placed on a timeline without guessing.
    """
    best: tuple[str, int, int] | None = None
    match = _ISO.search(text)
    if match and (iso := _iso_from_parts(match)):
        best = (iso, match.start(), match.end())
    ctime = _CTIME.search(text)
    if ctime and (best is None or ctime.start() < best[1]) and (iso := _iso_from_ctime(ctime)):
        best = (iso, ctime.start(), ctime.end())
    return best


@functools.lru_cache(maxsize=4096)
def stamp_iso(text: str) -> str | None:
    """The ISO time of a stamp's own text (``find_timestamp``'s first), remembered: the lines
    of a log share their stamps (every line printed in one second), and converting each
    one again was half of a kernel log's parse (issue 27)."""
    found = find_timestamp(text)
    return found[0] if found else None


def _iso_from_parts(match: re.Match[str]) -> str | None:
    frac = (match.group("frac") or "")[:6]
    try:
        moment = datetime.strptime(
            f"{match.group('date')} {match.group('time')}", "%Y-%m-%d %H:%M:%S"
        )
    except ValueError:
        return None
    iso = moment.isoformat()
    if frac:
        iso += "." + frac.ljust(6, "0")
    return iso + _tz_suffix(match.group("tz"))


def _iso_from_ctime(match: re.Match[str]) -> str | None:
    try:
        moment = datetime(
            int(match.group("year")),
            _MONTHS[match.group("mon")],
            int(match.group("day")),
            *(int(p) for p in match.group("time").split(":")),
        )
    except ValueError:
        return None
    return moment.isoformat() + _tz_suffix(match.group("tz"))


def iso_plus_seconds(iso: str, seconds: float) -> str | None:
    """``iso`` shifted by ``seconds`` (for files that give a start time and offsets)."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return None
    return (moment + timedelta(seconds=seconds)).isoformat()


def utc_iso_from_epoch(seconds: float) -> str | None:
    try:
        return datetime.fromtimestamp(seconds, tz=UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


# --- numbers --------------------------------------------------------------------------------


def cuda_version_text(encoded: int | None) -> str | None:
    """CUDA's integer version (``cudaDriverGetVersion``, nsys's CudaDriverVersion) as people
    write it: 12040 -> "12.4", 13000 -> "13.0"; None when there is no such number."""
    if not encoded or encoded < 1000:
        return None
    return f"{encoded // 1000}.{encoded % 1000 // 10}"


def to_number(text: str) -> int | float | None:
    """'123' -> 123, '1.5' -> 1.5, '1,234' -> 1234, anything else -> None."""
    cleaned = text.strip().replace(",", "")
    if not cleaned:
        return None
    try:
        return int(cleaned)
    except ValueError:
        pass
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None


# --- XML ------------------------------------------------------------------------------------

XML_CHUNK = 64 * 1024


def iter_xml(
    stream: BinaryIO, *, max_bytes: int, max_depth: int = 64
) -> Iterator[tuple[str, ET.Element, int]]:
    """Incrementally parse XML, yielding ("start"|"end", element, depth).

    Safety: entity declarations are refused outright (no billion-laughs expansion, no
    external entities), the document may not exceed ``max_bytes`` nor nest deeper than
    ``max_depth``. Callers should ``clear()`` elements they are done with, keeping memory
    flat. Malformed XML raises ParseError *after* everything before the fault was yielded,
    so callers can keep a partial result.
    """
    parser = ET.XMLPullParser(events=("start", "end"))
    seen = 0
    depth = 0
    tail = b""
    while True:
        try:
            chunk = stream.read(XML_CHUNK)
        except ParseError:
            raise
        except (OSError, ValueError, EOFError) as exc:
            raise ParseError(f"could not read the file: {exc}", permanent=False) from exc
        if not chunk:
            break
        seen += len(chunk)
        if seen > max_bytes:
            raise ParseError(f"XML document larger than {max_bytes} bytes")
        # Look across the chunk boundary too, so '<!ENT' + 'ITY' cannot slip through.
        if b"<!ENTITY" in (tail + chunk).upper():
            raise ParseError("XML entity declarations are not accepted")
        tail = chunk[-16:]
        try:
            parser.feed(chunk)
            events = list(parser.read_events())
        except (ET.ParseError, LookupError, ValueError) as exc:
            # LookupError: an unknown encoding in the XML declaration (expat asks codecs).
            raise ParseError(f"malformed XML: {exc}") from exc
        for event, element in events:
            if event == "start":
                depth += 1
                if depth > max_depth:
                    raise ParseError(f"XML nested deeper than {max_depth} levels")
            yield event, element, depth  # type: ignore[misc]
            if event == "end":
                depth -= 1
    try:
        parser.close()
        events = list(parser.read_events())
    except (ET.ParseError, LookupError, ValueError) as exc:
        raise ParseError(f"malformed or truncated XML: {exc}") from exc
    for event, element in events:
        yield event, element, depth  # type: ignore[misc]


# --- peeking --------------------------------------------------------------------------------


class _Prefixed(io.RawIOBase):
    """A stream that yields ``head`` and then the rest of ``inner``."""

    def __init__(self, head: bytes, inner: BinaryIO) -> None:
        self._head = head
        self._inner = inner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._inner.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def peek(
    stream: BinaryIO, size: int = 4096, *, buffer_size: int = io.DEFAULT_BUFFER_SIZE
) -> tuple[bytes, BinaryIO]:
    """The first ``size`` bytes of ``stream`` and a stream that still starts at byte 0.

    Reads until ``size`` bytes or the end: a raw stream (socket, pipe) may hand out fewer
    bytes per read than asked for, and a short head would mislead content sniffing.
    """
    parts: list[bytes] = []
    got = 0
    try:
        while got < size:
            chunk = stream.read(size - got)
            if not chunk:
                break
            if not isinstance(chunk, bytes | bytearray):
                raise ParseError("expected a binary stream")
            parts.append(bytes(chunk))
            got += len(chunk)
    except ParseError:
        raise
    except (OSError, ValueError, EOFError) as exc:
        raise ParseError(f"could not read the file: {exc}", permanent=False) from exc
    head = b"".join(parts)
    reader = io.BufferedReader(_Prefixed(head, stream), buffer_size=buffer_size)
    return head, reader  # type: ignore[return-value]
