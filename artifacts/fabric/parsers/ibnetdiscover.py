"""``ibnetdiscover``: the InfiniBand fabric as the subnet walk found it (infiniband-diags).

The default (topology file) output gives one block per node::

    vendid=0x2c9
    devid=0xd2f0
    sysimgguid=0xb8599f0300c2f06a
    switchguid=0xff08c43213b3f30(ff08c43213b3f30)
    Switch  41 "S-0ff08c43213b3f30"   # "MF0;sw-a:MQM8700/U1" enhanced port 0 lid 387 lmc 0
    [1]     "H-0ff08c4321664e96"[1](ff08c4321664e96)   # "node01 mlx5_0" lid 1181 4xHDR

    caguid=0xff08c4321664e96
    Ca      1 "H-0ff08c4321664e96"    # "node01 mlx5_0"
    [1](ff08c4321664e96)  "S-0ff08c43213b3f30"[1]   # lid 1181 lmc 0 "MF0;sw-a" lid 387 4xHDR

Each ``[port]`` line is one end of a cable: the local port (with its port GUID on a CA), the
peer's node id and port, the peer's description and LID, and the active width and speed
(``4xHDR``; older diags print ``4xQDR``, ``4xFDR10``). The ``-p`` (ports) listing is read too::

    SW     2   17 0x0002c90000000001 4x SDR - CA    44    1 0x0002c9030001d737 ( 'sw' - 'node' )

Every cable is printed from both ends; ``links`` lists it once. A fragment (a few node blocks,
port lines without their node header, the ports listing alone) gives what it holds: ``parts``
says which shapes were seen. Link attributes after the rate (``s=4 w=2 v=4 e=4``) are kept as
printed.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any, BinaryIO, ClassVar

from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text

KIND = "ibnetdiscover"
VERSION = 1

MAX_PORTS = 200_000  # one end of a cable each; a 10k-node fabric has ~60k

_LANE_GBPS = {
    "SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0, "EDR": 25.0,
    "HDR": 50.0, "NDR": 100.0, "XDR": 200.0,
}  # fmt: skip
_GUID_LINE = re.compile(
    r"^\s*(?P<key>vendid|devid|sysimgguid|switchguid|caguid|routerguid)\s*=\s*"
    r"(?P<value>0x[0-9a-fA-F]+)"
)
_NODE = re.compile(
    r'^\s*(?P<type>Switch|Ca|Rt)\s+(?P<ports>\d+)\s+"(?P<id>[^"]+)"\s*'
    r'(?:#\s*"(?P<desc>[^"]*)"(?P<rest>.*))?$'
)
_PORT = re.compile(
    r"^\s*\[(?P<port>\d+)\](?:\((?P<port_guid>[0-9a-fA-F]+)\))?\s+"
    r'"(?P<peer>[^"]+)"\[(?P<peer_port>\d+)\](?:\((?P<peer_guid>[0-9a-fA-F]+)\))?\s*'
    r"(?:#\s*(?P<comment>.*))?$"
)
_RATE = re.compile(r"\b(?P<width>\d+)x\s?(?P<speed>SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR)\b")
_LID = re.compile(r"\blid\s+(?P<lid>\d+)")
_LMC = re.compile(r"\blmc\s+(?P<lmc>\d+)")
_ATTRS = re.compile(r"\b(?P<key>[swve])=(?P<value>\d+)")
# -p: "SW  2  17 0x0002c90000000001 4x SDR - CA  44  1 0x0002c9030001d737 ( 'a' - 'b' )"
_PORTS_ROW = re.compile(
    r"^\s*(?P<type>SW|CA|RT)\s+(?P<lid>\d+)\s+(?P<port>\d+)\s+(?P<guid>0x[0-9a-fA-F]+)\s+"
    r"(?P<width>\d+)x\s+(?P<speed>\w+)"
    r"(?:\s+-\s+(?P<ptype>SW|CA|RT)\s+(?P<plid>\d+)\s+(?P<pport>\d+)\s+(?P<pguid>0x[0-9a-fA-F]+)"
    r"(?:\s+\(\s*'(?P<desc>[^']*)'\s+-\s+'(?P<pdesc>[^']*)'\s*\))?)?"
)
_TYPES = {
    "Switch": "switch",
    "Ca": "ca",
    "Rt": "router",
    "SW": "switch",
    "CA": "ca",
    "RT": "router",
}


@dataclasses.dataclass(frozen=True)
class IbNode:
    node_type: str  # switch | ca | router
    guid: str  # node GUID, 0x + 16 hex digits
    node_id: str | None  # as printed: "S-0ff08c43213b3f30"
    description: str | None  # NodeDescription: "MF0;sw-a:MQM8700/U1", "node01 mlx5_0"
    ports: int | None  # number of ports
    lid: int | None  # switch: port 0's LID (a CA's LIDs are per port)
    lmc: int | None
    vendor_id: str | None
    device_id: str | None
    system_image_guid: str | None
    enhanced_port0: bool | None  # switches: "enhanced port 0" / "base port 0"


@dataclasses.dataclass(frozen=True)
class IbPort:
    """One end of a cable as seen from ``guid``'s ``port``."""

    node_type: str | None
    guid: str | None  # None: a port line pasted without its node's header
    node: str | None  # description of the node this end belongs to
    port: int
    port_guid: str | None  # CA ports print their own GUID
    lid: int | None  # this port's LID (CA ports; a switch port has its node's)
    peer_type: str | None
    peer_guid: str | None
    peer: str | None  # peer's description
    peer_port: int | None
    peer_lid: int | None
    width: int | None  # lanes: 4x -> 4
    speed: str | None  # HDR, NDR, ...
    rate_gbps: float | None  # width x lane rate
    attributes: dict[str, int]  # s=, w=, v=, e= as printed


