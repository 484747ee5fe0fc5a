"""``nsys stats`` reports as printed: ``nsys profile --stats=true`` console tables, ``nsys stats``
column/CSV/TSV output (several reports concatenated), and the pre-2022 "CUDA API Statistics
(nanoseconds)" layout.

A report is announced by one of ``[3/8] Executing 'cuda_api_sum' stats report``,
``** CUDA API Summary (cuda_api_sum):``, ``Processing [x.sqlite] with [.../cuda_api_sum.py]``
or a legacy title line; its table follows (header, dashes, right-aligned columns; or a CSV
header row). Column positions come from the dashes, so names with spaces survive. Every
table is kept as read (numbers parsed, thousands separators dropped); the summaries that
PerfHub knows (kernels, memory, CUDA API, OS runtime, NVTX) also become typed rows with
times in ns and sizes in bytes, whatever unit the header states (``--timeunit``).
Program output around the reports is skipped.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.nsight.parsers.nsys.common import (
    KernelStat,
    MemStat,
    RangeStat,
    TimeStat,
    is_nccl,
    throughput_gbps,
)
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text

KIND = "nsys_stats"
VERSION = 1
# Text only this tool prints: with it, detection is sure (artifacts/parsers/detection.py).
BANNERS = (b"Executing '",)

MAX_TABLES = 500
MAX_ROWS_PER_TABLE = 100_000

_EXECUTING = re.compile(r"Executing '(?P<report>[\w:.-]+)' stats report")
_STARS = re.compile(r"^\s*\*\* (?P<title>.+?) \((?P<report>[\w:.-]+)\):?\s*$")
_PROCESSING = re.compile(r"^Processing \[.*?\] with \[(?:.*[/\\])?(?P<report>[\w:.-]+?)(?:\.py)?\]")
_LEGACY = re.compile(r"^(?P<title>[A-Z][\w -]*Statistics) \((?P<unit>[\w]+)\)\s*$")
_SKIPPED = re.compile(r"^SKIPPED: (?P<reason>.+)$")
_DASHES = re.compile(r"^\s*-+(?:\s+-+)*\s*$")
_BARE_HEADER = re.compile(
    r"^[ \t]*(?:Time \(%\)[ \t]+Total Time \(\w+\)|Total \(\w+\)[ \t]+Count[ \t]+Avg \(\w+\))"
    r".*\n[ \t]*-+(?:[ \t]+-+)+[ \t]*$",
    re.M,
)
_UNIT = re.compile(r"^(?P<base>.*?)\s*\((?P<unit>[^()]+)\)\s*$")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_FLOAT = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")

_TIME_UNITS = {"ns": 1.0, "nsec": 1.0, "nanoseconds": 1.0, "us": 1e3, "usec": 1e3, "µs": 1e3,
               "ms": 1e6, "msec": 1e6, "s": 1e9, "sec": 1e9}  # fmt: skip
_SIZE_UNITS = {"B": 1.0, "bytes": 1.0, "KB": 1e3, "KiB": 1024.0, "MB": 1e6, "MiB": 1024.0**2,
               "GB": 1e9, "GiB": 1024.0**3}  # fmt: skip
_FIELDS = {
    "time (%)": "time_pct", "time(%)": "time_pct", "time": "time_pct",
    "total time": "total", "total": "total", "avg": "avg", "average": "avg", "med": "med",
    "median": "med", "min": "min", "minimum": "min", "max": "max", "maximum": "max",
    "stddev": "stddev", "std dev": "stddev", "instances": "count", "num calls": "count",
    "calls": "count", "count": "count", "operations": "count", "num": "count",
    "name": "name", "operation": "name", "range": "name", "style": "style",
}  # fmt: skip
_HEADER_WORDS = set(_FIELDS) - {"time", "num"}
# Legacy (nsys <= 2021) titles -> today's report names.
_LEGACY_REPORTS = {
    "CUDA API Statistics": "cuda_api_sum",
    "CUDA Kernel Statistics": "cuda_gpu_kern_sum",
    "CUDA Memory Operation Statistics": "cuda_gpu_mem_time_sum",
    "Operating System Runtime API Statistics": "osrt_sum",
    "NVTX Push-Pop Range Statistics": "nvtx_pushpop_sum",
    "NVTX Start-End Range Statistics": "nvtx_startend_sum",
}
# 2021-2022 short names -> today's.
_ALIASES = {
    "cudaapisum": "cuda_api_sum", "gpukernsum": "cuda_gpu_kern_sum",
    "gpumemtimesum": "cuda_gpu_mem_time_sum", "gpumemsizesum": "cuda_gpu_mem_size_sum",
    "osrtsum": "osrt_sum", "nvtxsum": "nvtx_sum", "nvtxppsum": "nvtx_pushpop_sum",
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class StatsTable:
    """One report table as printed: its columns and rows (numbers parsed, units as headed)."""

    report: str
    title: str
    layout: str  # column | csv | tsv | legacy
    columns: tuple[str, ...]
    rows: tuple[tuple[float | int | str | None, ...], ...]


@dataclasses.dataclass(frozen=True)
class SkippedReport:
    report: str
    reason: str


@dataclasses.dataclass(frozen=True)
class NsysStatsResult(ParseResult):
    kind: ClassVar[str] = KIND
    reports: tuple[StatsTable, ...] = ()
    skipped: tuple[SkippedReport, ...] = ()
    kernels: tuple[KernelStat, ...] = ()
    memory: tuple[MemStat, ...] = ()
    api_calls: tuple[TimeStat, ...] = ()
    os_runtime: tuple[TimeStat, ...] = ()
    ranges: tuple[RangeStat, ...] = ()

    def summary(self) -> dict[str, Any]:
        kernel_ns = sum(k.total_ns for k in self.kernels)
        nccl_ns = sum(k.total_ns for k in self.kernels if k.is_nccl)
        return {
            "reports": [t.report for t in self.reports],
            "kernels": len(self.kernels),
            "kernel_time_ms": round(kernel_ns / 1e6, 3),
            "nccl_kernel_pct": round(100 * nccl_ns / kernel_ns, 2) if kernel_ns else None,
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if _EXECUTING.search(text) or re.search(r"^\s*\*\* .+ \((?:cuda|nvtx|osrt)_\w+\):", text, re.M):
        return True
    if any(f"{title} (nanoseconds)" in text for title in _LEGACY_REPORTS):
        return True
    if re.search(r'^"?Time ?\(%\)"?[,\t]"?Total Time \(', text, re.M):
        return True
    # a report's table pasted without its banner: the column header over its dashes
    return bool(_BARE_HEADER.search(text))


def parse(stream: BinaryIO) -> NsysStatsResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    state.end_table()
    if not state.tables and not state.skipped:
        raise ParseError("no nsys stats report found (no report header and no report table)")
    warnings = [*reader.repair_warnings(), *state.warnings]
    typed = _typed(state.tables, warnings)
    return NsysStatsResult(
        reports=tuple(state.tables),
        skipped=tuple(state.skipped),
        warnings=tuple(warnings),
        **typed,
    )


class _State:
    """Line-by-line reader: which report we are in, and the table being read."""

    def __init__(self) -> None:
        self.report = ""
        self.title = ""
        self.unit = ""  # legacy tables state the unit in their title
        self.previous = ""
        self.tables: list[StatsTable] = []
        self.skipped: list[SkippedReport] = []
        self.warnings: list[str] = []
        self._layout = ""
        self._columns: list[str] = []
        self._spans: list[tuple[int, int]] = []
        self._rows: list[tuple[Any, ...]] = []
        self._delimiter = ","

    def feed(self, line: str) -> None:
        if self._layout:
            if self._continue_table(line):
                return
            self.end_table()
        if self._announcement(line):
            return
        if m := _SKIPPED.match(line.strip()):
            self.skipped.append(SkippedReport(self.report or "unknown", m["reason"].strip()))
        elif _DASHES.match(line) and self._looks_like_header(self.previous):
            self._start_column_table(self.previous, line)
        elif (fields := _csv_header(line)) is not None:
            self._start_csv_table(fields, "\t" if "\t" in line else ",")
        if line.strip():
            self.previous = line

    def _announcement(self, line: str) -> bool:
        stripped = line.strip()
        if m := _EXECUTING.search(stripped):
            self._set_report(m["report"], "")
        elif m := _STARS.match(stripped):
            self._set_report(m["report"], m["title"])
        elif m := _PROCESSING.match(stripped):
            self._set_report(m["report"], "")
        elif (m := _LEGACY.match(stripped)) and m["title"] in _LEGACY_REPORTS:
            report = _LEGACY_REPORTS[m["title"]]
            if report == "cuda_gpu_mem_time_sum" and m["unit"] not in _TIME_UNITS:
                report = "cuda_gpu_mem_size_sum"
            self._set_report(report, stripped, unit=m["unit"])
        else:
            return False
        return True

    def _set_report(self, report: str, title: str, unit: str = "") -> None:
        self.report = _ALIASES.get(report, report)
        self.title = title
        self.unit = unit
        self.previous = ""

    def _looks_like_header(self, line: str) -> bool:
        words = {_UNIT.sub(r"\g<base>", w).strip().lower() for w in re.split(r"\s{2,}", line)}
        return bool(line.strip()) and len(words & _HEADER_WORDS) >= 2

    def _start_column_table(self, header: str, dashes: str) -> None:
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", dashes)]
        self._begin("legacy" if self.unit else "column", _cells(header, spans))
        self._spans = spans

    def _start_csv_table(self, fields: list[str], delimiter: str) -> None:
        self._begin("tsv" if delimiter == "\t" else "csv", fields)
        self._delimiter = delimiter

    def _begin(self, layout: str, columns: list[str]) -> None:
        if len(self.tables) >= MAX_TABLES:
            return
        self._layout = layout
        self._columns = columns
        self._rows = []

    def _continue_table(self, line: str) -> bool:
        if not line.strip():
            return False
        if self._layout in ("csv", "tsv"):
            cells = next(csv.reader([line], delimiter=self._delimiter), [])
            if len(cells) != len(self._columns):
                return False
        else:
            if _announces(line):
                return False
            cells = _cells(line, self._spans)
        if len(self._rows) < MAX_ROWS_PER_TABLE:
            self._rows.append(tuple(_value(c) for c in cells))
        return True

    def end_table(self) -> None:
        if not self._layout:
            return
        columns = [self._with_unit(c) for c in self._columns]
        report = self.report
        if not report:
            # a table without its banner (a fragment): its columns say which report it is
            report = _report_of(columns, self._rows) or "unknown"
            if report != "unknown":
                self.warnings.append(
                    f"a table without its report banner was read as {report} (by its columns)"
                )
        self.tables.append(
            StatsTable(
                report=report,
                title=self.title,
                layout=self._layout,
                columns=tuple(columns),
                rows=tuple(self._rows),
            )
        )
        if len(self._rows) >= MAX_ROWS_PER_TABLE:
            self.warnings.append(f"{self.report}: only the first {MAX_ROWS_PER_TABLE} rows kept")
        self._layout = ""
        self.previous = ""

    def _with_unit(self, column: str) -> str:
        """Legacy headers carry no unit; the title's unit applies to their number columns."""
        if not self.unit or _UNIT.match(column) or column.lower() not in _FIELDS:
            return column
        field = _FIELDS[column.lower()]
        if field in ("total", "avg", "med", "min", "max", "stddev"):
            return f"{column} ({_short_unit(self.unit)})"
        return column


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """Cut a fixed-width line at the dash spans. Numbers are right-aligned and headers centred
    within their span, so a cell runs from the previous span's end to its own span's end; the
    last (name) column takes the rest of the line, however long."""
    out = []
    for i, (_start, end) in enumerate(spans):
        begin = spans[i - 1][1] if i else 0
        out.append(line[begin:].strip() if i == len(spans) - 1 else line[begin:end].strip())
    return out


