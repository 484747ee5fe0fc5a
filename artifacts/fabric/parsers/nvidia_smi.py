"""nvidia-smi output: ``-q`` text, ``-q -x`` XML, the default table, ``topo -m`` and
``nvlink --status``.

``-q`` (text or XML) is read into one flat map per GPU, ``path -> value`` (text sections by
indentation, XML by tag), and one table (``_FIELDS``) picks the facts out of either spelling.
Several outputs may be concatenated in one file (a support bundle, a shell transcript): each
section is recognised by its own header. Numbers also become CounterSample rows named like
``nvidia-smi --query-gpu`` fields (``temperature.gpu``, ``pcie.link.gen.current``, ...), so
rules and rates work on them like on NIC counters.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import CounterSample, SampleBuffer
from artifacts.fabric.parsers.nvidia_smi_views import (
    NvLink,
    P2pMatrix,
    TableGpu,
    TopoLink,
    Topology,
    ViewReader,
)
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import (
    LineReader,
    find_timestamp,
    head_text,
    iter_xml,
    peek,
    to_number,
)

KIND = "nvidia_smi"
VERSION = 1
# Text only this tool prints: with it, detection is sure (artifacts/parsers/detection.py).
BANNERS = (b"==============NVSMI LOG==============", b"<nvidia_smi_log", b"| NVIDIA-SMI ")

MAX_XML_BYTES = 256 * 1024 * 1024
MAX_GPUS = 4096

_GPU_HEADER = re.compile(
    r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$"
)
_KEY_VALUE = re.compile(r"^(?P<indent> *)(?P<key>[^:]*?\S)\s+:\s?(?P<value>.*?)\s*$")
_SECTION = re.compile(r"^(?P<indent> *)(?P<key>[^:]*?\S)\s*$")
# The shape of a -q key: words, digits and a little punctuation ("Tx Throughput", "SRAM
# Uncorrectable", "Max Customer Boost Clocks", "vGPU Software Licensed Product"); a section
# title is words, maybe one parenthesised note. Another program's line landing inside the
# output ("+ export X=1", "    main()", a Python traceback) has neither shape, and is passed
# over instead of ending the GPU's block or becoming a section its next keys would nest in.
_Q_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ()./+_,#%&'-]*")
_Q_SECTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ./_+-]*(?: \([^()]+\))?")
# What ends -q output: the default table's border or rows, a topology matrix header.
_TABLE_START = re.compile(r"^(?:\+[-=+]{3,}|\|)")

# field -> candidate paths in -q text (section names) and -q -x XML (tags), first found wins.
_FIELDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "name": (("product_name",),),
    "uuid": (("gpu_uuid",), ("uuid",)),
    "serial": (("serial_number",), ("serial",)),
    "vbios": (("vbios_version",),),
    "persistence_mode": (("persistence_mode",),),
    "mig_mode": (("mig_mode", "current"), ("mig_mode", "current_mig")),
    "pstate": (("performance_state",),),
    "ecc_mode": (("ecc_mode", "current"), ("ecc_mode", "current_ecc")),
    "pcie_gen_current": (
        ("pci", "gpu_link_info", "pcie_generation", "current"),
        ("pci", "pci_gpu_link_info", "pcie_gen", "current_link_gen"),
    ),
    "pcie_gen_max": (
        ("pci", "gpu_link_info", "pcie_generation", "max"),
        ("pci", "pci_gpu_link_info", "pcie_gen", "max_link_gen"),
    ),
    "pcie_width_current": (
        ("pci", "gpu_link_info", "link_width", "current"),
        ("pci", "pci_gpu_link_info", "link_widths", "current_link_width"),
    ),
    "pcie_width_max": (
        ("pci", "gpu_link_info", "link_width", "max"),
        ("pci", "pci_gpu_link_info", "link_widths", "max_link_width"),
    ),
    "pcie_replays": (("pci", "replays_since_reset"), ("pci", "replay_counter")),
    "temperature_c": (("temperature", "gpu_current_temp"), ("temperature", "gpu_temp")),
    "slowdown_temp_c": (
        ("temperature", "gpu_slowdown_temp"),
        ("temperature", "gpu_temp_slow_threshold"),
    ),
    "shutdown_temp_c": (
        ("temperature", "gpu_shutdown_temp"),
        ("temperature", "gpu_temp_max_threshold"),
    ),
    "memory_temp_c": (("temperature", "memory_current_temp"), ("temperature", "memory_temp")),
    "power_draw_w": (
        ("gpu_power_readings", "power_draw"),
        ("power_readings", "power_draw"),
        ("gpu_power_readings", "instant_power_draw"),
    ),
    "power_limit_w": (
        ("gpu_power_readings", "current_power_limit"),
        ("power_readings", "current_power_limit"),
        ("power_readings", "enforced_power_limit"),
        ("power_readings", "power_limit"),
    ),
    "clocks_graphics_mhz": (("clocks", "graphics"), ("clocks", "graphics_clock")),
    "clocks_sm_mhz": (("clocks", "sm"), ("clocks", "sm_clock")),
    "clocks_memory_mhz": (("clocks", "memory"), ("clocks", "mem_clock")),
    "max_clocks_sm_mhz": (("max_clocks", "sm"), ("max_clocks", "sm_clock")),
    "max_clocks_memory_mhz": (("max_clocks", "memory"), ("max_clocks", "mem_clock")),
    "fan_percent": (("fan_speed",),),
    "utilization_gpu_percent": (("utilization", "gpu"), ("utilization", "gpu_util")),
    "utilization_memory_percent": (("utilization", "memory"), ("utilization", "memory_util")),
    "memory_total_mib": (("fb_memory_usage", "total"),),
    "memory_used_mib": (("fb_memory_usage", "used"),),
    "retired_pages_sbe": (
        ("retired_pages", "single_bit_ecc"),
        ("retired_pages", "multiple_single_bit_retirement", "retired_count"),
    ),
    "retired_pages_dbe": (
        ("retired_pages", "double_bit_ecc"),
        ("retired_pages", "double_bit_retirement", "retired_count"),
    ),
    "retired_pages_pending": (
        ("retired_pages", "pending_page_blacklist"),
        ("retired_pages", "pending_page_retirement"),
        ("retired_pages", "pending_blacklist"),
        ("retired_pages", "pending_retirement"),
    ),
    "remapped_rows_correctable": (
        ("remapped_rows", "correctable_error"),
        ("remapped_rows", "remapped_row_corr"),
    ),
    "remapped_rows_uncorrectable": (
        ("remapped_rows", "uncorrectable_error"),
        ("remapped_rows", "remapped_row_unc"),
    ),
    "remapped_rows_pending": (
        ("remapped_rows", "pending"),
        ("remapped_rows", "remapped_row_pending"),
    ),
    "remapped_rows_failure": (
        ("remapped_rows", "remapping_failure_occurred"),
        ("remapped_rows", "remapped_row_failure"),
    ),
}
_NUMERIC = {
    "pcie_gen_current", "pcie_gen_max", "pcie_width_current", "pcie_width_max", "pcie_replays",
    "temperature_c", "slowdown_temp_c", "shutdown_temp_c", "memory_temp_c", "power_draw_w",
    "power_limit_w", "clocks_graphics_mhz", "clocks_sm_mhz", "clocks_memory_mhz",
    "max_clocks_sm_mhz", "max_clocks_memory_mhz", "fan_percent", "utilization_gpu_percent",
    "utilization_memory_percent", "memory_total_mib", "memory_used_mib", "retired_pages_sbe",
    "retired_pages_dbe", "remapped_rows_correctable", "remapped_rows_uncorrectable",
}  # fmt: skip
_INTEGER = {
    "pcie_gen_current", "pcie_gen_max", "pcie_width_current", "pcie_width_max", "pcie_replays",
    "retired_pages_sbe", "retired_pages_dbe", "remapped_rows_correctable",
    "remapped_rows_uncorrectable",
}  # fmt: skip
# GpuInfo field -> (query-gpu style counter name, unit) for the samples table.
_SAMPLE_NAMES = {
    "pcie_gen_current": ("pcie.link.gen.current", "count"),
    "pcie_gen_max": ("pcie.link.gen.max", "count"),
    "pcie_width_current": ("pcie.link.width.current", "lanes"),
    "pcie_width_max": ("pcie.link.width.max", "lanes"),
    "pcie_replays": ("pcie.replay_counter", "count"),
    "temperature_c": ("temperature.gpu", "C"),
    "memory_temp_c": ("temperature.memory", "C"),
    "power_draw_w": ("power.draw", "W"),
    "power_limit_w": ("power.limit", "W"),
    "clocks_graphics_mhz": ("clocks.gr", "MHz"),
    "clocks_sm_mhz": ("clocks.sm", "MHz"),
    "clocks_memory_mhz": ("clocks.mem", "MHz"),
    "max_clocks_sm_mhz": ("clocks.max.sm", "MHz"),
    "max_clocks_memory_mhz": ("clocks.max.mem", "MHz"),
    "fan_percent": ("fan.speed", "%"),
    "utilization_gpu_percent": ("utilization.gpu", "%"),
    "utilization_memory_percent": ("utilization.memory", "%"),
    "memory_used_mib": ("memory.used", "MiB"),
    "memory_total_mib": ("memory.total", "MiB"),
    "ecc_corrected_volatile": ("ecc.errors.corrected.volatile.total", "count"),
    "ecc_uncorrected_volatile": ("ecc.errors.uncorrected.volatile.total", "count"),
    "ecc_corrected_aggregate": ("ecc.errors.corrected.aggregate.total", "count"),
    "ecc_uncorrected_aggregate": ("ecc.errors.uncorrected.aggregate.total", "count"),
    "retired_pages_sbe": ("retired_pages.sbe", "count"),
    "retired_pages_dbe": ("retired_pages.dbe", "count"),
    "remapped_rows_correctable": ("remapped_rows.correctable", "count"),
    "remapped_rows_uncorrectable": ("remapped_rows.uncorrectable", "count"),
}
_REASON_SECTIONS = ("clocks_event_reasons", "clocks_throttle_reasons")
_REASON_ALIASES = {"gpu_idle": "idle", "display_clocks_setting": "display_clock_setting"}


@dataclasses.dataclass(frozen=True)
class GpuInfo:
    """One GPU of ``nvidia-smi -q``. Numbers are in the unit their name says; None = N/A."""

    index: int
    bus_id: str
    name: str | None = None
    uuid: str | None = None
    serial: str | None = None
    vbios: str | None = None
    persistence_mode: str | None = None
    mig_mode: str | None = None
    pstate: str | None = None
    ecc_mode: str | None = None
    clock_event_reasons: tuple[str, ...] = ()  # the "Active" ones (throttle reasons, old name)
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    pcie_replays: int | None = None
    temperature_c: float | None = None
    slowdown_temp_c: float | None = None
    shutdown_temp_c: float | None = None
    memory_temp_c: float | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    clocks_graphics_mhz: float | None = None
    clocks_sm_mhz: float | None = None
    clocks_memory_mhz: float | None = None
    max_clocks_sm_mhz: float | None = None
    max_clocks_memory_mhz: float | None = None
    fan_percent: float | None = None
    utilization_gpu_percent: float | None = None
    utilization_memory_percent: float | None = None
    memory_total_mib: float | None = None
    memory_used_mib: float | None = None
    ecc_corrected_volatile: int | None = None
    ecc_uncorrected_volatile: int | None = None
    ecc_corrected_aggregate: int | None = None
    ecc_uncorrected_aggregate: int | None = None
    retired_pages_sbe: int | None = None
    retired_pages_dbe: int | None = None
    retired_pages_pending: str | None = None
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remapped_rows_pending: str | None = None
    remapped_rows_failure: str | None = None
    # every other field -q printed for this GPU, "section.sub.field" -> text as printed
    # (N/A and empty values left out): product brand, BAR1 memory, application clocks, ...
    details: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class NvidiaSmiResult(ParseResult):
    kind: ClassVar[str] = "nvidia_smi"

    # the parts seen: q_text | q_xml | table | query | topo | p2p | nvlink | dmon
    formats: tuple[str, ...] = ()
    timestamp: str | None = None
    driver_version: str | None = None
    cuda_version: str | None = None
    attached_gpus: int | None = None
    gpus: tuple[GpuInfo, ...] = ()
    table_gpus: tuple[TableGpu, ...] = ()
    topology: Topology | None = None
    nvlinks: tuple[NvLink, ...] = ()
    samples: tuple[CounterSample, ...] = ()
    p2p: tuple[P2pMatrix, ...] = ()  # topo -p2p r|w|n|a|p matrices
    query_gpus: tuple[dict[str, str], ...] = ()  # --query-gpu CSV rows: field -> as printed
    dmon_rows: tuple[dict[str, str], ...] = ()  # dmon rows: column -> as printed ("-": none)

    def summary(self) -> dict[str, Any]:
        gpus = self.gpus or self.table_gpus
        # views that name no GPU object still count theirs: query rows, dmon's indices
        count = len(gpus) or len(self.query_gpus) or len({r["gpu"] for r in self.dmon_rows})
        names = {g.name for g in gpus if g.name} or {
            row["name"] for row in self.query_gpus if row.get("name")
        }
        return {
            "formats": list(self.formats),
            "driver_version": self.driver_version
            or next(
                (r["driver_version"] for r in self.query_gpus if r.get("driver_version")), None
            ),
            "gpus": count,
            "names": sorted(names),
            "pcie_downtrained": sum(
                1
                for g in self.gpus
                if None not in (g.pcie_gen_current, g.pcie_gen_max)
                and g.pcie_gen_current < g.pcie_gen_max  # type: ignore[operator]
            )
            + sum(1 for row in self.query_gpus if _query_downtrained(row)),
            "nvlinks_inactive": sum(1 for link in self.nvlinks if not link.active),
            "warnings": len(self.warnings),
        }


def _query_downtrained(row: dict[str, str]) -> bool:
    current = _measure(row.get("pcie.link.gen.current", ""))
    top = _measure(row.get("pcie.link.gen.max", ""))
    return current is not None and top is not None and current < top


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if _is_xml(text):
        return True
    return (
        "NVSMI LOG" in text
        or "NVIDIA-SMI " in text
        # each view's test only where the words its lines need are (most files: neither)
        or ("GPU0" in text and ViewReader.looks_like_topology(text))
        or ("(UUID: " in text and ViewReader.looks_like_nvlink_status(text))
        or ViewReader.looks_like_query(text)
        or ViewReader.looks_like_dmon(text)
    )


def parse(stream: BinaryIO) -> NvidiaSmiResult:
    head, stream = peek(stream)
    if _is_xml(head_text(head)):
        return _parse_xml(stream)
    return _parse_text(stream)


def _is_xml(text: str) -> bool:
    """An XML document whose root is nvidia_smi_log (after the prolog and DOCTYPE)."""
    return text.lstrip("\ufeff \t\r\n").startswith("<") and "<nvidia_smi_log" in text[:8192]


# --- -q text and the other text views ------------------------------------------------------


def _parse_text(stream: BinaryIO) -> NvidiaSmiResult:
    reader = LineReader(stream)
    q = _QText()
    views = ViewReader()
    for line in reader:
        if "NVSMI LOG" in line:
            q.start()
            continue
        if q.active and q.feed(line):
            continue
        views.feed(line)
    warnings = reader.repair_warnings() + q.warnings() + views.warnings()
    meta = q.meta
    if not q.gpus and not views.found:
        raise ParseError(
            "no nvidia-smi output found (NVSMI LOG, the GPU table, topo -m or nvlink --status)"
        )
    formats = (["q_text"] if q.seen else []) + views.formats()
    return _result(formats, meta, q.gpus, views, warnings)


class _QText:
    """State machine over ``nvidia-smi -q`` text lines."""

    def __init__(self) -> None:
        self.active = False
        self.seen = False
        self.meta: dict[str, str] = {}
        self.gpus: list[dict[tuple[str, ...], str]] = []
        self.bus_ids: list[str] = []
        self.stack: list[tuple[int, str]] = []
        self.dropped = 0

    def start(self) -> None:
        self.active = self.seen = True
        self.stack = []

    def feed(self, line: str) -> bool:
        """Consume one line; False when the line does not belong to -q output."""
        if not line.strip():
            return True
        gpu = _GPU_HEADER.match(line)
        if gpu:
            if len(self.gpus) >= MAX_GPUS:
                self.dropped += 1
                return True
            self.gpus.append({})
            self.bus_ids.append(gpu["bus"])
            self.stack = []
            return True
        if _TABLE_START.match(line) or ("GPU0" in line and "GPU1" in line):
            self.active = False  # another view follows (table, topo matrix)
            return False
        kv = _KEY_VALUE.match(line)
        section = None if kv else _SECTION.match(line)
        m = kv or section
        if m is None:
            return True
        indent = len(m["indent"])
        if not _q_shaped(m["key"], indent, kv is not None, in_gpu=bool(self.gpus)):
            return True  # another program's line inside the output: passed over
        key = _norm(m["key"])
        while self.stack and self.stack[-1][0] >= indent:
            self.stack.pop()
        path = (*(name for _, name in self.stack), key)
        if kv and self.gpus and indent > 0:
            self.gpus[-1].setdefault(path, kv["value"])
        elif kv and indent == 0:
            self.meta.setdefault(key, kv["value"])
        self.stack.append((indent, key))  # keys with values can have children (HW Slowdown)
        return True

    def warnings(self) -> list[str]:
        out = []
        attached = to_number(self.meta.get("attached_gpus", ""))
        if isinstance(attached, int) and self.seen and len(self.gpus) < attached:
            out.append(
                f"the file announces {attached} attached GPUs but holds {len(self.gpus)} GPU "
                "block(s): the output looks truncated"
            )
        if self.dropped:
            out.append(f"{self.dropped} GPU block(s) beyond {MAX_GPUS} were not kept")
        return out


def _q_shaped(key: str, indent: int, has_value: bool, *, in_gpu: bool) -> bool:
    """Whether a line has the shape of a -q line: indented by 4s, a key of -q's words;
    inside a GPU's block only the GPU header (handled before) sits at column 0."""
    if indent % 4 or (in_gpu and indent == 0):
        return False
    return bool((_Q_KEY if has_value else _Q_SECTION).fullmatch(key))


