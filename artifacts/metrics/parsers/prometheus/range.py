"""Prometheus HTTP API query results (``/api/v1/query_range``, ``/api/v1/query``) as counter series.

``{"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},
"values":[[1717000000,"123"],...]}]}}``: every point becomes a counter row placed by the
series' labels (see prometheus_common) at the point's time, and each distinct timestamp is
its own snapshot, so the fabric pairing turns consecutive points into deltas and per-second
rates (and flags resets) exactly as for two ``ethtool -S`` readings. ``vector`` results
(instant queries, ``"value": [ts, "v"]``) give one snapshot. The bare ``data`` object
(``{"resultType": ..., "result": [...]}``, what ``jq .data`` saves) is accepted too.

The API answers with one JSON document; it is decoded at once (msgspec), bounded by
``MAX_JSON_BYTES``. Prometheus itself caps a range query at 11,000 points per series.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, BinaryIO

import msgspec

from artifacts.fabric.parsers.counters_common import CounterSample, SampleBuffer
from artifacts.metrics.parsers.prometheus.common import LabelFact, place
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import head_text, utc_iso_from_epoch

KIND = "prometheus_range"
VERSION = 1

MAX_JSON_BYTES = 512 * 1024 * 1024


class _Series(msgspec.Struct):
    metric: dict[str, str] = {}
    values: list[tuple[float, str]] | None = None
    value: tuple[float, str] | None = None


class _Data(msgspec.Struct):
    resultType: str  # the API's spelling
    result: msgspec.Raw = msgspec.Raw(b"[]")  # decoded once the type says it holds series


class _Response(msgspec.Struct):
    status: str = "success"
    data: _Data | None = None
    error: str | None = None
    errorType: str | None = None
    # the bare data object, when the file is `jq .data` of a response
    resultType: str | None = None
    result: msgspec.Raw = msgspec.Raw(b"null")


@dataclasses.dataclass(frozen=True)
class PrometheusSeries:
    counter: str
    host: str | None
    device: str | None
    port: int | None
    points: int
    first_at: str | None
    last_at: str | None


@dataclasses.dataclass(frozen=True)
class PrometheusRangeResult(ParseResult):
    kind = KIND
    result_type: str = "matrix"
    series: tuple[PrometheusSeries, ...] = ()
    samples: tuple[CounterSample, ...] = ()
    facts: tuple[LabelFact, ...] = ()
    # "response" (status + data) or "data" (the bare data object, `jq .data`), and the
    # result type: what the file held
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        times = [s.first_at for s in self.series if s.first_at]
        ends = [s.last_at for s in self.series if s.last_at]
        return {
            "result_type": self.result_type,
            "series": len(self.series),
            "points": len(self.samples),
            "first_at": min(times) if times else None,
            "last_at": max(ends) if ends else None,
            "hosts": sorted({s.host for s in self.series if s.host}),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head[:8192]).lstrip("\ufeff \t\r\n")
    if not text.startswith("{"):
        return False
    return '"resultType"' in text and '"result"' in text


def parse(stream: BinaryIO) -> PrometheusRangeResult:
    try:
        raw = stream.read(MAX_JSON_BYTES + 1)
    except (OSError, ValueError, EOFError) as exc:
        raise ParseError(f"could not read the file: {exc}", permanent=False) from exc
    if len(raw) > MAX_JSON_BYTES:
        raise ParseError(f"the JSON document is larger than {MAX_JSON_BYTES} bytes")
    try:
        response = msgspec.json.decode(raw, type=_Response)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ParseError(f"not a Prometheus API JSON result: {exc}") from exc
    if response.status != "success":
        raise ParseError(
            f"the query failed: {response.errorType or 'error'}: {response.error or 'no detail'}"
        )
    data = response.data
    envelope = "response" if data else "data"
    result_type = data.resultType if data else response.resultType
    raw_series = data.result if data else response.result
    if result_type not in ("matrix", "vector") or bytes(raw_series) == b"null":
        raise ParseError(
            f"resultType {result_type!r} holds no series (expected 'matrix' or 'vector')"
        )
    try:
        series = msgspec.json.decode(raw_series, type=list[_Series])
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ParseError(f"the {result_type} result is malformed: {exc}") from exc
    if not series:
        raise ParseError("the result holds no series")
    return dataclasses.replace(_build(result_type, series), parts=(envelope, result_type))


def _build(result_type: str, series: list[_Series]) -> PrometheusRangeResult:
    points: list[tuple[float, _Series, Any, float]] = []
    skipped = 0
    for s in series:
        raw_points = s.values if s.values is not None else ([s.value] if s.value else [])
        for stamp, text in raw_points:
            value = _number(text)
            if value is None or not math.isfinite(stamp):
                skipped += 1
                continue
            points.append((stamp, s, None, value))
    if not points:
        raise ParseError("no finite sample values in the result")
    index = {t: i for i, t in enumerate(sorted({p[0] for p in points}))}
    buffer = SampleBuffer()
    facts: dict[tuple[str | None, str | None, str], LabelFact] = {}
    placed_by_series: dict[int, Any] = {}
    stats: dict[int, list[float]] = {}
    for stamp, s, _, value in points:
        name = s.metric.get("__name__") or "value"
        placed = placed_by_series.get(id(s))
        if placed is None:
            placed = placed_by_series[id(s)] = place(name, s.metric)
            for fact in placed.facts:
                facts[(fact.host, fact.device, fact.name)] = fact
        stats.setdefault(id(s), []).append(stamp)
        buffer.add(placed.sample(value, utc_iso_from_epoch(stamp), index[stamp]))
    listed = []
    for s in series:
        placed = placed_by_series.get(id(s))
        if placed is None:
            continue
        stamps = stats[id(s)]
        listed.append(
            PrometheusSeries(
                counter=placed.counter,
                host=placed.host,
                device=placed.device,
                port=placed.port,
                points=len(stamps),
                first_at=utc_iso_from_epoch(min(stamps)),
                last_at=utc_iso_from_epoch(max(stamps)),
            )
        )
    warnings = buffer.warnings()
    if skipped:
        warnings.append(f"{skipped} point(s) with NaN/Inf or unreadable values were not kept")
    return PrometheusRangeResult(
        result_type=result_type,
        series=tuple(listed),
        samples=tuple(buffer.rows),
        facts=tuple(facts.values()),
        warnings=tuple(warnings),
    )


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None