@dataclasses.dataclass(frozen=True)
class IbLink:
    """One cable, once: ``a`` is the end met first in the file."""

    a_guid: str | None
    a: str | None
    a_port: int
    b_guid: str | None
    b: str | None
    b_port: int | None
    width: int | None
    speed: str | None
    rate_gbps: float | None


@dataclasses.dataclass(frozen=True)
class IbnetdiscoverResult(ParseResult):
    kind: ClassVar[str] = "ibnetdiscover"

    nodes: tuple[IbNode, ...] = ()
    ports: tuple[IbPort, ...] = ()
    links: tuple[IbLink, ...] = ()
    parts: tuple[str, ...] = ()  # "nodes" (node headers), "ports" (port lines), "ports_list" (-p)

    def summary(self) -> dict[str, Any]:
        rates = Counter(f"{link.width}x{link.speed}" for link in self.links if link.speed)
        common = rates.most_common(1)[0][0] if rates else None
        return {
            "switches": sum(1 for n in self.nodes if n.node_type == "switch"),
            "cas": sum(1 for n in self.nodes if n.node_type == "ca"),
            "routers": sum(1 for n in self.nodes if n.node_type == "router"),
            "links": len(self.links),
            "rates": dict(rates),
            # cables below the fabric's usual width x speed: a degraded cable or port
            "links_below_common_rate": len(degraded_links(self.links)),
            "common_rate": common,
            "warnings": len(self.warnings),
        }


def degraded_links(links: tuple[IbLink, ...]) -> list[IbLink]:
    """Links whose rate is below the fabric's most common one (a cable trained down)."""
    rates = Counter(link.rate_gbps for link in links if link.rate_gbps)
    if not rates:
        return []
    usual = rates.most_common(1)[0][0]
    return [link for link in links if link.rate_gbps and link.rate_gbps < usual]


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    nodes = len(re.findall(r'^\s*(?:Switch|Ca|Rt)\s+\d+\s+"[SHR]-[0-9a-fA-F]+"', text, re.M))
    ports = len(
        re.findall(r'^\s*\[\d+\](?:\([0-9a-fA-F]+\))?\s+"[SHR]-[0-9a-fA-F]+"\[\d+\]', text, re.M)
    )
    listed = len(re.findall(r"^\s*(?:SW|CA)\s+\d+\s+\d+\s+0x[0-9a-fA-F]{16}\s+\d+x\s", text, re.M))
    return (nodes >= 1 and ports >= 1) or ports >= 3 or listed >= 2


def parse(stream: BinaryIO) -> IbnetdiscoverResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    if not state.nodes and not state.ports:
        raise ParseError("no ibnetdiscover output found (node blocks, [port] lines or -p rows)")
    warnings = reader.repair_warnings()
    if state.dropped:
        warnings.append(f"{state.dropped} port line(s) beyond {MAX_PORTS} were not kept")
    nodes = tuple(state.nodes.values())
    ports = tuple(state.ports)
    return IbnetdiscoverResult(
        nodes=nodes,
        ports=ports,
        links=_links(ports),
        parts=tuple(state.parts),
        warnings=tuple(warnings),
    )


