"""``ethtool -S`` NIC statistics (mlx5 and generic drivers), as pasted by real people.

Handles: the ``NIC statistics:`` header or none at all (tools strip it), several NICs or
snapshots in one file (each ``ethtool -S <dev>`` command, ``NIC statistics:`` header, or a
counter seen twice starts a new snapshot), ``| grep prio`` excerpts, markdown fences, shell
prompts (``root@host:~# ethtool -S eth0`` gives host and device), labels such as
``Before:``/``After:`` and ``date`` lines (they become the snapshot's label and time), and
``ethtool -i`` driver/firmware lines when they are pasted alongside, and plain ``ethtool
<dev>`` link settings (``Settings for eth3:`` ... ``Speed: 400000Mb/s`` ... ``Link detected:
yes``): the speed the port negotiated, which bounds what its rail can carry.
"""

from __future__ import annotations

import dataclasses
import re
from itertools import compress, count
from operator import ne
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import (
    CounterSample,
    SampleBuffer,
    Snapshot,
    counter_unit,
    prompt,
    samples_of,
)
from artifacts.fabric.parsers.line_blocks import BlockReader
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import find_timestamp, head_text

KIND = "ethtool_stats"
VERSION = 2
# Counter rows one file keeps (a polling collector's file can hold millions); every
# snapshot is still counted and the warning says how many rows were dropped (issue 27).
MAX_ROWS = 250_000

# a note the person added after the value ("1234   # PFC from the switch", "<- here") is not
# part of the counter
_NOTE = r"(?:\s+(?:#|//|<-|<--|\(|\[)[^\n]*)?"
_COUNTER = re.compile(
    rf"^\s*(?P<name>\[?[\w.\-/#]+\]?(?:: [\w.\-/#]+)?):\s+(?P<value>-?\d+){_NOTE}\s*$"
)
_COMMAND = re.compile(r"\bethtool\s+(?:-S|--statistics)\s+(?:--all-groups\s+)?(?P<dev>[^\s|`'\"]+)")
_INFO_COMMAND = re.compile(r"\bethtool\s+(?:-i|--driver)\s+(?P<dev>[^\s|`'\"]+)")
_DRIVER_INFO = re.compile(
    r"^\s*(?P<key>driver|version|firmware-version|bus-info|expansion-rom-version):\s*(?P<value>.*?)\s*$"
)
_INTERFACE = re.compile(r"^[a-z][\w.\-]*\d[\w.\-]*$")  # eth1, enp178s0f0, ib0, mlx5_0, bond0
_SETTINGS = re.compile(r"^\s*Settings for (?P<dev>[^\s:]+):\s*$")
_LINK_SETTING = re.compile(
    r"^\s*(?P<key>Speed|Duplex|Port|Link detected|Auto-negotiation|Lanes):\s*(?P<value>.*?)\s*$"
)
_SPEED = re.compile(r"^(?P<mbps>\d+)\s*Mb/s$")
_FAILURE = re.compile(r"no stats available|Cannot get stats|Operation not supported", re.IGNORECASE)
# Text that means the file is another tool's output even if it has "name: 123" lines.
_QUICK_COUNTER = re.compile(r":\s+-?\d")
_NIC_WORDS = re.compile(r"rx|tx|pause|packets|bytes|drop|discard|err|pci|queue|_phy\b|vport")
_FOREIGN = ("hca_id:", "CA '", "Infiniband device", "NVSMI LOG", "/sys/class/", "Bucket ")
# A plain counter line (spaces, an ASCII name, ": ", digits): _COUNTER reads it as this name
# and value, so a snapshot of such lines can be followed in bulk (see _Template).
_PLAIN = re.compile(rb" *([A-Za-z0-9_.\-/#]+): ([0-9]+)")


@dataclasses.dataclass(frozen=True)
class DriverInfo:
    device: str | None
    driver: str | None
    version: str | None
    firmware: str | None
    bus_info: str | None


@dataclasses.dataclass(frozen=True)
class LinkSettings:
    """One ``ethtool <dev>`` block: what the port negotiated."""

    host: str | None
    device: str
    speed_mbps: int | None  # None when ethtool says "Unknown!" (link down)
    duplex: str | None
    port: str | None  # "Direct Attach Copper", "FIBRE", ...
    autoneg: str | None
    link_detected: bool | None
    lanes: int | None = None  # "Lanes: 4" (ethtool 5.10+): the lanes the speed runs over


