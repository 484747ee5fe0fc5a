"""nvidia-bug-report.log(.gz): NVIDIA's support log, split into its sections.

``nvidia-bug-report.sh`` writes one long text: a prologue (script version, ``Date:``,
``uname:``), then blocks that each start with a line of 44 underscores. A block is a file
(``*** /proc/interrupts`` + ``*** ls: ...`` + the file), a command (``/usr/bin/nvidia-smi
--query``, blank line, its output; the nvidia-smi and ibstat blocks hold several commands
one after the other) or a titled dump (``dmesg:``). Each such part is listed with its line
range (the provenance of whatever is parsed out of it) and the registry kind that reads it
(nvidia_smi, dmesg, proc_interrupts, numa, ib_status, ...). ``iter_parts`` hands the parts'
text to the caller, who stores each one as its own artifact; ``parse`` lists them and reads
the facts no other parser owns: kernel and driver versions, kernel command line, the GPUs'
``/proc/driver/nvidia/gpus/*/information`` and the PCIe links of NVIDIA/Mellanox devices
in ``lspci -vvv`` (capability vs status, which shows a link trained below its maximum).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

from artifacts.bundles.parsers.common import (
    HEAD_BYTES,
    BundlePart,
    Limits,
    choose_kind_detected,
    file_name,
    known_kind,
    new_spool,
)
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, find_timestamp, head_text

KIND = "nvidia_bug_report"
VERSION = 1
# Text only this tool prints: with it, detection is sure (artifacts/parsers/detection.py).
# A bug report quotes nvidia-smi and dmesg, so it must outrank their own banners.
BANNERS = (b"Start of NVIDIA bug report log file", b"nvidia-bug-report.sh Version:")

_BANNER = "Start of NVIDIA bug report log file"
_SEPARATOR = re.compile(r"^_{20,}\s*$")
# A command header: an absolute path to a binary, as `which` printed it.
_COMMAND = re.compile(r"^/(?:usr/)?(?:local/)?s?bin/(?P<tool>[\w.+\-]+)(?P<args>(?:\s.*)?)$")
_FILE = re.compile(r"^\*\*\* (?P<path>/\S.*?)(?P<missing> does not exist| is not readable)?\s*$")

# Title -> kinds to try first. A title listed with no kinds is known to have no parser (it
# is not sniffed, so a "Key: 123" dump cannot pass for counters). "dmesg" is forced: the
# section is the kernel log by construction, even when it holds no NVIDIA marker.
_RULES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), kinds)
    for pattern, kinds in (
        (r"nvidia-smi", ("nvidia_smi",)),
        (r"^dmesg$|^journalctl|kernel messages|/var/log/(messages|kern\.log|kernel\.log|dmesg)",
         ("dmesg",)),
        (r"^/proc/interrupts$", ("proc_interrupts",)),
        (r"numactl|numastat|lscpu", ("numa",)),
        (r"ibstat|ibstatus|ibv_devinfo", ("ib_status",)),
        (r"mlxlink", ("mlxlink",)),
        (r"mlxconfig", ("mlxconfig",)),
        (r"ethtool", ("ethtool_stats",)),
        (r"fabricmanager|nv-fabricmanager", ("fabric_manager",)),
        (r"sysctl", ("sysctl",)),
        (r"lspci|dmidecode|modinfo|/proc/|/sys/|/etc/|/var/log/(nvidia|Xorg)|Xorg|xrandr|xset|"
         r"nvidia-settings|vulkan|glx|ldd|gcc|g\+\+|journalctl|coredumpctl|base64|"
         r"nvidia-debugdump|acpidump|systemctl|lsusb", ()),
    )
)  # fmt: skip
_FORCED = {"dmesg": "dmesg"}

_LSPCI_DEVICE = re.compile(
    r"^(?P<bdf>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(?P<desc>.+)$"
)
_LNK = re.compile(
    r"^\s*Lnk(?P<which>Cap|Sta):\s+(?:Port #\d+,\s*)?Speed (?P<speed>[\d.]+)GT/s"
    r"(?:\s*\((?P<note>[^)]*)\))?,\s*Width x(?P<width>\d+)"
)
_NVIDIA = re.compile(r"NVIDIA|\[10de:", re.IGNORECASE)
_MELLANOX = re.compile(r"Mellanox|\[15b3:", re.IGNORECASE)
_DRIVER = re.compile(r"NVRM version:.*?\s(?P<version>\d{3,}\.\d+(?:\.\d+)?)\b")
_SMI_DRIVER = re.compile(r"^\s*Driver Version\s*:\s*(?P<version>\S+)")
# PCIe transfer rate -> generation (GT/s per lane of each generation).
_GEN = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5, "64": 6}


@dataclasses.dataclass(frozen=True)
class BugReportGpu:
    bus: str
    model: str | None
    uuid: str | None
    vbios: str | None


@dataclasses.dataclass(frozen=True)
class PciLink:
    """An NVIDIA/Mellanox device's PCIe link as ``lspci -vvv`` reports it."""

    bdf: str
    vendor: str  # nvidia | mellanox
    description: str
    gen_max: int | None
    width_max: int | None
    gen_current: int | None
    width_current: int | None
    speed_max_gts: float | None
    speed_current_gts: float | None
    status_note: str | None  # lspci's "(downgraded)" / "(ok)"