# --- -q -x XML --------------------------------------------------------------------------------


def _parse_xml(stream: BinaryIO) -> NvidiaSmiResult:
    meta: dict[str, str] = {}
    gpus: list[dict[tuple[str, ...], str]] = []
    bus_ids: list[str] = []
    path: list[str] = []
    warnings: list[str] = []
    try:
        for event, element, _depth in iter_xml(stream, max_bytes=MAX_XML_BYTES):
            if event == "start":
                path.append(element.tag)
                if path[1:] == ["gpu"] and len(gpus) < MAX_GPUS:
                    gpus.append({})
                    bus_ids.append(element.attrib.get("id", ""))
                continue
            text = (element.text or "").strip()
            if len(path) == 2:
                meta.setdefault(element.tag, text)
            elif len(path) > 2 and path[1] == "gpu" and gpus and text:
                gpus[-1].setdefault(tuple(path[2:]), text)
            path.pop()
            element.clear()
    except ParseError as exc:
        if not gpus and not meta:
            raise ParseError(f"not a readable nvidia-smi -q -x document: {exc.message}") from exc
        warnings.append(f"the XML ends early or is malformed ({exc.message}); kept what was read")
    if not meta and not gpus:
        raise ParseError("empty nvidia_smi_log document")
    attached = to_number(meta.get("attached_gpus", ""))
    if isinstance(attached, int) and len(gpus) < attached:
        warnings.append(f"the file announces {attached} attached GPUs but holds {len(gpus)}")
    return _result(["q_xml"], meta, gpus, None, warnings, bus_ids)


