"""Kernel logs (``dmesg``, ``dmesg -T``, ``journalctl -k``, ``/var/log/kern.log``): the GPU,
NIC and PCIe events a performance engineer looks for, as timeline-ready events.

Kept: NVRM ``Xid`` lines (code, PCI address, process, message), NVSwitch ``SXid`` lines,
GPUs that fell off the bus, PCIe AER errors, mlx5 link up/down, OOM kills; plus the GPU
PCI address -> UUID lines NVRM prints, and the kernel version/hardware name. Everything else
is counted, not kept. Times: ``dmesg -T``'s ``[Sun Feb 23 16:24:18 2025]`` and ISO stamps are
kept; uptime seconds (``[12345.678]``) stay in ``details.uptime_s``; syslog's ``Feb 23
16:24:18 host kernel:`` gives the host but no year, so no time.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, find_timestamp, head_text

KIND = "dmesg"
VERSION = 1

MAX_EVENTS = 20_000

_UPTIME = re.compile(r"^\s*\[\s*(?P<s>\d+\.\d+)\]\s?")
_BRACKET_TIME = re.compile(r"^\s*\[(?P<t>[A-Z][a-z]{2} [^\]]*\d{4})\]\s?")
_SYSLOG = re.compile(
    r"^(?:[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-][\d:]+)?)"
    r" (?P<host>[\w.\-]+) kernel: (?:\[\s*(?P<s>\d+\.\d+)\] )?"
)
_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)\): "
    r"(?P<code>\d+),\s*(?P<rest>.*)$"
)
_SXID = re.compile(
    r"(?P<dev>nvidia-nvswitch\d+): SXid \((?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)\): (?P<code>\d+),"
    r"\s*(?P<rest>.*)$"
)
_PID = re.compile(r"^pid=(?P<pid>\d+|'<unknown>'), name=(?P<name>[^,]*),\s*(?P<msg>.*)$")
_GPU_AT = re.compile(r"NVRM: GPU at PCI:(?P<pci>[0-9a-fA-F:.]+): (?P<uuid>GPU-[0-9a-fA-F\-]+)")
_OFF_BUS = re.compile(r"NVRM: GPU (?:at )?(?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)?.*fallen off the bus")
_AER = re.compile(
    r"(?P<dev>\d{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d).*?(?:AER: (?P<kind>Corrected|Uncorrected|Multiple"
    r"[^:]*) error|PCIe Bus Error: severity=(?P<sev>[\w ]+?)(?:,|$))",
    re.IGNORECASE,
)
_MLX_LINK = re.compile(
    r"mlx5_core (?P<pci>\d{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d) (?P<dev>\S+): Link (?P<state>up|down)",
    re.IGNORECASE,
)
_OOM = re.compile(r"Out of memory: Killed process (?P<pid>\d+) \((?P<name>[^)]*)\)")
_KERNEL = re.compile(r"Linux version (?P<v>\S+)|Tainted: [A-Z ]+\s+(?P<t>\d+\.\d+\.\d+\S*)")
_HARDWARE = re.compile(r"Hardware name: (?P<hw>.+?)\s*$")
_MARKERS = ("NVRM:", "mlx5_core", "nvidia-nvswitch", "AER:", "kernel:", "pcieport", "Xid")


@dataclasses.dataclass(frozen=True)
class KernelEvent:
    kind: str  # xid | sxid | gpu_off_bus | pcie_aer | nic_link | oom_kill
    time: str | None
    host: str | None
    line: int
    text: str
    details: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class GpuIdentity:
    pci: str
    uuid: str


@dataclasses.dataclass(frozen=True)
class DmesgResult(ParseResult):
    kind: ClassVar[str] = "dmesg"

    hosts: tuple[str, ...] = ()
    kernel_version: str | None = None
    hardware: str | None = None
    gpus: tuple[GpuIdentity, ...] = ()
    events: tuple[KernelEvent, ...] = ()
    stats: dict[str, int] = dataclasses.field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        kinds: dict[str, int] = {}
        for e in self.events:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        return {
            "events": kinds,
            "xid_codes": sorted({e.details["xid"] for e in self.events if e.kind == "xid"}),
            "kernel_version": self.kernel_version,
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if "NVRM: Xid" in text or "SXid (PCI:" in text:
        return True
    kernel_lines = marked = 0
    for line in text.splitlines()[:3000]:
        if _UPTIME.match(line) or _BRACKET_TIME.match(line) or _SYSLOG.match(line):
            kernel_lines += 1
            marked += any(m in line for m in _MARKERS)
    return kernel_lines >= 5 and marked >= 1 and kernel_lines >= 0.5 * len(text.splitlines()[:3000])


def parse(stream: BinaryIO) -> DmesgResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line, reader.line_no)
    if not state.kernel_lines:
        raise ParseError(
            "no kernel log lines found (dmesg '[uptime]' or '[date]' prefixes, or syslog "
            "'host kernel:' lines)"
        )
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.kernel_lines = 0
        self.lines = 0
        self.events: list[KernelEvent] = []
        self.dropped = 0
        self.hosts: dict[str, None] = {}
        self.gpus: dict[str, str] = {}
        self.kernel_version: str | None = None
        self.hardware: str | None = None

    def feed(self, raw: str, line_no: int) -> None:
        self.lines += 1
        time, host, uptime, body = _split_prefix(raw)
        if body is None:
            return
        self.kernel_lines += 1
        if host:
            self.hosts.setdefault(host, None)
        if self.kernel_version is None and (m := _KERNEL.search(body)):
            self.kernel_version = m["v"] or m["t"]
        if self.hardware is None and (m := _HARDWARE.search(body)):
            self.hardware = m["hw"]
        if m := _GPU_AT.search(body):
            self.gpus.setdefault(_pci(m["pci"]), m["uuid"])
            return
        event = _event(body)
        if event is None:
            return
        kind, details = event
        if uptime is not None:
            details["uptime_s"] = uptime
        if kind == "xid" and details.get("device") in self.gpus:
            details["uuid"] = self.gpus[details["device"]]
        if len(self.events) >= MAX_EVENTS:
            self.dropped += 1
            return
        self.events.append(KernelEvent(kind, time, host, line_no, body.strip()[:2000], details))

    def result(self, warnings: list[str]) -> DmesgResult:
        if self.dropped:
            warnings.append(f"{self.dropped} event(s) beyond {MAX_EVENTS} were not kept")
        # a UUID printed after the Xid line still names the GPU
        events = tuple(
            dataclasses.replace(e, details={**e.details, "uuid": self.gpus[e.details["device"]]})
            if e.kind == "xid" and "uuid" not in e.details and e.details["device"] in self.gpus
            else e
            for e in self.events
        )
        return DmesgResult(
            hosts=tuple(self.hosts),
            kernel_version=self.kernel_version,
            hardware=self.hardware,
            gpus=tuple(GpuIdentity(pci, uuid) for pci, uuid in self.gpus.items()),
            events=events,
            stats={"lines": self.lines, "kernel_lines": self.kernel_lines},
            warnings=tuple(warnings),
        )


def _split_prefix(raw: str) -> tuple[str | None, str | None, float | None, str | None]:
    """(ISO time, host, uptime seconds, message) of a kernel log line; message None if not one."""
    if m := _BRACKET_TIME.match(raw):
        stamp = find_timestamp(m["t"])
        return (stamp[0] if stamp else None), None, None, raw[m.end() :]
    if m := _UPTIME.match(raw):
        return None, None, float(m["s"]), raw[m.end() :]
    if m := _SYSLOG.match(raw):
        stamp = find_timestamp(raw[: m.start("host")])
        uptime = float(m["s"]) if m["s"] else None
        return (stamp[0] if stamp else None), m["host"], uptime, raw[m.end() :]
    return None, None, None, None


def _event(body: str) -> tuple[str, dict[str, Any]] | None:
    if m := _XID.search(body):
        details: dict[str, Any] = {"xid": int(m["code"]), "device": _pci(m["pci"])}
        rest = m["rest"]
        if p := _PID.match(rest):
            if p["pid"].isdigit():
                details["pid"] = int(p["pid"])
            details["process"] = p["name"]
            rest = p["msg"]
        details["message"] = rest.strip()[:500]
        return "xid", details
    if m := _SXID.search(body):
        return "sxid", {
            "sxid": int(m["code"]),
            "device": m["dev"],
            "pci": _pci(m["pci"]),
            "message": m["rest"].strip()[:500],
        }
    if m := _OFF_BUS.search(body):
        return "gpu_off_bus", {"device": _pci(m["pci"]) if m["pci"] else None}
    if m := _MLX_LINK.search(body):
        return "nic_link", {"device": m["dev"].rstrip(":"), "pci": m["pci"], "state": m["state"]}
    if m := _AER.search(body):
        severity = (m["kind"] or m["sev"] or "").strip()
        return "pcie_aer", {"device": m["dev"], "severity": severity}
    if m := _OOM.search(body):
        return "oom_kill", {"pid": int(m["pid"]), "process": m["name"]}
    return None


def _pci(text: str) -> str:
    """NVRM prints 'PCI:0000:9b:00' (no function): keep it as printed, lower-case."""
    return text.lower().rstrip(":")