@dataclasses.dataclass(frozen=True)
class NvidiaBugReportResult(ParseResult):
    kind = KIND
    script_version: str | None = None
    date: str | None = None  # as printed
    captured_at: str | None = None  # ISO 8601 when the date could be read
    host: str | None = None
    uname: str | None = None
    kernel_release: str | None = None
    kernel_version: str | None = None  # /proc/version, whole line
    driver_version: str | None = None
    kernel_cmdline: str | None = None
    gpus: tuple[BugReportGpu, ...] = ()
    pci_links: tuple[PciLink, ...] = ()
    parts: tuple[BundlePart, ...] = ()

    def summary(self) -> dict[str, Any]:
        stored = [p for p in self.parts if p.stored]
        return {
            "host": self.host,
            "driver_version": self.driver_version,
            "kernel": self.kernel_release,
            "sections": len(self.parts),
            "parsed_sections": len(stored),
            "section_kinds": sorted({p.kind for p in stored}),
            "gpus": len(self.gpus),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head[:16384])
    if _BANNER in text or "nvidia-bug-report.sh Version:" in text:
        return True
    lowered = name.lower()
    return "nvidia-bug-report" in lowered and bool(re.search(r"^_{40,}\s*$", text, re.M))


def parse(stream: BinaryIO) -> NvidiaBugReportResult:
    walker = _Walker(Limits(), keep_bodies=False)
    reader = LineReader(stream)
    for line in reader:
        walker.feed(line, reader.line_no)
        walker.pending.clear()
    walker.finish()
    if not walker.recognised:
        raise ParseError(
            "not an nvidia-bug-report log: no 'Start of NVIDIA bug report log file' banner "
            "and no '____' separated '*** /path' sections"
        )
    return walker.result(reader.repair_warnings())


def iter_parts(
    stream: BinaryIO, limits: Limits | None = None, known: Sequence[BundlePart] = ()
) -> Iterator[tuple[BundlePart, BinaryIO | None]]:
    """Each part with its text (None when not stored); the text is closed after its turn.

    ``known``: the parts the parse listed; a section found there keeps the kind chosen then
    instead of being detected again.
    """
    walker = _Walker(limits or Limits(), keep_bodies=True, known=known)
    reader = LineReader(stream)
    for line in reader:
        walker.feed(line, reader.line_no)
        yield from _drain(walker)
    walker.finish()
    yield from _drain(walker)


def _drain(walker: _Walker) -> Iterator[tuple[BundlePart, BinaryIO | None]]:
    while walker.pending:
        part, body = walker.pending.pop(0)
        try:
            if body is not None:
                body.seek(0)
            yield part, body
        finally:
            if body is not None:
                body.close()


class _Part:
    """The part being read: header, line range, first bytes (for kind choice), body."""

    def __init__(self, title: str, line: int, *, command: bool, note: str = "") -> None:
        self.title = title
        self.line_start = line
        self.line_end = line
        self.command = command
        self.note = note
        self.size = 0
        self.head = bytearray()
        self.body: BinaryIO | None = None
        self.blank_run = 0
        self.too_large = False
        self.lines: list[str] = []  # only for the few parts whose facts we read