# --- shared extraction ------------------------------------------------------------------------


def _result(
    formats: list[str],
    meta: dict[str, str],
    gpu_maps: list[dict[tuple[str, ...], str]],
    views: ViewReader | None,
    warnings: list[str],
    bus_ids: list[str] | None = None,
) -> NvidiaSmiResult:
    stamp = find_timestamp(meta.get("timestamp", ""))
    timestamp = stamp[0] if stamp else None
    if timestamp is None and views is not None:
        timestamp = views.timestamp
    ids = bus_ids if bus_ids is not None else [m.get(("pci", "bus_id"), "") for m in gpu_maps]
    gpus = tuple(
        _gpu(i, ids[i] if i < len(ids) else "", values) for i, values in enumerate(gpu_maps)
    )
    buffer = SampleBuffer()
    for gpu, values in zip(gpus, gpu_maps, strict=False):
        _samples(buffer, gpu, values, timestamp)
    table = views.table_gpus if views else []
    for row in table:
        _table_samples(buffer, row, timestamp)
    if views is not None:
        _query_samples(buffer, views.query_rows, views.query_units(), timestamp)
        _dmon_samples(buffer, views.dmon_rows, views.dmon_units())
    return NvidiaSmiResult(
        formats=tuple(formats),
        timestamp=timestamp,
        driver_version=meta.get("driver_version") or (views.driver_version if views else None),
        cuda_version=meta.get("cuda_version") or (views.cuda_version if views else None),
        attached_gpus=_int(meta.get("attached_gpus")),
        gpus=gpus,
        table_gpus=tuple(table),
        topology=views.topology() if views else None,
        nvlinks=tuple(views.nvlinks) if views else (),
        samples=tuple(buffer.rows),
        p2p=tuple(views.p2p()) if views else (),
        query_gpus=tuple(views.query_rows) if views else (),
        dmon_rows=tuple(views.dmon_rows) if views else (),
        warnings=tuple(warnings + buffer.warnings()),
    )


