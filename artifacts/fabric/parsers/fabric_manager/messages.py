"""What one Fabric Manager entry means, as a function of its level and message text only.

The entry's stamp, tid and line number change nothing here: they are attached where the
effect is applied (``_State``). A log repeats the same few messages (team setups, group
allocations), so a parse keeps the ``Effect`` of each distinct (level, text) it has seen and
a repeated entry costs a dict lookup (issue 27).
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import Any, NamedTuple

_EVENT_LEVELS = frozenset({"ERROR", "WARNING", "WARN", "CRITICAL", "FATAL"})

_VERSION = re.compile(
    r"Fabric Manager version(?: is\s*:\s*(?P<a>\d[\w.\-]*)| (?P<b>\d[\w.\-]*) is running)", re.I
)
_SXID = re.compile(
    r"detected NVSwitch (?P<sev>fatal|non-fatal) error (?P<code>\d+)"
    r"(?: on fid (?P<fid>\d+))?(?: on NVSwitch pci bus id (?P<pci>[0-9a-fA-F:.]+))?"
    r"(?: physical id (?P<phys>\d+))?(?: port (?P<port>\d+))?",
    re.I,
)
_GPU_NVL = re.compile(r"detected GPU NVL (?P<sev>Fatal|Non Fatal) error", re.I)
# an entry without its date: "[ERROR] [tid 12727] msg", "nv-fabricmanager[1234]: msg", "msg"
_BARE_ENTRY = re.compile(
    r"^(?:.*?\bnv-fabricmanager\[\d+\]:\s*)?(?:\[(?P<level>[A-Z]+)\]\s*)?"
    r"(?:\[tid (?P<tid>\d+)\]\s*)?(?P<msg>\S.*?)\s*$"
)
_KEY_VALUE = re.compile(r"^\s*(?P<k>[A-Za-z][\w ]*?)\s*:\s*(?P<v>\S.*?)\s*$")
_NVLINK_FAILURE = re.compile(
    r"failed to find the GPU handle|trunk port failure|access port failure|port down"
    r"|nvlink (?:training|link) (?:failure|failed)|failed to train|link training failed"
    r"|nvlink.*(?:failed|failure|error)",
    re.I,
)
_TEAM_SETUP_REQ = re.compile(r"Team setup request:.*?Number of GPUs:\s*(?P<gpus>\d+)", re.I)
_TEAM_RELEASE_REQ = re.compile(r"Team release request:", re.I)
_TEAM_SETUP_OK = re.compile(r"successfully setup multicast team", re.I)
_TEAM_RELEASE_OK = re.compile(r"successfully released multicast team", re.I)
_GROUP = re.compile(r"multicast group (?P<group>\d+) is (?P<what>allocated|freed)", re.I)
_PARTITION = re.compile(
    r"partition(?: id)?\s*:?\s*(?P<id>\d+)\b.*?\b(?P<what>activat\w*|deactivat\w*)"
    r"|(?P<what2>activat\w*|deactivat\w*)\b.*?\bpartition(?: id)?\s*:?\s*(?P<id2>\d+)",
    re.I,
)
# The words _fm_message needs before its patterns (an entry whose date was removed)
UNDATED_WORDS = re.compile(r"detected|fabric manager version|multicast|partition")
# The words of effect_of's checks (version, multicast, partition, classify), lower case:
# an entry with none of them, at a level that makes no event, is only counted
_FLUSH_WORDS = re.compile(
    r"fabric manager version|team|multicast group|partition|detected|fail|port down|nvlink"
)
_MONTHS = {m: i + 1 for i, m in enumerate(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
)}  # fmt: skip


class Effect(NamedTuple):
    """What an entry adds to the result beside its count and level."""

    multicast: str | None = None  # the Multicast counter it adds one to
    gpus: int | None = None  # a team setup request's GPU count
    version: str | None = None
    partition: tuple[int, str] | None = None  # (partition id, "activated" | "deactivated")
    kind: str | None = None  # its event kind (None: no event)
    details: dict[str, Any] | None = None
    part: str | None = None  # "nvswitch_errors" | "nvlink_failures"

    @property
    def ordered(self) -> bool:
        """Whether applying it depends on the entry's place, time or line (an event, a
        partition, the first version): the rest are counts, which commute."""
        return self.kind is not None or self.partition is not None or self.version is not None


COUNTED_ONLY = Effect()


def effect_of(level: str, text: str) -> Effect:
    """The effect of an entry of ``level`` whose (joined, stripped) text is ``text``."""
    low = _lower(text)  # once per entry: each check below looks for its words in it
    if low is not None and level not in _EVENT_LEVELS and _FLUSH_WORDS.search(low) is None:
        return COUNTED_ONLY  # no version, multicast, partition nor event words
    version = None
    if _in(low, "fabric manager version") and (v := _VERSION.search(text)):
        version = v["a"] or v["b"]
    counter, gpus = _multicast(text, low)
    # the event and partition are read on the first line only: lowered once for both
    first = text.split("\n", 1)[0]
    low_first = _lower(first)
    kind, details = _classify(text, level, first, low_first)
    part = None
    if kind in ("nvswitch_fatal", "nvswitch_non_fatal"):
        part = "nvswitch_errors"
    elif kind == "nvlink_failure":
        part = "nvlink_failures"
    return Effect(counter, gpus, version, _partition(first, low_first), kind, details, part)


def _multicast(text: str, low: str | None) -> tuple[str | None, int | None]:
    if not _in(low, "team", "multicast group"):
        return None, None
    # each case-insensitive pattern only where its leading words are (issue 27)
    if _in(low, "team setup request:") and (m := _TEAM_SETUP_REQ.search(text)):
        return "setup_requests", int(m["gpus"])
    if _in(low, "team release request:") and _TEAM_RELEASE_REQ.search(text):
        return "release_requests", None
    if _in(low, "successfully setup multicast team") and _TEAM_SETUP_OK.search(text):
        return "setups_ok", None
    if _in(low, "successfully released multicast team") and _TEAM_RELEASE_OK.search(text):
        return "releases_ok", None
    if _in(low, "multicast group ") and (m := _GROUP.search(text)):
        return "groups_" + m["what"].lower(), None
    return None, None


def _partition(first: str, low_first: str | None) -> tuple[int, str] | None:
    m = _PARTITION.search(first) if _in(low_first, "partition") else None
    if m is None:
        return None
    what = (m["what"] or m["what2"]).lower()
    return int(m["id"] or m["id2"]), "deactivated" if what.startswith("deactivat") else "activated"


def _classify(
    text: str, level: str, first: str, low: str | None
) -> tuple[str | None, dict[str, Any] | None]:
    """The event kind of an entry (None: not an event) and its structured details, from
    its ``first`` line (``low``: that line lowered by ``_lower``)."""
    if _in(low, "detected nvswitch") and (m := _SXID.search(first)):
        details: dict[str, Any] = {"sxid": int(m["code"]), "severity": m["sev"].lower()}
        if m["pci"]:
            details["device"] = m["pci"]
        for key in ("fid", "phys", "port"):
            if m[key] is not None:
                details[{"phys": "physical_id"}.get(key, key)] = int(m[key])
        kind = "nvswitch_fatal" if m["sev"].lower() == "fatal" else "nvswitch_non_fatal"
        return kind, details
    if _in(low, "detected gpu nvl") and (m := _GPU_NVL.search(first)):
        details = {"severity": "fatal" if m["sev"].lower() == "fatal" else "non-fatal"}
        for line in text.split("\n")[1:40]:
            if kv := _KEY_VALUE.match(line):
                key = re.sub(r"\W+", "_", kv["k"].strip()).lower()
                details[key] = kv["v"]
        if "gpuguid" in details:
            details["device"] = details["gpuguid"]
        return "nvlink_failure", details
    if (
        _in(low, "fail", "port down", "nvlink")
        and _NVLINK_FAILURE.search(first)
        and (level in _EVENT_LEVELS or "fail" in first.lower())
    ):
        return "nvlink_failure", {}
    if level in ("ERROR", "CRITICAL", "FATAL"):
        return "fm_error", {}
    if level in ("WARNING", "WARN"):
        return "fm_warning", {}
    return None, None


class BareEntry(NamedTuple):
    level: str
    tid: int
    msg: str


def bare_entry(line: str) -> BareEntry | None:
    """The entry a line without a date starts (None: a continuation line or foreign text)."""
    m = _BARE_ENTRY.match(line)
    if m is None:
        return None
    msg, level = m["msg"], m["level"]
    if level is None and not _fm_message(msg):
        return None  # a continuation line (payload, key : value) or foreign text
    if level is None:
        level = "ERROR" if (_SXID.search(msg) or _GPU_NVL.search(msg)) else "INFO"
    return BareEntry(level, int(m["tid"]) if m["tid"] else 0, msg)


def _fm_message(msg: str) -> bool:
    """Is this one of the messages Fabric Manager prints (not its continuation lines)?"""
    if not _in(_lower(msg), "detected", "fabric manager version", "multicast", "partition"):
        return False
    return bool(
        _SXID.search(msg)
        or _GPU_NVL.search(msg)
        or _VERSION.search(msg)
        or _TEAM_SETUP_OK.search(msg)
        or _TEAM_RELEASE_OK.search(msg)
        or _GROUP.search(msg)
        or _PARTITION.search(msg)
    )


def maybe_undated(line: str) -> bool:
    """False when ``bare_entry`` would surely say None, without its patterns (most lines are
    an entry's continuation): _BARE_ENTRY reads a level only at a "[" that starts the line
    (or follows "nv-fabricmanager[pid]:"), and without a level, _fm_message needs one of its
    words (a line with leading space is no entry at all)."""
    if line[:1] == "[" or not line.isascii() or "nv-fabricmanager" in line:
        return True
    return UNDATED_WORDS.search(line.lower()) is not None


def _lower(text: str) -> str | None:
    """``text`` in lower case for ``_in``, None beyond ASCII (re.I folds more cases)."""
    return text.lower() if text.isascii() else None


def _in(low: str | None, *words: str) -> bool:
    """False only when none of ``words`` (lower case) is in ``low``, a text lowered by
    ``_lower`` (None: beyond ASCII, always searched, as re.I folds more cases): each
    case-insensitive pattern above needs one of its words, and most entries hold none, so
    the pattern is not tried (issue 27). A text checked more than once is lowered once."""
    if low is None:
        return True
    for word in words:  # noqa: SIM110 (any() with a generator costs twice as much here)
        if word in low:
            return True
    return False


@functools.lru_cache(maxsize=4096)  # the entries of one second share their stamp
def iso_of(year: str, mon: str, day: str, time: str) -> str | None:
    try:
        moment = datetime(
            int(year), _MONTHS[mon], int(day), *(int(p) for p in time.split(":"))
        )  # fmt: skip
    except (KeyError, ValueError):
        return None
    return moment.isoformat()
