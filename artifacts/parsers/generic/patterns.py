"""Line shapes the generic reading knows: ``key: value``, ``key = value``, inline ``k=v``
runs, list items, section headings, and numbers with the words that label them.

Pure Python, no Django. Each function looks at one line; blocks (aligned pairs, tables) are
decided in tables.py and the reading itself in reading.py.
"""

from __future__ import annotations

import re
from typing import NamedTuple

MAX_KEY_WORDS = 6
MAX_LABEL_WORDS = 6

# A key starts with a letter (or `_`, `#`, `(`, `[`) and holds no colon, so a clock time
# ("12:30:01"), a URL ("http://...") or "host:port" is never taken for one; the colon is
# followed by a space, a tab or the end of the line ("section:" opens a section).
_COLON = re.compile(
    r'^\s*(?:[-*]\s+)?"?(?P<key>[A-Za-z_#(\[][^:=\n"]{0,79}?)"?\s*:(?:[ \t]+(?P<value>.*?))?\s*$'
)
_EQUALS = re.compile(
    r"^\s*(?:export\s+|set\s+)?(?P<key>[A-Za-z_][\w.\-/\[\]() ]{0,79}?)\s*=\s*(?P<value>.*?)\s*$"
)
# Several `name=value` on one line (`status=12 vendor_err=129`, an env dump on one line).
_INLINE = re.compile(r"(?<![\w.\-])(?P<key>[A-Za-z_][\w.\-]{0,59})=(?P<value>\"[^\"]*\"|\S+)")
_ITEM = re.compile(r"^\s*[-*+]\s+(?P<value>\S.*?)\s*$")
_INI = re.compile(r"^\s*\[(?P<name>[^\]\n]{1,80})\]\s*$")
_OPENERS = frozenset({"", "{", "[", "|", ">", "{}", "[]"})

# Units written after a number (or glued to it: `12.5GB/s`, `99%`, `300W`).
UNIT = (
    r"%|[kKMGTPE]i?B(?:/s(?:ec)?|ps)?|[kKMGT]?bit/s|[kMGT]?b(?:ps|/s)|[kMGT]?Hz|GT/s|"
    r"[kMGT]?FLOPS|TFLOP/s|ops/s|IOPS|[munpµ]?s(?:ec)?|us|usec|msec|nsec|seconds?|secs?|"
    r"minutes?|mins?|hours?|h|days?|[kKM]?W|°C|C|mV|V|A|x|bytes?|bits?|pages|lanes?|"
    r"cores?|GPUs?|nodes?|ranks?|packets|pkts|errors?|MB|GB|TB"
)
# A number standing alone: not part of a word, a version (2.18.3), a date, a time, an
# address or a range, so "cnode2-001" or "10.0.0.1" yields nothing.
_NUMBER = re.compile(
    r"(?<![\w.:/\-#])(?P<num>[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?)"
    rf"(?:\s?(?P<unit>{UNIT}))?"
    r"(?=$|[\s,;)\]]|\.(?:\s|$))"
)
_VALUE = re.compile(
    r"^(?P<num>[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(?P<unit>[A-Za-z%°µ/][\w/%°]{0,11})?\.?$"
)
_CONNECTOR_TEXT = (
    "a an the is are was were of at in on to for by with and or = : - reached took got "
    "about around approx approximately"
)
_CONNECTORS = frozenset(_CONNECTOR_TEXT.split())
_PUNCT = " \t:=,;.-*#|()[]{}<>\"'"


class Pair(NamedTuple):
    key: str
    value: str


def pairs_of(line: str) -> list[Pair]:
    """The key/value pairs one line states (none for prose or a table row)."""
    for pattern in (_COLON, _EQUALS):
        match = pattern.match(line)
        if match and _is_key(match["key"]):
            value = _value(match["value"])
            # `file.log: alltoall (N=2, G=1)`: the pair, and the pairs its value states
            return [Pair(match["key"].strip().rstrip("."), value), *_inline(value)]
    return _inline(line)


def _inline(text: str) -> list[Pair]:
    found = list(_INLINE.finditer(text))
    if len(found) < 2:
        return []
    return [Pair(m["key"], _inline_value(m["value"])) for m in found]


def _inline_value(value: str) -> str:
    value = value.rstrip(",;")
    if value.endswith(")") and "(" not in value:
        value = value[:-1]
    return value.strip('"')


def _is_key(key: str) -> bool:
    words = key.split()
    return 0 < len(words) <= MAX_KEY_WORDS and any(c.isalpha() for c in key)


def _value(raw: str | None) -> str:
    value = (raw or "").strip()
    if value.endswith(",") and value[:1] in '"[{0123456789-tfn':  # a JSON member's comma
        value = value[:-1].rstrip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return value


def opens_section(value: str) -> bool:
    """A key with no value (``gpu:``, ``"gpu": {``) heads the lines indented below it."""
    return value.strip() in _OPENERS


def ini_section(line: str) -> str | None:
    match = _INI.match(line)
    return match["name"].strip() if match else None


def list_item(line: str) -> str | None:
    match = _ITEM.match(line)
    return match["value"] if match else None


def number_of(value: str) -> tuple[float, str] | None:
    """(number, unit) of a value that is one number, with or without a unit."""
    match = _VALUE.match(value.strip()) or _NUMBER.match(value.strip())
    if not match:
        return None
    return _float(match["num"]), match["unit"] or ""


def numbers_in(line: str) -> list[tuple[float, str, str]]:
    """(number, unit, label) of each number in a line of prose, labelled by the words before
    it (after the previous number) or, when nothing precedes it, the words after it."""
    out = []
    matches = list(_NUMBER.finditer(line))
    for index, match in enumerate(matches):
        start = matches[index - 1].end() if index else 0
        label = _label(line[start : match.start()], last=True)
        if not label:
            end = matches[index + 1].start() if index + 1 < len(matches) else len(line)
            label = _label(line[match.end() : end], last=False)
        if label:
            out.append((_float(match["num"]), match["unit"] or "", label))
    return out


def _label(text: str, *, last: bool) -> str:
    text = re.split(r"[,;.!?(){}\[\]]\s", f" {text} ")[-1 if last else 0]
    words = [w.strip(_PUNCT) for w in text.split()]
    words = [w for w in words if w]
    if last:
        words = words[-MAX_LABEL_WORDS:]
        while words and words[-1].lower() in _CONNECTORS:
            words.pop()
    else:
        words = words[:3]
        while words and words[0].lower() in _CONNECTORS:
            words.pop(0)
    return " ".join(words) if any(c.isalpha() for c in "".join(words)) else ""


def _float(text: str) -> float:
    return float(text.replace(",", ""))


def is_number(cell: str) -> bool:
    return number_of(cell) is not None
