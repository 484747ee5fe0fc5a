"""Nsight Compute's default text output (``ncu ./app`` without ``--csv``): the details page
as printed to the console.

Shape: ``==PROF==`` progress lines and program output, then per process a ``[pid]
name@host`` line, per kernel a line indented by two spaces (its name, and on recent versions
``(gx, gy, gz)x(bx, by, bz), Context c, Stream s, Device d, CC x.y``), optional NVTX range
lines, and per section ``Section: <name>`` with a metric table framed by dashed lines (the
dashes give the column positions: name, unit, value) followed by rule messages
(``OPT``/``WRN``/``INF`` with indented continuation lines and ``Est. Speedup: n%``).

A separate kind from ``ncu_csv`` because the numbers differ in kind: the text page rounds
values and scales units per value (``usecond`` here, ``msecond`` there), while the CSV holds
them as collected; keeping the kind says which one a number came from. Both produce the
same per-kernel result (see ``ncu_common``).
"""

from __future__ import annotations

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

KIND = "ncu_text"
VERSION = 1
# Text only this tool prints: with it, detection is sure (artifacts/parsers/detection.py).
BANNERS = (b"==PROF== Connected to process",)

_PROCESS = re.compile(r"^\[(?P<pid>\d+)\] (?P<name>.+?)@(?P<host>\S+)\s*$")
_KERNEL = re.compile(r"^  (?P<line>\S.*?)\s*$")
_LAUNCH = re.compile(
    r"^(?P<name>.*?) \((?P<grid>\d+, ?\d+, ?\d+)\)x\((?P<block>\d+, ?\d+, ?\d+)\)"
    r"(?:, Context (?P<context>\d+))?(?:, Stream (?P<stream>\d+))?"
    r"(?:, Device (?P<device>\d+))?(?:, CC (?P<cc>[\d.]+))?\s*$"
)
# ncu 2021-2022: "name, 2024-Jul-13 20:38:34, Context 1, Stream 7"
_TIMED = re.compile(
    r"^(?P<name>.*?), (?P<time>\d{4}-\w{3}-\d{1,2} \d{2}:\d{2}:\d{2}), "
    r"Context (?P<context>\d+), Stream (?P<stream>\d+)\s*$"
)
_SECTION = re.compile(r"^\s{4}Section: (?P<section>.+?)\s*$")
_DASHES = re.compile(r"^\s*-+(?:\s+-+)+\s*$")
_RULE = re.compile(r"^\s{4}(?P<type>OPT|WRN|INF|ERR)\s+(?P<text>.*?)\s*$")
_SPEEDUP = re.compile(
    r"Est\. (?P<scope>Local |Global )?Speedup: (?P<value>[\d.,]+)%", re.IGNORECASE
)
# A kernel's name alone: C++ names hold "::" but never a lone colon or a quote, which
# other programs' indented lines do ('  File "x.py", line 3', "  Local device: hfi1_0").
_BARE_NAME = re.compile(r'^[^":]*(?:::[^":]*)*$')
_NVTX_HEADER = re.compile(r"^\s{4}NVTX (?:Start/End|Push/Pop) Ranges:\s*$")


@dataclasses.dataclass(frozen=True)
class NcuTextResult(NcuResult):
    kind: ClassVar[str] = KIND


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    return (
        "==PROF==" in text
        and bool(re.search(r"^\s{4}Section: ", text, re.M))
        and bool(re.search(r"^\[\d+\] \S.*@\S+\s*$", text, re.M))
    )


def parse(stream: BinaryIO) -> NcuTextResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    state.close_rule()
    if not state.builders:
        raise ParseError(
            "no Nsight Compute kernel found: expected a '[pid] process@host' line followed by "
            "kernel names and 'Section:' tables (ncu's default text output)"
        )
    numbers = LocaleNumbers()
    kernels = [b.build(numbers) for b in state.builders]
    warnings = [*reader.repair_warnings()]
    if state.dropped:
        warnings.append(f"only the first {MAX_KERNELS} kernels were kept")
    return NcuTextResult(page="text", kernels=tuple(kernels), warnings=tuple(warnings))


