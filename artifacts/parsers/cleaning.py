"""A ``View`` applied to a whole text: the sample detection sniffs (``clean_bytes``) and the
stream a parser reads (``CleanStream``), with the map from clean line numbers back to the
uploaded file's (``LineMap``), so evidence links and redaction point at the uploaded bytes.

What one line becomes is normalize.py's (``pieces``). Most lines of most files are left as
they are, or lose only their layers and launcher tags, so the text is read in runs
(``_runs``): the prefixes come off every line by one substitution per layer over the text,
the runs of lines nothing else touches are copied at once, and only the lines that may
change otherwise (a colour code, a prompt, a fence, a glued NCCL header, ...) go through
``pieces`` one by one. Each step must give exactly what cleaning every line on its own
gives (tests/artifacts/parsers/test_clean_runs.py).

Pure Python, no Django.
"""

from __future__ import annotations

import codecs
import functools
import io
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from artifacts.parsers.normalize import HEADER_END, KEEP, TAG_MARKS, View, layer_pattern, pieces


@dataclass
class LineMap:
    """Clean line number -> original line number, stored as the points where they diverge."""

    # parallel arrays: from clean line clean_at[i] on, original = clean + offset[i]
    clean_at: array = field(default_factory=lambda: array("q"))
    offset: array = field(default_factory=lambda: array("q"))

    def add(self, clean: int, original: int) -> None:
        delta = original - clean
        if not self.offset or self.offset[-1] != delta:
            self.clean_at.append(clean)
            self.offset.append(delta)

    def original(self, clean: int) -> int:
        """The uploaded file's line number of a clean line (1-based both)."""
        lo, hi = 0, len(self.clean_at)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.clean_at[mid] <= clean:
                lo = mid + 1
            else:
                hi = mid
        return clean + (self.offset[lo - 1] if lo else 0)

    def to_json(self, limit: int = 10_000) -> list[list[int]]:
        return [[c, o] for c, o in zip(self.clean_at[:limit], self.offset[:limit], strict=True)]


class CleanStream(io.RawIOBase):
    """A binary stream of the cleaned UTF-8 text of another binary stream, read lazily.

    Memory is one line at a time (lines are capped by ``max_line``); ``line_map`` grows only
    where the numbering shifts.
    """

    def __init__(self, raw: BinaryIO, view: View, *, max_line: int = 1024 * 1024) -> None:
        self._raw = raw
        self._view = view
        self._decoder = codecs.getincrementaldecoder(
            "utf-8" if view.encoding == "utf-8-sig" else view.encoding
        )(errors="replace")
        self._bom = True  # a byte-order mark is no text, in any encoding
        self._max = max_line
        self._pending = ""
        self._out = b""
        self._eof = False
        self._original = 0
        self._clean = 0
        self._numbered = 0  # clean lines before a part's filter (what Part numbers)
        self.line_map = LineMap()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._out and not (self._eof and not self._pending):
            self._fill()
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def _fill(self) -> None:
        if not self._eof:
            chunk = self._raw.read(256 * 1024)
            text = self._decoder.decode(chunk, final=not chunk)
            if self._bom and text:
                text, self._bom = text.removeprefix("\ufeff"), False
            self._pending += text
            self._eof = not chunk
        if self._eof:
            whole, self._pending = self._pending, ""
        else:
            cut = self._pending.rfind("\n") + 1
            whole, self._pending = self._pending[:cut], self._pending[cut:]
            if len(self._pending) > self._max:  # a line without end: emit it cut, keep going
                whole += self._pending[: self._max] + "\n"
                self._pending = ""
        runs = _runs(whole, self._view) if not self._view.part else None
        if runs is None:
            self._out += self._clean_lines(whole)
            return
        out = []
        for kept, lines, cleaned in runs:
            if cleaned is None:  # lines cleaning leaves as they are: copied at once
                self.line_map.add(self._clean + 1, self._original + 1)
                self._original += lines
                self._clean += lines
                out.append(kept)
            else:
                self._original += 1
                for piece in cleaned:
                    self._clean += 1
                    self.line_map.add(self._clean, self._original)
                    out.append(f"{piece}\n")
        self._out += "".join(out).encode("utf-8")

    def _clean_lines(self, whole: str) -> bytes:
        """Line by line: layers, a transcript's part, or too many lines to clean."""
        lines = whole.split("\n")
        if not lines[-1]:
            lines.pop()  # the empty string after the final newline is no line
        out = []
        part = self._view.part
        for line in lines:
            self._original += 1
            for piece in pieces(line.rstrip("\r"), self._view):
                self._numbered += 1
                if part and not part.start <= self._numbered <= part.end:
                    continue
                self._clean += 1
                self.line_map.add(self._clean, self._original)
                out.append(piece)
        return "".join(f"{line}\n" for line in out).encode("utf-8")