def _announces(line: str) -> bool:
    s = line.strip()
    return bool(_EXECUTING.search(s) or _STARS.match(s) or _PROCESSING.match(s) or _LEGACY.match(s))


def _short_unit(unit: str) -> str:
    return {"nanoseconds": "ns", "microseconds": "us", "milliseconds": "ms", "seconds": "s"}.get(
        unit, unit
    )


def _csv_header(line: str) -> list[str] | None:
    if "," not in line and "\t" not in line:
        return None
    cells = next(csv.reader([line], delimiter="\t" if "\t" in line else ","), [])
    if len(cells) < 3:
        return None
    words = {_UNIT.sub(r"\g<base>", c).strip().lower() for c in cells}
    return [c.strip() for c in cells] if len(words & _HEADER_WORDS) >= 2 else None


def _value(text: str) -> float | int | str | None:
    text = text.strip()
    if text in ("", "-", "N/A"):
        return None
    plain = text.replace(",", "") if _THOUSANDS.match(text) else text
    if _FLOAT.match(plain):
        try:
            if "." not in plain and "e" not in plain.lower():
                integer = int(plain)
                if abs(integer) < 2**63:
                    return integer
            number = float(plain)  # beyond 64 bits: a float, or null beyond float range
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    return text


def _report_of(columns: list[str], rows: list[tuple[Any, ...]]) -> str | None:
    """The summary report a table's columns belong to, for a table pasted without its
    banner; None when they do not say."""
    bases = {_UNIT.sub(r"\g<base>", c).strip().lower() for c in columns}
    if {"style", "range"} <= bases:
        return "nvtx_sum"
    if "operation" in bases:
        sized = any((m := _UNIT.match(c)) and m["unit"] not in _TIME_UNITS for c in columns
                    if c.lower().startswith("total"))  # fmt: skip
        return "cuda_gpu_mem_size_sum" if sized else "cuda_gpu_mem_time_sum"
    if "name" not in bases:
        return None
    if "instances" in bases:
        return "cuda_gpu_kern_sum"
    if "num calls" in bases:
        # CUDA API and OS runtime summaries share their columns: the names tell them apart
        names = [str(r[-1]) for r in rows if r]
        cuda = sum(1 for n in names if n.startswith(("cuda", "cu", "nccl")))
        return "cuda_api_sum" if names and cuda * 2 > len(names) else "osrt_sum"
    return None


