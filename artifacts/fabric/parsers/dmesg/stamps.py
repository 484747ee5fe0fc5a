"""The stamp in front of a kernel log line, in every shape ``dmesg`` and ``journalctl`` print.

``split_stamp`` returns the line's time, host, uptime/relative seconds, the shape's name and
the message. Shapes (``dmesg(1)``, ``journalctl(1)`` ``--output``):

* ``[ 1234.567890] msg`` (dmesg), ``[ 1234.5 <  0.000123>] msg`` (``-d``), ``[  +0.000123] msg``
  and ``[Dec 3 10:11] msg`` (``-H``/``--reltime``), ``[Sun Feb 23 16:24:18 2025] msg`` (``-T``),
  ``2024-12-03T10:11:12,123456+00:00 msg`` (``--time-format iso``), ``<3>[ 12.3] msg``
  (``-r``) and ``kern  :err   : [ 12.3] msg`` (``-x``);
* ``Dec 03 10:11:12[.123456] host kernel: msg`` (syslog, ``short``, ``short-precise``),
  ``2024-12-03T10:11:12[.123456]+0000 host kernel: msg`` (``short-iso[-precise]``),
  ``[ 1234.567890] host kernel: msg`` (``short-monotonic``), ``1733220672.123456 host kernel:
  msg`` (``short-unix``).

A syslog date has no year, so it gives no time (the message keeps its uptime when the kernel
printed one); ``-H`` dates neither.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from artifacts.parsers.textutil import stamp_iso, utc_iso_from_epoch

# dmesg -x "facility:level :" and dmesg -r "<level>" before the stamp
_LEVEL = r"(?:<\d{1,3}>|[a-z]+\s*:\s*[a-z]+\s*:\s*)?"
_UPTIME = re.compile(r"^\s*" + _LEVEL + r"\[\s*(?P<s>\d+\.\d+)(?:\s*<\s*(?P<d>\d+\.\d+)>)?\]\s?")
_RELATIVE = re.compile(r"^\s*" + _LEVEL + r"\[\s*\+(?P<d>\d+\.\d+)\]\s?")
_BRACKET_TIME = re.compile(r"^\s*" + _LEVEL + r"\[(?P<t>[A-Z][a-z]{2} [^\]]*\d{4})\]\s?")
_HUMAN = re.compile(
    r"^\s*" + _LEVEL + r"\[(?P<t>[A-Z][a-z]{2} +\d{1,2} \d{1,2}:\d{2}(?::\d{2})?)\]\s?"
)
_ISO = re.compile(
    r"^\s*(?P<t>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s"
)
_HOST_KERNEL = r" (?P<host>[\w.\-]+) kernel: (?:\[\s*(?P<s>\d+\.\d+)\] )?"
_SYSLOG = re.compile(
    r"^\s*(?:(?P<mon>[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)"
    r"|(?P<iso>\d{4}-\d{2}-\d{2}T[\d:.,]+(?:Z|[+-][\d:]+)?)"
    r"|\[\s*(?P<mono>\d+\.\d+)\]"
    r"|(?P<unix>\d{9,11}\.\d+))" + _HOST_KERNEL
)


class Stamp(NamedTuple):
    """A tuple rather than a frozen dataclass: one is made for every line (issue 27)."""

    time: str | None  # ISO 8601 when the stamp held a full date
    host: str | None
    uptime_s: float | None  # seconds since boot
    delta_s: float | None  # -d / -H: seconds since the previous message
    shape: str  # uptime | relative | date | human_date | iso | syslog | journal_iso | ...
    message: str


def split_stamp(raw: str) -> Stamp | None:
    """The stamp and message of a kernel log line, or None when it carries no stamp."""
    if " kernel: " in raw[:120] and (m := _SYSLOG.match(raw)):
        return _syslog(raw, m)
    if "[" not in raw[:40]:  # every other shape but --time-format iso has a bracket
        m = _ISO.match(raw)
        if m is None:
            return None
        return Stamp(stamp_iso(m["t"].replace(",", ".")), None, None, None, "iso", raw[m.end() :])
    if m := _UPTIME.match(raw):
        delta = float(m["d"]) if m["d"] else None
        return Stamp(None, None, float(m["s"]), delta, "uptime", raw[m.end() :])
    if m := _RELATIVE.match(raw):
        return Stamp(None, None, None, float(m["d"]), "relative", raw[m.end() :])
    if m := _BRACKET_TIME.match(raw):
        return Stamp(stamp_iso(m["t"]), None, None, None, "date", raw[m.end() :])
    if m := _HUMAN.match(raw):  # -H: "[Dec 3 10:11]", no year: no time
        return Stamp(None, None, None, None, "human_date", raw[m.end() :])
    if m := _ISO.match(raw):
        return Stamp(stamp_iso(m["t"].replace(",", ".")), None, None, None, "iso", raw[m.end() :])
    return None


def _syslog(raw: str, m: re.Match[str]) -> Stamp:
    uptime = float(m["s"]) if m["s"] else None
    time = None
    if m["iso"]:
        time, shape = stamp_iso(m["iso"].replace(",", ".")), "journal_iso"
    elif m["mono"]:
        uptime, shape = float(m["mono"]), "journal_monotonic"
    elif m["unix"]:
        time, shape = utc_iso_from_epoch(float(m["unix"])), "journal_unix"
    else:
        shape = "syslog"  # "Dec 03 10:11:12": no year, so no time
    return Stamp(time, m["host"], uptime, None, shape, raw[m.end() :])
