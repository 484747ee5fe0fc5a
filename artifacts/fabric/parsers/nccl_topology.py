"""NCCL topology XML (``NCCL_TOPO_DUMP_FILE`` / ``NCCL_TOPO_FILE``): CPUs, PCI tree, GPUs,
NICs and NVLinks as NCCL saw them.

The file is NCCL's own dump::

    <system version="1">
      <cpu numaid="0" affinity="..." arch="x86_64" vendor="GenuineIntel" ...>
        <pci busid="0000:17:00.0" class="0x030200" ... link_speed="16.0 GT/s PCIe" link_width="16">
          <gpu dev="0" sm="80" rank="0" gdr="1"><nvlink target="0000:65:00.0" count="12" .../></gpu>
        </pci>
        <pci ...><nic><net name="mlx5_0" dev="0" speed="100000" port="1" gdr="0" .../></nic></pci>

Parsed incrementally with entity declarations refused (see textutil.iter_xml).

A pasted part of the dump (a few ``<pci>``/``<gpu>``/``<net>`` elements without ``<system>``,
after a line of prose, cut before its end) is read inside a ``<system>`` root of our own:
``parts`` says ``fragment`` then, and which elements were seen (``cpus``, ``pci``, ``gpus``,
``nets``, ``nvlinks``).
"""

from __future__ import annotations

import dataclasses
import io
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import head_text, iter_xml, peek

KIND = "nccl_topology"
VERSION = 1

MAX_BYTES = 64 * 1024 * 1024  # real dumps are a few KiB; anything this big is not one
MAX_ITEMS = 100_000

# an element of the dump on a line of its own: a fragment pasted without <system>
_ELEMENT = re.compile(
    r"^\s*<(?:cpu\s+numaid|pci\s+busid|gpu\s+dev|net\s+name|nvlink\s+target)=?", re.M
)
_ROOT = re.compile(r"^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*)*<system[\s>/]", re.DOTALL)


@dataclasses.dataclass(frozen=True)
class TopoCpu:
    numa_id: int | None
    affinity: str | None
    arch: str | None
    vendor: str | None
    family_id: int | None
    model_id: int | None
    host_hash: str | None


@dataclasses.dataclass(frozen=True)
class TopoPci:
    """A PCI node: a switch/bridge, or the endpoint a GPU or NIC sits on."""

    busid: str
    kind: str  # "gpu" | "nic" | "bridge" | "other"
    class_code: str | None
    vendor: str | None
    device: str | None
    subsystem_vendor: str | None
    subsystem_device: str | None
    link_speed: str | None
    link_width: int | None
    numa_id: int | None
    parent_busid: str | None


@dataclasses.dataclass(frozen=True)
class TopoGpu:
    busid: str | None
    dev: int | None
    rank: int | None
    sm: int | None
    gdr: bool | None
    numa_id: int | None
    device: str | None  # PCI device id, e.g. "0x20b5" (A100 PCIe 80GB)
    link_speed: str | None
    link_width: int | None


@dataclasses.dataclass(frozen=True)
class TopoNet:
    name: str | None
    dev: int | None
    busid: str | None
    numa_id: int | None
    speed_mbps: int | None
    port: int | None
    guid: str | None
    latency: float | None
    maxconn: int | None
    gdr: bool | None
    coll: bool | None


@dataclasses.dataclass(frozen=True)
class TopoNvLink:
    gpu_busid: str | None
    gpu_dev: int | None
    target: str | None
    target_kind: str  # "gpu" | "nvswitch" | "cpu" | "other"
    count: int | None
    target_class: str | None


@dataclasses.dataclass(frozen=True)
class NcclTopologyResult(ParseResult):
    kind: ClassVar[str] = "nccl_topology"

    version: str | None = None
    host_hash: str | None = None
    cpus: tuple[TopoCpu, ...] = ()
    pci: tuple[TopoPci, ...] = ()
    gpus: tuple[TopoGpu, ...] = ()
    nets: tuple[TopoNet, ...] = ()
    nvlinks: tuple[TopoNvLink, ...] = ()
    parts: tuple[str, ...] = ()  # "fragment" (no <system> root) and the elements seen

    def summary(self) -> dict[str, Any]:
        counts = [link.count for link in self.nvlinks if link.count is not None]
        return {
            "gpus": len(self.gpus),
            "nets": len(self.nets),
            "nvlinks": len(self.nvlinks),
            "nvlink_count_min": min(counts, default=None),
            "nvlink_count_max": max(counts, default=None),
            "nvlink_asymmetric": bool(nvlink_asymmetries(self.nvlinks)),
            "warnings": len(self.warnings),
        }