class _Walker:
    def __init__(
        self, limits: Limits, *, keep_bodies: bool, known: Sequence[BundlePart] = ()
    ) -> None:
        self.limits = limits
        self.keep = keep_bodies
        self.known = known
        self.pending: list[tuple[BundlePart, BinaryIO | None]] = []
        self.parts: list[BundlePart] = []
        self.part: _Part | None = None
        self.await_header = False
        self.prev_blank = True
        self.separators = 0
        self.file_headers = 0
        self.banner = False
        self.dropped = 0
        self.total = 0
        self.facts: dict[str, str] = {}
        self.gpus: dict[str, dict[str, str]] = {}
        self.links: dict[str, dict[str, Any]] = {}
        self.lspci_device: str | None = None
        self.warnings: list[str] = []

    @property
    def recognised(self) -> bool:
        return self.banner or (self.separators >= 3 and self.file_headers >= 1)

    # --- reading ---------------------------------------------------------------------------

    def feed(self, line: str, line_no: int) -> None:
        if _SEPARATOR.match(line):
            self.separators += 1
            self._close()
            self.await_header = True
            return
        blank = not line.strip()
        if self.await_header:
            if blank:
                return
            self.await_header = False
            self._open_block(line, line_no)
        elif self.part is None:
            if blank:
                return
            self._open_block(line, line_no)  # text before the first separator
        elif self.part.command and self.prev_blank and not blank and _COMMAND.match(line.strip()):
            self._close()  # the next command of a multi-command block (nvidia-smi, ibstat)
            self.part = _Part(line.strip(), line_no, command=True)
        else:
            self._body(line, line_no, blank)
        self.prev_blank = blank

    def _open_block(self, line: str, line_no: int) -> None:
        stripped = line.strip()
        self.lspci_device = None
        if _BANNER in stripped:
            self.banner = True
            self.part = _Part("prologue", line_no, command=False)
            self._body(line, line_no, False)
            return
        m = _FILE.match(stripped)
        if m:
            self.file_headers += 1
            missing = (m["missing"] or "").strip()
            self.part = _Part(m["path"], line_no, command=False, note=missing)
            return
        if stripped.startswith("*** ls:") and self.part is not None:
            return
        command = bool(_COMMAND.match(stripped)) or stripped.startswith(("journalctl", "lspci"))
        title = stripped[:-1].strip() if stripped.endswith(":") and len(stripped) < 80 else stripped
        note = ""
        if stripped.startswith(("Skipping", "Error:")):
            note = "skipped by nvidia-bug-report.sh"
        self.part = _Part(title[:300], line_no, command=command, note=note)

    def _body(self, line: str, line_no: int, blank: bool) -> None:
        part = self.part
        assert part is not None
        if line.startswith("*** ls:") and part.size == 0 and not part.command:
            return  # the file's metadata line, not its content
        if blank:
            part.blank_run += 1
            return
        text = ("\n" * part.blank_run if part.size else "") + line + "\n"
        part.blank_run = 0
        data = text.encode("utf-8", errors="replace")
        part.line_end = line_no
        if len(part.head) < HEAD_BYTES:
            part.head += data[: HEAD_BYTES - len(part.head)]
        part.size += len(data)
        self._facts(part.title, line)
        if not self.keep or part.too_large:
            return
        if part.size > self.limits.max_part_bytes:
            part.too_large = True
            if part.body is not None:
                part.body.close()
                part.body = None
            return
        if part.body is None:
            part.body = new_spool()
        part.body.write(data)

    def _close(self) -> None:
        part, self.part = self.part, None
        if part is None:
            return
        if len(self.parts) >= self.limits.max_parts:
            self.dropped += 1
            if part.body is not None:
                part.body.close()
            return
        name = _part_name(part.title)
        kind, detected = "other", ""
        note = part.note
        if part.title.startswith("End of NVIDIA bug report"):
            note = "end of the log"
        elif part.size == 0:
            note = note or "empty"
        elif part.title != "prologue":
            chosen = known_kind(self.known, len(self.parts), part.title, part.size)
            kind, detected = chosen or _kind_for(part.title, name, bytes(part.head))
        stored = kind != "other" and part.size > 0 and not part.too_large
        if part.too_large:
            note = f"larger than {self.limits.max_part_bytes} bytes: not stored on its own"
        elif stored and self.total + part.size > self.limits.max_total_bytes:
            stored, note = False, "bundle byte limit reached: not stored on its own"
        elif kind == "other" and not note:
            note = "no parser for this section (kept in the bundle)"
        if stored:
            self.total += part.size
        record = BundlePart(
            index=len(self.parts),
            name=name,
            title=part.title,
            kind=kind,
            size=part.size,
            stored=stored,
            note=note,
            line_start=part.line_start,
            line_end=part.line_end,
            detected=detected,
        )
        self.parts.append(record)
        body = part.body if stored and self.keep else None
        if part.body is not None and body is None:
            part.body.close()
        self.pending.append((record, body))

    def finish(self) -> None:
        self._close()

    # --- facts -----------------------------------------------------------------------------

    def _facts(self, title: str, line: str) -> None:
        if title == "prologue":
            self._prologue(line)
        elif title.startswith("/proc/driver/nvidia") and title.endswith("/version"):
            m = _DRIVER.search(line)
            if m:
                self.facts.setdefault("driver_version", m["version"])
        elif title == "/proc/version":
            self.facts.setdefault("kernel_version", line.strip())
            m = re.match(r"^Linux version (\S+)", line)
            if m:
                self.facts.setdefault("kernel_release_proc", m.group(1))
        elif title == "/proc/cmdline":
            self.facts.setdefault("kernel_cmdline", line.strip())
        elif title.startswith("/proc/driver/nvidia/gpus/") and title.endswith("/information"):
            self._gpu_information(title, line)
        elif "nvidia-smi" in title:
            m = _SMI_DRIVER.match(line)
            if m:
                self.facts.setdefault("smi_driver_version", m["version"])
        elif "lspci" in title:
            self._lspci(line)

    def _prologue(self, line: str) -> None:
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "nvidia-bug-report.sh Version" and value:
            self.facts.setdefault("script_version", value)
        elif key == "Date" and value:
            self.facts.setdefault("date", value)
        elif key == "uname" and value:
            self.facts.setdefault("uname", value)

    def _gpu_information(self, title: str, line: str) -> None:
        bus = title.split("/")[-2]
        key, _, value = line.partition(":")
        fields = {"Model": "model", "GPU UUID": "uuid", "Video BIOS": "vbios"}
        if key.strip() in fields and value.strip():
            self.gpus.setdefault(bus, {})[fields[key.strip()]] = value.strip()

    def _lspci(self, line: str) -> None:
        m = _LSPCI_DEVICE.match(line)
        if m:
            desc = m["desc"]
            vendor = ""
            if _NVIDIA.search(desc):
                vendor = "nvidia"
            elif _MELLANOX.search(desc):
                vendor = "mellanox"
            bdf = m["bdf"].lower()
            bdf = bdf if bdf.count(":") == 2 else "0000:" + bdf
            self.lspci_device = bdf if vendor else None
            if vendor:
                self.links.setdefault(bdf, {"vendor": vendor, "description": desc.strip()})
            return
        if self.lspci_device is None:
            return
        lnk = _LNK.match(line)
        if lnk:
            which = lnk["which"].lower()
            entry = self.links[self.lspci_device]
            entry.setdefault(f"{which}_speed", lnk["speed"])
            entry.setdefault(f"{which}_width", int(lnk["width"]))
            if which == "sta" and lnk["note"]:
                entry.setdefault("note", lnk["note"])

    # --- result ----------------------------------------------------------------------------

    def result(self, repair: list[str]) -> NvidiaBugReportResult:
        f = self.facts
        host = release = None
        if uname := f.get("uname"):
            words = uname.split()
            if len(words) >= 3 and words[0] == "Linux":
                host, release = words[1], words[2]
        stamp = find_timestamp(f["date"]) if f.get("date") else None
        warnings = list(repair) + self.warnings
        if self.dropped:
            warnings.append(f"{self.dropped} section(s) beyond {self.limits.max_parts} not listed")
        return NvidiaBugReportResult(
            script_version=f.get("script_version"),
            date=f.get("date"),
            captured_at=stamp[0] if stamp else None,
            host=host,
            uname=f.get("uname"),
            kernel_release=release or f.get("kernel_release_proc"),
            kernel_version=f.get("kernel_version"),
            driver_version=f.get("driver_version") or f.get("smi_driver_version"),
            kernel_cmdline=f.get("kernel_cmdline"),
            gpus=tuple(
                BugReportGpu(bus, g.get("model"), g.get("uuid"), g.get("vbios"))
                for bus, g in sorted(self.gpus.items())
            ),
            pci_links=tuple(_link(bdf, e) for bdf, e in sorted(self.links.items())),
            parts=tuple(self.parts),
            warnings=tuple(warnings),
        )