def _gpu(index: int, bus_id: str, values: dict[tuple[str, ...], str]) -> GpuInfo:
    fields: dict[str, Any] = {}
    for field, paths in _FIELDS.items():
        raw = next((values[p] for p in paths if p in values), None)
        if raw is None:
            continue
        fields[field] = _measure(raw) if field in _NUMERIC else _text(raw)
    for field in _INTEGER:
        if isinstance(fields.get(field), float):
            fields[field] = int(fields[field])
    fields.update(_ecc_totals(values))
    reasons = []
    for path, value in values.items():
        if path[0] in _REASON_SECTIONS and value.strip() == "Active":
            name = re.sub(r"^clocks_(?:event|throttle)_reason_", "", path[-1])
            reasons.append(_REASON_ALIASES.get(name, name))
    bus_id = bus_id or values.get(("pci", "bus_id"), "")
    return GpuInfo(
        index=index,
        bus_id=bus_id,
        clock_event_reasons=tuple(reasons),
        details=_details(values),
        **fields,
    )


_TYPED_PATHS = frozenset(path for paths in _FIELDS.values() for path in paths)
MAX_DETAILS = 2_000  # per GPU; -q prints ~200 fields, a long process list more


def _details(values: dict[tuple[str, ...], str]) -> dict[str, str]:
    """The fields no typed field holds (the clock event reasons and ECC counts are typed)."""
    out: dict[str, str] = {}
    for path, value in values.items():
        text = value.strip()
        if path in _TYPED_PATHS or text in ("", "N/A") or len(out) >= MAX_DETAILS:
            continue
        if path[0] in _REASON_SECTIONS or path[0] == "ecc_errors":
            continue
        out.setdefault(".".join(path), text)
    return out


