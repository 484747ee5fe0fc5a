"""``mlnx_qos -i <netdev>``: the QoS settings of a ConnectX Ethernet port.

The tool prints, per interface::

    DCBX mode: OS controlled
    Priority trust state: dscp
    dscp2prio mapping:
            prio:0 dscp:07,06,05,04,03,02,01,00,
            ...
    default priority:
    Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=1027728
    Cable len: 7
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0
            buffer      0   0   0   1   0   0   0   0
    tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%
             priority:  0
             priority:  1

Older MLNX_OFED releases leave out the buffer lines and spell the trust line
``Priority trust mode``. The output does not name the interface: it comes from the shell
prompt (``$ mlnx_qos -i eth2``) when the file holds one; several runs pasted together are
split at each new ``DCBX mode`` / ``Priority trust`` block.

A pasted part of the output is read for what it holds (the trust line and the dscp2prio map
alone, cut with ``... # many other outputs``, or the PFC table alone): each port says in
``parts`` which blocks it showed (``dcbx``, ``trust``, ``dscp2prio``, ``default_priority``,
``buffers``, ``cable``, ``pfc``, ``tc``), so an absent block reads as unknown, not as off.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import prompt
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text

KIND = "mlnx_qos"
VERSION = 1

MAX_PORTS = 5_000

_COMMAND = re.compile(r"\bmlnx_qos\b.*?(?:-i|--interface)[\s=]+(?P<ifname>[\w.\-@]+)")
_DCBX = re.compile(r"^\s*DCBX mode:\s*(?P<v>.*?)\s*$", re.I)
_TRUST = re.compile(r"^\s*(?:Priority\s+)?trust\s+(?:state|mode):\s*(?P<v>\w+)", re.I)
_DSCP2PRIO = re.compile(r"^\s*prio:\s*(?P<prio>\d)\s+dscp:\s*(?P<dscp>[\d,\s]*)$")
_DEFAULT_PRIO = re.compile(r"^\s*default priority:\s*(?P<v>\d*)\s*$", re.I)
_BUFFER_SIZES = re.compile(r"^\s*Receive buffer size \(bytes\):\s*(?P<v>.*?)\s*$", re.I)
_CABLE = re.compile(r"^\s*Cable len:\s*(?P<v>\d+)", re.I)
_PFC = re.compile(r"^\s*PFC configuration:\s*$", re.I)
_PFC_ROW = re.compile(r"^\s*(?P<name>priority|enabled|buffer)\s+(?P<values>(?:\d+\s*){8})$")
_TC = re.compile(
    r"^\s*tc:\s*(?P<tc>\d+)\s+ratelimit:\s*(?P<rate>[^,]+?)\s*,\s*tsa:\s*(?P<tsa>\w+)"
    r"(?:\s*,\s*bw:\s*(?P<bw>\d+)\s*%)?"
)
_TC_PRIO = re.compile(r"^\s*(?:priority|up):\s*(?P<prio>\d)\s*$")


@dataclasses.dataclass(frozen=True)
class TrafficClass:
    tc: int
    tsa: str  # ets | strict | vendor
    bw_percent: int | None  # ETS minimum bandwidth share
    ratelimit: str  # "unlimited" or "<n> Gbps" as printed
    priorities: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class QosPort:
    host: str | None
    interface: str | None  # the netdev (from the prompt); None when the file does not say
    dcbx_mode: str | None  # "OS controlled" | "firmware controlled"
    trust: str | None  # "pcp" | "dscp"
    pfc_enabled: tuple[int, ...]  # priorities with PFC on
    prio2buffer: tuple[int, ...]  # receive buffer of priority 0..7 (empty when not printed)
    buffer_sizes: tuple[int, ...]  # bytes per receive buffer
    buffer_total: int | None
    cable_len_m: int | None
    default_priority: int | None
    dscp2prio: dict[str, int]  # DSCP (as text, JSON keys) -> priority
    tcs: tuple[TrafficClass, ...]
    # False when the output shows no "enabled" row of a PFC table (a cut or elided paste):
    # then ``pfc_enabled`` is empty because nothing was said, not because PFC is off.
    pfc_known: bool = True
    parts: tuple[str, ...] = ()  # the blocks of the output this port showed

    def priority_of_dscp(self, dscp: int) -> int | None:
        return self.dscp2prio.get(str(dscp))

    def tc_of_priority(self, prio: int) -> TrafficClass | None:
        return next((t for t in self.tcs if prio in t.priorities), None)


@dataclasses.dataclass(frozen=True)
class MlnxQosResult(ParseResult):
    kind: ClassVar[str] = "mlnx_qos"

    ports: tuple[QosPort, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "ports": len(self.ports),
            "trust": sorted({p.trust for p in self.ports if p.trust}),
            "pfc_priorities": sorted({q for p in self.ports for q in p.pfc_enabled}),
            "ports_without_pfc": sum(1 for p in self.ports if p.pfc_known and not p.pfc_enabled),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    """Two of the tool's blocks, whichever were pasted: a fragment is still this tool."""
    text = head_text(head)
    signals = (
        "PFC configuration:" in text,
        bool(re.search(r"^\s*(?:Priority\s+)?trust\s+(?:state|mode):", text, re.I | re.M)),
        bool(re.search(r"^\s*DCBX mode:", text, re.M)),
        "dscp2prio mapping" in text
        and len(re.findall(r"^\s*prio:\s*\d\s+dscp:\s*\d", text, re.M)) >= 2,
        bool(re.search(r"^\s*tc:\s*\d+\s+ratelimit:.*tsa:", text, re.M)),
    )
    return sum(signals) >= 2