def _link(bdf: str, e: dict[str, Any]) -> PciLink:
    def speed(key: str) -> float | None:
        return float(e[key]) if key in e else None

    return PciLink(
        bdf=bdf,
        vendor=e["vendor"],
        description=e["description"][:300],
        gen_max=_GEN.get(_trim(e.get("cap_speed"))),
        width_max=e.get("cap_width"),
        gen_current=_GEN.get(_trim(e.get("sta_speed"))),
        width_current=e.get("sta_width"),
        speed_max_gts=speed("cap_speed"),
        speed_current_gts=speed("sta_speed"),
        status_note=e.get("note"),
    )


def _trim(speed: str | None) -> str:
    if speed is None:
        return ""
    return speed[:-2] if speed.endswith(".0") else speed


def _part_name(title: str) -> str:
    m = _COMMAND.match(title)
    if m:
        title = m["tool"] + m["args"]
    return file_name(title.lstrip("/"), suffix=".txt")


def _kind_for(title: str, name: str, head: bytes) -> tuple[str, str]:
    """(kind, what detect_kind said or "" when it did not run) for a section."""
    if title in _FORCED:
        return _FORCED[title], ""
    for pattern, kinds in _RULES:
        if pattern.search(title):
            if not kinds:
                return "other", ""
            return choose_kind_detected(name, head, hints=kinds)
    return choose_kind_detected(name, head)
