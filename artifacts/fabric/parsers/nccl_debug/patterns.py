"""What every part of the NCCL_DEBUG reading matches: the ``host:pid:tid [dev] ... NCCL LEVEL``
header, the source location of a WARN line, an ``NCCL_*`` setting NCCL echoes, and the two
small text helpers (a line's time, a setting's value) that several readers share.

Patterns that one reader alone uses stay in that reader's module.
"""

from __future__ import annotations

import re

from artifacts.parsers.textutil import find_timestamp

HEADER = re.compile(
    # A host starts at a word boundary (not after a letter, digit, "_" or "."): besides being
    # right, this keeps the scan linear instead of retrying every suffix of every word.
    # A clock time ("10:05:33 " of a journald or syslog stamp) is not a host:pid:tid.
    r"(?<![\w.])(?!\d{1,2}:\d{2}:\d{2}[ \t])"
    r"(?P<host>[A-Za-z0-9][\w.\-]*):(?P<pid>\d+):(?P<tid>\d+)[ \t]+"
    r"(?:\[(?P<dev>\d+)\][ \t]+)?"
    # Patched builds print "func, 123 " here, WARN lines "file.cc:123 ", TRACE "12.3 f:1 ".
    # A token that is itself a host:pid:tid is never part of it (timestamps like 12:00:00).
    r"(?P<mid>(?:(?![\w.\-]+:\d+:\d+\s)\S+[ \t]+){0,4}?)"
    r"NCCL (?P<level>INFO|WARN|TRACE|CALL|ABORT|ERROR)\b ?"
)
SOURCE = re.compile(r"[\w/.\-]+\.(?:cc|c|h|cu|cpp|hpp):\d+")
ENV_NCCL = re.compile(r"^(?P<name>NCCL_[A-Z0-9_]+) set (?:by environment )?to (?P<value>.*?)\s*$")


def line_time(line: str) -> str | None:
    """The time a line's prefix gives (a log shipper's or collector's stamp), if any."""
    stamp = find_timestamp(line[:80])
    return stamp[0] if stamp else None


def clean_env_value(value: str) -> str:
    """An ``NCCL_*`` value without its quotes and the period some NCCL versions end it with."""
    value = value.strip().strip("'\"")
    # Some NCCL versions end the echo with a period ("... set by environment to 3.").
    if value.endswith(".") and value[:-1].replace(".", "").isdigit():
        value = value[:-1]
    return value
