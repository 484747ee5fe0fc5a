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
import re
from collections import Counter
from contextlib import suppress
from operator import itemgetter
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.fabric_manager.block_entries import (
    _STAMP_OF,
    Row,
    joined_text,
    stamp_iso,
    whole_entries,
)
from artifacts.fabric.parsers.fabric_manager.messages import (
    _SXID,
    COUNTED_ONLY,
    Effect,
    bare_entry,
    effect_of,
    iso_of,
)
from artifacts.fabric.parsers.fabric_manager.messages import maybe_undated as _maybe_undated
from artifacts.fabric.parsers.line_blocks import BLOCK_BYTES, NumberedBlocks, feed_numbered
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import MAX_LINE_BYTES, head_text

KIND = "fabric_manager"
VERSION = 1
# Text only this tool prints: with it, detection is sure (artifacts/parsers/detection.py).
BANNERS = (b"Fabric Manager version",)

MAX_EVENTS = 20_000
MAX_ENTRY_CHARS = 4000
# The memos of a parse (effects per distinct message, and per its raw lines) are emptied
# when this full, and skip longer texts (a long message seldom repeats): on ever new
# messages they hold at most 4096 x 2 KB twice, and memory stays flat
_MEMO_ENTRIES = 4096
_MEMO_CHARS = 2048
_UNSEEN: Any = object()
_LEVEL_BODY, _BODY_OF = itemgetter(1, 3), itemgetter(3)