def _ecc_totals(values: dict[tuple[str, ...], str]) -> dict[str, int | None]:
    """Corrected/uncorrected totals: old "Single/Double Bit > Total" or SRAM/DRAM counts."""
    out: dict[str, int | None] = {}
    for scope in ("volatile", "aggregate"):
        old_c = values.get(("ecc_errors", scope, "single_bit", "total"))
        old_u = values.get(("ecc_errors", scope, "double_bit", "total"))
        corrected: list[int] = []
        uncorrected: list[int] = []
        for path, value in values.items():
            if len(path) == 3 and path[:2] == ("ecc_errors", scope):
                number = _measure(value)
                if number is None:
                    continue
                bucket = (
                    uncorrected
                    if "uncorrectable" in path[2]
                    else corrected
                    if "correctable" in path[2]
                    else None
                )
                if bucket is not None:
                    bucket.append(int(number))
        c = _measure(old_c) if old_c is not None else (sum(corrected) if corrected else None)
        u = _measure(old_u) if old_u is not None else (sum(uncorrected) if uncorrected else None)
        out[f"ecc_corrected_{scope}"] = int(c) if c is not None else None
        out[f"ecc_uncorrected_{scope}"] = int(u) if u is not None else None
    return out


def _samples(
    buffer: SampleBuffer, gpu: GpuInfo, values: dict[tuple[str, ...], str], time: str | None
) -> None:
    for field, (name, unit) in _SAMPLE_NAMES.items():
        value = getattr(gpu, field)
        if value is not None:
            buffer.add(CounterSample(None, gpu.bus_id, None, name, value, unit, time))
    # Newer drivers count time spent in each clock-event reason (microseconds).
    for path, raw in values.items():
        if path[0] == "clocks_event_reasons_counters" and len(path) == 2:
            number = _measure(raw)
            if number is not None:
                reason = path[1].removeprefix("clocks_event_reasons_counters_")
                name = f"clocks_event_reasons_counters.{reason}"
                buffer.add(CounterSample(None, gpu.bus_id, None, name, number, "us", time))


