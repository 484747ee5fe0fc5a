"""Prometheus exposition text: a ``/metrics`` scrape (dcgm-exporter, node_exporter, NIC exporters).

Lines are ``# HELP name text``, ``# TYPE name counter|gauge|...`` and samples
``name{label="value",...} value [timestamp]``; OpenMetrics adds ``# EOF``. Every sample
becomes a counter row placed by its labels (see prometheus_common). A timestamp, when the
exporter wrote one (milliseconds since the epoch; OpenMetrics: seconds), is the sample's
``captured_at``; without one the upload metadata/time is used. A file with several scrapes
concatenated (``curl`` run twice) is split into one snapshot per scrape: a series seen again
starts the next snapshot, so one file can already give before/after rates.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from artifacts.fabric.parsers.counters_common import CounterSample, SampleBuffer
from artifacts.metrics.parsers.prometheus.common import LabelFact, place
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text, utc_iso_from_epoch

KIND = "prometheus_text"
VERSION = 1

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_TYPE = re.compile(
    rf"^#\s*TYPE\s+(?P<name>{_NAME})\s+(?P<type>counter|gauge|histogram|summary|untyped|info|"
    r"stateset|gaugehistogram|unknown)\s*$"
)
_HELP = re.compile(rf"^#\s*HELP\s+{_NAME}(\s|$)")
_SAMPLE_START = re.compile(rf"^(?P<name>{_NAME})(?P<rest>[{{\s].*)$")
_LABEL = re.compile(rf'\s*(?P<key>{_NAME})\s*=\s*"(?P<value>(?:[^"\\]|\\.)*)"\s*(?P<sep>,|}})')
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}
_MAX_SERIES = 500_000  # distinct series remembered per scrape (to split concatenated scrapes)


@dataclasses.dataclass(frozen=True)
class MetricFamily:
    name: str
    type: str
    samples: int


@dataclasses.dataclass(frozen=True)
class PrometheusTextResult(ParseResult):
    kind = KIND
    scrapes: int = 0
    families: tuple[MetricFamily, ...] = ()
    hosts: tuple[str, ...] = ()
    samples: tuple[CounterSample, ...] = ()
    facts: tuple[LabelFact, ...] = ()
    # the parts of the exposition format seen: help, type, samples, timestamps, eof; a
    # fragment (samples pasted without their # HELP/# TYPE lines) says so
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "scrapes": self.scrapes,
            "families": len(self.families),
            "samples": len(self.samples),
            "hosts": list(self.hosts),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if text.lstrip("\ufeff \t\r\n").startswith(("{", "[", "<")):
        return False
    typed = labelled = samples = other = 0
    for line in text.splitlines()[:3000]:
        stripped = line.strip()
        if not stripped:
            continue
        if _TYPE.match(stripped) or _HELP.match(stripped):
            typed += 1
        elif stripped.startswith("#"):
            continue
        elif (parsed := split_sample(stripped)) is not None:
            samples += 1
            labelled += bool(parsed[1])
        else:
            other += 1
    if typed and samples and samples >= other:
        return True
    return labelled >= 3 and samples >= 4 * max(other, 1)


def split_sample(line: str) -> tuple[str, dict[str, str], float, float | None] | None:
    """(name, labels, value, timestamp or None) of one sample line, or None if it is not one."""
    m = _SAMPLE_START.match(line)
    if not m or m["name"].endswith(":"):
        return None  # "rx_bytes: 123" is an ethtool/ibstat line, not a series named "rx_bytes:"
    rest = m["rest"]
    labels: dict[str, str] = {}
    if rest.startswith("{"):
        pos = 1
        if rest[1:].lstrip().startswith("}"):
            pos = rest.index("}") + 1
        else:
            while True:
                lm = _LABEL.match(rest, pos)
                if not lm:
                    return None
                labels[lm["key"]] = _unescape(lm["value"])
                pos = lm.end()
                if lm["sep"] == "}":
                    break
                if rest[pos:].lstrip().startswith("}"):  # trailing comma
                    pos = rest.index("}", pos) + 1
                    break
        rest = rest[pos:]
    fields = rest.split()
    if not fields or len(fields) > 2 or (rest and not rest[0].isspace()):
        return None
    value = _number(fields[0])
    if value is None:
        return None
    stamp = None
    if len(fields) == 2:
        stamp = _number(fields[1])
        if stamp is None or not math.isfinite(stamp):
            return None
    return m["name"], labels, value, stamp


def parse(stream: BinaryIO) -> PrometheusTextResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line.strip())
    if not state.samples_seen:
        raise ParseError(
            "no Prometheus samples (name{labels} value [timestamp]) found"
            + (f"; {state.bad} line(s) did not parse" if state.bad else "")
        )
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.buffer = SampleBuffer()
        self.types: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self.seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        self.snapshot = 0
        self.samples_seen = 0
        self.bad = 0
        self.skipped_values = 0
        self.open_metrics = False
        self.facts: dict[tuple[str | None, str | None, str], LabelFact] = {}
        self.uname_host: str | None = None
        self.uname_release: str | None = None
        self.parts: dict[str, None] = {}

    def feed(self, line: str) -> None:
        if not line:
            return
        if line.startswith("#"):
            if line == "# EOF":
                self.open_metrics = True
                self.parts.setdefault("eof", None)
            elif m := _TYPE.match(line):
                self.types.setdefault(m["name"], m["type"])
                self.parts.setdefault("type", None)
            elif _HELP.match(line):
                self.parts.setdefault("help", None)
            return
        parsed = split_sample(line)
        if parsed is None:
            self.bad += 1
            return
        name, labels, value, stamp = parsed
        self.samples_seen += 1
        self.parts.setdefault("samples", None)
        if stamp is not None:
            self.parts.setdefault("timestamps", None)
        key = (name, tuple(sorted(labels.items())))
        if key in self.seen or len(self.seen) >= _MAX_SERIES:
            self.snapshot += 1  # the same series again: the next scrape begins
            self.seen.clear()
        self.seen.add(key)
        self.counts[name] = self.counts.get(name, 0) + 1
        if name == "node_uname_info":
            self.uname_host = labels.get("nodename") or self.uname_host
            self.uname_release = labels.get("release") or self.uname_release
        if not math.isfinite(value):
            self.skipped_values += 1  # NaN/Inf: no counter value to keep
            return
        placed = place(name, labels)
        for fact in placed.facts:
            self.facts[(fact.host, fact.device, fact.name)] = fact
        self.buffer.add(placed.sample(value, self._time(stamp), self.snapshot))

    def _time(self, stamp: float | None) -> str | None:
        if stamp is None:
            return None
        # Exposition text stamps are milliseconds; OpenMetrics uses seconds. A value past
        # 1e11 cannot be seconds (year 5138), so the magnitude tells them apart.
        return utc_iso_from_epoch(stamp / 1000 if stamp > 1e11 else stamp)

    def result(self, repair: list[str]) -> PrometheusTextResult:
        samples = list(self.buffer.rows)
        if self.uname_host:
            host = self.uname_host
            samples = [s if s.host else dataclasses.replace(s, host=host) for s in samples]
        facts = [
            f if f.host or not self.uname_host else dataclasses.replace(f, host=self.uname_host)
            for f in self.facts.values()
        ]
        if self.uname_release:
            facts.append(LabelFact(self.uname_host, None, "kernel.version", self.uname_release))
        # node_uname_info's labels are read twice (its host, and as an info metric): one each
        facts = list({(f.host, f.device, f.name): f for f in facts}.values())
        warnings = list(repair) + self.buffer.warnings()
        if self.bad:
            warnings.append(f"{self.bad} line(s) were neither comments nor samples")
        if self.skipped_values:
            warnings.append(f"{self.skipped_values} NaN/Inf sample value(s) were not kept")
        return PrometheusTextResult(
            scrapes=self.snapshot + 1,
            families=tuple(
                MetricFamily(name, self.types.get(name, "untyped"), n)
                for name, n in sorted(self.counts.items())
            ),
            hosts=tuple(sorted({s.host for s in samples if s.host})),
            samples=tuple(samples),
            facts=tuple(facts),
            parts=tuple(
                p for p in ("help", "type", "samples", "timestamps", "eof") if p in self.parts
            ),
            warnings=tuple(warnings),
        )


def _number(text: str) -> float | None:
    lowered = text.lower()
    if lowered in ("nan", "+inf", "inf", "-inf"):
        return float(lowered)
    try:
        return float(text)
    except ValueError:
        return None


def _unescape(value: str) -> str:
    if "\\" not in value:
        return value
    return re.sub(r"\\[\\\"n]", lambda m: _ESCAPES[m.group(0)], value)


def iter_samples(text: str) -> Iterator[tuple[str, dict[str, str], float, float | None]]:
    """Every sample of an exposition text (helper for tests and notebooks)."""
    for line in text.splitlines():
        parsed = split_sample(line.strip())
        if parsed is not None:
            yield parsed