class _State:
    def __init__(self) -> None:
        self.process: dict[str, str | None] | None = None
        self.builders: list[KernelBuilder] = []
        self.current: KernelBuilder | None = None
        self.section = ""
        self.spans: list[tuple[int, int]] = []
        self.in_table = False
        self.table_rows = 0
        self.in_nvtx = False
        self.rule: list[str] | None = None  # [type, text...]
        self.dropped = False
        # a two-space line that is only a name: a kernel once a section or NVTX list follows
        # it, else another program's line ("  main") landed in the report. Never, once a
        # kernel line had the launch shape: one ncu version prints one shape for all.
        self.pending: str | None = None
        self.shaped = False

    def feed(self, line: str) -> None:
        if line.startswith("==") or not line.strip():
            self.close_rule()
            self.in_nvtx = False
            return
        if m := _PROCESS.match(line):
            self.close_rule()
            self.process = {"process_id": m["pid"], "process_name": m["name"], "host": m["host"]}
            self.current = self.pending = None
            return
        if self.process is None:
            return  # program output before the first profiled process
        if not line.startswith(" "):
            # another program's line (or output after the report): the report prints nothing
            # at column 0 but its process lines, so it is passed over and the kernel it fell
            # into keeps the sections that follow
            self.close_rule()
            return
        kernel = _KERNEL.match(line)
        if kernel and (_LAUNCH.match(kernel["line"]) or _TIMED.match(kernel["line"])):
            # a launch line starts the next kernel even where the last one's rules left a
            # table open (ncu 2025 separates rules with a "----- ----" line, table-shaped)
            self.shaped = True
            self._kernel(kernel["line"])
            return
        if kernel and not self.in_table:
            text = kernel["line"]
            if not self.shaped and _BARE_NAME.match(text) and not self._awaiting_sections():
                self.pending = text
            return
        if self.pending is not None and (_SECTION.match(line) or _NVTX_HEADER.match(line)):
            self._kernel(self.pending)
        if self.current is None:
            return
        self._inside_kernel(line)

    def _awaiting_sections(self) -> bool:
        """A kernel named by its launch shape that has nothing yet: a bare two-space line
        now is another program's, not the next kernel."""
        current = self.current
        return current is not None and not (current.nvtx or current.metrics or current.rules)

    def _kernel(self, text: str) -> None:
        self.close_rule()
        self.pending = None
        if len(self.builders) >= MAX_KERNELS:
            self.dropped = True
            self.current = None
            return
        identity: dict[str, str | None] = dict(self.process or {})
        launch = _LAUNCH.match(text)
        if launch:
            identity.update(
                name=launch["name"],
                grid=f"({launch['grid']})",
                block=f"({launch['block']})",
                context=launch["context"],
                stream=launch["stream"],
                device=launch["device"],
                cc=launch["cc"],
            )
        elif timed := _TIMED.match(text):
            identity.update(
                name=timed["name"],
                kernel_time=timed["time"],
                context=timed["context"],
                stream=timed["stream"],
            )
        else:
            identity["name"] = text
        self.current = KernelBuilder(len(self.builders), identity)
        self.builders.append(self.current)
        self.section = ""
        self.in_table = False

    def _inside_kernel(self, line: str) -> None:
        assert self.current is not None
        if m := _SECTION.match(line):
            self.close_rule()
            self.section = m["section"]
            self.in_table = False
            self.in_nvtx = False
            return
        if _NVTX_HEADER.match(line):
            self.in_nvtx = True
            return
        if _DASHES.match(line):
            # frames: dashes, [titles, dashes,] rows, dashes
            self.close_rule()
            if not self.in_table and self.section:
                self.spans = [(m.start(), m.end()) for m in re.finditer(r"-+", line)]
                self.in_table, self.table_rows = True, 0
            elif self.table_rows:
                self.in_table = False
            return
        if self.in_table and len(self.spans) >= 2:
            self._metric_row(line)
            return
        if m := _RULE.match(line):
            self.close_rule()
            self.rule = [m["type"], m["text"]]
            return
        if self.rule is not None:
            self.rule.append(line.strip())
            return
        if self.in_nvtx:
            self._nvtx(line)

    def _metric_row(self, line: str) -> None:
        assert self.current is not None
        cells = []
        for i, (_start, end) in enumerate(self.spans):
            begin = self.spans[i - 1][1] if i else 0
            cells.append(
                line[begin:].strip() if i == len(self.spans) - 1 else line[begin:end].strip()
            )
        name, unit, value = cells[0], cells[1] if len(cells) > 2 else "", cells[-1]
        if name == "Metric Name" and value == "Metric Value":
            return  # the column titles inside the frame (ncu 2023+)
        if name:
            self.table_rows += 1
            self.current.add_metric(self.section, name, unit, value)

    def _nvtx(self, line: str) -> None:
        """NVTX lines nest domain and range: '<default domain>' then '<0,convLayer>'."""
        assert self.current is not None
        text = line.strip()
        if self.current.nvtx and text.startswith("<") and "," in text:
            self.current.nvtx[-1] = f"{self.current.nvtx[-1]}:{text.strip('<>')}"
        else:
            self.current.nvtx.append(text.strip("<>"))

    def close_rule(self) -> None:
        if self.rule is None or self.current is None:
            self.rule = None
            return
        kind, *parts = self.rule
        text = " ".join(p for p in parts if p)
        speedup = _SPEEDUP.search(text)
        self.current.add_rule(
            self.section,
            "",
            kind,
            text,
            ((speedup["scope"] or "").strip().lower() or "global") if speedup else "",
            speedup["value"] if speedup else "",
        )
        self.rule = None