# --- typed rows -------------------------------------------------------------------------------


def _typed(tables: list[StatsTable], warnings: list[str]) -> dict[str, tuple[Any, ...]]:
    kernels: list[KernelStat] = []
    api: list[TimeStat] = []
    osrt: list[TimeStat] = []
    ranges: list[RangeStat] = []
    mem_time: dict[str, dict[str, Any]] = {}
    mem_size: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for table in tables:
        base = table.report.split(":")[0]
        if base in seen and base in _TYPED_REPORTS:
            warnings.append(f"report {base} appears more than once; all its tables are kept")
        seen.add(base)
        for row in _records(table):
            if "name" not in row:
                continue
            if base == "cuda_gpu_kern_sum":
                kernels.append(KernelStat(**_time_fields(row), is_nccl=is_nccl(row["name"])))
            elif base == "cuda_api_sum":
                api.append(TimeStat(**_time_fields(row)))
            elif base == "osrt_sum":
                osrt.append(TimeStat(**_time_fields(row)))
            elif base in ("nvtx_sum", "nvtx_pushpop_sum", "nvtx_startend_sum"):
                style = row.get("style") or ("StartEnd" if "startend" in base else "PushPop")
                ranges.append(RangeStat(**_time_fields(row), style=str(style)))
            elif base == "cuda_gpu_mem_time_sum":
                mem_time[row["name"]] = row
            elif base == "cuda_gpu_mem_size_sum":
                mem_size[row["name"]] = row
    return {
        "kernels": tuple(kernels),
        "api_calls": tuple(api),
        "os_runtime": tuple(osrt),
        "ranges": tuple(ranges),
        "memory": tuple(_memory(mem_time, mem_size)),
    }


