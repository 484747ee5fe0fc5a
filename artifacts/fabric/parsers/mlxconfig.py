"""``mlxconfig -d <dev> q`` (and ``-e q``): NVIDIA/Mellanox NIC firmware settings.

One block per ``Device #N:``: the header lines (``Device type:``, ``Name:``, ``Description:``,
``Device:``) and the ``Configurations:`` table, whose header names the value columns
(``Next Boot``; with ``-e``: ``Default  Current  Next Boot``). A row is ``[*] NAME value...``;
``*`` marks a parameter changed from its default. Values keep their printed form
(``True(1)``, ``ETH(2)``, ``_256KB(1)``, ``Array[0..7]``); ``number`` is the numeric code in
parentheses or the plain integer.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import prompt
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text

KIND = "mlxconfig"
VERSION = 1

MAX_PARAMS = 20_000
_DEVICE_BLOCK = re.compile(r"^\s*Device #(?P<n>\d+):\s*$")
_HEADER = re.compile(
    r"^\s*(?P<key>Device type|Name|Description|Device|PCI device|PSID):\s*(?P<v>.*?)\s*$"
)
_CONFIG = re.compile(r"^\s*Configurations:\s*(?P<columns>.*?)\s*$")
_ROW = re.compile(
    r"^\s*(?P<star>\*)?\s*(?P<name>[A-Z][A-Za-z0-9_]*(?:\[\d+\])?)\s+(?P<values>\S.*?)\s*$"
)
_COMMAND = re.compile(r"\bmlxconfig\b.*?-d\s+(?P<dev>\S+)")
_CODE = re.compile(r"\((?P<code>-?\d+)\)\s*$")
# The trailing legend of `-e q`, and the "..." / "(...)" with which people elide rows.
_LEGEND = re.compile(r"^\s*The '\*' shows parameters\b")
_ELISION = re.compile(r"^\s*(?:\.\.\.|\(\.\.\.\)|\u2026)\s*$")
# A row of the table with its header cut off (`mlxconfig q | grep ROCE`): a parameter name
# of capitals and a value in mlxconfig's own forms (ETH(2), True(1), _256KB(1), Array[0..7])
_VALUE = r"(?:\S*\(-?\d+\)|Array\[\d+\.\.\d+\]|-?\d+|0x[0-9a-fA-F]+)"
_BARE_ROW = re.compile(
    rf"^\s*\*?\s*[A-Z][A-Z0-9]*(?:_[A-Za-z0-9]+)+\s+{_VALUE}(?:\s+{_VALUE}){{0,2}}\s*$"
)
_CODED = re.compile(r"\(-?\d+\)\s|\(-?\d+\)$|Array\[")
_COLUMN_NAMES = {"default": "default", "current": "current", "next boot": "next_boot"}


@dataclasses.dataclass(frozen=True)
class MlxParam:
    name: str
    value: str  # the value that takes effect: Next Boot (or the last column)
    number: float | None
    modified: bool  # marked with '*' (differs from default)
    columns: dict[str, str]  # every column as printed: default / current / next_boot


@dataclasses.dataclass(frozen=True)
class MlxDevice:
    host: str | None
    device: str | None  # /dev/mst/... or PCI address
    device_type: str | None  # ConnectX5
    part: str | None  # MCX516A-CDA_Ax
    description: str | None
    params: tuple[MlxParam, ...]

    def get(self, name: str) -> MlxParam | None:
        return next((p for p in self.params if p.name == name), None)


@dataclasses.dataclass(frozen=True)
class MlxconfigResult(ParseResult):
    kind: ClassVar[str] = "mlxconfig"

    devices: tuple[MlxDevice, ...] = ()
    # Parts of the output that were read, in the order first seen: "command", "device
    # header", "configurations" (the table's header), "rows" (also rows whose header was
    # cut off), "elided" (the author's "..." between rows), "legend" (-e's '*' line).
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "devices": len(self.devices),
            "types": sorted({d.device_type for d in self.devices if d.device_type}),
            "params": sum(len(d.params) for d in self.devices),
            "modified": sum(1 for d in self.devices for p in d.params if p.modified),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if "Configurations:" not in text:
        # a fragment of the table: several rows in mlxconfig's value forms
        rows = [line for line in text.splitlines()[:2000] if _BARE_ROW.match(line)]
        return len(rows) >= 3 and any(_CODED.search(line) for line in rows)
    return bool(_DEVICE_BLOCK.search(text) or "mlxconfig" in text or "Device type:" in text)


def parse(stream: BinaryIO) -> MlxconfigResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    state.close()
    if not any(d.params for d in state.devices):
        raise ParseError("no mlxconfig query output found ('Configurations:' table)")
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.devices: list[MlxDevice] = []
        self.current: dict[str, Any] | None = None
        self.columns: list[str] | None = None
        self.host: str | None = None
        self.command_device: str | None = None
        self.count = 0
        self.dropped = 0
        self.parts: dict[str, None] = {}
        self.elided = 0

    def feed(self, line: str) -> None:
        shell = prompt(line)
        if shell is not None:
            self.host = shell[0] or self.host
            if m := _COMMAND.search(shell[1]):
                self.command_device = m["dev"]
                self.parts["command"] = None
            self.columns = None
            return
        if self.current is None and (m := _COMMAND.match(line.strip())):
            self.command_device = m["dev"]  # the command echoed without a prompt
            self.parts["command"] = None
            return
        if _DEVICE_BLOCK.match(line):
            self.close()
            self._open()
            return
        if m := _CONFIG.match(line):
            if self.current is None:
                self._open()
            names = re.split(r"\s{2,}", m["columns"]) if m["columns"] else ["Next Boot"]
            self.columns = [_COLUMN_NAMES.get(n.strip().lower(), n.strip()) for n in names if n]
            self.parts["configurations"] = None
            return
        if _LEGEND.match(line):
            self.parts["legend"] = None
            return
        if self.columns is not None and _ELISION.match(line):
            self.elided += 1
            self.parts["elided"] = None
            return
        if self.columns is None and _BARE_ROW.match(line):
            # rows without their table header: one value is Next Boot, three are -e's columns
            if self.current is None:
                self._open()
            count = len(line.replace("*", " ").split()) - 1
            self.columns = ["default", "current", "next_boot"] if count == 3 else ["next_boot"]
        if self.columns is not None and (m := _ROW.match(line)) and _is_name(m["name"]):
            self._param(m)
            self.parts["rows"] = None
            return
        if m := _HEADER.match(line):
            if self.current is None:
                self._open()
            assert self.current is not None
            self.current["info"].setdefault(m["key"], m["v"])
            self.columns = None
            self.parts["device header"] = None

    def _open(self) -> None:
        self.current = {"info": {}, "params": []}
        self.columns = None

    def _param(self, m: re.Match[str]) -> None:
        assert self.current is not None and self.columns is not None
        if self.count >= MAX_PARAMS:
            self.dropped += 1
            return
        values = m["values"].split()
        # values never hold spaces; when the columns do not line up keep the last one
        columns = dict(zip(self.columns, values, strict=False)) if len(values) == len(
            self.columns
        ) else {"value": values[-1]}  # fmt: skip
        value = columns.get("next_boot") or values[-1]
        code = _CODE.search(value)
        number = float(code["code"]) if code else _plain_number(value)
        self.current["params"].append(MlxParam(m["name"], value, number, bool(m["star"]), columns))
        self.count += 1

    def close(self) -> None:
        current, self.current = self.current, None
        if current is None or (not current["params"] and not current["info"]):
            return
        info = current["info"]
        self.devices.append(
            MlxDevice(
                host=self.host,
                device=info.get("Device") or info.get("PCI device") or self.command_device,
                device_type=info.get("Device type"),
                part=info.get("Name"),
                description=info.get("Description"),
                params=tuple(current["params"]),
            )
        )

    def result(self, warnings: list[str]) -> MlxconfigResult:
        if self.dropped:
            warnings.append(f"{self.dropped} parameter(s) beyond {MAX_PARAMS} were not kept")
        if any(not d.params for d in self.devices):
            warnings.append("a device block has no Configurations table (truncated output?)")
        if self.elided:
            warnings.append(
                f"the Configurations table is elided ({self.elided} '...' lines): only the "
                "rows shown are read"
            )
        return MlxconfigResult(
            devices=tuple(self.devices), warnings=tuple(warnings), parts=tuple(self.parts)
        )


def _is_name(name: str) -> bool:
    """A parameter name: capitals, digits and '_' (a lower-case part only after a '_', as in
    EXP_ROM_UEFI_x86_ENABLE), so prose such as the legend's "The ..." is not a row."""
    return name.isupper() or "_" in name


def _plain_number(value: str) -> float | None:
    try:
        return float(int(value, 0)) if re.fullmatch(r"-?(?:0x[0-9a-fA-F]+|\d+)", value) else None
    except ValueError:
        return None
