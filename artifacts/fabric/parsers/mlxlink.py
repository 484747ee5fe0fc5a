"""NVIDIA/Mellanox ``mlxlink`` output: link state, speed, width, FEC, cable module, BER and
physical error counters, one block per ``mlxlink -d <device> [-p <port>]`` run.

Output is sectioned (``Operational Info`` underlined with dashes, then ``Key : Value``
lines). Several runs may follow each other in a transcript; a run starts at each mlxlink
command line (a shell prompt or a bug-report line names device, port and host) or at a
second ``Operational Info`` section.

``mlxlink --json`` prints the same sections as one JSON document (``{"result": {"output":
{"Operational Info": {...}}}, "status": {...}}``; per-lane values as ``{"values": [...]}``,
speed masks as ``{"mask", "values"}``): each document is one run, read through the same
mapping as the text. Any part of the output is read for what it holds: ``parts`` lists the
sections a run showed, and the module (cable) readings, the FEC histogram, the eye opening
grades and the SerDes transmitter settings are kept when their section is there.
"""

from __future__ import annotations

import dataclasses
import json
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
MAX_JSON_BYTES = 4 * 1024 * 1024  # one --json document; mlxlink's are a few KiB

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
# Module Info readings: "61 [-10..80]" (value [alarm range]), per lane "3.58,3.25 [-9.9..7.0]"
_MODULE_READINGS = {
    "temperature_c": ("temperature_c", "C"),
    "voltage_mv": ("voltage_mv", "mV"),
    "bias_current_ma": ("bias_current_ma", "mA"),
    "rx_power_current_dbm": ("rx_power_dbm", "dBm"),
    "tx_power_current_dbm": ("tx_power_dbm", "dBm"),
}
_MODULE_TEXT = {
    "identifier": "identifier",
    "vendor_name": "vendor_name",
    "vendor_part_number": "part_number",
    "vendor_serial_number": "serial_number",
    "rev": "revision",
    "fw_version": "fw_version",
    "cable_type": "cable_type",
    "cable_technology": "technology",
    "compliance": "compliance",
    "oui": "oui",
    "power_class": "power_class",
    "module_state": "module_state",
    "wavelength_tolerance": "wavelength_tolerance",
    "manufacturing_date": "manufacturing_date",
}
_JSON_TITLES = (
    "Operational Info",
    "Module Info",
    "Physical Counters and BER Info",
    "Troubleshooting Info",
    "Histogram of FEC Errors",
    "EYE Opening Info",
)
# a line of a pretty-printed JSON document: a key, a bracket or a bare value
_JSON_LINE = re.compile(r'^(?:["{}\[\]]|-?\d|true\b|false\b|null\b)')
_HIST_CELL = re.compile(r"^\s*\[(?P<range>[^\]]*)\]\s*,?\s*(?P<n>\d+)\s*$")
_HEADING = re.compile(r"^(?:={3,}|==>)\s*(?P<name>[^=<>\s][^=<>]*?)\s*(?:={3,}|<==)$")
_TITLES = frozenset(
    {
        "operational_info",
        "supported_info",
        "troubleshooting_info",
        "tool_information",
        "module_info",
        "physical_counters_and_ber_info",
        "histogram_of_fec_errors",
        "eye_opening_info",
        "serdes_tuning_transmitter_info",
    }
)
_RANGE = re.compile(r"^(?P<values>[^\[]*?)\s*(?:\[(?P<lo>-?[\d.]+)\.\.(?P<hi>-?[\d.]+)\])?\s*$")
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