def clean_bytes(data: bytes, view: View, *, max_line: int = 1024 * 1024) -> bytes:
    """The cleaned text of a sample (for the sniffers), as UTF-8 bytes: what ``CleanStream``
    gives, read at once (no line map; a sample holds no line longer than ``max_line``)."""
    if view.binary or not view.needed:
        return data
    if len(data) > max_line:  # a line may be cut: the stream does that
        return CleanStream(io.BytesIO(data), view, max_line=max_line).read()
    codec = "utf-8" if view.encoding == "utf-8-sig" else view.encoding
    text = data.decode(codec, errors="replace").removeprefix("\ufeff")
    if view.part is None:
        return _clean_untouched(text, view).encode("utf-8")
    return "".join(f"{piece}\n" for piece in _line_pieces(text, view)).encode("utf-8")


def _line_pieces(text: str, view: View) -> Iterator[str]:
    """Each clean line of ``text``, every line cleaned on its own (a part's lines only)."""
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()  # the empty string after the final newline is no line
    part, numbered = view.part, 0
    for line in lines:
        for piece in pieces(line.rstrip("\r"), view):
            numbered += 1
            if part is None or part.start <= numbered <= part.end:
                yield piece


# What a line holds when cleaning may change it, wherever it stands in the line: a colour
# code, a carriage return, a fence, srun's own line; for a prompted document, any prompt.
# Another shell's prompt (rewritten the bash way) is looked for at the start of the line as
# its layers leave it (``_MAY_BE_OTHER_PROMPT``), launcher tags a layer or a glued line may
# hold after the layers are off, and NCCL lines with another process's header glued in by
# ``_glued_lines``. Every other line is its own clean line.
_CHANGED = ("\x1b", "\r", "```", "~~~", "srun: ")
_CHANGED_PROMPTED = ("$", "#")
# What every prompt of ``_OTHER_PROMPT`` holds (its sign and the space after it, or an arrow),
# and a line start none of them lacks (a wider net: its venv may be any parenthesis, a
# user@host or word% anything after it), never past a line end.
_PROMPT_MARKS = ("% ", "> ", "# ", "\u279c", "\u276f", "\u03bb", "\u00bb")
_MAY_BE_OTHER_PROMPT = re.compile(
    r"(?m)^(?:\([^)\n]*\)[^\S\n]+)?(?:[\w.\-]+@|[\w.\-]+%|PS |[#%>] |[\u279c\u276f\u03bb\u00bb])"
)
# Launcher tags at every line start: ``_ALWAYS`` with its leading spaces never a line end.
_ALWAYS_LINES = re.compile(
    r"(?m)^(?:[^\S\n]*\[\d+,\d+\]<(?:stdout|stderr)>:|\[(?:rank|default)\d+\]:)+"
)
# An NCCL line's own header at its start (``_NCCL_START`` at every line start). A header
# glued into a line (what ``_split_glued`` cuts before) holds "] NCCL " like every header.
_OWN_HEADER = re.compile(r"[A-Za-z0-9][\w.\-]*:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE)")
# ... after a line end: the newline a search can jump to (a pattern with ^ is tried at every
# character, one starting with a literal only where it stands: five times faster here)
_OWN_HEADER_AFTER_NEWLINE = re.compile("\n" + _OWN_HEADER.pattern)


