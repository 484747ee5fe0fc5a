"""NVIDIA Fabric Manager logs (``/var/log/fabricmanager.log``) from NVSwitch systems (HGX).

Every entry starts with ``[Mon DD YYYY HH:MM:SS] [LEVEL] [tid N] message``; some messages
continue on the following lines (inband message payloads, the ``Fabric Manager detected GPU
NVL Fatal error on :`` blocks of ``key : value`` lines), which are joined to their entry.

Kept: the Fabric Manager version, every ERROR/WARNING/CRITICAL entry as a timestamped event,
NVSwitch SXid errors (fatal and non-fatal, with the switch PCI id, physical id and port),
NVLink failures (GPU NVL errors, trunk/access port failures, GPUs missing from a multicast
team, training failures), multicast team setups and releases (counts, and the GPU count of
the requests), and partition activations/deactivations. Timestamps have no zone: kept naive.

A fragment is read too: entries whose ``[date]`` (or whole prefix) a paste or a cleaning step
removed, and ``journalctl -u nvidia-fabricmanager`` lines (``host nv-fabricmanager[pid]:
msg``), are entries without a time when their message is one Fabric Manager prints (an
NVSwitch or GPU NVL error, its version, a multicast team or group, a partition).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import Counter
from datetime import datetime
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.line_blocks import BLOCK_BYTES, NumberedBlocks
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import MAX_LINE_BYTES, head_text

KIND = "fabric_manager"
VERSION = 1
# Text only this tool prints: with it, detection is sure (artifacts/parsers/detection.py).
BANNERS = (b"Fabric Manager version",)

MAX_EVENTS = 20_000
MAX_ENTRY_CHARS = 4000
_EVENT_LEVELS = frozenset({"ERROR", "WARNING", "WARN", "CRITICAL", "FATAL"})

_ENTRY = re.compile(
    r"^\[(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<year>\d{4}) (?P<time>\d{2}:\d{2}:\d{2})\]"
    r"\s*\[(?P<level>[A-Z]+)\]\s*\[tid (?P<tid>\d+)\]\s?(?P<msg>.*)$"
)
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
_UNDATED_WORDS = re.compile(r"detected|fabric manager version|multicast|partition")
# The words of flush's checks (version, _multicast, _partition, _classify), lower case:
# an entry with none of them, at a level that makes no event, is only counted
_FLUSH_WORDS = re.compile(
    r"fabric manager version|team|multicast group|partition|detected|fail|port down|nvlink"
)
_MONTHS = {m: i + 1 for i, m in enumerate(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
)}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class FmEvent:
    kind: str  # nvswitch_fatal | nvswitch_non_fatal | nvlink_failure | fm_error | fm_warning
    time: str | None
    level: str
    tid: int
    line: int
    text: str
    details: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Multicast:
    setup_requests: int = 0
    setups_ok: int = 0
    release_requests: int = 0
    releases_ok: int = 0
    groups_allocated: int = 0
    groups_freed: int = 0
    max_gpus_per_team: int | None = None


@dataclasses.dataclass(frozen=True)
class PartitionEvent:
    partition: int
    state: str  # "activated" | "deactivated"
    time: str | None
    line: int


@dataclasses.dataclass(frozen=True)
class FabricManagerResult(ParseResult):
    kind: ClassVar[str] = "fabric_manager"

    version: str | None = None
    first_time: str | None = None
    last_time: str | None = None
    entries: int = 0
    levels: dict[str, int] = dataclasses.field(default_factory=dict)
    events: tuple[FmEvent, ...] = ()
    multicast: Multicast = dataclasses.field(default_factory=Multicast)
    partitions: tuple[PartitionEvent, ...] = ()
    # entries (dated), undated (a fragment without dates), version, nvswitch_errors,
    # nvlink_failures, multicast, partitions: what the file held
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        kinds = Counter(e.kind for e in self.events)
        return {
            "version": self.version,
            "entries": self.entries,
            "errors": self.levels.get("ERROR", 0) + self.levels.get("CRITICAL", 0),
            "events": dict(sorted(kinds.items())),
            "sxid_codes": sorted({e.details["sxid"] for e in self.events if "sxid" in e.details}),
            "multicast_setups": self.multicast.setups_ok,
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    lines = head_text(head).splitlines()[:2000]
    entries = sum(1 for line in lines if _ENTRY.match(line))
    if entries >= 1 and (entries >= 3 or "fabric" in " ".join(lines[:50]).lower()):
        return True
    # a fragment: NVSwitch errors as Fabric Manager words them, or its journal lines
    return any("nv-fabricmanager[" in line or _SXID.search(line) for line in lines)


def parse(stream: BinaryIO) -> FabricManagerResult:
    # 1 MiB blocks of whole lines, split in one call (issue 27): the Python loop per line
    # is left with the checks themselves
    reader = NumberedBlocks(stream, block_bytes=BLOCK_BYTES, max_line_bytes=MAX_LINE_BYTES)
    state = _State()
    line_no = 0
    for piece in reader:
        if isinstance(piece, bytes):
            lines = piece.decode("utf-8").split("\n")
            lines.pop()  # after the last newline
            feed = state.feed
            for line in lines:
                line_no += 1
                feed(line, line_no)
        else:  # a line LineReader repaired (a \r, bytes not UTF-8, cut, no newline)
            advanced, line = piece
            line_no += advanced
            state.feed(line, line_no)
    state.flush()
    if not state.entries:
        raise ParseError(
            "no Fabric Manager log entries found ('[Mon DD YYYY HH:MM:SS] [LEVEL]', nor its "
            "messages without a date)"
        )
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.entries = 0
        self.levels: Counter[str] = Counter()
        self.version: str | None = None
        self.first: str | None = None
        self.last: str | None = None
        self.events: list[FmEvent] = []
        self.dropped = 0
        self.stray = 0
        self.mc: Counter[str] = Counter()
        self.max_gpus: int | None = None
        self.partitions: list[PartitionEvent] = []
        self.current: dict[str, Any] | None = None
        self.parts: dict[str, None] = {}

    def feed(self, line: str, line_no: int) -> None:
        m = _ENTRY.match(line)
        if m is None:
            if _maybe_undated(line) and self._undated(line, line_no):
                return
            if self.current is not None:
                if line.strip() and len(self.current["text"]) < MAX_ENTRY_CHARS:
                    self.current["text"] += "\n" + line.strip()
            elif line.strip():
                self.stray += 1
            return
        self.parts.setdefault("entries", None)
        self.flush()
        self.current = {
            "time": _iso(m),
            "level": m["level"],
            "tid": int(m["tid"]),
            "line": line_no,
            "text": m["msg"].strip(),
        }

    def _undated(self, line: str, line_no: int) -> bool:
        """An entry whose date was removed: starts one when its message is Fabric Manager's."""
        m = _BARE_ENTRY.match(line)
        if m is None:
            return False
        msg, level = m["msg"], m["level"]
        if level is None and not _fm_message(msg):
            return False  # a continuation line (payload, key : value) or foreign text
        if level is None:
            level = "ERROR" if (_SXID.search(msg) or _GPU_NVL.search(msg)) else "INFO"
        self.flush()
        self.parts.setdefault("undated", None)
        self.current = {
            "time": None,
            "level": level,
            "tid": int(m["tid"]) if m["tid"] else 0,
            "line": line_no,
            "text": msg,
        }
        return True

    def flush(self) -> None:
        entry, self.current = self.current, None
        if entry is None:
            return
        self.entries += 1
        level = entry["level"]
        self.levels[level] += 1
        when = entry["time"]
        if when:
            self.first = self.first or when
            self.last = when
        text = entry["text"]
        low = _lower(text)  # once per entry: each check below looks for its words in it
        if low is not None and level not in _EVENT_LEVELS and _FLUSH_WORDS.search(low) is None:
            return  # no version, multicast, partition nor event words: only counted
        if (
            self.version is None
            and _in(low, "fabric manager version")
            and (v := _VERSION.search(text))
        ):
            self.version = v["a"] or v["b"]
            self.parts.setdefault("version", None)
        self._multicast(text, low)
        self._partition(entry)
        kind, details = _classify(text, level)
        if kind in ("nvswitch_fatal", "nvswitch_non_fatal"):
            self.parts.setdefault("nvswitch_errors", None)
        elif kind == "nvlink_failure":
            self.parts.setdefault("nvlink_failures", None)
        if kind is not None:
            if len(self.events) >= MAX_EVENTS:
                self.dropped += 1
                return
            self.events.append(
                FmEvent(
                    kind, when, level, entry["tid"], entry["line"], text[:MAX_ENTRY_CHARS], details
                )
            )

    def _multicast(self, text: str, low: str | None) -> None:
        if not _in(low, "team", "multicast group"):
            return
        # each case-insensitive pattern only where its leading words are (issue 27)
        if _in(low, "team setup request:") and (m := _TEAM_SETUP_REQ.search(text)):
            self.mc["setup_requests"] += 1
            self.max_gpus = max(self.max_gpus or 0, int(m["gpus"]))
        elif _in(low, "team release request:") and _TEAM_RELEASE_REQ.search(text):
            self.mc["release_requests"] += 1
        elif _in(low, "successfully setup multicast team") and _TEAM_SETUP_OK.search(text):
            self.mc["setups_ok"] += 1
        elif _in(low, "successfully released multicast team") and _TEAM_RELEASE_OK.search(text):
            self.mc["releases_ok"] += 1
        elif _in(low, "multicast group ") and (m := _GROUP.search(text)):
            self.mc["groups_" + m["what"].lower()] += 1

    def _partition(self, entry: dict[str, Any]) -> None:
        first = entry["text"].split("\n", 1)[0]
        m = _PARTITION.search(first) if _has(first, "partition") else None
        if m is None:
            return
        what = (m["what"] or m["what2"]).lower()
        self.partitions.append(
            PartitionEvent(
                partition=int(m["id"] or m["id2"]),
                state="deactivated" if what.startswith("deactivat") else "activated",
                time=entry["time"],
                line=entry["line"],
            )
        )

    def result(self, warnings: list[str]) -> FabricManagerResult:
        if self.stray:
            warnings.append(f"{self.stray} line(s) before the first log entry were skipped")
        if self.dropped:
            warnings.append(f"{self.dropped} event(s) beyond {MAX_EVENTS} were not kept")
        return FabricManagerResult(
            version=self.version,
            first_time=self.first,
            last_time=self.last,
            entries=self.entries,
            levels=dict(sorted(self.levels.items())),
            events=tuple(self.events),
            multicast=Multicast(
                setup_requests=self.mc["setup_requests"],
                setups_ok=self.mc["setups_ok"],
                release_requests=self.mc["release_requests"],
                releases_ok=self.mc["releases_ok"],
                groups_allocated=self.mc["groups_allocated"],
                groups_freed=self.mc["groups_freed"],
                max_gpus_per_team=self.max_gpus,
            ),
            partitions=tuple(self.partitions),
            parts=self._parts(),
            warnings=tuple(warnings),
        )

    def _parts(self) -> tuple[str, ...]:
        seen = dict(self.parts)
        if any(self.mc.values()):
            seen["multicast"] = None
        if self.partitions:
            seen["partitions"] = None
        order = ("entries", "undated", "version", "nvswitch_errors", "nvlink_failures",
                 "multicast", "partitions")  # fmt: skip
        return tuple(p for p in order if p in seen)