_SECTION_OF_KEY = {
    **dict.fromkeys(_OPERATIONAL, "operational_info"),
    **dict.fromkeys(_SUPPORTED, "supported_info"),
    **dict.fromkeys(_TROUBLESHOOTING, "troubleshooting_info"),
    **dict.fromkeys(_TOOL, "tool_information"),
    **dict.fromkeys(_MODULE_READINGS, "module_info"),
    **dict.fromkeys(_MODULE_TEXT, "module_info"),
    **dict.fromkeys(
        [*_COUNTER_UNITS, "raw_physical_errors_per_lane", "raw_physical_ber_per_lane"],
        "physical_counters_and_ber_info",
    ),
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
    # the module's facts, typed: names, wavelength/length, DDM readings and their ranges
    cable: dict[str, Any] = dataclasses.field(default_factory=dict)
    fec_histogram: tuple[dict[str, Any], ...] = ()  # {bin, range, count}
    eye: dict[str, Any] = dataclasses.field(default_factory=dict)  # grades per lane
    serdes_tx: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # per lane
    parts: tuple[str, ...] = ()  # the sections this run showed (snake_case titles)
    source: str = "text"  # "text" | "json"


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
    if "Operational Info" in text and ("Troubleshooting Info" in text or "Physical state" in text):
        return True
    # --json: the section titles are keys; two of them make it this tool's document
    if sum(f'"{title}"' in text for title in _JSON_TITLES) >= 2:
        return True
    # "mlxlink --show_counters | grep ...": the BER lines without their section underline
    return "Raw Physical BER" in text and "Effective Physical Errors" in text


def parse(stream: BinaryIO) -> MlxlinkResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    state.finish()
    runs = [r for r in state.runs if r["sections"] and not _too_little(r)]
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
    warnings = reader.repair_warnings() + state.warnings + buffer.warnings()
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
        self.json_lines: list[str] | None = None  # an --json document being collected
        self.json_bytes = 0
        self.warnings: list[str] = []

    def feed(self, line: str) -> None:
        stripped = line.strip()
        if not stripped:
            return
        if self.json_lines is not None and not _JSON_LINE.match(stripped):
            # a document cut short, followed by other output: read on as text
            self.warnings.append("a JSON document was cut before its end; it was not read")
            self.json_lines = None
        if self.json_lines is not None or stripped == "{" or stripped.startswith('{"'):
            self._json_line(line, stripped)
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
            # mlxlink underlines a title with as many dashes as it has characters; a rule
            # of another program under any line (a prompt, a log line) is not a title
            if _snake(self.previous) in _TITLES or abs(len(stripped) - len(self.previous)) <= 2:
                self._section(self.previous)
            self.previous = None
            return
        if heading := _HEADING.match(stripped):
            # "=== mt4123_pciconf0 ===" / "==> mlx5_0 <==" printed by a shell loop: a run
            self._new_run("")
            if self.runs:
                self.runs[-1]["device"] = heading["name"].split()[0]
            return
        if stripped.startswith("-E-") and self.runs:
            name = self.runs[-1]["device"] or "mlxlink"
            self.warnings.append(f"{name}: {stripped[3:].strip()}")
            return
        self.previous = stripped
        if _snake(stripped) in _TITLES and self.runs:  # a title whose underline a grep lost
            self._section(stripped)
            self.previous = None  # its underline, when it follows, opens nothing more
            return
        kv = _KEY_VALUE.match(line)
        if kv is None:
            return
        key = _snake(kv["key"])
        if not self.runs and key in _SECTION_OF_KEY:
            # a paste that starts inside a section: a run without its command or title; it
            # counts only with two known keys (see parse)
            self._new_run("")
            if self.runs:
                self.runs[-1]["implicit"] = True
        if not self.runs:
            return
        # lines kept by a grep have lost their section: a known key names it (also inside a
        # section mlxlink does not print, which a known key cannot belong to)
        known = _SECTION_OF_KEY.get(key)
        section = known if known and self.section not in _TITLES else self.section
        if section is not None:
            self.runs[-1]["sections"].setdefault(section, {}).setdefault(key, kv["value"])

    def _json_line(self, line: str, stripped: str) -> None:
        """Collect a --json document; try it at a closing brace in the first column (the
        pretty-printed end) or when it was all on one line."""
        if self.json_lines is None:
            self.json_lines, self.json_bytes = [], 0
        self.json_lines.append(line)
        self.json_bytes += len(line)
        if self.json_bytes > MAX_JSON_BYTES:
            self.warnings.append(f"a JSON document over {MAX_JSON_BYTES} bytes was not read")
            self.json_lines = None
            return
        if line.rstrip() != "}" and not (len(self.json_lines) == 1 and stripped.endswith("}")):
            return
        try:
            document = json.loads("\n".join(self.json_lines))
        except ValueError:
            if len(self.json_lines) == 1:  # "{...}" on one line that is not JSON: text
                self.json_lines = None
            return
        self.json_lines = None
        self._json_run(document)

    def _json_run(self, document: Any) -> None:
        output = document.get("result", document) if isinstance(document, dict) else None
        output = output.get("output", output) if isinstance(output, dict) else None
        if not isinstance(output, dict):
            return
        status = document.get("status") if isinstance(document, dict) else None
        if isinstance(status, dict) and status.get("code") not in (0, None):
            self.warnings.append(f"mlxlink --json status: {status.get('message')!r}")
        self._new_run("")
        if not self.runs:
            return
        self.runs[-1]["source"] = "json"
        for title, fields in output.items():
            if not isinstance(fields, dict):
                continue
            section = self.runs[-1]["sections"].setdefault(_snake(title), {})
            for key, value in fields.items():
                section.setdefault(_snake(key), _json_value(value))
        self.section = None

    def finish(self) -> None:
        if self.json_lines:
            self.warnings.append("a JSON document was cut before its end; it was not read")

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
    histogram = _histogram(sections.get("histogram_of_fec_errors", {}))
    eye = {
        k: v
        for k, v in (
            (k, _counter_value(v) if _counter_value(v) is not None else v)
            for k, v in sections.get("eye_opening_info", {}).items()
        )
        if v not in ("", "N/A")
    }
    serdes = _serdes(sections.get("serdes_tuning_transmitter_info", {}))
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
        cable=_cable(module),
        fec_histogram=histogram,
        eye=eye,
        serdes_tx=serdes,
        parts=tuple(sections),
        source=run.get("source", "text"),
    )