class _State:
    def __init__(self) -> None:
        self.header: dict[str, str] = {}  # vendid=... lines before the node line
        self.nodes: dict[str, IbNode] = {}
        self.node: IbNode | None = None
        self.ports: list[IbPort] = []
        self.parts: dict[str, None] = {}
        self.dropped = 0

    def feed(self, line: str) -> None:
        if m := _GUID_LINE.match(line):
            self.header[m["key"]] = m["value"].lower()
            return
        if m := _NODE.match(line):
            self._node(m)
            return
        if m := _PORT.match(line):
            self._port(m)
            return
        if m := _PORTS_ROW.match(line):
            self._listed(m)

    def _node(self, m: re.Match[str]) -> None:
        rest = m["rest"] or ""
        guid_key = {"Switch": "switchguid", "Ca": "caguid", "Rt": "routerguid"}[m["type"]]
        guid = _guid(self.header.get(guid_key) or _id_guid(m["id"]))
        lid = _LID.search(rest)
        lmc = _LMC.search(rest)
        self.node = IbNode(
            node_type=_TYPES[m["type"]],
            guid=guid,
            node_id=m["id"],
            description=m["desc"],
            ports=int(m["ports"]),
            lid=int(lid["lid"]) if lid else None,
            lmc=int(lmc["lmc"]) if lmc else None,
            vendor_id=self.header.get("vendid"),
            device_id=self.header.get("devid"),
            system_image_guid=_guid(self.header["sysimgguid"])
            if "sysimgguid" in self.header
            else None,
            enhanced_port0=("enhanced port 0" in rest) if "port 0" in rest else None,
        )
        self.nodes.setdefault(guid, self.node)
        self.header = {}
        self.parts["nodes"] = None

    def _port(self, m: re.Match[str]) -> None:
        if len(self.ports) >= MAX_PORTS:
            self.dropped += 1
            return
        comment = m["comment"] or ""
        # a CA's line: '# lid 1181 lmc 0 "peer desc" lid 556 4xHDR'; a switch's:
        # '# "peer desc" lid 226 4xHDR' (its own LID is the node's)
        own_lid: int | None = None
        peer_desc = re.search(r'"(?P<d>[^"]*)"', comment)
        before = comment[: peer_desc.start()] if peer_desc else comment
        after = comment[peer_desc.end() :] if peer_desc else comment
        if lid := _LID.search(before):
            own_lid = int(lid["lid"])
        peer_lid = _LID.search(after)
        rate = _RATE.search(after)
        node = self.node
        width = int(rate["width"]) if rate else None
        speed = rate["speed"] if rate else None
        self.ports.append(
            IbPort(
                node_type=node.node_type if node else None,
                guid=node.guid if node else None,
                node=node.description if node else None,
                port=int(m["port"]),
                port_guid=_guid(m["port_guid"]) if m["port_guid"] else None,
                lid=own_lid if own_lid is not None else (node.lid if node else None),
                peer_type=_id_type(m["peer"]),
                peer_guid=_guid(_id_guid(m["peer"])),
                peer=peer_desc["d"] if peer_desc else None,
                peer_port=int(m["peer_port"]),
                peer_lid=int(peer_lid["lid"]) if peer_lid else None,
                width=width,
                speed=speed,
                rate_gbps=_rate(width, speed),
                attributes={a["key"]: int(a["value"]) for a in _ATTRS.finditer(after)},
            )
        )
        self.parts["ports"] = None

    def _listed(self, m: re.Match[str]) -> None:
        """A ``-p`` row: both ends on one line (the peer part is absent for a port down)."""
        if len(self.ports) >= MAX_PORTS:
            self.dropped += 1
            return
        width = int(m["width"])
        speed = m["speed"].upper()
        self.ports.append(
            IbPort(
                node_type=_TYPES[m["type"]],
                guid=_guid(m["guid"]),
                node=m["desc"],
                port=int(m["port"]),
                port_guid=None,
                lid=int(m["lid"]),
                peer_type=_TYPES[m["ptype"]] if m["ptype"] else None,
                peer_guid=_guid(m["pguid"]) if m["pguid"] else None,
                peer=m["pdesc"],
                peer_port=int(m["pport"]) if m["pport"] else None,
                peer_lid=int(m["plid"]) if m["plid"] else None,
                width=width,
                speed=speed if speed in _LANE_GBPS else None,
                rate_gbps=_rate(width, speed),
                attributes={},
            )
        )
        self.parts["ports_list"] = None


def _links(ports: tuple[IbPort, ...]) -> tuple[IbLink, ...]:
    seen: set[tuple[tuple[str, int], tuple[str, int]]] = set()
    links = []
    for index, p in enumerate(ports):
        # an end whose node is unknown (a fragment) cannot be matched: it stays its own link
        here = (p.guid or f"?{index}", p.port)
        there = (p.peer_guid or f"?{index}", p.peer_port or 0)
        key = (here, there) if here <= there else (there, here)
        if key in seen:
            continue
        seen.add(key)
        links.append(
            IbLink(
                a_guid=p.guid,
                a=p.node,
                a_port=p.port,
                b_guid=p.peer_guid,
                b=p.peer,
                b_port=p.peer_port,
                width=p.width,
                speed=p.speed,
                rate_gbps=p.rate_gbps,
            )
        )
    return tuple(links)


def _guid(text: str) -> str:
    """'0xff08c43213b3f30' / 'ff08c43213b3f30' -> '0x0ff08c43213b3f30' (16 digits)."""
    digits = text.lower().removeprefix("0x")
    return "0x" + digits.rjust(16, "0")


def _id_guid(node_id: str) -> str:
    """'S-0ff08c43213b3f30' -> '0ff08c43213b3f30' (the default node ids carry the GUID)."""
    return node_id.split("-", 1)[1] if re.match(r"^[SHR]-[0-9a-fA-F]+$", node_id) else node_id


def _id_type(node_id: str | None) -> str | None:
    if not node_id:
        return None
    return {"S": "switch", "H": "ca", "R": "router"}.get(node_id[:1])


def _rate(width: int | None, speed: str | None) -> float | None:
    if width is None or speed is None or speed not in _LANE_GBPS:
        return None
    return width * _LANE_GBPS[speed]