def nvlink_asymmetries(links: tuple[TopoNvLink, ...]) -> list[tuple[str, str, int, int]]:
    """GPU pairs whose NVLink counts differ by direction: (a, b, count a->b, count b->a)."""
    counts = {
        (link.gpu_busid, link.target): link.count
        for link in links
        if link.target_kind == "gpu" and link.gpu_busid and link.target and link.count is not None
    }
    out = []
    for (a, b), forward in counts.items():
        backward = counts.get((b, a))
        if backward is not None and a < b and backward != forward:
            out.append((a, b, forward, backward))
    return out


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head).lstrip("\ufeff")
    return bool(_ROOT.match(text)) or len({m.group() for m in _ELEMENT.finditer(text)}) >= 2


def parse(stream: BinaryIO) -> NcclTopologyResult:
    head, stream = peek(stream, 64 * 1024)
    text = head_text(head).lstrip("\ufeff")
    fragment = not _ROOT.match(text) and _ELEMENT.search(text) is not None
    if fragment:
        stream = _Rooted(stream, _ELEMENT.search(text).start())  # type: ignore[union-attr]
    collector = _Collector()
    warnings: list[str] = []
    try:
        for event, element, _depth in iter_xml(stream, max_bytes=MAX_BYTES):
            if event == "start":
                collector.start(element.tag, element.attrib)
            else:
                collector.end(element.tag)
                element.clear()  # attributes were read at "start"; keep memory flat
    except ParseError as exc:
        if not collector.root_seen or not (collector.gpus or collector.nets or collector.cpus):
            raise ParseError(f"not a readable NCCL topology: {exc.message}") from exc
        warnings.append(f"the XML ends early or is malformed ({exc.message}); kept what was read")
    if not collector.root_seen:
        raise ParseError("no <system> element: not an NCCL topology dump")
    if collector.dropped:
        warnings.append(f"{collector.dropped} element(s) beyond {MAX_ITEMS} were not kept")
    if fragment:
        warnings.append(
            "a fragment of a topology dump (no <system> element): read as far as it goes"
        )
    return collector.result(warnings, fragment=fragment)


class _Rooted(io.RawIOBase):
    """The fragment from its first element, inside ``<system>`` ... ``</system>``: the XML
    reader then sees one document (an unclosed fragment ends early, with a warning)."""

    def __init__(self, stream: BinaryIO, skip: int) -> None:
        self._parts: list[Any] = [b"<system>", stream, b"</system>"]
        self._skip = skip

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._parts:
            part = self._parts[0]
            if isinstance(part, bytes):
                chunk, self._parts[0] = part[: len(buffer)], part[len(buffer) :]
                if not self._parts[0]:
                    self._parts.pop(0)
            else:
                if self._skip:
                    part.read(self._skip)  # prose before the first element
                    self._skip = 0
                chunk = part.read(len(buffer))
                if not chunk:
                    self._parts.pop(0)
                    continue
            buffer[: len(chunk)] = chunk
            return len(chunk)
        return 0