_TYPED_REPORTS = {
    "cuda_gpu_kern_sum", "cuda_api_sum", "osrt_sum", "nvtx_sum", "nvtx_pushpop_sum",
    "nvtx_startend_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
}  # fmt: skip


def _records(table: StatsTable) -> list[dict[str, Any]]:
    """Rows as {field: value}, numbers scaled to ns (time tables) or bytes (size tables)."""
    plan = []
    for index, column in enumerate(table.columns):
        m = _UNIT.match(column)
        base, unit = (m["base"], m["unit"]) if m else (column, "")
        field = _FIELDS.get(base.strip().lower())
        if field is None:
            continue
        scale = 1.0
        if field in ("total", "avg", "med", "min", "max", "stddev"):
            if unit in _SIZE_UNITS:
                field, scale = f"{field}_bytes", _SIZE_UNITS[unit]
            else:
                field, scale = f"{field}_ns", _TIME_UNITS.get(unit, 1.0)
        plan.append((index, field, scale))
    out = []
    for row in table.rows:
        record: dict[str, Any] = {}
        for index, field, scale in plan:
            value = row[index] if index < len(row) else None
            if field in ("name", "style"):
                if value is not None:
                    record[field] = str(value)
            elif isinstance(value, int | float):
                record[field] = value * scale if scale != 1.0 else value
        if "name" in record:
            out.append(record)
    return out


def _time_fields(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": row["name"],
        "count": int(row.get("count") or 0),
        "total_ns": row.get("total_ns") or 0,
        "time_pct": row.get("time_pct"),
        "avg_ns": row.get("avg_ns"),
        "med_ns": row.get("med_ns"),
        "min_ns": row.get("min_ns"),
        "max_ns": row.get("max_ns"),
        "stddev_ns": row.get("stddev_ns"),
    }


def _memory(times: dict[str, dict[str, Any]], sizes: dict[str, dict[str, Any]]) -> list[MemStat]:
    out = []
    for name in [*times, *(n for n in sizes if n not in times)]:
        s = sizes.get(name, {})
        t = times[name] if name in times else {"name": name, "count": s.get("count")}
        fields = _time_fields(t)
        out.append(
            MemStat(
                **fields,
                total_bytes=s.get("total_bytes"),
                avg_bytes=s.get("avg_bytes"),
                min_bytes=s.get("min_bytes"),
                max_bytes=s.get("max_bytes"),
                throughput_gbps=throughput_gbps(s.get("total_bytes"), fields["total_ns"]),
            )
        )
    return out
