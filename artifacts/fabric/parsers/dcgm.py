"""NVIDIA DCGM: ``dcgmi diag`` result tables and ``dcgmi dmon`` field samples.

``dcgmi diag`` prints a boxed two-column table: section rows (``|-----  Deployment  ---``),
one row per test with ``Pass``/``Fail``/``Skip``/``Warn`` (optionally ``- GPU: 0`` or
``- GPUs: 1, 2``, or ``- All``), and ``Warning``/``Info``/``Error`` rows whose text DCGM wraps
hard at the column width, mid-word, over continuation rows with an empty first cell. A
continuation that starts with a result word is another result line of the same test
(``Pass - GPUs: 1..7`` then ``Fail - GPU: 0``). Fragments (no header, no closing border,
a last row without its ``|``) are read as far as they go.

``dcgmi dmon`` prints ``#Entity  FIELD FIELD...`` (then an ``ID``/units row) and one row per
entity and interval (``GPU 0  61.5  32``); values become counter rows, ``N/A`` is skipped.
The units row, when there, names each column's unit (``C  W  mJ``). Rows pasted without
their header still say something: the ``dcgmi dmon -e 150,155`` command line names the
fields by id (DCGM's short names for the common ids), else the columns are ``field1``...
``parts`` says which parts were seen: ``diag`` (result rows), ``diag_messages``,
``metadata``, ``dmon_legend`` (``dcgmi dmon -l``: long name, short name, field id; it names
the ``-e`` ids of rows pasted without their header), ``dmon_header``, ``dmon_units``,
``dmon_rows``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import CounterSample, SampleBuffer, prompt
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text, to_number

KIND = "dcgm"
VERSION = 1
# Text only this tool prints: with it, detection is sure (artifacts/parsers/detection.py).
BANNERS = (b"Successfully ran diagnostic",)

_RESULT_WORDS = ("Pass", "Fail", "Skip", "Warn", "Not Run", "Error")
_RESULT = re.compile(r"^(?P<result>Pass|Fail|Skip|Warn|Not Run)\b\s*(?:-\s*(?P<who>.*))?$")
_GPU_RESULT = re.compile(
    r"^GPU\s*(?P<gpu>\d+)\s*:\s*(?P<result>Pass|Fail|Skip|Warn|Not Run)\b(?P<rest>.*)$"
)
_POD_HOST = re.compile(r"\bExecuting in Pod \S+ on Host (?P<host>[\w.\-]+)")
_GPU_LIST = re.compile(r"GPUs?:\s*(?P<ids>[\d,\s.]+)")
_MESSAGE_ROWS = {"Warning", "Info", "Error"}
_SECTION = re.compile(r"^[|+]-+\s+(?P<name>[A-Za-z][\w ]*?)\s+-+\+")
_META = {"DCGM Version": "dcgm_version", "Driver Version Detected": "driver_version",
         "GPU Device IDs Detected": "gpu_device_ids", "Number of GPUs": "gpus"}  # fmt: skip
_DMON_HEADER = re.compile(r"^\s*#\s*Entity\s+(?P<fields>.+?)\s*$", re.MULTILINE)
_DMON_LEGEND = re.compile(
    r"^\s*(?P<long>[a-z][a-z0-9_]*)\s+(?P<short>[A-Z][A-Z0-9_]{2,7})\s+(?P<id>\d+)\s*$"
)
_DMON_UNITS = re.compile(r"^\s*ID(?:\s+(?P<units>.*?))?\s*$")
_DMON_COMMAND = re.compile(r"\bdcgmi\s+dmon\b.*?(?:-e|--field-id)[ =](?P<ids>\d+(?:,\d+)*)")
_DMON_ROW = re.compile(
    r"^\s*(?P<kind>GPU|GPU-I|GPU-CI|Switch|Link|CPU|Core)\s+(?P<id>\d+)\s+(?P<rest>.*)$"
)
_DEFAULT_WIDTH = 45  # DCGM's result column: 48 wide, one space either side, wraps at 45
_UNITS = {
    "POWER": "W", "TEMP": "C", "TMPTR": "C", "MMTMP": "C", "SMCLK": "MHz", "MMCLK": "MHz",
    "GPUTL": "%", "MCUTL": "%", "FBUSD": "MiB", "FBFRE": "MiB", "FBTTL": "MiB",
    "PCITX": "bytes/s", "PCIRX": "bytes/s", "NVLTX": "bytes/s", "NVLRX": "bytes/s",
    "SMACT": "ratio", "SMOCC": "ratio", "TENSO": "ratio", "DRAMA": "ratio", "GRACT": "ratio",
    "FP64A": "ratio", "FP32A": "ratio", "FP16A": "ratio", "TOTEC": "mJ",
}  # fmt: skip
# DCGM field ids -> the short names dmon prints (dcgm_fields.h), for rows pasted without
# their "#Entity" header but after their command line.
_FIELD_IDS = {
    100: "SMCLK", 101: "MMCLK", 140: "MMTMP", 150: "TMPTR", 155: "POWER", 156: "TOTEC",
    203: "GPUTL", 204: "MCUTL", 250: "FBTTL", 251: "FBFRE", 252: "FBUSD",
    1001: "GRACT", 1002: "SMACT", 1003: "SMOCC", 1004: "TENSO", 1005: "DRAMA",
    1006: "FP64A", 1007: "FP32A", 1008: "FP16A", 1009: "PCITX", 1010: "PCIRX",
    1011: "NVLTX", 1012: "NVLRX",
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class DiagResult:
    """One result line of a test: ``gpus`` empty = all GPUs (or not said)."""

    section: str | None
    test: str
    result: str  # Pass | Fail | Skip | Warn | Not Run
    gpus: tuple[int, ...]
    scope: str  # as printed after the dash: "All", "GPU: 0", "GPUs: 1, 2", or ""


@dataclasses.dataclass(frozen=True)
class DiagMessage:
    """A Warning/Info/Error row, unwrapped; ``test`` is the test row it followed."""

    section: str | None
    test: str | None
    level: str
    gpu: int | None
    text: str


@dataclasses.dataclass(frozen=True)
class DcgmResult(ParseResult):
    kind: ClassVar[str] = "dcgm"

    host: str | None = None
    metadata: dict[str, str] = dataclasses.field(default_factory=dict)
    results: tuple[DiagResult, ...] = ()
    messages: tuple[DiagMessage, ...] = ()
    fields: tuple[str, ...] = ()  # dmon columns
    samples: tuple[CounterSample, ...] = ()
    parts: tuple[str, ...] = ()  # which parts of the output were seen (module docstring)

    def summary(self) -> dict[str, Any]:
        failed = sorted({r.test for r in self.results if r.result == "Fail"})
        return {
            "tests": len({(r.section, r.test) for r in self.results}),
            "failed": failed,
            "messages": len(self.messages),
            "dmon_fields": list(self.fields),
            "samples": len(self.samples),
            "parts": list(self.parts),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if "dcgmi " in text and ("| Diagnostic" in text or "#Entity" in text):
        return True
    if re.search(r"^\|\s*Diagnostic\s+\|\s*Result\s+\|", text, re.MULTILINE):
        return True
    dmon_rows = re.search(r"^\s*GPU\s+\d+\s+\S", text, re.MULTILINE)
    if dmon_rows and (_DMON_HEADER.search(text) or _DMON_COMMAND.search(text)):
        return True
    rows = [line for line in text.splitlines()[:400] if line.startswith("|")]
    cells = [line.split("|")[1].strip() for line in rows if line.count("|") >= 2]
    known = sum(
        1
        for c in cells
        if c in ("GPU Memory", "Diagnostic", "PCIe", "Deployment", "Memory Bandwidth",
                 "Targeted Stress", "Targeted Power", "Diagnostic", "NVML Library", "Denylist",
                 "Blacklist", "Persistence Mode", "Page Retirement/Row Remap", "Inforom")
        or c in _MESSAGE_ROWS
    )  # fmt: skip
    results = sum(1 for line in rows if re.search(r"\|\s+(Pass|Fail|Skip|Warn)\b", line))
    return known >= 2 and (results >= 1 or known >= 3)


def parse(stream: BinaryIO) -> DcgmResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    state.finish()
    if not state.results and not state.messages and not state.buffer.rows:
        raise ParseError("no dcgmi diag table rows or dcgmi dmon samples found")
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.host: str | None = None
        self.metadata: dict[str, str] = {}
        self.section: str | None = None
        self.results: list[DiagResult] = []
        self.messages: list[dict[str, Any]] = []
        self.current_test: str | None = None
        self.open_message: dict[str, Any] | None = None
        self.open_result: dict[str, Any] | None = None
        self.width = _DEFAULT_WIDTH
        self.fields: list[str] = []
        self.buffer = SampleBuffer()
        self.units: dict[str, str] = {}
        self.field_cols: list[int] = []
        self.dmon_seen: set[str] = set()
        self.snapshot = 0
        self.parts: dict[str, None] = {}  # insertion-ordered set
        self.legend: dict[int, str] = {}  # field id -> short name, from "dcgmi dmon -l"
        self.field_ids: list[int] = []  # from "dcgmi dmon -e ..."

    def feed(self, line: str) -> None:
        shell = prompt(line)
        if m := _POD_HOST.search(line):  # kubectl exec into the GPU operator's dcgm pod
            self.host = self.host or m["host"]
            return
        if m := _DMON_LEGEND.match(line):
            # "dcgmi dmon -l": long name, short name, field id; it names -e ids we do not know
            self.legend[int(m["id"])] = m["short"]
            self.parts["dmon_legend"] = None
            return
        if (command := _DMON_COMMAND.search(line)) and not self.fields:
            self.field_ids = [int(i) for i in command["ids"].split(",")]
        if shell is not None:
            self.host = shell[0] or self.host
            return
        if m := _DMON_HEADER.match(line):
            self.fields = m["fields"].split()
            self.field_cols = [w.start() for w in re.finditer(r"\S+", line)][1:]
            self.units = {}
            self.dmon_seen = set()
            self.parts["dmon_header"] = None
            return
        if self.fields and (m := _DMON_UNITS.match(line)):
            self.units = _units_by_column(line, self.fields, self.field_cols)
            self.parts["dmon_units"] = None
            return
        if m := _DMON_ROW.match(line):
            values = m["rest"].split()
            if not self.fields and self.field_ids:  # rows after "dcgmi dmon -e 150,155"
                names = {**_FIELD_IDS, **self.legend}
                self.fields = [names.get(i, f"field{i}") for i in self.field_ids]
            if not self.fields:  # a fragment of bare rows: number the columns
                self.fields = [f"field{i + 1}" for i in range(len(values))]
            self.parts["dmon_rows"] = None
            self._dmon(f"{m['kind']} {m['id']}", values)
            return
        if line.startswith("+=") or (line.startswith("+-") and " " not in line):
            self._border(line)
            return
        if m := _SECTION.match(line):
            self._close()
            self.section = m["name"].strip()
            return
        if line.startswith("|"):
            self._row(line)

    def _border(self, line: str) -> None:
        bars = [i for i, c in enumerate(line) if c == "+"]
        if len(bars) >= 3:
            self.width = max(10, bars[2] - bars[1] - 3)

    def _row(self, line: str) -> None:
        parts = line.split("|")
        if len(parts) < 3:
            return
        name = parts[1].strip()
        cell = parts[2]
        content = cell[1:] if cell.startswith(" ") else cell
        chunk = content[: self.width] if len(parts) > 3 else content.rstrip()
        if name:
            self._close()
            self._named_row(name, chunk)
            return
        stripped = chunk.strip()
        if self.open_result is not None and (m := _GPU_RESULT.match(stripped)):
            # DCGM 4.x: "GPU0: Pass" rows under the test's overall result, one per GPU
            self._close()
            self._result(self.open_name, f"{m['result']} - GPU: {m['gpu']}{m['rest']}")
        elif self.open_result is not None and _RESULT.match(stripped):
            self._close()
            self._result(self.open_name, stripped)  # another result line of the same test
        elif self.open_message is not None:
            self.open_message["text"] += chunk
        elif self.open_result is not None:
            self.open_result["scope"] += chunk

    open_name: str = ""

    def _named_row(self, name: str, chunk: str) -> None:
        # ``chunk`` keeps its trailing space: DCGM wraps mid-text and the space may be the
        # last character before the wrap ("Check " + "DCGM and ...")
        text = chunk.strip()
        if name in ("Diagnostic",) and text in ("Result", ""):
            return
        if name in _META:
            self.metadata[_META[name]] = text
            self.parts["metadata"] = None
            return
        if name in _MESSAGE_ROWS:
            self.parts["diag_messages"] = None
            self.open_message = {"level": name, "text": chunk, "test": self.current_test,
                                 "section": self.section}  # fmt: skip
            return
        self.current_test = name
        self.open_name = name
        self._result(name, text)

    def _result(self, name: str, text: str) -> None:
        m = _RESULT.match(text)
        if m is None:
            self.metadata.setdefault(_snake(name), text)  # a metadata row we do not know
            return
        self.open_result = {"test": name, "result": m["result"], "scope": m["who"] or ""}
        self.parts["diag"] = None

    def _close(self) -> None:
        if self.open_result is not None:
            r = self.open_result
            scope = " ".join(r["scope"].split())
            self.results.append(
                DiagResult(self.section, r["test"], r["result"], _gpus(scope), scope)
            )
            self.open_result = None
        if self.open_message is not None:
            self.messages.append(self.open_message)
            self.open_message = None

    def _dmon(self, entity: str, values: list[str]) -> None:
        if entity in self.dmon_seen:
            self.snapshot += 1
            self.dmon_seen = set()
        self.dmon_seen.add(entity)
        for field, raw in zip(self.fields, values, strict=False):
            number = to_number(raw)
            if number is None:
                continue
            self.buffer.add(
                CounterSample(
                    host=self.host,
                    device=entity,
                    port=None,
                    counter=field,
                    value=number,
                    unit=self.units.get(field) or _UNITS.get(field, "count"),
                    captured_at=None,
                    snapshot=self.snapshot,
                )
            )

    def finish(self) -> None:
        self._close()

    def result(self, warnings: list[str]) -> DcgmResult:
        warnings = warnings + self.buffer.warnings()
        messages = tuple(
            DiagMessage(
                section=m["section"],
                test=m["test"],
                level=m["level"],
                gpu=_first_gpu(m["text"]),
                text=" ".join(m["text"].split()),
            )
            for m in self.messages
        )
        return DcgmResult(
            host=self.host,
            metadata=self.metadata,
            results=tuple(self.results),
            messages=messages,
            fields=tuple(self.fields),
            samples=tuple(self.buffer.rows),
            parts=tuple(self.parts),
            warnings=tuple(warnings),
        )


def _units_by_column(line: str, fields: list[str], cols: list[int]) -> dict[str, str]:
    """``ID  C  W  mJ`` under ``#Entity TMPTR POWER TOTEC GPUTL``: a column without a unit is
    blank, so words are matched to fields by position (each word to the field whose column
    it starts in), not by order."""
    if len(cols) != len(fields):
        return {}
    units: dict[str, str] = {}
    for word in list(re.finditer(r"\S+", line))[1:]:
        at = max((i for i, c in enumerate(cols) if c <= word.start() + 1), default=None)
        if at is not None:
            units.setdefault(fields[at], word.group())
    return units


def _gpus(scope: str) -> tuple[int, ...]:
    m = _GPU_LIST.search(scope)
    if not m:
        return ()
    return tuple(int(x) for x in re.findall(r"\d+", m["ids"]))


def _first_gpu(text: str) -> int | None:
    m = re.match(r"\s*GPU (\d+)\b", text)
    return int(m.group(1)) if m else None


def _snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
