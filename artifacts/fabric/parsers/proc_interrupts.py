"""``/proc/interrupts``: interrupt counts per CPU, so IRQ affinity can be checked.

Handles the full file (a ``CPU0 CPU1 ...`` header) and ``| grep mlx`` excerpts without one
(the CPU count is then the number of count columns of the first row), shell prompts, the
architecture rows (``NMI``, ``LOC``, ``ERR`` with a single value...). Each IRQ keeps its
total, the CPUs that served it and the busiest CPU's share; NIC and GPU IRQs (mlx5, nvidia,
bnxt, ice, efa...) are grouped by PCI function, which says whether a NIC's completion
queues are spread over CPUs or pile onto one.

Counter rows: ``device`` = ``<irq>:<action>`` (``99:mlx5_comp0@pci:0000:01:00.0``),
``counter`` = ``total`` and, for NIC/GPU IRQs, ``cpu<N>``: two readings give per-CPU
interrupt rates.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import CounterSample, SampleBuffer, prompt
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text

KIND = "proc_interrupts"
VERSION = 1

MAX_IRQS = 20_000
_HEADER = re.compile(r"^\s*(?:CPU\d+\s+)+CPU\d+\s*$|^\s*CPU0\s*$")
_ROW = re.compile(r"^\s*(?P<irq>\d+|[A-Z]{3}|[A-Za-z]\w*):\s+(?P<rest>.*)$")
_PCI = re.compile(r"(?:PCI-MSIX?-|@pci:)(?P<pci>[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d)")
_OLD_CHIP = re.compile(r"[A-Za-z]-(?:edge|level|fasteoi)$")
_DEVICE_DRIVERS = re.compile(r"mlx[45]|nvidia|bnxt|ionic|irdma|efa|ice|i40e|qede|hfi1|nvme")


@dataclasses.dataclass(frozen=True)
class Irq:
    irq: str  # "98", "NMI", "LOC"
    total: int
    active_cpus: tuple[int, ...]  # CPUs with a non-zero count
    busiest_cpu: int | None
    busiest_share: float | None  # share of the total on the busiest CPU
    chip: str | None  # IR-PCI-MSIX-0000:01:00.0, IR-IO-APIC, ...
    hwirq: str | None  # 0-edge
    actions: str | None  # mlx5_comp0@pci:0000:01:00.0, or the description of arch rows
    pci: str | None


@dataclasses.dataclass(frozen=True)
class DeviceIrqs:
    """The IRQs of one PCI function (a NIC port, a GPU) and where they land."""

    pci: str
    driver: str | None
    irqs: int
    interrupts: int
    serving_cpus: tuple[int, ...]  # busiest CPU of each IRQ that fired
    top_cpu: int | None
    top_cpu_share: float | None  # share of the device's interrupts on its busiest CPU


@dataclasses.dataclass(frozen=True)
class ProcInterruptsResult(ParseResult):
    kind: ClassVar[str] = "proc_interrupts"

    host: str | None = None
    cpus: int = 0
    irqs: tuple[Irq, ...] = ()
    devices: tuple[DeviceIrqs, ...] = ()
    samples: tuple[CounterSample, ...] = ()
    # Parts of the file that were read: "cpu header", "irq rows" (numbered), "arch rows"
    # (NMI, LOC...). Without the header (a `| grep mlx` excerpt) ``cpus`` is the number of
    # count columns of the first row.
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        concentrated = [
            d.pci for d in self.devices if d.irqs > 1 and d.top_cpu_share and d.top_cpu_share > 0.9
        ]
        return {
            "cpus": self.cpus,
            "irqs": len(self.irqs),
            "devices": len(self.devices),
            "devices_on_one_cpu": concentrated,
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    lines = head_text(head).splitlines()[:2000]
    header = any(_HEADER.match(line) for line in lines[:5])
    rows = sum(1 for line in lines if _irq_line(line))
    return (header and rows >= 2) or rows >= 4


def _irq_line(line: str) -> bool:
    m = _ROW.match(line)
    if not m:
        return False
    cells = m["rest"].split()
    counts = 0
    for cell in cells:
        if not cell.isdigit():
            break
        counts += 1
    return counts >= 2 and (counts < len(cells) or m["irq"].isdigit() is False)


def parse(stream: BinaryIO) -> ProcInterruptsResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    if not state.irqs:
        raise ParseError("no /proc/interrupts rows found ('IRQ: count count ... chip action')")
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.host: str | None = None
        self.cpus: int | None = None
        self.irqs: list[Irq] = []
        self.counts: list[tuple[int, ...]] = []
        self.seen: set[str] = set()
        self.snapshot = 0
        self.dropped = 0
        self.parts: dict[str, None] = {}

    def feed(self, line: str) -> None:
        shell = prompt(line)
        if shell is not None:
            self.host = shell[0] or self.host
            return
        if _HEADER.match(line):
            self.cpus = len(line.split())
            self.parts["cpu header"] = None
            self._next_reading()
            return
        m = _ROW.match(line)
        if not m:
            return
        cells = m["rest"].split()
        if not cells or not cells[0].isdigit():
            return
        width = self.cpus
        if width is None:
            width = 0
            while width < len(cells) and cells[width].isdigit():
                width += 1
            self.cpus = width
        counts = tuple(int(c) for c in cells[:width] if c.isdigit())
        tail = cells[len(counts) :]
        if m["irq"] in self.seen:
            self._next_reading()
        self.seen.add(m["irq"])
        self.parts["irq rows" if m["irq"].isdigit() else "arch rows"] = None
        self._irq(m["irq"], counts, tail)

    def _next_reading(self) -> None:
        if self.seen:
            self.snapshot += 1
        self.seen = set()

    def _irq(self, irq: str, counts: tuple[int, ...], tail: list[str]) -> None:
        if len(self.irqs) >= MAX_IRQS:
            self.dropped += 1
            return
        total = sum(counts)
        busiest = max(range(len(counts)), key=lambda i: counts[i]) if total else None
        numbered = irq.isdigit()
        chip = tail[0] if numbered and tail else None
        # Kernels before 3.11 glue the trigger to the chip ("PCI-MSI-edge mlx5_comp0@pci:...")
        # and print no hwirq column; later ones print "IR-PCI-MSI 524288-edge nvidia".
        old_layout = chip is not None and _OLD_CHIP.search(chip) is not None
        hwirq = tail[1] if numbered and len(tail) > 1 and not old_layout else None
        actions = " ".join(tail[1 if old_layout else 2 :] if numbered else tail) or None
        pci_match = _PCI.search(" ".join(tail))
        self.irqs.append(
            Irq(
                irq=irq,
                total=total,
                active_cpus=tuple(i for i, c in enumerate(counts) if c),
                busiest_cpu=busiest,
                busiest_share=(counts[busiest] / total) if busiest is not None else None,
                chip=chip,
                hwirq=hwirq,
                actions=actions,
                pci=pci_match["pci"] if pci_match else None,
            )
        )
        self.counts.append(counts)

    def result(self, warnings: list[str]) -> ProcInterruptsResult:
        if self.dropped:
            warnings.append(f"{self.dropped} IRQ row(s) beyond {MAX_IRQS} were not kept")
        buffer = SampleBuffer()
        snapshot = 0
        seen: set[str] = set()
        for irq, counts in zip(self.irqs, self.counts, strict=True):
            if irq.irq in seen:
                snapshot += 1
                seen = set()
            seen.add(irq.irq)
            device = f"{irq.irq}:{irq.actions}" if irq.irq.isdigit() and irq.actions else irq.irq
            rows = [("total", irq.total)]
            if irq.actions and _DEVICE_DRIVERS.search(irq.actions):
                rows += [(f"cpu{i}", c) for i, c in enumerate(counts)]
            for counter, value in rows:
                buffer.add(
                    CounterSample(
                        host=self.host, device=device[:255], port=None, counter=counter,
                        value=value, unit="count", captured_at=None, snapshot=snapshot,
                    )
                )  # fmt: skip
        return ProcInterruptsResult(
            host=self.host,
            cpus=self.cpus or 0,
            irqs=tuple(self.irqs),
            devices=_devices(self.irqs, self.counts),
            samples=tuple(buffer.rows),
            warnings=tuple(warnings + buffer.warnings()),
            parts=tuple(self.parts),
        )


def _devices(irqs: list[Irq], counts: list[tuple[int, ...]]) -> tuple[DeviceIrqs, ...]:
    groups: dict[str, list[tuple[Irq, tuple[int, ...]]]] = {}
    for irq, row in zip(irqs, counts, strict=True):
        if irq.pci and irq.actions and _DEVICE_DRIVERS.search(irq.actions):
            groups.setdefault(irq.pci, []).append((irq, row))
    out = []
    for pci, members in sorted(groups.items()):
        per_cpu: dict[int, int] = {}
        for _, row in members:
            for cpu, c in enumerate(row):
                per_cpu[cpu] = per_cpu.get(cpu, 0) + c
        total = sum(per_cpu.values())
        top = max(per_cpu, key=lambda c: per_cpu[c]) if total else None
        driver_match = _DEVICE_DRIVERS.search(members[0][0].actions or "")
        out.append(
            DeviceIrqs(
                pci=pci,
                driver=driver_match.group(0) if driver_match else None,
                irqs=len(members),
                interrupts=total,
                serving_cpus=tuple(
                    sorted({i.busiest_cpu for i, _ in members if i.busiest_cpu is not None})
                ),
                top_cpu=top,
                top_cpu_share=(per_cpu[top] / total) if top is not None else None,
            )
        )
    return tuple(out)
