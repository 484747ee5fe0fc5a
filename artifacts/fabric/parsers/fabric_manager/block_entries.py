"""The usual entries of a block, ``[Mon DD YYYY HH:MM:SS] [LEVEL] [tid N] message`` and the
lines that continue them, read by one pattern in one call (issue 27): a Python loop per line
cost more than the checks themselves. ``_State.feed_block`` counts the rows per distinct
(level, message lines) and reads only the entries whose place matters one by one.
"""

from __future__ import annotations

import functools
import re
from operator import itemgetter

from artifacts.fabric.parsers.fabric_manager.messages import bare_entry, iso_of, maybe_undated

# (stamp, level, tid, body): the body is the rest of the entry's line and every line after
# it that does not start with "[" (only such a line can start another entry), each with its
# newline. Within a line this reads what the line pattern _ENTRY reads, or less: its \s is
# [^\S\n] here (a block holds many lines, and a space class must not join two), and \d and
# \s are ASCII only (a bit faster; a stamp in other digits is no row, so is read by _ENTRY).
_ROW = (
    r"\[([A-Z][a-z]{2} +\d{1,2} \d{4} \d{2}:\d{2}:\d{2})\]"
    r"[^\S\n]*\[([A-Z]+)\][^\S\n]*\[tid (\d+)\]([^\n]*\n(?:[^\[\n][^\n]*\n|\n)*)"
)
# A line that starts with "[" and is no row (an undated entry, a continuation, a prefix of
# another shape) comes as an empty row, with its continuation lines: the rows of a block
# then cover all of it, and one look at the stamps says whether each "[" line is a row.
_ROWS = re.compile(r"(?a)^(?:" + _ROW + r"|\[[^\n]*\n(?:[^\[\n][^\n]*\n|\n)*)", re.M)
# the stamp of a row, in the pieces iso_of takes
_STAMP = re.compile(
    r"(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<year>\d{4}) (?P<time>\d{2}:\d{2}:\d{2})"
)

Row = tuple[str, str, str, str]
_STAMP_OF = itemgetter(0)


def whole_entries(text: str, start: int) -> list[Row] | None:
    """The rows of ``text[start:]`` (whole lines, the first starting with "["), or None
    when a line that starts with "[" is no row start (an undated entry, a continuation, a
    prefix of another shape): then no row's end is sure."""
    rows = _ROWS.findall(text, start)
    # a row's stamp is never empty; the other lines that start with "[" give ""
    return None if "" in map(_STAMP_OF, rows) else rows


def joined_text(body: str, max_chars: int) -> str | None:
    """The text ``_State.feed`` makes of an entry's ``body`` lines: its message stripped and
    each non-blank continuation line, stripped, while the text is under ``max_chars``. None
    when a continuation line would start an entry whose date was removed."""
    lines = body.split("\n")
    lines.pop()  # after the last newline
    text = lines[0].strip()
    if len(lines) == 1:
        return text
    # the continuation lines at once: none starts with "[" (_ROW ends a body before such a
    # line), so maybe_undated looks only for its words, and they hold no newline
    if maybe_undated(body[len(lines[0]) + 1 :]):
        for line in lines[1:]:
            if maybe_undated(line) and bare_entry(line) is not None:
                return None
    for line in lines[1:]:
        if (stripped := line.strip()) and len(text) < max_chars:
            text += "\n" + stripped
    return text


@functools.lru_cache(maxsize=4096)  # the rows of one second share their stamp
def stamp_iso(stamp: str) -> str | None:
    """The ISO time of a row's stamp (None: no such day or time)."""
    m = _STAMP.fullmatch(stamp)
    assert m is not None  # _ROWS read it with the same pattern
    return iso_of(m["year"], m["mon"], m["day"], m["time"])