@dataclasses.dataclass(frozen=True)
class EthtoolStatsResult(ParseResult):
    kind: ClassVar[str] = "ethtool_stats"

    snapshots: tuple[Snapshot, ...] = ()
    samples: tuple[CounterSample, ...] = ()
    drivers: tuple[DriverInfo, ...] = ()
    links: tuple[LinkSettings, ...] = ()
    # the parts of ethtool's output seen: "statistics" (-S), "link_settings" (ethtool <dev>),
    # "driver_info" (-i)
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "links": len(self.links),
            "snapshots": len(self.snapshots),
            "devices": sorted({s.device for s in self.snapshots if s.device}),
            "samples": len(self.samples),
            "nonzero": sum(1 for s in self.samples if s.value),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if any(marker in text for marker in _FOREIGN):
        return False
    if "NIC statistics:" in text:
        return True
    if "Settings for " in text and ("Link detected:" in text or "Speed:" in text):
        return True  # plain `ethtool <dev>`: link settings
    # Every branch below needs two counter lines, each ending in ":<space>integer": when the
    # head holds fewer than two such places, no line can count (a necessary condition).
    quick = _QUICK_COUNTER.finditer(text)
    if next(quick, None) is None or next(quick, None) is None:
        return False
    # With the command echoed, two counter lines are enough; a headerless dump must be
    # mostly "identifier: integer" lines (at least 4, and twice the other lines). Both are
    # decided as soon as the lines left cannot change the answer.
    command = _COMMAND.search(text) is not None
    lines = text.splitlines()[:3000]
    counters = other = 0
    run = nic_words = 0  # the current block of consecutive counter lines, wherever it is
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith("```"):
            if m := _COUNTER.match(line):
                counters += 1
                run += 1
                nic_words += bool(_NIC_WORDS.search(m["name"]))
                if command and counters >= 2:
                    return True
                # a block of NIC counters among other programs' lines (a fragment pasted
                # into a log): six in a row, mostly named like NIC statistics
                if run >= 6 and nic_words * 2 >= run:
                    return True
            else:
                other += 1
                run = nic_words = 0
        left = len(lines) - i - 1
        if not command and counters + left < max(4, 2 * other) and run + left < 6:
            return False  # even if every line left were a counter (and no block can form)
    if command:
        return False  # fewer than two counter lines (4 would have returned above)
    return counters >= 4 and counters >= 2 * other


