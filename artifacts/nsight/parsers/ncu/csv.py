"""Nsight Compute ``--csv`` output: the details page (long: one row per kernel and metric, rule
rows with Rule Name/Type/Description and Estimated Speedup), the raw page (wide: one row
per kernel, one column per metric, a second header row of units) and ``--print-summary
per-kernel`` (long, no ID: one row per kernel launch shape and metric with its Invocations and
Minimum/Maximum/Average; the average is the value, a differing minimum or maximum is kept as
``<metric> (minimum)``/``(maximum)``).

Real files are messy: the CSV is preceded by ``==PROF==`` lines and whatever the program
printed (a tensor dump, a training log), column sets differ between ncu versions (``Kernel
Time``, NVTX range columns, Block/Grid Size, Device, CC, rule columns come and go), and
numbers carry thousands separators or locale decimal commas. Columns are found by name; the
preamble is skipped up to the header row; rows that are not CSV are skipped and counted.

ncu 2024.x/2025.x (e.g. on Blackwell) put the five rule columns at the end of the details
header but end each metric row after ``Metric Value``: a metric row is shorter than the
header, and only rule rows (whose metric cells are empty) run its full width. Short rows
are therefore accepted when they stop inside that trailing rule block and are read as if
the missing cells were empty; a row shorter than that, or one cut inside a quoted cell, is
still a bad row. Kernels come out in ID order, so rows written in any order give the same
result.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from typing import BinaryIO, ClassVar

from artifacts.nsight.parsers.ncu.common import (
    MAX_KERNELS,
    KernelBuilder,
    LocaleNumbers,
    NcuResult,
)
from artifacts.parsers.base import ParseError
from artifacts.parsers.textutil import LineReader, head_text

KIND = "ncu_csv"
# 2: metric rows of ncu 2024+ (shorter than their header) are read; kernels sorted by ID
VERSION = 2

_HEADER = re.compile(r'^\s*"?ID"?\s*,\s*"?Process ID"?\s*,', re.M)
# `--print-summary per-kernel`: no ID; one row per kernel and metric over its invocations
_SUMMARY_HEADER = re.compile(r'^\s*"?Process ID"?\s*,.*"?Invocations"?\s*,', re.M)
# identity columns -> kernel fields; everything else in a raw page is a metric
_IDENTITY = {
    "id": "id", "process id": "process_id", "process name": "process_name",
    "host name": "host", "kernel name": "name", "kernel time": "kernel_time",
    "context": "context", "stream": "stream", "block size": "block", "grid size": "grid",
    "device": "device", "cc": "cc",
}  # fmt: skip
_RULE_KEYS = ("rule_name", "rule_type", "rule_description", "speedup_type", "speedup")
_LONG = {
    "section name": "section", "metric name": "metric", "metric unit": "unit",
    "metric value": "value", "rule name": "rule_name", "rule type": "rule_type",
    "rule description": "rule_description", "estimated speedup type": "speedup_type",
    "estimated speedup": "speedup", "invocations": "invocations", "average": "value",
    "minimum": "minimum", "maximum": "maximum",
}  # fmt: skip
MAX_NOTES = 20


@dataclasses.dataclass(frozen=True)
class NcuCsvResult(NcuResult):
    kind: ClassVar[str] = KIND


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    return bool(_HEADER.search(text) or _SUMMARY_HEADER.search(text)) and "Kernel Name" in text


def parse(stream: BinaryIO) -> NcuCsvResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    if state.columns is None:
        raise ParseError(
            'no Nsight Compute CSV header ("ID","Process ID",...,"Kernel Name",...) found; '
            "was the report printed with `ncu --csv --page details` or `--page raw`?"
        )
    kernels = state.finish()
    if not kernels:
        raise ParseError("the Nsight Compute CSV header is there but no kernel row follows it")
    warnings = [*reader.repair_warnings(), *state.notes]
    if state.bad_rows:
        warnings.append(
            f"{state.bad_rows} line(s) after the header were not CSV rows and were skipped"
        )
    if state.dropped_kernels:
        warnings.append(f"only the first {MAX_KERNELS} kernels were kept")
    dropped_metrics = sum(b.dropped for b in state.builders.values())
    if dropped_metrics:
        warnings.append(
            f"{dropped_metrics} metric value(s) beyond the per-kernel cap were left out"
        )
    return NcuCsvResult(
        page=state.page or "details", kernels=tuple(kernels), warnings=tuple(warnings)
    )


class _State:
    def __init__(self) -> None:
        self.columns: list[str] | None = None
        self.page = ""
        self.index: dict[str, int] = {}
        self.nvtx_columns: list[int] = []
        self.metric_columns: list[int] = []
        # Shortest row accepted: full width unless the header ends in the rule block,
        # which ncu 2024+ leaves off metric rows (see the module docstring).
        self.min_cells = 0
        self.units: list[str] = []
        self.expect_units = False
        self.run = 0
        self.builders: dict[tuple[int, str], KernelBuilder] = {}
        self.bad_rows = 0
        self.dropped_kernels = False
        self.notes: list[str] = []

    def feed(self, line: str) -> None:
        stripped = line.strip()
        if not stripped:
            return
        if stripped.startswith("=="):
            self._prof_line(stripped)
            return
        if (_HEADER.match(line) or _SUMMARY_HEADER.match(line)) and "Kernel Name" in line:
            self._header(next(csv.reader([line])))
            return
        if self.columns is None:
            return  # program output before the CSV
        cells = self._fit(next(csv.reader([line]), []), line)
        if cells is None:
            self.bad_rows += 1
            return
        if self.expect_units:
            self.expect_units = False
            if not cells[self.index["id"]].strip():
                self.units = [c.strip() for c in cells]
                return
        if self.page == "raw":
            self._raw_row(cells)
        else:
            self._long_row(cells)

    def _fit(self, cells: list[str], line: str) -> list[str] | None:
        """The row's cells at the header's width, or None when the row does not fit it."""
        if line.count('"') % 2:
            # cut inside a quoted cell (the last line of a truncated file): "5,8 of "5,824"
            # would be read as a wrong number, so the row is not read at all
            return None
        width = len(self.columns or ())
        if len(cells) == width:
            return cells
        if len(cells) > width:
            # "...,"" trailing separators some exporters add: harmless when empty
            return cells[:width] if not any(c.strip() for c in cells[width:]) else None
        if len(cells) < self.min_cells:
            return None  # too short even for a metric row
        return cells + [""] * (width - len(cells))

    def _prof_line(self, line: str) -> None:
        """==PROF== progress is noise; ==WARNING==/==ERROR== lines tell the user something."""
        if line.startswith(("==WARNING==", "==ERROR==")) and len(self.notes) < MAX_NOTES:
            self.notes.append(line[:500])

    def _header(self, cells: list[str]) -> None:
        self.columns = [c.strip() for c in cells]
        self.run += 1
        lowered = [c.lower() for c in self.columns]
        self.index = {}
        for i, c in enumerate(lowered):
            key = _IDENTITY.get(c) or _LONG.get(c)
            if key and key not in self.index:
                self.index[key] = i
        self.nvtx_columns = [i for i, c in enumerate(lowered) if "domain" in c and "range" in c]
        summary = "invocations" in lowered and "average" in lowered and "id" not in lowered
        long = "metric name" in lowered and ("metric value" in lowered or summary)
        self.page = "summary" if summary else "details" if long else "raw"
        known = set(self.index.values()) | set(self.nvtx_columns)
        self.metric_columns = [] if long else [i for i in range(len(cells)) if i not in known]
        self.units = [""] * len(cells)
        self.expect_units = not long
        self.min_cells = len(cells)
        rule_columns = sorted(self.index[k] for k in _RULE_KEYS if k in self.index)
        if (
            long
            and rule_columns
            and rule_columns == list(range(len(cells) - len(rule_columns), len(cells)))
        ):
            self.min_cells = rule_columns[0]
        if "id" not in self.index and not summary:
            self.index["id"] = 0

    def _builder(self, cells: list[str]) -> KernelBuilder | None:
        if "id" in self.index:
            kernel_key = cells[self.index["id"]].strip()
        else:  # the summary page: a kernel is its name and launch, numbered as first seen
            kernel_key = "\t".join(
                cells[self.index[k]] for k in ("name", "block", "grid", "device") if k in self.index
            )
        key = (self.run, kernel_key)
        builder = self.builders.get(key)
        if builder is not None:
            return builder
        if len(self.builders) >= MAX_KERNELS:
            self.dropped_kernels = True
            return None
        identity = {
            field: (cells[i].strip() or None)
            for field, i in self.index.items()
            if field in _IDENTITY.values() and field != "id"
        }
        try:
            kernel_id = int(kernel_key.replace(",", ""))
        except ValueError:
            kernel_id = len(self.builders)
        if not 0 <= kernel_id < 2**31:
            kernel_id = len(self.builders)
        builder = KernelBuilder(kernel_id, identity)
        builder.nvtx = [v for v in (_nvtx(cells[i]) for i in self.nvtx_columns) if v]
        self.builders[key] = builder
        return builder

    def _long_row(self, cells: list[str]) -> None:
        builder = self._builder(cells)
        if builder is None:
            return

        def cell(key: str) -> str:
            i = self.index.get(key)
            return cells[i].strip() if i is not None else ""

        section = cell("section")
        if cell("invocations") and not builder.metrics:  # the summary page's kernel count
            builder.add_metric("Summary", "Invocations", "", cell("invocations"))
        if cell("metric"):
            builder.add_metric(section, cell("metric"), cell("unit"), cell("value"))
            # the summary page: the average is the value; a spread over invocations is kept
            for bound in ("minimum", "maximum"):
                if cell(bound) and cell(bound) != cell("value"):
                    name = f"{cell('metric')} ({bound})"
                    builder.add_metric(section, name, cell("unit"), cell(bound))
        if cell("rule_name") or cell("rule_description"):
            builder.add_rule(
                section,
                cell("rule_name"),
                cell("rule_type"),
                cell("rule_description"),
                cell("speedup_type"),
                cell("speedup"),
            )

    def _raw_row(self, cells: list[str]) -> None:
        builder = self._builder(cells)
        if builder is None:
            return
        for i in self.metric_columns:
            if cells[i].strip():
                builder.add_metric("raw", self.columns[i], self.units[i], cells[i])  # type: ignore[index]

    def finish(self) -> list:
        numbers = LocaleNumbers()
        # ID order within each header's run: rows may arrive in any order (sorted() is
        # stable, so kernels without a numeric ID keep the order they were first seen).
        ordered = sorted(self.builders.items(), key=lambda item: (item[0][0], item[1].id))
        return [b.build(numbers) for _, b in ordered]  # frees each raw row list


def _nvtx(text: str) -> str:
    """NVTX cells come wrapped in stray quotes and spaces: ' "0:<default domain>:x:none" '."""
    return text.strip().strip('"').strip()