def _classify(text: str, level: str) -> tuple[str | None, dict[str, Any]]:
    """The event kind of an entry (None: not an event) and its structured details."""
    first = text.split("\n", 1)[0]
    low = _lower(first)
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
    return None, {}


def _fm_message(msg: str) -> bool:
    """Is this one of the messages Fabric Manager prints (not its continuation lines)?"""
    if not _has(msg, "detected", "fabric manager version", "multicast", "partition"):
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


def _maybe_undated(line: str) -> bool:
    """False when ``_undated`` would surely say False, without its patterns (most lines are
    an entry's continuation): _BARE_ENTRY reads a level only at a "[" that starts the line
    (or follows "nv-fabricmanager[pid]:"), and without a level, _fm_message needs one of its
    words (a line with leading space is no entry at all)."""
    if line[:1] == "[" or not line.isascii() or "nv-fabricmanager" in line:
        return True
    return _UNDATED_WORDS.search(line.lower()) is not None


def _lower(text: str) -> str | None:
    """``text`` in lower case for ``_in``, None beyond ASCII (re.I folds more cases)."""
    return text.lower() if text.isascii() else None


def _in(low: str | None, *words: str) -> bool:
    """``_has`` on a text lowered once by ``_lower``."""
    if low is None:
        return True
    for word in words:  # noqa: SIM110 (any() with a generator costs twice as much here)
        if word in low:
            return True
    return False


def _has(text: str, *words: str) -> bool:
    """False only when none of ``words`` (lower case) is in ``text``: each case-insensitive
    pattern above needs one of its words, and most entries hold none, so the pattern is
    not tried (issue 27). Text beyond ASCII is always searched (re.I folds more cases)."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(word in low for word in words)


def _iso(m: re.Match[str]) -> str | None:
    return _iso_of(m["year"], m["mon"], m["day"], m["time"])


@functools.lru_cache(maxsize=4096)  # the entries of one second share their stamp
def _iso_of(year: str, mon: str, day: str, time: str) -> str | None:
    try:
        moment = datetime(
            int(year), _MONTHS[mon], int(day), *(int(p) for p in time.split(":"))
        )  # fmt: skip
    except (KeyError, ValueError):
        return None
    return moment.isoformat()
