"""Prometheus query_range / query JSON: one snapshot per timestamp, series placed by labels."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.metrics.parsers.prometheus import range as prometheus_range
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError

T0 = 1740327900  # 2025-02-23T16:25:00Z
MATRIX = {
    "status": "success",
    "data": {
        "resultType": "matrix",
        "result": [
            {
                "metric": {"__name__": "node_ethtool_rx_prio3_pause", "device": "ens1f0np0",
                           "instance": "gpu-node-07:9100", "job": "node"},
                "values": [[T0, "1000"], [T0 + 30, "61000"], [T0 + 60, "121000"]],
            },
            {
                "metric": {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "3",
                           "Hostname": "gpu-node-08", "UUID": "GPU-abc"},
                "values": [[T0, "40"], [T0 + 30, "NaN"], [T0 + 60, "43"]],
            },
        ],
    },
}  # fmt: skip


def parse(doc: object) -> prometheus_range.PrometheusRangeResult:
    return prometheus_range.parse(io.BytesIO(json.dumps(doc).encode()))


def test_matrix_points_become_timed_snapshots() -> None:
    r = parse(MATRIX)
    pauses = [s for s in r.samples if s.counter == "rx_prio3_pause"]
    assert [(s.snapshot, s.value, s.captured_at) for s in pauses] == [
        (0, 1000, "2025-02-23T16:25:00+00:00"),
        (1, 61000, "2025-02-23T16:25:30+00:00"),
        (2, 121000, "2025-02-23T16:26:00+00:00"),
    ]
    assert {(s.host, s.device) for s in pauses} == {("gpu-node-07", "ens1f0np0")}
    temps = [s for s in r.samples if s.counter == "DCGM_FI_DEV_GPU_TEMP"]
    assert [(s.host, s.device, s.value, s.unit) for s in temps] == [
        ("gpu-node-08", "GPU 3", 40, "C"), ("gpu-node-08", "GPU 3", 43, "C"),
    ]  # fmt: skip
    assert any("NaN" in w for w in r.warnings)
    assert [(f.host, f.device, f.name, f.value) for f in r.facts] == [
        ("gpu-node-07", None, "prometheus.job", "node"),  # the series' scrape labels
        ("gpu-node-07", None, "prometheus.instance", "gpu-node-07:9100"),
        ("gpu-node-08", "GPU 3", "gpu.uuid", "GPU-abc"),
    ]
    summary = r.summary()
    assert (summary["series"], summary["points"]) == (2, 5)
    assert summary["hosts"] == ["gpu-node-07", "gpu-node-08"]
    json.dumps(r.to_json())


def test_vector_and_bare_data() -> None:
    vector = {"resultType": "vector",
              "result": [{"metric": {"__name__": "up", "instance": "h1:9400"},
                          "value": [T0, "1"]}]}  # fmt: skip
    (sample,) = parse(vector).samples
    assert (sample.host, sample.counter, sample.value, sample.snapshot) == ("h1", "up", 1, 0)
    wrapped = parse({"status": "success", "data": vector})
    assert wrapped.result_type == "vector"


def test_refusals_say_why() -> None:
    with pytest.raises(ParseError, match="the query failed: bad_data: parse error"):
        parse({"status": "error", "errorType": "bad_data", "error": "parse error"})
    with pytest.raises(ParseError, match="resultType 'scalar'"):
        parse({"status": "success", "data": {"resultType": "scalar", "result": [T0, "1"]}})
    with pytest.raises(ParseError, match="no series"):
        parse({"status": "success", "data": {"resultType": "matrix", "result": []}})
    with pytest.raises(ParseError, match="not a Prometheus API JSON"):
        prometheus_range.parse(io.BytesIO(b"# TYPE a counter\na 1\n"))


def test_detection() -> None:
    assert detect_kind("query_range.json", json.dumps(MATRIX).encode()) == "prometheus_range"
    assert not prometheus_range.accepts("trace.json", b'{"traceEvents": []}')
    assert not prometheus_range.accepts("x", b"resultType result")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.text(max_size=10) | st.integers(),
        lambda inner: st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["status", "data", "resultType", "result", "metric",
                                           "values", "value", "__name__"]), inner, max_size=4),
        max_leaves=20,
    )
)  # fmt: skip
def test_fuzz_only_parse_error(doc: object) -> None:
    try:
        data = json.dumps(doc).encode()
    except ValueError:
        return
    with contextlib.suppress(ParseError):
        prometheus_range.parse(io.BytesIO(data))