def _runs(text: str, view: View) -> Iterator[tuple[str, int, list[str] | None]] | None:
    """The clean text of a view without part, in runs: (run, its line count, None) for lines
    cleaning changes no more than by taking their layers and launcher tags off, copied at
    once, and ("", 1, pieces) for a line it may change otherwise, cleaned on its own from
    its original line; None when line by line is the better way (too many such lines, or a
    layer ``_whole_text_layers`` cannot take off a whole text)."""
    if "\r" in text:
        # a line's trailing CRs go (the lines left with one are cleaned one by one)
        text = text.replace("\r\n", "\n")
    tagged = any(tag in text for tag in TAG_MARKS)
    stripped = _stripped(text, view.layers, tagged)
    if stripped is None:
        return None
    limit = text.count("\n") // 4 + 16  # a quarter of the lines
    marks = _CHANGED + (_CHANGED_PROMPTED if view.document else ())
    found: set[int] = set()
    if not _mark_starts(text, marks, found, limit):
        return None
    same = stripped is text
    after: set[int] = found if same else set()  # line starts in the stripped text
    _prompt_starts(stripped, after)
    if tagged and not _mark_starts(stripped, TAG_MARKS, after, limit):
        return None  # a tag a layer held before it, or one glued into a line
    if view.hosts and not _glued_starts(stripped, after, limit):
        return None
    changed = set(_line_indexes(stripped, sorted(after)))
    if not same:
        changed.update(_line_indexes(text, sorted(found)))
    if len(changed) > limit:
        return None
    return _indexed_runs(text.split("\n"), stripped.split("\n"), sorted(changed), view)


def _stripped(text: str, layers: tuple[str, ...], tagged: bool) -> str | None:
    """``text`` with each line's layers and launcher tags taken off as ``_strip`` takes them
    (tags first and after each layer that matched: again after every layer is the same, as
    tags off a line are off), or None when that cannot be done on the whole text."""
    patterns = _whole_text_layers(layers)
    if patterns is None:
        return None
    if not tagged and not patterns:
        return text
    out = _ALWAYS_LINES.sub("", text) if tagged else text
    for pattern in patterns:
        out = pattern.sub("", out)
        if tagged:
            out = _ALWAYS_LINES.sub("", out)
    if out.count("\n") != text.count("\n"):
        return None  # a prefix took a line end with it: the lines are not the same lines
    return out


@functools.lru_cache(maxsize=64)
def _whole_text_layers(layers: tuple[str, ...]) -> tuple[re.Pattern[str], ...] | None:
    r"""Each layer's pattern at every line start of a text, or None when one cannot be: a kept
    layer (its text moves, see ``_strip``), or a pattern with a part that may match a line
    end or look past one (``\s``, a negated class, ``$``, ...)."""
    out = []
    for name in layers:
        if name.startswith(KEEP):
            return None
        source = layer_pattern(name).pattern
        if not source.startswith("^") or any(part in source for part in _LINE_CROSSING):
            return None
        out.append(re.compile("(?m)" + source))
    return tuple(out)


_LINE_CROSSING = ("\\s", "\\S", "\\D", "\\W", "[^", "\\Z", "\\A", "$", "\\n", "(?s")


def _mark_starts(text: str, marks: tuple[str, ...], starts: set[int], limit: int) -> bool:
    """Add the starts of the lines holding a mark (a substring search per mark: most marks
    are in no line); False when they are more than ``limit``."""
    for mark in marks:
        at = text.find(mark)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            if len(starts) > limit:
                return False
            end = text.find("\n", at)
            at = text.find(mark, end + 1) if end >= 0 else -1
    return True