_ENTRY = re.compile(
    r"^\[(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<year>\d{4}) (?P<time>\d{2}:\d{2}:\d{2})\]"
    r"\s*\[(?P<level>[A-Z]+)\]\s*\[tid (?P<tid>\d+)\]\s?(?P<msg>.*)$"
)


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
    # 1 MiB blocks of whole lines (issue 27): the usual entries of a block are read by one
    # pattern and counted per distinct message (block_entries); the rest line by line
    reader = NumberedBlocks(stream, block_bytes=BLOCK_BYTES, max_line_bytes=MAX_LINE_BYTES)
    state = _State()
    feed_numbered(reader, state.feed_block, state.feed)
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
        # the effect of each distinct (level, text), and of each distinct (level, raw
        # message lines) of block_entries: a repeated message costs a dict lookup
        self.effects: dict[tuple[str, str], Effect] = {}
        self.raw_effects: dict[tuple[str, str], tuple[str, Effect] | None] = {}

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
            "time": iso_of(m["year"], m["mon"], m["day"], m["time"]),
            "level": m["level"],
            "tid": int(m["tid"]),
            "line": line_no,
            "text": m["msg"].strip(),
        }

    def feed_lines(self, text: str, line_no: int) -> int:
        """``feed`` each line of ``text`` (whole lines); returns the last line number."""
        lines = text.split("\n")
        lines.pop()  # after the last newline
        feed = self.feed
        for line in lines:
            line_no += 1
            feed(line, line_no)
        return line_no

    def feed_block(self, text: str, line_no: int) -> int:
        """``feed_lines`` of a block of whole lines, the usual entries read together."""
        start = 0 if text[:1] == "[" else text.find("\n[") + 1
        if not start and text[:1] != "[":
            return self.feed_lines(text, line_no)  # no line starts an entry
        # the lines before the first "[" continue the entry the last block left open
        line_no = self.feed_lines(text[:start], line_no)
        # the last entry may go on in the next block: it is fed line by line, and stays open
        rows = whole_entries(text, start)
        if rows is not None and len(rows) > 1 and self._count_rows(rows[:-1], line_no):
            last = text.rfind("\n[") + 1  # where the last row starts
            line_no += text.count("\n", start, last)
            start = last
        return self.feed_lines(text[start:], line_no)

    def _count_rows(self, rows: list[Row], line_no: int) -> bool:
        """Takes ``rows`` (whole entries, in order, the first on line ``line_no + 1``) as
        ``feed`` would take their lines; False (and nothing taken) where a continuation line
        would start an undated entry (then the lines are fed one by one)."""
        keys = list(map(_LEVEL_BODY, rows))
        known: list[tuple[tuple[str, str], int, str, Effect]] = []
        for key, n in Counter(keys).items():
            got = self.raw_effects.get(key, _UNSEEN)
            if got is _UNSEEN:
                got = self._raw_effect(*key)
            if got is None:
                return False
            known.append((key, n, *got))
        self.flush()  # the entry left open before the rows
        self.parts["entries"] = None
        self.entries += len(rows)
        ordered: dict[tuple[str, str], tuple[Effect, str]] = {}  # place matters
        for key, n, text, effect in known:
            self.levels[key[0]] += n
            if effect is COUNTED_ONLY:
                continue
            self._count(effect, n)
            if effect.ordered:
                ordered[key] = effect, text
        if self.first is None:
            self.first = next(filter(None, map(stamp_iso, map(_STAMP_OF, rows))), None)
        for row in reversed(rows):  # the last stamp that is a time (most often: the last)
            if when := stamp_iso(row[0]):
                self.last = when
                break
        seen, line = 0, line_no + 1  # the line of row ``seen``
        for i in _places(keys, ordered):
            # the rows between, each line with its newline
            line += "".join(map(_BODY_OF, rows[seen:i])).count("\n")
            seen = i
            stamp, level, tid, _ = rows[i]
            self._place(*ordered[keys[i]], stamp_iso(stamp), level, int(tid), line)
        return True

    def _raw_effect(self, level: str, body: str) -> tuple[str, Effect] | None:
        text = joined_text(body, MAX_ENTRY_CHARS)
        known = None if text is None else (text, self._effect(level, text))
        if len(body) <= _MEMO_CHARS:
            if len(self.raw_effects) >= _MEMO_ENTRIES:
                self.raw_effects.clear()  # a log of ever new messages: memory stays flat
            self.raw_effects[(level, body)] = known
        return known

    def _effect(self, level: str, text: str) -> Effect:
        effects = self.effects
        if (effect := effects.get((level, text))) is None:
            effect = effect_of(level, text)
            if len(text) <= _MEMO_CHARS:
                if len(effects) >= _MEMO_ENTRIES:
                    effects.clear()
                effects[(level, text)] = effect
        return effect

    def _undated(self, line: str, line_no: int) -> bool:
        """An entry whose date was removed: starts one when its message is Fabric Manager's."""
        entry = bare_entry(line)
        if entry is None:
            return False
        self.flush()
        self.parts.setdefault("undated", None)
        self.current = {
            "time": None,
            "level": entry.level,
            "tid": entry.tid,
            "line": line_no,
            "text": entry.msg,
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
        effect = self._effect(level, text)
        if effect is COUNTED_ONLY:
            return
        self._count(effect, 1)
        if effect.ordered:
            self._place(effect, text, when, level, entry["tid"], entry["line"])

    def _count(self, effect: Effect, n: int) -> None:
        """The parts of ``effect`` that ``n`` entries add up to, wherever they are."""
        if effect.multicast is not None:
            self.mc[effect.multicast] += n
            if effect.gpus is not None:
                self.max_gpus = max(self.max_gpus or 0, effect.gpus)

    def _place(
        self, effect: Effect, text: str, when: str | None, level: str, tid: int, line: int
    ) -> None:
        """The parts of ``effect`` that depend on the entry's place: in file order."""
        if self.version is None and effect.version is not None:
            self.version = effect.version
            self.parts.setdefault("version", None)
        if effect.partition is not None:
            partition, state = effect.partition
            self.partitions.append(PartitionEvent(partition, state, when, line))
        if effect.kind is None:
            return
        if effect.part is not None:
            self.parts.setdefault(effect.part, None)
        if len(self.events) >= MAX_EVENTS:
            self.dropped += 1
            return
        details = dict(effect.details or {})  # each event its own: a result is not shared
        self.events.append(
            FmEvent(effect.kind, when, level, tid, line, text[:MAX_ENTRY_CHARS], details)
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


def _places(keys: list[tuple[str, str]], ordered: dict[tuple[str, str], Any]) -> list[int]:
    """Where the rows of the ``ordered`` keys are, in order: a few keys (an error message
    that repeats) are found by list.index, many by one pass."""
    if len(ordered) > 4:
        return [i for i, key in enumerate(keys) if key in ordered]
    places = []
    for key in ordered:
        i = -1
        with suppress(ValueError):
            while True:
                i = keys.index(key, i + 1)
                places.append(i)
    return sorted(places)
