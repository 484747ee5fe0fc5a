"""RDMA adapter and port state: ``ibstat``, ``ibstatus``, ``ibv_devinfo [-v]`` and
``ibdev2netdev``.

All three print blocks of ``key: value`` lines under a device (and port) heading::

    CA 'mlx5_0'                                   (ibstat)
    Infiniband device 'mlx5_0' port 1 status:     (ibstatus)
    hca_id:	mlx5_0                                (ibv_devinfo)

``ibdev2netdev`` prints one line per port, ``mlx5_0 port 1 ==> ens1f0np0 (Up)``: the port,
its netdev (in ``details``) and its link state (Up/Down, read as ACTIVE/DOWN).

Indentation varies (tabs, spaces), so headings, not indentation, give the structure. Tool
errors (``ibpanic: ... failed``) are kept as errors and warnings: a partial output still
describes the adapters it reached.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import (
    HcaInfo,
    LinkPort,
    normalise_guid,
    normalise_phys_state,
    normalise_state,
    prompt,
    rate_gbps,
)
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text

KIND = "ib_status"
VERSION = 1

MAX_PORTS = 10_000

_IBSTAT_CA = re.compile(r"^\s*CA '(?P<dev>[^']+)'\s*$")
_IBSTAT_PORT = re.compile(r"^\s*Port (?P<port>\d+):\s*$")
_IBSTATUS = re.compile(r"^\s*Infiniband device '(?P<dev>[^']+)' port (?P<port>\d+) status:\s*$")
_DEVINFO_HCA = re.compile(r"^\s*hca_id:\s*(?P<dev>\S+)\s*$")
_DEVINFO_PORT = re.compile(r"^\s*port:\s*(?P<port>\d+)\s*$")
_IBDEV2NETDEV = re.compile(
    r"^\s*(?P<dev>[\w.\-]+) port (?P<port>\d+) ==> (?P<netdev>[\w.\-@]+) \((?P<state>Up|Down)\)",
    re.IGNORECASE,
)
_PORT_BLOCK_KEY = re.compile(
    r"^\s*(?:State|Physical state|Rate|Base lid|SM lid|Port GUID|Link layer|Capability mask):"
)
_KEY_VALUE = re.compile(r"^\s*(?P<key>[A-Za-z][\w .\[\]/-]*?)\s*:\s*(?P<value>.*?)\s*$")
# The tools' own complaints start the line; "Failed to" in the middle of another program's
# line (libfabric's "<warn> Failed to open EFA device") is not this tool's error.
_ERROR = re.compile(
    r"^\s*(?:(?:ibpanic|ibwarn|ibv_devinfo|ibstat|ibstatus):|No IB devices found|Failed to)",
    re.I,
)

# Key (lower case, spaces as "_") -> field, per level.
_HCA_KEYS = {
    "ca_type": "hca_type",
    "vendor_part_id": "hca_type",
    "number_of_ports": "ports",
    "phys_port_cnt": "ports",
    "firmware_version": "firmware",
    "fw_ver": "firmware",
    "hardware_version": "hardware_version",
    "hw_ver": "hardware_version",
    "node_guid": "node_guid",
    "system_image_guid": "system_image_guid",
    "sys_image_guid": "system_image_guid",
    "board_id": "board_id",
    "transport": "transport",
}
_PORT_KEYS = {
    "state": "state",
    "physical_state": "phys_state",
    "phys_state": "phys_state",
    "rate": "rate",
    "base_lid": "base_lid",
    "port_lid": "base_lid",
    "lmc": "lmc",
    "port_lmc": "lmc",
    "sm_lid": "sm_lid",
    "capability_mask": "capability_mask",
    "port_cap_flags": "capability_mask",
    "port_guid": "port_guid",
    "link_layer": "link_layer",
    "default_gid": "default_gid",
    "max_mtu": "max_mtu",
    "active_mtu": "active_mtu",
    "active_width": "active_width",
    "active_speed": "active_speed",
}


@dataclasses.dataclass(frozen=True)
class IbStatusResult(ParseResult):
    kind: ClassVar[str] = "ib_status"

    tools: tuple[str, ...] = ()  # which of ibstat / ibstatus / ibv_devinfo produced the file
    hcas: tuple[HcaInfo, ...] = ()
    ports: tuple[LinkPort, ...] = ()
    errors: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "hcas": len({p.device for p in self.ports} | {h.device for h in self.hcas}),
            "ports": len(self.ports),
            "ports_not_active": sum(1 for p in self.ports if p.state != "ACTIVE"),
            "rates_gbps": sorted({p.rate_gbps for p in self.ports if p.rate_gbps is not None}),
            "link_layers": sorted({p.link_layer for p in self.ports if p.link_layer}),
            "errors": len(self.errors),
            "warnings": len(self.warnings),
        }


# Text without which no line below matches: most files are told apart without the loop.
_NEEDED = ("CA '", "Infiniband device '", "hca_id:", "==>", "Port ")


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if not any(needle in text for needle in _NEEDED):
        return False
    ports = keys = 0
    for line in text.splitlines()[:2000]:
        if _IBSTAT_CA.match(line) or _IBSTATUS.match(line) or _DEVINFO_HCA.match(line):
            return True
        if _IBDEV2NETDEV.match(line):
            return True
        ports += bool(_IBSTAT_PORT.match(line))
        keys += bool(_PORT_BLOCK_KEY.match(line))
    # a port block pasted without its CA line: "Port 1:" and ibstat's own port keys
    return ports >= 1 and keys >= 3


def parse(stream: BinaryIO) -> IbStatusResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    if not state.hcas and not state.ports:
        detail = f": {state.errors[0]}" if state.errors else ""
        raise ParseError(f"no ibstat/ibstatus/ibv_devinfo device blocks found{detail}")
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.host: str | None = None
        self.tools: list[str] = []
        self.hcas: dict[str, dict[str, str]] = {}
        self.ports: dict[tuple[str, int], dict[str, str]] = {}
        self.device: str | None = None
        self.port: int | None = None
        # indentation of the open device's heading and of its first key: keys sit deeper than
        # their heading, so a "name: value" line back at the heading's column, in a block
        # whose keys are indented, is another program's line ("RuntimeError: ...") landed
        # inside the output, passed over without closing the block
        self.heading_indent = 0
        self.key_indent: int | None = None
        self.errors: list[str] = []
        self.dropped = 0
        # fields without a typed field, per (device, port or None for the adapter)
        self.details: dict[tuple[str, int | None], dict[str, str]] = {}

    def feed(self, line: str) -> None:
        if not line.strip():
            return
        for heading in (self._ibstat_heading, self._ibstatus_heading, self._devinfo_heading):
            if heading(line):
                return
        if m := _IBDEV2NETDEV.match(line):
            self._netdev_line(m)
            return
        if _ERROR.search(line):
            self.errors.append(line.strip()[:300])
            return
        shell = prompt(line)
        if shell is not None:
            self.host = shell[0] or self.host
            self.device = self.port = None
            return
        kv = _KEY_VALUE.match(line)
        if kv and self.device is not None and self._in_block(line):
            self._key_value(kv["key"], kv["value"])

    def _in_block(self, line: str) -> bool:
        indent = _indent(line)
        if self.key_indent is None:
            self.key_indent = indent
        return not (indent <= self.heading_indent < self.key_indent)

    def _heading(self, line: str) -> None:
        self.heading_indent, self.key_indent = _indent(line), None

    def _netdev_line(self, m: re.Match[str]) -> None:
        self._tool("ibdev2netdev")
        self.device = m["dev"]
        self._open_port(int(m["port"]))
        if self.port is not None:
            attrs = self.ports[(self.device, self.port)]
            attrs.setdefault("state", "ACTIVE" if m["state"].lower() == "up" else "DOWN")
            self.details.setdefault((self.device, self.port), {})["netdev"] = m["netdev"]
        self.device = self.port = None  # the next line is another port's

    def _tool(self, name: str) -> None:
        if name not in self.tools:
            self.tools.append(name)

    def _ibstat_heading(self, line: str) -> bool:
        ca = _IBSTAT_CA.match(line)
        if ca:
            self._tool("ibstat")
            self.device, self.port = ca["dev"], None
            self._heading(line)
            self.hcas.setdefault(self.device, {})
            return True
        port = _IBSTAT_PORT.match(line)
        if port and self.device is None:
            # "ibstat | grep -A8 'Port 1'": a port block without its CA line; the adapter
            # is not named ("")
            self._tool("ibstat")
            self.device = ""
            self._heading(line)
        if port and self.device is not None:
            self._open_port(int(port["port"]))
            return True
        return False

    def _ibstatus_heading(self, line: str) -> bool:
        m = _IBSTATUS.match(line)
        if not m:
            return False
        self._tool("ibstatus")
        self.device = m["dev"]
        self._heading(line)
        self._open_port(int(m["port"]))
        return True

    def _devinfo_heading(self, line: str) -> bool:
        hca = _DEVINFO_HCA.match(line)
        if hca:
            self._tool("ibv_devinfo")
            self.device, self.port = hca["dev"], None
            self._heading(line)
            self.hcas.setdefault(self.device, {})
            return True
        port = _DEVINFO_PORT.match(line)
        if port and self.device is not None and "ibv_devinfo" in self.tools:
            self._open_port(int(port["port"]))
            return True
        return False

    def _open_port(self, port: int) -> None:
        assert self.device is not None
        key = (self.device, port)
        if key not in self.ports and len(self.ports) >= MAX_PORTS:
            self.dropped += 1
            self.port = None
            return
        self.port = port
        self.ports.setdefault(key, {})

    def _key_value(self, key: str, value: str) -> None:
        assert self.device is not None
        # "Physical state" -> physical_state, "GID[  0]" -> gid_0
        name = re.sub(r"[^a-z0-9]+", "_", key.strip().lower()).strip("_")
        if self.port is not None and name in _PORT_KEYS:
            self.ports[(self.device, self.port)][_PORT_KEYS[name]] = value
        elif name in _HCA_KEYS and self.port is None:
            self.hcas.setdefault(self.device, {})[_HCA_KEYS[name]] = value
        elif value:  # every other field, kept as printed (ibv_devinfo -v has dozens)
            self.details.setdefault((self.device, self.port), {}).setdefault(name, value)

    def result(self, warnings: list[str]) -> IbStatusResult:
        warnings = list(warnings)
        if self.errors:
            warnings.append(
                f"the tool reported {len(self.errors)} error(s); the output may be partial"
            )
        if self.dropped:
            warnings.append(f"{self.dropped} port(s) beyond {MAX_PORTS} were not kept")
        return IbStatusResult(
            tools=tuple(self.tools),
            hcas=tuple(
                self._hca(device, attrs)
                for device, attrs in sorted(self.hcas.items(), key=_device_order)
            ),
            ports=tuple(
                self._port(device, port, attrs)
                for (device, port), attrs in sorted(
                    self.ports.items(), key=lambda kv: (_natural(kv[0][0]), kv[0][1])
                )
            ),
            errors=tuple(self.errors),
            warnings=tuple(warnings),
        )

    def _hca(self, device: str, attrs: dict[str, str]) -> HcaInfo:
        return HcaInfo(
            host=self.host,
            device=device,
            hca_type=attrs.get("hca_type"),
            firmware=attrs.get("firmware"),
            hardware_version=attrs.get("hardware_version"),
            board_id=attrs.get("board_id"),
            node_guid=normalise_guid(attrs.get("node_guid")),
            system_image_guid=normalise_guid(attrs.get("system_image_guid")),
            transport=attrs.get("transport"),
            ports=_int(attrs.get("ports")),
            details=self.details.get((device, None), {}),
        )

    def _port(self, device: str, port: int, attrs: dict[str, str]) -> LinkPort:
        rate = attrs.get("rate")
        gbps = rate_gbps(rate)
        if rate is None and "active_width" in attrs and "active_speed" in attrs:
            # ibv_devinfo -v: "active_width: 4X (2)", "active_speed: 25.0 Gbps (32)"
            width = re.match(r"\s*(\d+)X", attrs["active_width"])
            speed = rate_gbps(attrs["active_speed"])
            if width and speed is not None:
                gbps = int(width.group(1)) * speed
                rate = f"{attrs['active_width']} x {attrs['active_speed']}"
        return LinkPort(
            host=self.host,
            device=device,
            port=port,
            state=normalise_state(attrs.get("state")),
            phys_state=normalise_phys_state(attrs.get("phys_state")),
            rate_gbps=gbps,
            rate=rate,
            link_layer=attrs.get("link_layer"),
            base_lid=attrs.get("base_lid"),
            sm_lid=attrs.get("sm_lid"),
            lmc=attrs.get("lmc"),
            port_guid=normalise_guid(attrs.get("port_guid")),
            default_gid=attrs.get("default_gid"),
            capability_mask=attrs.get("capability_mask"),
            active_mtu=_int(attrs.get("active_mtu")),
            max_mtu=_int(attrs.get("max_mtu")),
            details=self.details.get((device, port), {}),
        )


def _indent(line: str) -> int:
    """Leading whitespace, a tab as one column (the tools indent with tabs or spaces, never
    both in one block)."""
    return len(line) - len(line.lstrip(" \t"))


def _int(text: str | None) -> int | None:
    m = re.match(r"\s*(\d+)", text or "")
    return int(m.group(1)) if m else None


def _natural(name: str) -> tuple[Any, ...]:
    """mlx5_2 before mlx5_10."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def _device_order(item: tuple[str, dict[str, str]]) -> tuple[Any, ...]:
    return _natural(item[0])