def _too_little(run: dict[str, Any]) -> bool:
    """A run opened by a bare key (no command, title or heading) with one known key: one
    ``State : Active`` line is not enough to call the file mlxlink output."""
    return bool(run.get("implicit")) and sum(map(len, run["sections"].values())) < 2


def _snake(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")


def _json_value(value: Any) -> str:
    """The text mlxlink prints for a --json value: lists joined by commas, a speed mask as
    ``0x... (A,B)`` (its text form)."""
    if isinstance(value, dict):
        values = value.get("values")
        joined = ",".join(str(v) for v in values) if isinstance(values, list) else ""
        if "mask" in value:
            return f"{value['mask']} ({joined})" if joined else str(value["mask"])
        return joined
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return "" if value is None else str(value)


def _cable(module: dict[str, str]) -> dict[str, Any]:
    """The module facts, typed: DDM readings as numbers (lists per lane) with their ranges."""
    cable: dict[str, Any] = {}
    for key, name in _MODULE_TEXT.items():
        if module.get(key):
            cable[name] = module[key]
    for key, (name, _unit) in _MODULE_READINGS.items():
        m = _RANGE.match(module.get(key, ""))
        if not m:
            continue
        reading = _counter_value(m["values"])
        if reading is None:
            continue
        cable[name] = reading
        if m["lo"] is not None:
            cable[f"{name}_range"] = [to_number(m["lo"]), to_number(m["hi"])]
    wavelength = to_number(module.get("wavelength_nm", ""))
    if wavelength is not None:
        cable["wavelength_nm"] = wavelength
    # "Transfer Distance [m]: 3" (copper), "SMF Length: 100m", "Length [m]" in older MFT
    for key in ("transfer_distance_m", "length_m", "smf_length", "om3_length", "om4_length"):
        length = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(k?m)?\s*$", module.get(key, ""))
        if length and float(length.group(1)) > 0:
            factor = 1000 if length.group(2) == "km" else 1
            cable["length_m"] = float(length.group(1)) * factor
            break
    return cable


def _histogram(section: dict[str, str]) -> tuple[dict[str, Any], ...]:
    """``Bin 3 : [3],204`` (--json), ``Bin 4 : [4:7]   12`` (text: the range, then the
    field separator) -> {bin, range, count}; the ``Header`` row is skipped."""
    bins = []
    for key, value in section.items():
        m = re.match(r"^bin_(\d+)$", key)
        cell = _HIST_CELL.match(value)
        if m and cell:
            bins.append({"bin": int(m.group(1)), "range": cell["range"], "count": int(cell["n"])})
    return tuple(sorted(bins, key=lambda b: b["bin"]))


def _serdes(section: dict[str, str]) -> dict[str, dict[str, Any]]:
    """``Serdes TX parameters : fir_pre3,...`` names the columns of each ``Lane N`` row."""
    names = [n.strip() for n in section.get("serdes_tx_parameters", "").split(",") if n.strip()]
    lanes: dict[str, dict[str, Any]] = {}
    for key, value in section.items():
        m = re.match(r"^lane_(\d+)$", key)
        if not m or not names:
            continue
        cells = [to_number(c) for c in value.split(",")]
        lanes[f"lane{m.group(1)}"] = dict(zip(names, cells, strict=False))
    return lanes


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

    for name, unit in _MODULE_READINGS.values():
        reading = port.cable.get(name)
        if isinstance(reading, list):
            for lane, lane_value in enumerate(reading):
                if lane_value is not None:
                    add(f"module_{name}_lane{lane}", lane_value, unit)
        elif reading is not None:
            add(f"module_{name}", reading, unit)
    for name, value in port.counters.items():
        if isinstance(value, list):
            for lane, lane_value in enumerate(value):
                add(f"{name}_lane{lane}", lane_value, "count")
        else:
            add(name, value, _COUNTER_UNITS.get(name, "count"))
