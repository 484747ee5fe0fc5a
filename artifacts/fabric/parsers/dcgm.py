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
_GPU_LIST = re.compile(r"GPUs?:\s*(?P<ids>[\d,\s.]+)")
_MESSAGE_ROWS = {"Warning", "Info", "Error"}
_SECTION = re.compile(r"^[|+]-+\s+(?P<name>[A-Za-z][\w ]*?)\s+-+\+")
_META = {"DCGM Version": "dcgm_version", "Driver Version Detected": "driver_version",
         "GPU Device IDs Detected": "gpu_device_ids", "Number of GPUs": "gpus"}  # fmt: skip
_DMON_HEADER = re.compile(r"^\s*#\s*Entity\s+(?P<fields>.+?)\s*$")
_DMON_ROW = re.compile(
    r"^\s*(?P<kind>GPU|GPU-I|GPU-CI|Switch|Link|CPU|Core)\s+(?P<id>\d+)\s+(?P<rest>.*)$"
)
_DEFAULT_WIDTH = 45  # DCGM's result column: 48 wide, one space either side, wraps at 45
_UNITS = {
    "POWER": "W", "TEMP": "C", "TMPTR": "C", "MMTMP": "C", "SMCLK": "MHz", "MMCLK": "MHz",
    "GPUTL": "%", "MCUTL": "%", "FBUSD": "MiB", "FBFRE": "MiB", "FBTTL": "MiB",
    "PCITX": "bytes/s", "PCIRX": "bytes/s", "NVLTX": "bytes/s", "NVLRX": "bytes/s",
    "SMACT": "ratio", "SMOCC": "ratio", "TENSO": "ratio", "DRAMA": "ratio", "GRACT": "ratio",
    "FP64A": "ratio", "FP32A": "ratio", "FP16A": "ratio",
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

    def summary(self) -> dict[str, Any]:
        failed = sorted({r.test for r in self.results if r.result == "Fail"})
        return {
            "tests": len({(r.section, r.test) for r in self.results}),
            "failed": failed,
            "messages": len(self.messages),
            "dmon_fields": list(self.fields),
            "samples": len(self.samples),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if "dcgmi " in text and ("| Diagnostic" in text or "#Entity" in text):
        return True
    if re.search(r"^\|\s*Diagnostic\s+\|\s*Result\s+\|", text, re.MULTILINE):
        return True
    if _DMON_HEADER.search(text) and re.search(r"^\s*GPU\s+\d+\s", text, re.MULTILINE):
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
        self.dmon_seen: set[str] = set()
        self.snapshot = 0

    def feed(self, line: str) -> None:
        shell = prompt(line)
        if shell is not None:
            self.host = shell[0] or self.host
            return
        if m := _DMON_HEADER.match(line):
            self.fields = m["fields"].split()
            self.dmon_seen = set()
            return
        if self.fields and (m := _DMON_ROW.match(line)):
            self._dmon(f"{m['kind']} {m['id']}", m["rest"].split())
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
        if self.open_result is not None and _RESULT.match(stripped):
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
            return
        if name in _MESSAGE_ROWS:
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
                    unit=_UNITS.get(field, "count"),
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
            warnings=tuple(warnings),
        )


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