def _table_samples(buffer: SampleBuffer, row: TableGpu, time: str | None) -> None:
    for field, name, unit in (
        ("temperature_c", "temperature.gpu", "C"),
        ("power_draw_w", "power.draw", "W"),
        ("power_limit_w", "power.limit", "W"),
        ("memory_used_mib", "memory.used", "MiB"),
        ("memory_total_mib", "memory.total", "MiB"),
        ("utilization_gpu_percent", "utilization.gpu", "%"),
        ("fan_percent", "fan.speed", "%"),
        ("ecc_uncorrected_volatile", "ecc.errors.uncorrected.volatile.total", "count"),
    ):
        value = getattr(row, field)
        if value is not None:
            buffer.add(CounterSample(None, row.bus_id, None, name, value, unit, time))


_QUERY_UNITS = {name: unit for name, unit in _SAMPLE_NAMES.values()}
_QUERY_TEXT = frozenset({"index", "name", "uuid", "pci.bus_id", "serial", "driver_version"})


def _query_samples(
    buffer: SampleBuffer, rows: list[dict[str, str]], units: dict[str, str], time: str | None
) -> None:
    """--query-gpu rows: each numeric field is a sample under its own (query) name."""
    for row in rows:
        device = row.get("pci.bus_id") or (f"GPU {row['index']}" if "index" in row else None)
        for name, raw in row.items():
            value = None if name in _QUERY_TEXT else _measure(raw)
            if value is None:
                continue
            unit = _QUERY_UNITS.get(name) or units.get(name) or "count"
            buffer.add(CounterSample(None, device, None, name, value, unit, time))