def parse(stream: BinaryIO) -> EthtoolStatsResult:
    reader = BlockReader(stream)
    state = _State()
    for piece in reader:
        if type(piece) is str:
            state.at = None
            state.feed(piece)
        else:
            state.feed_block(piece)
    if not state.buffer.rows and not state.links:
        message = "no ethtool -S counters (name: value lines) or link settings found"
        if state.failures:
            message += f"; the file says: {state.failures[0]}"
        raise ParseError(message)
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.buffer = SampleBuffer(MAX_ROWS)
        self.snapshots: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None
        self._seen: set[str] = set()
        self.pending: dict[str, Any] = {"host": None, "device": None, "label": None, "time": None}
        self.drivers: dict[str | None, dict[str, str]] = {}
        self.failures: list[str] = []
        self.info_device: str | None = None  # from "ethtool -i <dev>"
        self.links: list[dict[str, Any]] = []
        self.settings: dict[str, Any] | None = None  # the open "Settings for <dev>:" block
        # Reading whole blocks (issue 27): the last snapshot of plain counter lines read line
        # by line becomes a template; while later snapshots repeat its names line for line
        # (values may differ), they are taken in bulk, with the same rows and counts.
        self.template: _Template | None = None
        self.follow: int | None = None  # the open snapshot is template.names[:follow]
        self.lines: list[bytes] = []  # the block being read
        self.at: int | None = None  # the index in it of the line being read
        self.opened_at: int | None = None  # where the open snapshot began in this block
        self.bulk_only = False  # the open snapshot was taken in bulk from its first line

    def feed_block(self, chunk: bytes) -> None:
        """Whole lines (BlockReader): plain counter lines that follow the template are
        taken in bulk, every other line as ``feed`` takes it."""
        lines = chunk.split(b"\n")
        lines.pop()
        self.lines, self.opened_at = lines, None
        i, size = 0, len(lines)
        while i < size:
            if self.template is not None and self.settings is None:
                taken = self._follow(lines, i)
                if taken:
                    i += taken
                    continue
            self.at = i
            self.feed(lines[i].decode())
            i += 1
        self.lines = []

    def _follow(self, lines: list[bytes], i: int) -> int:
        """How many lines from ``i`` on were taken along the template (0: none)."""
        template = self.template
        assert template is not None
        start = self.follow
        if start is None or start == len(template.lines):
            # the template's first line opens a snapshot only where none is open or the
            # open one already holds its name (what _counter does)
            if start is None and self.current is not None and template.names[0] not in self.seen:
                return 0
            start = 0
        if not template.holds(start, lines[i]):
            return 0
        take = min(len(template.lines) - start, len(lines) - i)
        part = lines[i : i + take]
        expected = template.lines[start : start + take]
        taken = take
        if part != expected:
            for j in compress(count(), map(ne, part, expected)):
                if not template.holds(start + j, part[j]):
                    taken = j
                    break
        if start == 0:
            self.at = i
            self._open()  # may learn the closed snapshot: this template matched, keep it
            self.template, self.opened_at, self.bulk_only = template, i, True
        current = self.current
        assert current is not None
        current["counters"] += taken
        self.follow = start + taken
        buffer = self.buffer
        room = buffer.room()
        if room < taken:
            buffer.dropped += taken - room
        if room:
            host, device = current["host"], current["device"]
            captured_at, index = current["captured_at"], current["index"]
            end = start + min(room, taken)
            cuts = template.cuts
            values = [int(line[cuts[j] :]) for j, line in enumerate(part[: end - start], start)]
            buffer.rows += samples_of(
                host,
                device,
                None,
                template.names[start:end],
                values,
                template.units[start:end],
                captured_at,
                index,
            )
        return taken

    @property
    def seen(self) -> set[str]:
        """The names of the open snapshot (made from the template where it was followed)."""
        if self.follow is not None:
            assert self.template is not None
            self._seen = set(self.template.names[: self.follow])
            self.follow = None
            self.bulk_only = False  # read on line by line
        return self._seen

    @seen.setter
    def seen(self, value: set[str]) -> None:
        self._seen, self.follow = value, None

    def feed(self, line: str) -> None:
        if self.settings is not None and self._setting(line):
            return
        counter = _COUNTER.match(line)
        if counter:
            self._counter(counter["name"], int(counter["value"]))
            return
        stripped = line.strip().strip("`").strip()
        if not stripped or set(stripped) <= set("-=_*#~ "):
            return
        command = _COMMAND.search(line)
        shell = prompt(line)
        if command:
            self._close()
            self.pending["device"] = command["dev"]
            if shell and shell[0]:
                self.pending["host"] = shell[0]
            return
        settings = _SETTINGS.match(stripped)
        if settings:
            self._close()
            self.settings = {"device": settings["dev"], "host": self.pending["host"]}
            self.links.append(self.settings)
            return
        info_command = _INFO_COMMAND.search(line)
        if info_command:
            self.info_device = info_command["dev"]
        if shell is not None:
            if shell[0]:
                self.pending["host"] = shell[0]  # another command on the same host
            return  # a command line (``$ cat before.txt``) is never a snapshot's label
        if stripped.startswith("NIC statistics"):
            self._close()
            return
        info = _DRIVER_INFO.match(stripped)
        if info:
            self._driver_info(info["key"], info["value"])
            return
        if _FAILURE.search(stripped):
            self.failures.append(stripped[:200])
            return
        self._text(stripped)

    def _setting(self, line: str) -> bool:
        """A line inside a ``Settings for <dev>:`` block: the settings kept, every other
        line of the block (link modes, ``PHYAD: 0``, message levels) dropped, never read
        as a counter. ``Link detected`` is the block's last line; a blank line, a command
        or another block's header also ends it (indentation does not: pastes lose it)."""
        assert self.settings is not None
        stripped = line.strip().strip("`").strip()
        if (
            not stripped
            or prompt(line) is not None
            or _COMMAND.search(line)
            or stripped.startswith(("NIC statistics", "Settings for "))
        ):
            self.settings = None
            return False
        found = _LINK_SETTING.match(line)
        if found:
            self.settings[found["key"]] = found["value"]
            if found["key"] == "Link detected":
                self.settings = None
        return True

    def _text(self, text: str) -> None:
        """A line of prose: a time, an interface name ("eth1:", "=== ib0 ==="), or a label
        such as "Before benchmarking:"."""
        stamp = find_timestamp(text)
        if stamp and len(text) < 60:
            self._close()
            self.pending["time"] = stamp[0]
            return
        label = text.strip("=#*-:[] \t")
        if _INTERFACE.match(label):
            self._close()
            self.pending["device"] = label
        elif 0 < len(label) <= 80:
            self._close()
            self.pending["label"] = label

    def _counter(self, name: str, value: int) -> None:
        if self.current is None or name in self.seen:
            self._open()
        assert self.current is not None
        self.seen.add(name)
        self.current["counters"] += 1
        if self.buffer.full():
            self.buffer.dropped += 1
            return
        self.buffer.add(
            CounterSample(
                host=self.current["host"],
                device=self.current["device"],
                port=None,
                counter=name,
                value=value,
                unit=counter_unit(name),
                captured_at=self.current["captured_at"],
                snapshot=self.current["index"],
            )
        )

    def _open(self) -> None:
        self._close()
        self.opened_at, self.bulk_only = self.at, False
        previous = self.snapshots[-1] if self.snapshots else None
        # A repeated counter without any header: same NIC, next reading.
        device = self.pending["device"] or (previous["device"] if previous else None)
        host = self.pending["host"] or (previous["host"] if previous else None)
        self.current = {
            "index": len(self.snapshots),
            "host": host,
            "device": device,
            "label": self.pending["label"],
            "captured_at": self.pending["time"],
            "counters": 0,
        }
        self.snapshots.append(self.current)
        self.pending.update(device=None, label=None, time=None)
        self.pending["host"] = host

    def _close(self) -> None:
        if self.current is not None:
            self._learn()
            self.current = None
            self.seen = set()

    def _learn(self) -> None:
        """The open snapshot, closed by line ``at``, becomes the template when all of it was
        read from this block, every line of it a plain counter line."""
        start, end = self.opened_at, self.at
        assert self.current is not None
        if start is None or end is None or self.bulk_only:
            return
        if not 0 < self.current["counters"] == end - start:
            return  # not every line a counter (blank lines, notes)
        template = _Template.of(self.lines[start:end])
        if template is not None:
            self.template = template

    def _driver_info(self, key: str, value: str) -> None:
        device = self.info_device or self.pending["device"]
        if device is None and self.snapshots:
            device = self.snapshots[-1]["device"]
        self.drivers.setdefault(device, {})[key] = value

    def result(self, warnings: list[str]) -> EthtoolStatsResult:
        warnings = warnings + self.buffer.warnings()
        if self.failures:
            warnings.append(f"ethtool reported: {self.failures[0]}")
        if any(s["device"] is None for s in self.snapshots):
            warnings.append("some snapshots do not name their NIC (no 'ethtool -S <dev>' line)")
        return EthtoolStatsResult(
            snapshots=tuple(
                Snapshot(
                    s["index"], s["host"], s["device"], s["label"], s["captured_at"], s["counters"]
                )
                for s in self.snapshots
            ),
            samples=tuple(self.buffer.rows),
            drivers=tuple(
                DriverInfo(
                    device=device,
                    driver=info.get("driver"),
                    version=info.get("version"),
                    firmware=info.get("firmware-version"),
                    bus_info=info.get("bus-info"),
                )
                for device, info in self.drivers.items()
                if "driver" in info or "firmware-version" in info
            ),
            links=tuple(_link(s) for s in self.links),
            parts=tuple(
                name
                for name, seen in (
                    ("statistics", self.buffer.rows),
                    ("link_settings", self.links),
                    ("driver_info", self.drivers),
                )
                if seen
            ),
            warnings=tuple(warnings),
        )