class _Collector:
    def __init__(self) -> None:
        self.root_seen = False
        self.version: str | None = None
        self.cpus: list[TopoCpu] = []
        self.pci: list[dict[str, Any]] = []
        self.gpus: list[TopoGpu] = []
        self.nets: list[TopoNet] = []
        self.nvlinks: list[TopoNvLink] = []
        self.dropped = 0
        # Open-element context: tags, the PCI nodes enclosing us, the CPU (NUMA) we are in.
        self.stack: list[str] = []
        self.pci_stack: list[dict[str, Any]] = []
        self.numa: list[int | None] = []
        self.gpu: TopoGpu | None = None

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self.stack.append(tag)
        if tag == "system" and len(self.stack) == 1:
            self.root_seen = True
            self.version = attrs.get("version")
        elif tag == "cpu":
            self._cpu(attrs)
        elif tag == "pci":
            self._pci(attrs)
        elif tag == "gpu":
            self._gpu(attrs)
        elif tag == "net":
            self._net(attrs)
        elif tag == "nic" and self.pci_stack:
            self.pci_stack[-1]["kind"] = "nic"
        elif tag == "nvlink":
            self._nvlink(attrs)

    def end(self, tag: str) -> None:
        if self.stack:
            self.stack.pop()
        if tag == "pci" and self.pci_stack:
            self.pci_stack.pop()
        elif tag == "cpu" and self.numa:
            self.numa.pop()
        elif tag == "gpu":
            self.gpu = None

    def _room(self) -> bool:
        total = len(self.cpus) + len(self.pci) + len(self.gpus) + len(self.nets) + len(self.nvlinks)
        if total >= MAX_ITEMS:
            self.dropped += 1
            return False
        return True

    def _numa(self) -> int | None:
        return self.numa[-1] if self.numa else None

    def _cpu(self, attrs: dict[str, str]) -> None:
        cpu = TopoCpu(
            numa_id=_int(attrs.get("numaid")),
            affinity=attrs.get("affinity"),
            arch=attrs.get("arch"),
            vendor=attrs.get("vendor"),
            family_id=_int(attrs.get("familyid")),
            model_id=_int(attrs.get("modelid")),
            host_hash=attrs.get("host_hash"),
        )
        self.numa.append(cpu.numa_id)
        if self._room():
            self.cpus.append(cpu)

    def _pci(self, attrs: dict[str, str]) -> None:
        class_code = attrs.get("class")
        node = {
            "busid": attrs.get("busid", ""),
            "kind": _pci_kind(class_code),
            "class_code": class_code,
            "vendor": attrs.get("vendor"),
            "device": attrs.get("device"),
            "subsystem_vendor": attrs.get("subsystem_vendor"),
            "subsystem_device": attrs.get("subsystem_device"),
            "link_speed": attrs.get("link_speed"),
            "link_width": _int(attrs.get("link_width")),
            "numa_id": self._numa(),
            "parent_busid": self.pci_stack[-1]["busid"] if self.pci_stack else None,
        }
        self.pci_stack.append(node)
        if self._room():
            self.pci.append(node)

    def _gpu(self, attrs: dict[str, str]) -> None:
        pci = self.pci_stack[-1] if self.pci_stack else {}
        if pci:
            pci["kind"] = "gpu"
        self.gpu = TopoGpu(
            busid=pci.get("busid"),
            dev=_int(attrs.get("dev")),
            rank=_int(attrs.get("rank")),
            sm=_int(attrs.get("sm")),
            gdr=_flag(attrs.get("gdr")),
            numa_id=self._numa(),
            device=pci.get("device"),
            link_speed=pci.get("link_speed"),
            link_width=pci.get("link_width"),
        )
        if self._room():
            self.gpus.append(self.gpu)

    def _net(self, attrs: dict[str, str]) -> None:
        pci = self.pci_stack[-1] if self.pci_stack else {}
        net = TopoNet(
            name=attrs.get("name"),
            dev=_int(attrs.get("dev")),
            busid=pci.get("busid"),
            numa_id=self._numa(),
            speed_mbps=_int(attrs.get("speed")),
            port=_int(attrs.get("port")),
            guid=attrs.get("guid"),
            latency=_float(attrs.get("latency")),
            maxconn=_int(attrs.get("maxconn")),
            gdr=_flag(attrs.get("gdr")),
            coll=_flag(attrs.get("coll")),
        )
        if self._room():
            self.nets.append(net)

    def _nvlink(self, attrs: dict[str, str]) -> None:
        target_class = attrs.get("tclass")
        link = TopoNvLink(
            gpu_busid=self.gpu.busid if self.gpu else None,
            gpu_dev=self.gpu.dev if self.gpu else None,
            target=attrs.get("target"),
            target_kind=_nvlink_target_kind(target_class),
            count=_int(attrs.get("count")),
            target_class=target_class,
        )
        if self._room():
            self.nvlinks.append(link)

    def result(self, warnings: list[str], *, fragment: bool = False) -> NcclTopologyResult:
        hashes = {c.host_hash for c in self.cpus if c.host_hash}
        if len(hashes) > 1:
            warnings.append(f"CPUs carry {len(hashes)} different host_hash values")
        if self.gpus and not self.nvlinks and len(self.gpus) > 1:
            warnings.append("several GPUs but no NVLink elements")
        return NcclTopologyResult(
            version=self.version,
            host_hash=min(hashes) if len(hashes) == 1 else None,
            cpus=tuple(self.cpus),
            pci=tuple(TopoPci(**node) for node in self.pci),
            gpus=tuple(self.gpus),
            nets=tuple(self.nets),
            nvlinks=tuple(self.nvlinks),
            parts=(("fragment",) if fragment else ())
            + tuple(
                name
                for name, seen in (
                    ("cpus", self.cpus),
                    ("pci", self.pci),
                    ("gpus", self.gpus),
                    ("nets", self.nets),
                    ("nvlinks", self.nvlinks),
                )
                if seen
            ),
            warnings=tuple(warnings),
        )


def _pci_kind(class_code: str | None) -> str:
    if not class_code:
        return "other"
    code = class_code.lower()
    if code.startswith("0x03"):
        return "gpu"
    if code.startswith(("0x02", "0x0207")):
        return "nic"
    if code.startswith("0x06"):
        return "bridge"
    return "other"


def _nvlink_target_kind(target_class: str | None) -> str:
    code = (target_class or "").lower()
    if code.startswith("0x03"):
        return "gpu"
    if code.startswith("0x0680"):
        return "nvswitch"  # NVSwitch presents itself as a "bridge, other" device
    if code.startswith("0x06"):
        return "cpu"  # NVLink to a CPU (POWER9, Grace) shows as a host bridge
    return "other"


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text, 0) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return None


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _flag(text: str | None) -> bool | None:
    value = _int(text)
    return None if value is None else value != 0