# dmon columns -> the --query-gpu names of the same quantity (nvidia-smi's dmon help); the
# others keep their dmon name as "dmon.<column>" with the unit of the units row.
_DMON_NAMES = {
    "pwr": "power.draw",
    "gtemp": "temperature.gpu",
    "mtemp": "temperature.memory",
    "sm": "utilization.gpu",
    "mem": "utilization.memory",
    "enc": "utilization.encoder",
    "dec": "utilization.decoder",
    "jpg": "utilization.jpeg",
    "ofa": "utilization.ofa",
    "mclk": "clocks.mem",
    "pclk": "clocks.gr",
    "fb": "memory.used",
}
_DMON_LABELS = frozenset({"gpu", "date", "time"})


def _dmon_samples(buffer: SampleBuffer, rows: list[dict[str, str]], units: dict[str, str]) -> None:
    """One snapshot per interval (a GPU index seen again starts the next one), timed when
    dmon printed its Date and Time columns (-o DT)."""
    snapshot, in_snapshot = 0, set()
    for row in rows:
        if row["gpu"] in in_snapshot:
            snapshot, in_snapshot = snapshot + 1, set()
        in_snapshot.add(row["gpu"])
        date, clock = row.get("date", ""), row.get("time", "")
        time = (
            f"{date[:4]}-{date[4:6]}-{date[6:8]}T{clock}"
            if len(date) == 8 and date.isdigit() and clock.count(":") == 2
            else None
        )
        for column, raw in row.items():
            value = None if column in _DMON_LABELS else _measure(raw)
            if value is None:
                continue
            name = _DMON_NAMES.get(column, f"dmon.{column}")
            unit = {"MB": "MiB"}.get(units.get(column, ""), units.get(column, "")) or "count"
            device = f"GPU {row['gpu']}"
            buffer.add(CounterSample(None, device, None, name, value, unit, time, snapshot))


def _norm(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.strip().lower()).strip("_")


def _measure(text: str) -> int | float | None:
    """'44 C', '29.02 W', '16x', '1912 MHz', '30 %', 'N/A' -> number or None."""
    m = re.match(r"^\s*(-?\d+(?:\.\d+)?)", text)
    if not m:
        return None
    return to_number(m.group(1))


def _text(text: str) -> str | None:
    value = text.strip()
    return None if value in ("", "N/A") else value


def _int(text: str | None) -> int | None:
    value = to_number(text or "")
    return value if isinstance(value, int) else None


__all__ = [
    "GpuInfo",
    "NvLink",
    "NvidiaSmiResult",
    "TableGpu",
    "TopoLink",
    "Topology",
    "accepts",
    "parse",
]
