"""Generic metrics uploads (JSON and CSV): records, repeats, directions, strict detection."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.metrics.parsers import metrics
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import SAMPLES_DIR

MEGATRON = {
    "benchmark": "megatron-gpt3-175b",
    "measured_at": "2025-03-01T02:00:00Z",
    "hosts": ["ib-h100-n001", "ib-h100-n002"],
    "profile": "ib-h100-16x8",
    "gpu": "NVIDIA H100 80GB HBM3",
    "nranks": 16,
    "stack": {"nccl": "2.21.5", "pytorch": "2.4.0", "Unknown": "x"},
    "env": {"NCCL_ALGO": "Ring", "PATH": "/bin"},
    "metrics": [
        {"metric": "tokens_per_s", "unit": "tokens/s", "value": 123456.5, "better": "higher"},
        {"metric": "mfu", "unit": "%", "value": "41.2", "better": "higher"},
        {"metric": "step_time", "unit": "ms", "values": [812.5, 815.0, 810.0]},
        {"metric": "busbw", "unit": "GB/s", "value": 12.25, "size_bytes": 1048576,
         "better": "higher", "resolution": 0.01},
        {"metric": "broken", "value": "n/a", "better": "higher"},
    ],
}  # fmt: skip


def parse_bytes(data: bytes) -> metrics.MetricsResult:
    return metrics.parse(io.BytesIO(data))


def test_json_records_keep_values_units_directions_and_context() -> None:
    data = json.dumps(MEGATRON).encode()
    assert detect_kind("run.json", data) == "metrics"
    result = parse_bytes(data)
    assert result.format == "json"
    by_metric = {r.metric: r for r in result.records}
    assert sorted(by_metric) == ["busbw", "mfu", "step_time", "tokens_per_s"]
    tokens = by_metric["tokens_per_s"]
    assert (tokens.benchmark, tokens.unit, tokens.direction, tokens.values) == (
        "megatron-gpt3-175b", "tokens/s", "higher", (123456.5,)
    )  # fmt: skip
    assert tokens.hosts == ("ib-h100-n001", "ib-h100-n002") and tokens.nranks == 16
    assert tokens.stack == {"nccl": "2.21.5", "pytorch": "2.4.0"}  # unknown keys dropped
    assert tokens.env == {"NCCL_ALGO": "Ring"}  # only NCCL_* variables
    assert by_metric["mfu"].values == (41.2,)
    step = by_metric["step_time"]
    # no "better" given: a time unit means lower is better, and the file is told so
    assert step.direction == "lower" and step.value == pytest.approx(812.5)
    assert any("no 'better' given for step_time" in w for w in result.warnings)
    assert by_metric["busbw"].size_bytes == 1048576 and by_metric["busbw"].resolution == 0.01
    assert any("'n/a' is not a number" in w for w in result.warnings)
    assert result.summary()["records"] == 4


def test_csv_rows_of_one_measurement_are_repeats_and_columns_become_stack_and_env() -> None:
    text = (
        "# torchtitan llama3-8b nightly\n"
        "benchmark,metric,unit,better,value,size_bytes,host,nccl,cuda,NCCL_IB_QPS_PER_CONNECTION\n"
        "llama3-8b,tokens_per_s,tokens/s,higher,5210.5,,h200-r07n03,2.23.4,12.6,4\n"
        "llama3-8b,tokens_per_s,tokens/s,higher,5190.5,,h200-r07n03,2.23.4,12.6,4\n"
        "llama3-8b,step_time,s,lower,1.52,,h200-r07n03,2.23.4,12.6,4\n"
        "llama3-8b,step_time,s,sideways,1.52,,h200-r07n03,2.23.4,12.6,4\n"
    )
    data = text.encode()
    assert detect_kind("nightly.csv", data) == "metrics"
    result = parse_bytes(data)
    assert result.format == "csv" and len(result.records) == 2
    tokens, step = result.records
    assert tokens.values == (5210.5, 5190.5) and tokens.value == pytest.approx(5200.5)
    assert tokens.stack == {"nccl": "2.23.4", "cuda": "12.6"}
    assert tokens.env == {"NCCL_IB_QPS_PER_CONNECTION": "4"}
    assert (step.metric, step.direction, step.values) == ("step_time", "lower", (1.52,))
    assert any("line 6" in w and "'better' must be higher or lower" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"benchmark": "x", "metrics": [', "not valid JSON"),
        (b'{"benchmark": "x", "metrics": []}', "no usable metric"),
        (b'{"benchmark": "x", "metrics": [{"metric": "m"}]}', "no value"),
        (b"benchmark,metric\nx,y\n", "lacks value"),
        (b"benchmark,metric,value\nx,y,inf\n", "not a finite number"),
        (b"", "empty file"),
    ],
)
def test_bad_files_fail_with_a_message_that_says_why(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_bytes(data)


def test_detection_is_strict_no_shared_sample_is_taken_for_a_metrics_upload() -> None:
    files = [p for p in SAMPLES_DIR.rglob("*") if p.is_file()] if SAMPLES_DIR.is_dir() else []
    if not files:
        pytest.skip(f"shared samples not available under {SAMPLES_DIR}")
    for path in files:
        with path.open("rb") as fh:
            head = fh.read(65536)
        assert not metrics.accepts(path.name, head), path
    # JSON without the two keys, and a Kineto trace that mentions both, are not metrics
    assert not metrics.accepts("a.json", b'{"benchmark": "x", "results": []}')
    trace = b'{"traceEvents": [], "benchmark": "x", "metrics": []}'
    assert not metrics.accepts("t.json", trace)
    assert not metrics.accepts("a.csv", b"size,count,type,redop,value\n")


@given(st.binary(max_size=2048))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_random_bytes_only_ever_raise_parse_error(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        parse_bytes(data)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=20,
)


@given(
    st.dictionaries(
        st.sampled_from(["metric", "value", "values", "better", "unit", "size_bytes",
                         "resolution", "nranks", "hosts", "stack", "env", "benchmark"]),
        _json_values,
    )
)  # fmt: skip
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_odd_metric_objects_are_skipped_or_parsed_never_crash(item: dict) -> None:
    doc = {"benchmark": "b", "metrics": [item]}
    try:
        result = parse_bytes(json.dumps(doc).encode())
    except (ParseError, ValueError) as exc:
        # json.dumps cannot write NaN as JSON; anything else must be a ParseError
        assert isinstance(exc, ParseError) or "JSON" in str(exc)
        return
    for record in result.records:
        assert record.direction in ("higher", "lower") and record.values
