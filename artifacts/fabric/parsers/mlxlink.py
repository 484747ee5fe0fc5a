"""NVIDIA/Mellanox ``mlxlink`` output: link state, speed, width, FEC, cable module, BER and
physical error counters, one block per ``mlxlink -d <device> [-p <port>]`` run.

Output is sectioned (``Operational Info`` underlined with dashes, then ``Key : Value``
lines). Several runs may follow each other in a transcript; a run starts at each mlxlink
command line (a shell prompt or a bug-report line names device, port and host) or at a
second ``Operational Info`` section.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import (
    CounterSample,
    SampleBuffer,
    normalise_state,
    prompt,
)
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text, to_number

KIND = "mlxlink"
VERSION = 1

MAX_RUNS = 10_000

_COMMAND = re.compile(r"\bmlxlink\b(?P<args>.*)$")
_DEVICE_ARG = re.compile(r"(?:-d|--device)[ =](?P<dev>\S+)")
_PORT_ARG = re.compile(r"(?:-p|--port)[ =](?P<port>0x[0-9a-fA-F]+|\d+)")
_KEY_VALUE = re.compile(r"^\s*(?P<key>[^:]*?\S)\s+:\s?(?P<value>.*?)\s*$")
_SPEED = re.compile(r"^(?P<n>\d+(?:\.\d+)?)\s*G", re.IGNORECASE)
_IB_SPEEDS = {
    "SDR": 2.5,
    "DDR": 5,
    "QDR": 10,
    "FDR10": 10,
    "FDR": 14,
    "EDR": 25,
    "HDR": 50,
    "NDR": 100,
    "XDR": 200,
}

_OPERATIONAL = {
    "state": "state",
    "physical_state": "phys_state",
    "speed": "speed",
    "width": "width",
    "fec": "fec",
    "loopback_mode": "loopback",
    "auto_negotiation": "auto_negotiation",
}
_SUPPORTED = {
    "enabled_link_speed": "enabled_link_speed",
    "enabled_link_speed_ext": "enabled_link_speed",
    "supported_cable_speed": "supported_cable_speed",
    "supported_cable_speed_ext": "supported_cable_speed",
}
_TROUBLESHOOTING = {
    "status_opcode": "status_opcode",
    "group_opcode": "group_opcode",
    "recommendation": "recommendation",
}
_TOOL = {
    "firmware_version": "firmware",
    "mft_version": "mft_version",
    "amber_version": "amber_version",
}
_COUNTER_UNITS = {
    "time_since_last_clear_min": "min",
    "effective_physical_ber": "ratio",
    "raw_physical_ber": "ratio",
    "effective_physical_errors": "count",
    "link_down_counter": "count",
    "link_error_recovery_counter": "count",
    "symbol_errors": "count",
    "symbol_ber": "ratio",
}


@dataclasses.dataclass(frozen=True)
class MlxlinkPort:
    """One mlxlink run: a port's link as the adapter/switch firmware reports it."""

    host: str | None
    device: str | None  # /dev/mst/... as given with -d
    port: int | None
    state: str | None  # ACTIVE, DOWN, POLLING, ...
    phys_state: str | None  # LinkUp, Disabled, N/A -> null
    speed: str | None  # as printed: 100G, 25GbE, NVLink-XDR
    speed_gbps_per_lane: float | None  # IB names (HDR) give a lane rate
    speed_gbps: float | None  # total when the tool prints it (100G, 25GbE)
    width: int | None  # lanes (4x -> 4)
    fec: str | None
    loopback: str | None
    auto_negotiation: str | None
    enabled_link_speed: str | None
    supported_cable_speed: str | None
    status_opcode: int | None
    group_opcode: str | None
    recommendation: str | None
    firmware: str | None
    mft_version: str | None
    amber_version: str | None
    module: dict[str, str]  # the "Module Info" section as printed (N/A dropped)
    counters: dict[str, Any]  # "Physical Counters and BER Info", numbers (per-lane as lists)