def _prompt_starts(text: str, starts: set[int]) -> None:
    """Add the starts of the lines that may be another shell's prompt: each holds one of
    ``_PROMPT_MARKS`` (what follows its prompt sign), and starts as ``_MAY_BE_OTHER_PROMPT``
    says (tried only on the lines with a mark)."""
    for mark in _PROMPT_MARKS:
        at = text.find(mark)
        while at >= 0:
            line = text.rfind("\n", 0, at) + 1
            if _MAY_BE_OTHER_PROMPT.match(text, line):
                starts.add(line)
            end = text.find("\n", at)
            at = text.find(mark, end + 1) if end >= 0 else -1


def _glued_starts(text: str, starts: set[int], limit: int) -> bool:
    """``_glued_lines`` over the text in pieces of about 4 KiB: a glued line costs searches
    over its piece, not the text."""
    at = 0
    while at < len(text):
        end = text.find("\n", at + 4 * 1024) + 1 or len(text)
        if not _glued_lines(text, at, end, starts, limit):
            return False
        at = end
    return True


def _glued_lines(text: str, start: int, end: int, starts: set[int], limit: int) -> bool:
    """Add to ``starts`` the lines of ``text[start:end]`` (whole lines) that may hold another
    process's NCCL header after their own; False when they are more than ``limit``.

    Where every "] NCCL " ends a header at a line's start (two searches in C agree), no
    header stands anywhere else, and ``_split_glued`` leaves every line whole. Where they
    differ, the range is halved until the lines that differ are found: a clean 4 KiB of a
    log costs two searches, each glued line a few more."""
    ends = text.count(HEADER_END, start, end)
    if not ends or ends == _own_headers(text, start, end):
        return True
    newline = text.find("\n", start, end - 1)
    if newline < 0:  # one line
        starts.add(start)
        return len(starts) <= limit
    middle = text.find("\n", (start + end) // 2, end - 1) + 1 or newline + 1
    return _glued_lines(text, start, middle, starts, limit) and _glued_lines(
        text, middle, end, starts, limit
    )


def _own_headers(text: str, start: int, end: int) -> int:
    """How many lines of ``text[start:end]`` (whole lines) start with their own header."""
    first = _OWN_HEADER.match(text, start, end) is not None
    return first + len(_OWN_HEADER_AFTER_NEWLINE.findall(text, start, end))


def _line_indexes(text: str, starts: list[int]) -> list[int]:
    """The 0-based line numbers of sorted line starts of ``text``."""
    out, line, at = [], 0, 0
    for start in starts:
        line += text.count("\n", at, start)
        at = start
        out.append(line)
    return out


def _indexed_runs(
    lines: list[str], stripped: list[str], changed: list[int], view: View
) -> Iterator[tuple[str, int, list[str] | None]]:
    if not lines[-1]:  # the empty string after the final newline is no line
        lines.pop()
        stripped.pop()
    at = 0
    for index in changed:
        if index > at:
            yield "\n".join(stripped[at:index]) + "\n", index - at, None
        yield "", 1, list(pieces(lines[index].rstrip("\r"), view))
        at = index + 1
    if at < len(lines):
        yield "\n".join(stripped[at:]) + "\n", len(lines) - at, None


def _clean_untouched(text: str, view: View) -> str:
    """``clean_bytes`` of a view without part: only the lines cleaning may change go through
    ``pieces``, the runs of lines between them are copied at once."""
    runs = _runs(text, view)
    if runs is None:  # line by line (a line's trailing CRs go with its rstrip)
        return "".join(f"{piece}\n" for piece in _line_pieces(text, view))
    return "".join(
        run if cleaned is None else "".join(f"{p}\n" for p in cleaned) for run, _, cleaned in runs
    )