def parse(stream: BinaryIO) -> MlnxQosResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    state.close()
    if not state.ports:
        raise ParseError("no mlnx_qos output found ('PFC configuration:' with trust/DCBX lines)")
    warnings = reader.repair_warnings()
    if state.dropped:
        warnings.append(f"{state.dropped} port block(s) beyond {MAX_PORTS} were not kept")
    for port in state.ports:
        if port.trust is None:
            warnings.append(f"{port.interface or 'a port'}: no trust state line")
    return MlnxQosResult(ports=tuple(state.ports), warnings=tuple(warnings))


class _State:
    def __init__(self) -> None:
        self.ports: list[QosPort] = []
        self.host: str | None = None
        self.interface: str | None = None
        self.block: dict[str, Any] | None = None
        self.section: str = ""  # "dscp2prio" | "pfc" | "tc"
        self.dropped = 0

    def feed(self, line: str) -> None:
        shell = prompt(line)
        if shell is not None:
            self.close()
            self.host = shell[0] or self.host
            m = _COMMAND.search(shell[1])
            self.interface = m["ifname"] if m else None
            return
        if m := _DCBX.match(line):
            self._start("dcbx_mode").update(dcbx_mode=m["v"] or None)
            self._part("dcbx")
        elif m := _TRUST.match(line):
            self._start("trust").update(trust=m["v"].lower())
            self._part("trust")
        elif "dscp2prio mapping" in line.lower():
            self._open().setdefault("dscp2prio", {})
            self._part("dscp2prio")
            self.section = "dscp2prio"
        elif (m := _DSCP2PRIO.match(line)) and self.block is not None:
            for dscp in re.findall(r"\d+", m["dscp"]):
                if int(dscp) < 64:
                    self.block.setdefault("dscp2prio", {})[str(int(dscp))] = int(m["prio"])
        elif m := _DEFAULT_PRIO.match(line):
            self._open()["default_priority"] = int(m["v"]) if m["v"] else None
            self._part("default_priority")
        elif m := _BUFFER_SIZES.match(line):
            self._buffer_sizes(m["v"])
            self._part("buffers")
        elif m := _CABLE.match(line):
            self._open()["cable_len_m"] = int(m["v"])
            self._part("cable")
        elif _PFC.match(line):
            self._part("pfc")
            self.section = "pfc"
        elif (m := _PFC_ROW.match(line)) and self.section == "pfc" and self.block is not None:
            self.block[f"pfc_{m['name']}"] = [int(v) for v in m["values"].split()]
        elif m := _TC.match(line):
            self._part("tc")
            tcs = self._open().setdefault("tcs", [])
            bw = int(m["bw"]) if m["bw"] else None
            tcs.append({"tc": int(m["tc"]), "tsa": m["tsa"].lower(), "bw": bw,
                        "rate": m["rate"].strip(), "prios": []})  # fmt: skip
            self.section = "tc"
        elif (m := _TC_PRIO.match(line)) and self.section == "tc" and self.block is not None:
            self.block["tcs"][-1]["prios"].append(int(m["prio"]))

    def _start(self, key: str) -> dict[str, Any]:
        """A DCBX or trust line opens a new port block when the current one already has it."""
        if self.block is not None and key in self.block:
            self.close()
        self.section = ""
        return self._open()

    def _part(self, name: str) -> None:
        self._open().setdefault("parts", {})[name] = None

    def _open(self) -> dict[str, Any]:
        if self.block is None:
            self.block = {}
        return self.block

    def _buffer_sizes(self, text: str) -> None:
        block = self._open()
        total = re.search(r"total_size\s*=\s*(\d+)", text)
        block["buffer_total"] = int(total.group(1)) if total else None
        sizes = re.sub(r"total_size\s*=\s*\d+", "", text)
        block["buffer_sizes"] = [int(v) for v in re.findall(r"\d+", sizes)][:8]

    def close(self) -> None:
        block, self.block = self.block, None
        self.section = ""
        if not block or not any(
            block.get(k) for k in ("trust", "pfc_enabled", "dcbx_mode", "dscp2prio", "tcs")
        ):
            return
        if len(self.ports) >= MAX_PORTS:
            self.dropped += 1
            return
        enabled = block.get("pfc_enabled") or []
        order = block.get("pfc_priority") or list(range(8))
        self.ports.append(
            QosPort(
                host=self.host,
                interface=self.interface,
                dcbx_mode=block.get("dcbx_mode"),
                trust=block.get("trust"),
                pfc_enabled=tuple(p for p, on in zip(order, enabled, strict=False) if on),
                prio2buffer=tuple(block.get("pfc_buffer") or ()),
                buffer_sizes=tuple(block.get("buffer_sizes") or ()),
                buffer_total=block.get("buffer_total"),
                cable_len_m=block.get("cable_len_m"),
                default_priority=block.get("default_priority"),
                dscp2prio=dict(sorted(block.get("dscp2prio", {}).items(), key=_int_key)),
                tcs=tuple(
                    TrafficClass(t["tc"], t["tsa"], t["bw"], t["rate"], tuple(t["prios"]))
                    for t in sorted(block.get("tcs", []), key=lambda t: t["tc"])
                ),
                pfc_known="pfc_enabled" in block,
                parts=tuple(block.get("parts", ())),
            )
        )
        # the prompt named one interface; a second block without a prompt is another one
        self.interface = None


def _int_key(item: tuple[str, int]) -> int:
    return int(item[0])
