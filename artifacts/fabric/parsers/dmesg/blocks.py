"""What reading a kernel log in 1 MiB blocks needs (issue 27): the words that make a line worth
a full read, and, per stamp shape, a pattern that tells a whole run of lines apart in one call.

Most kernel lines state nothing the ``dmesg`` package keeps: they count (``lines``,
``kernel_lines``), name their stamp shape and host, and may be the line before a wrapped one.
A block is searched once for ``SLOW`` words (every word but "NVRM" that a check in
``dmesg._State.feed`` needs before it reads a line further) and for "NVRM"; between hits, each
stretch of lines that ``run_pattern`` says have the stamp shape ``split_stamp`` gives its first
line is counted in one call, and a line that starts none (blank, unstamped, wrapped) is read
on its own.
The lines after an NVRM line under its stamp text (an Xid's RPC history) are read together
(``prefix_run``, ``dmesg._State._stamp_run``), each distinct text looked at once, so SLOW is
only searched up to the next NVRM line's end.

Each ``_STAMPS`` pattern matches a subset of what its shape's pattern in ``stamps`` matches
(``[0-9]`` for ``\\d``, bounded repeats, no newline), and never a line ``split_stamp`` gives
another shape: the journal patterns end within 120 characters (the ``" kernel: "`` test), and
the ``uptime`` and ``iso`` ones refuse a ``host kernel:`` after the stamp (which makes a line
``journal_monotonic``/``journal_iso``). A pattern that misses a line only costs speed.
"""

from __future__ import annotations

import functools
import re

from artifacts.fabric.parsers.dmesg import events

# The words of dmesg._State.feed's checks but "NVRM": _facts (PCIe links, "Hardware name",
# on NVRM lines the driver and board serial), the "GPU at" line, an API mismatch joined
# across two lines, _event and _host_event. "version"/"Tainted"/"Hardware name" only while
# the kernel version / hardware is unknown (feed stops looking once known). A line with one
# of these is fed; one with "NVRM" and none of them is read by dmesg._State._nvrm_line; the
# others (most lines) only count.
_ALWAYS = (
    r"fallen off|Xid|mlx5_core|AER|PCIe|Out of memory|Hardware Error|EDAC|soft lockup"
    r"|blocked for more than|NETDEV WATCHDOG|GPU at|loading NVIDIA|Serial Number|mismatch"
)
SLOW = re.compile(_ALWAYS + r"|version|Tainted|Hardware name")
SLOW_KNOWN = re.compile(_ALWAYS)

_LEVEL = r"(?:<[0-9]{1,3}>|[a-z]{1,8} {0,4}: {0,4}[a-z]{1,8} {0,4}: {0,4})?"
_NUM = r"[0-9]{1,12}\.[0-9]{1,12}"
_NOT_JOURNAL = r"(?! [\w.\-]+ kernel: )"
_HOST = r" {host} kernel: "  # the run's one host (re.escape'd): the journal shapes
# shape -> the stamp of a line split_stamp gives that shape (a subset of those lines)
_STAMPS = {
    "uptime": _LEVEL + rf"\[ {{0,12}}{_NUM}(?: {{0,12}}< {{0,12}}{_NUM}>)?\]" + _NOT_JOURNAL,
    "relative": _LEVEL + rf"\[ {{0,12}}\+{_NUM}\]",
    "date": _LEVEL + r"\[[A-Z][a-z]{2} [^\]\n]{0,30}[0-9]{4}\]",
    "human_date": _LEVEL + r"\[[A-Z][a-z]{2} {1,2}[0-9]{1,2} [0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?\]",
    "iso": r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,12})?"
    r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?[ \t](?![\w.\-]+ kernel: )",
    "syslog": r"[A-Z][a-z]{2} {1,2}[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?" + _HOST,
    "journal_iso": r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.,]{1,20}(?:Z|[+-][0-9:]{1,6})?" + _HOST,
    "journal_monotonic": rf"\[ {{0,12}}{_NUM}\]" + _HOST,
    "journal_unix": r"[0-9]{9,11}\.[0-9]{1,9}" + _HOST,
}
JOURNAL_SHAPES = frozenset({"syslog", "journal_iso", "journal_monotonic", "journal_unix"})


@functools.lru_cache(maxsize=64)
def run_pattern(shape: str, host: str | None) -> re.Pattern[str] | None:
    """A pattern whose match from a line start spans the lines from there that have
    ``shape`` (and, for a journal shape, ``host``), or None when lines of that shape are
    not counted in bulk. One pass of the regex engine: a pattern per line start (re.M) is
    tried at every character and costs three times as much."""
    stamp = _STAMPS.get(shape)
    if stamp is None or (host is None) != (shape not in JOURNAL_SHAPES):
        return None
    if host is not None:
        if len(host) > 64 or not re.fullmatch(r"[\w.\-]+", host):
            return None  # its " kernel: " could lie beyond split_stamp's 120 characters
        stamp = stamp.replace("{host}", re.escape(host))
    return re.compile(rf"(?:{stamp}[^\n]*\n)*")


@functools.lru_cache(maxsize=64)
def prefix_run(length: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """For the lines that start with the ``length`` characters the first of them starts
    with (its stamp text; an Xid's RPC history: 30 lines of one stamp): a pattern whose
    match from the first spans the stretch of them, and one whose ``findall`` over that
    stretch gives each line's text after the stamp text. By length, not by text: a stamp
    text is new at every event, and compiling a pattern costs as much as 30 lines."""
    return (
        re.compile(rf"(?P<p>[^\n]{{{length}}})[^\n]*\n(?:(?P=p)[^\n]*\n)*"),
        re.compile(rf"[^\n]{{{length}}}([^\n]*)\n"),
    )


PLAIN: tuple[str | None, ...] = ()  # no "NVRM:"
ODD: tuple[str | None, ...] = (None,)  # a SLOW word or perhaps a journal line: for feed


def read_text(body: str, known: bool) -> tuple[str | None, ...]:
    """What ``dmesg._State._nvrm_line`` reads in a stamped line's text after its stamp
    text: its message (whole and as kept) and what it adds to the event it joins; ``PLAIN``
    without "NVRM:", ``ODD`` with a SLOW word (for feed; SLOW_KNOWN once the kernel version
    and hardware are ``known``: feed looks for the other words only until then) or when
    "kernel: " could make the line a journal line (split_stamp's test is on 120
    characters). No SLOW word spans the stamp text and the message: a stamp text ends in
    "]", a digit or "Z", then a space, and no SLOW word holds those."""
    slow = SLOW_KNOWN if known else SLOW  # known: feed_block's choice
    if "kernel: " in body[:120] or slow.search(body):
        return ODD
    if "NVRM:" not in body:
        return PLAIN
    found = events.NVRM.search(body)
    msg = found["msg"] if found is not None else None
    joined = body.split("NVRM:", 1)[1].strip()[:500]
    return (msg, msg[:500] if msg is not None else None, joined)