class _Template:
    """The lines of a snapshot of plain counter lines, with the name each holds."""

    def __init__(self, lines: list[bytes], names: list[str], cuts: list[int]) -> None:
        self.lines = lines
        self.names = names
        self.cuts = cuts  # where each line's value begins
        self.prefixes = [line[:cut] for line, cut in zip(lines, cuts, strict=True)]
        self.units = [counter_unit(name) for name in names]

    def holds(self, index: int, line: bytes) -> bool:
        """Whether ``line`` is the template's line ``index`` with any digits for a value."""
        if line == self.lines[index]:
            return True
        prefix = self.prefixes[index]
        cut = len(prefix)
        return len(line) > cut and line.startswith(prefix) and line[cut:].isdigit()

    @classmethod
    def of(cls, lines: list[bytes]) -> _Template | None:
        names, cuts = [], []
        for line in lines:
            plain = _PLAIN.fullmatch(line)
            if plain is None:
                return None
            names.append(plain[1].decode())
            cuts.append(plain.start(2))
        if len(set(names)) != len(names):
            return None
        return cls(lines, names, cuts)


def _link(block: dict[str, Any]) -> LinkSettings:
    speed = _SPEED.match(block.get("Speed") or "")
    detected = block.get("Link detected")
    return LinkSettings(
        host=block["host"],
        device=block["device"],
        speed_mbps=int(speed["mbps"]) if speed else None,
        duplex=block.get("Duplex"),
        port=block.get("Port"),
        autoneg=block.get("Auto-negotiation"),
        link_detected=None if detected is None else detected.lower() == "yes",
        lanes=int(block["Lanes"]) if str(block.get("Lanes", "")).isdigit() else None,
    )