@dataclasses.dataclass(frozen=True)
class MlxlinkResult(ParseResult):
    kind: ClassVar[str] = "mlxlink"

    ports: tuple[MlxlinkPort, ...] = ()
    samples: tuple[CounterSample, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "ports": len(self.ports),
            "not_active": sum(1 for p in self.ports if p.state not in ("ACTIVE", None)),
            "speeds": sorted({p.speed for p in self.ports if p.speed}),
            "issues": sum(1 for p in self.ports if p.status_opcode not in (0, None)),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    return "Operational Info" in text and (
        "Troubleshooting Info" in text or "Physical state" in text
    )


def parse(stream: BinaryIO) -> MlxlinkResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    runs = [r for r in state.runs if r["sections"]]
    if not runs:
        raise ParseError("no mlxlink output (an 'Operational Info' section) found")
    buffer = SampleBuffer()
    ports = tuple(_port(run) for run in runs)
    readings: dict[tuple[str | None, int | None], int] = {}
    for port in ports:
        # The same port read twice in one file (before/after) gives two snapshots.
        key = (port.device, port.port)
        _samples(buffer, port, readings.get(key, 0))
        readings[key] = readings.get(key, 0) + 1
    warnings = reader.repair_warnings() + buffer.warnings()
    if state.dropped:
        warnings.append(f"{state.dropped} run(s) beyond {MAX_RUNS} were not kept")
    return MlxlinkResult(ports=ports, samples=tuple(buffer.rows), warnings=tuple(warnings))


class _State:
    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []
        self.host: str | None = None
        self.section: str | None = None
        self.previous: str | None = (
            None  # the last non-blank line: a section title if "---" follows
        )
        self.dropped = 0

    def feed(self, line: str) -> None:
        stripped = line.strip()
        if not stripped:
            return
        shell = prompt(line)
        if shell is not None and shell[0]:
            self.host = shell[0]
        command = _COMMAND.search(line)
        if command and (
            shell is not None or "/usr/bin/mlxlink" in line or line.lstrip().startswith("mlxlink")
        ):
            self._new_run(command["args"])
            self.previous = None
            return
        if set(stripped) == {"-"} and self.previous is not None:
            self._section(self.previous)
            return
        self.previous = stripped
        kv = _KEY_VALUE.match(line)
        if kv and self.section is not None and self.runs:
            key = re.sub(r"[^a-z0-9]+", "_", kv["key"].lower()).strip("_")
            self.runs[-1]["sections"].setdefault(self.section, {}).setdefault(key, kv["value"])

    def _new_run(self, args: str) -> None:
        if len(self.runs) >= MAX_RUNS:
            self.dropped += 1
            return
        device = _DEVICE_ARG.search(args)
        port = _PORT_ARG.search(args)
        self.runs.append(
            {
                "host": self.host,
                "device": device["dev"] if device else None,
                "port": int(port["port"], 0) if port else None,
                "sections": {},
            }
        )
        self.section = None

    def _section(self, title: str) -> None:
        name = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")
        if not self.runs or (
            name == "operational_info" and "operational_info" in self.runs[-1]["sections"]
        ):
            self._new_run(
                ""
            )  # output without a command line, or a second run pasted after the first
            if len(self.runs) >= 2 and self.runs[-1]["device"] is None:
                self.runs[-1]["host"] = self.runs[-2]["host"]
        self.section = name
        self.runs[-1]["sections"].setdefault(name, {})


def _port(run: dict[str, Any]) -> MlxlinkPort:
    sections = run["sections"]
    values: dict[str, str | None] = {}
    for section, mapping in (
        ("operational_info", _OPERATIONAL),
        ("supported_info", _SUPPORTED),
        ("troubleshooting_info", _TROUBLESHOOTING),
        ("tool_information", _TOOL),
    ):
        for key, value in sections.get(section, {}).items():
            if key in mapping:
                values.setdefault(mapping[key], None if value in ("", "N/A") else value)
    speed = values.get("speed")
    width = re.match(r"^(\d+)x", values.get("width") or "")
    module = {k: v for k, v in sections.get("module_info", {}).items() if v not in ("", "N/A")}
    counters = {
        k: _counter_value(v) for k, v in sections.get("physical_counters_and_ber_info", {}).items()
    }
    counters = {k: v for k, v in counters.items() if v is not None}
    opcode = to_number(values.get("status_opcode") or "")
    return MlxlinkPort(
        host=run["host"],
        device=run["device"],
        port=run["port"],
        state=normalise_state(values.get("state")),
        phys_state=values.get("phys_state"),
        speed=speed,
        speed_gbps_per_lane=_lane_rate(speed),
        speed_gbps=_total_rate(speed),
        width=int(width.group(1)) if width else None,
        fec=values.get("fec"),
        loopback=values.get("loopback"),
        auto_negotiation=values.get("auto_negotiation"),
        enabled_link_speed=values.get("enabled_link_speed"),
        supported_cable_speed=values.get("supported_cable_speed"),
        status_opcode=opcode if isinstance(opcode, int) else None,
        group_opcode=values.get("group_opcode"),
        recommendation=values.get("recommendation"),
        firmware=values.get("firmware"),
        mft_version=values.get("mft_version"),
        amber_version=values.get("amber_version"),
        module=module,
        counters=counters,
    )


def _counter_value(text: str) -> Any:
    """'0' -> 0, '15E-255' -> 1.5e-254, '0,0,0,0' -> [0, 0, 0, 0], 'N/A' -> None."""
    parts = [p.strip() for p in text.split(",")]
    numbers = [to_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    return numbers if len(numbers) > 1 else numbers[0]


def _lane_rate(speed: str | None) -> float | None:
    if not speed:
        return None
    for name, rate in sorted(_IB_SPEEDS.items(), key=lambda kv: -len(kv[0])):
        if speed.upper().endswith(name):
            return float(rate)
    return None


def _total_rate(speed: str | None) -> float | None:
    m = _SPEED.match(speed or "")
    return float(m.group("n")) if m else None


def _samples(buffer: SampleBuffer, port: MlxlinkPort, snapshot: int) -> None:
    def add(name: str, value: int | float, unit: str) -> None:
        buffer.add(
            CounterSample(port.host, port.device, port.port, name, value, unit, None, snapshot)
        )

    for name, value in port.counters.items():
        if isinstance(value, list):
            for lane, lane_value in enumerate(value):
                add(f"{name}_lane{lane}", lane_value, "count")
        else:
            add(name, value, _COUNTER_UNITS.get(name, "count"))
