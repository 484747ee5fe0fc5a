"""Generic metrics upload: any benchmark that yields numbers, as JSON or CSV.

Training frameworks (Megatron, DeepSpeed, torchtitan) print tokens/s, MFU and step time;
in-house tools print their own figures. This kind takes them in one documented shape
(docs/formats.md, ``## metrics``) so that they get series, baselines and regression
detection like nccl-tests does. Each record is one metric of one benchmark: a value (or
repeated values), its unit, which way is better, optionally a message size, and the facts
that place it (hosts, profile, GPU, ranks, software stack, NCCL_* environment).

JSON: an object ``{"benchmark": ..., "metrics": [{...}, ...], <context>}`` or a list of
such objects; keys of a metric override the object's. CSV: a header naming at least
``benchmark``, ``metric`` and ``value``; one value per row, rows of the same benchmark,
metric and size are repeats. Detection is strict (those keys/columns must be in the first
bytes) so that no other kind's file is taken for a metrics upload.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO, ClassVar

from artifacts.parsers.base import ParseError, ParseResult, iter_text_lines

KIND = "metrics"
VERSION = 1

MAX_JSON_BYTES = 16 * 1024 * 1024  # a metrics file is small; a bigger one is something else
MAX_RECORDS = 100_000
STACK_KEYS = ("nccl", "cuda", "driver", "kernel", "pytorch", "ofed", "nic_firmware")
_TIME_UNITS = re.compile(r"^(ns|us|µs|ms|s|sec|seconds?|min|minutes?|h|hours?)$", re.IGNORECASE)
_LOWER_NAMES = re.compile(r"(time|latency|lat_|_lat\b|duration|idle|loss|memory)", re.IGNORECASE)
_CONTEXT_KEYS = ("measured_at", "host", "profile", "gpu", "nranks", "nnodes", "label")


@dataclasses.dataclass(frozen=True)
class MetricRecord:
    benchmark: str
    metric: str
    unit: str
    direction: str  # "higher" | "lower": which way is better
    values: tuple[float, ...]  # repeats of one measurement (one value is the usual case)
    size_bytes: int = 0  # 0 = not a per-size metric
    resolution: float = 0.0  # absolute print step of the values (0 = exact)
    measured_at: str | None = None
    host: str | None = None
    hosts: tuple[str, ...] = ()
    profile: str | None = None
    gpu: str | None = None
    nranks: int | None = None
    nnodes: int | None = None
    stack: dict[str, str] = dataclasses.field(default_factory=dict)
    env: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def value(self) -> float:
        return sum(self.values) / len(self.values)


@dataclasses.dataclass(frozen=True)
class MetricsResult(ParseResult):
    kind: ClassVar[str] = "metrics"

    format: str = "json"  # "json" | "csv"
    records: tuple[MetricRecord, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "warnings": len(self.warnings),
            "format": self.format,
            "records": len(self.records),
            "benchmarks": sorted({r.benchmark for r in self.records})[:20],
            "metrics": sorted({r.metric for r in self.records})[:20],
        }


# --------------------------------------------------------------------------------- sniffing


def accepts(name: str, head: bytes) -> bool:
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] in (b"{", b"["):
        # Strict: a benchmark name and a metrics list near the top, and no trace events
        # (a Kineto trace is JSON too and may mention "metrics" in its metadata).
        return (
            b'"benchmark"' in text[:65536]
            and b'"metrics"' in text[:65536]
            and b'"traceEvents"' not in text[:65536]
        )
    header = _csv_header(text)
    return header is not None and {"benchmark", "metric"} <= header and "value" in header


def _csv_header(text: bytes) -> set[str] | None:
    for raw in text.decode("utf-8", "replace").splitlines()[:20]:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "," not in line:
            return None
        return {cell.strip().strip('"').lower() for cell in line.split(",")}
    return None


# ---------------------------------------------------------------------------------- parsing


def parse(stream: BinaryIO) -> MetricsResult:
    head = stream.read(65536)
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped[:1] in (b"{", b"["):
        data = head + stream.read(MAX_JSON_BYTES + 1 - len(head))
        if len(data) > MAX_JSON_BYTES:
            raise ParseError(f"metrics JSON larger than {MAX_JSON_BYTES // 2**20} MiB")
        return _parse_json(data)
    return _parse_csv(_chain(head, stream))


def _chain(first: bytes, rest: BinaryIO) -> Iterator[str]:
    """Text lines of the bytes read so far followed by the rest of the stream."""

    class _Joined(io.RawIOBase):
        def __init__(self) -> None:
            self.buffer = memoryview(first)

        def readable(self) -> bool:
            return True

        def readinto(self, b: Any) -> int:
            if self.buffer:
                n = min(len(b), len(self.buffer))
                b[:n] = self.buffer[:n]
                self.buffer = self.buffer[n:]
                return n
            chunk = rest.read(len(b))
            b[: len(chunk)] = chunk
            return len(chunk)

    return iter_text_lines(io.BufferedReader(_Joined()))  # type: ignore[arg-type]


def _parse_json(data: bytes) -> MetricsResult:
    try:
        doc = json.loads(data.decode("utf-8-sig", "strict"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ParseError(f"not valid JSON: {exc}") from None
    groups = doc if isinstance(doc, list) else [doc]
    warnings: list[str] = []
    records: list[MetricRecord] = []
    for g, group in enumerate(groups):
        if not isinstance(group, dict):
            warnings.append(f"entry {g}: not an object, skipped")
            continue
        metrics = group.get("metrics")
        if not isinstance(metrics, list):
            warnings.append(f"entry {g}: no 'metrics' list, skipped")
            continue
        base = {k: v for k, v in group.items() if k != "metrics"}
        for m, item in enumerate(metrics):
            where = f"entry {g} metric {m}"
            if not isinstance(item, dict):
                warnings.append(f"{where}: not an object, skipped")
                continue
            try:
                records.append(_record({**base, **item}, warnings, where))
            except _Skip as exc:
                warnings.append(f"{where}: {exc}, skipped")
            if len(records) >= MAX_RECORDS:
                warnings.append(f"more than {MAX_RECORDS} metrics: the rest is not read")
                return _result("json", records, warnings)
    return _result("json", records, warnings)


def _parse_csv(lines: Iterator[str]) -> MetricsResult:
    # Comment lines become blank ones (skipped below), so reader.line_num is the file's line.
    content = ("" if line.lstrip().startswith("#") else line for line in lines)
    reader = csv.reader(content)
    try:
        header = []
        while not any(cell.strip() for cell in header):
            header = [cell.strip().lower() for cell in next(reader)]
    except StopIteration:
        raise ParseError("empty file: expected a header with benchmark,metric,value") from None
    except csv.Error as exc:
        raise ParseError(f"not a CSV file: {exc}") from None
    missing = {"benchmark", "metric", "value"} - set(header)
    if missing:
        raise ParseError(f"the CSV header lacks {', '.join(sorted(missing))}")
    raw_header = header
    warnings: list[str] = []
    grouped: dict[tuple[Any, ...], MetricRecord] = {}
    line_no = reader.line_num
    try:
        for row in reader:
            line_no = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            cells = dict(zip(raw_header, (c.strip() for c in row), strict=False))
            env = {k.upper(): v for k, v in cells.items() if k.upper().startswith("NCCL_") and v}
            item: dict[str, Any] = {k: v for k, v in cells.items() if v != ""}
            item["env"] = env
            item["stack"] = {k: cells[k] for k in STACK_KEYS if cells.get(k)}
            try:
                record = _record(item, warnings, f"line {line_no}")
            except _Skip as exc:
                warnings.append(f"line {line_no}: {exc}, skipped")
                continue
            key = (record.benchmark, record.metric, record.size_bytes, record.measured_at,
                   record.host, record.nranks)  # fmt: skip
            if key in grouped:  # a repeat of the same measurement
                earlier = grouped[key]
                record = dataclasses.replace(earlier, values=earlier.values + record.values)
            grouped[key] = record
            if len(grouped) >= MAX_RECORDS:
                warnings.append(f"more than {MAX_RECORDS} metrics: the rest is not read")
                break
    except csv.Error as exc:
        raise ParseError(f"line {line_no}: not valid CSV: {exc}") from None
    return _result("csv", list(grouped.values()), warnings)


def _result(fmt: str, records: list[MetricRecord], warnings: list[str]) -> MetricsResult:
    if not records:
        detail = f" ({warnings[0]})" if warnings else ""
        raise ParseError(f"no usable metric in the file{detail}")
    return MetricsResult(format=fmt, records=tuple(records), warnings=tuple(warnings[:200]))


# ---------------------------------------------------------------------------------- records


class _Skip(ValueError):
    """One record is unusable; the file goes on."""


def _record(item: Mapping[str, Any], warnings: list[str], where: str) -> MetricRecord:
    benchmark = _name(item.get("benchmark"), "benchmark", 40)
    metric = _name(item.get("metric") or item.get("name"), "metric", 40)
    unit = _text(item.get("unit"), 20) or ""
    values = _values(item)
    direction = _direction(item, metric, unit, warnings, where)
    return MetricRecord(
        benchmark=benchmark,
        metric=metric,
        unit=unit,
        direction=direction,
        values=values,
        size_bytes=_count(item.get("size_bytes"), "size_bytes") or 0,
        resolution=_resolution(item.get("resolution")),
        measured_at=_text(item.get("measured_at") or item.get("time"), 64),
        host=_text(item.get("host"), 255),
        hosts=_hosts(item.get("hosts")),
        profile=_text(item.get("profile"), 80),
        gpu=_text(item.get("gpu"), 120),
        nranks=_count(item.get("nranks"), "nranks"),
        nnodes=_count(item.get("nnodes"), "nnodes"),
        stack=_stack(item.get("stack")),
        env=_env(item.get("env")),
    )


def _name(value: Any, what: str, limit: int) -> str:
    text = _text(value, 200)
    if not text:
        raise _Skip(f"no {what}")
    if len(text) > limit:
        raise _Skip(f"{what} {text[:50]!r} is longer than {limit} characters")
    return text


def _text(value: Any, limit: int) -> str | None:
    if value is None or isinstance(value, dict | list | bool):
        return None
    text = str(value).strip()
    return text[:limit] or None


def _number(value: Any) -> float:
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        raise _Skip(f"value {value!r} is not a number")
    try:
        number = float(str(value).strip())
    except ValueError:
        raise _Skip(f"value {str(value)[:40]!r} is not a number") from None
    if not math.isfinite(number):
        raise _Skip(f"value {value!r} is not a finite number")
    return number


def _values(item: Mapping[str, Any]) -> tuple[float, ...]:
    raw = item.get("values")
    if raw is None:
        raw = item.get("value")
    if isinstance(raw, list):
        if not raw:
            raise _Skip("empty 'values'")
        return tuple(_number(v) for v in raw[:10_000])
    if raw is None:
        raise _Skip("no value")
    return (_number(raw),)


def _direction(
    item: Mapping[str, Any], metric: str, unit: str, warnings: list[str], where: str
) -> str:
    raw = item.get("better", item.get("direction"))
    text = str(raw).strip().lower() if raw is not None else ""
    if text in ("higher", "lower"):
        return text
    if text:
        raise _Skip(f"'better' must be higher or lower, not {str(raw)[:20]!r}")
    guess = "lower" if _TIME_UNITS.match(unit) or _LOWER_NAMES.search(metric) else "higher"
    warnings.append(f"{where}: no 'better' given for {metric}; taken as {guess} is better")
    return guess


def _count(value: Any, what: str) -> int | None:
    if value is None or value == "":
        return None
    number = _number(value)
    if number < 0 or number != int(number) or number > 2**62:
        raise _Skip(f"{what} {value!r} is not a whole number >= 0")
    return int(number)


def _resolution(value: Any) -> float:
    if value is None or value == "":
        return 0.0
    number = _number(value)
    if number < 0:
        raise _Skip(f"resolution {value!r} is negative")
    return number


def _hosts(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.replace(";", " ").split()
    if not isinstance(value, list):
        return ()
    return tuple(t for h in value[:1000] if (t := _text(h, 255)))


def _stack(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    out = {}
    for key, raw in value.items():
        name = str(key).strip().lower()
        if name in STACK_KEYS and (text := _text(raw, 80)):
            out[name] = text
    return out


def _env(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    out = {}
    for key, raw in value.items():
        name = str(key).strip()
        if name.startswith("NCCL_") and (text := _text(raw, 500)):
            out[name[:120]] = text
    return dict(sorted(out.items()))
