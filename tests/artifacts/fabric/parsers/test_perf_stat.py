"""perf stat: per-socket text table and interval CSV. Values from the shared sample and the
project's CSV fixture (tests/fixtures/perf_stat)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import perf_stat
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import TESTS_DIR, sample

PER_SOCKET = "counters/perf_stat_system_wide_per_socket_2S_224cpu.txt"
CSV = TESTS_DIR / "fixtures" / "perf_stat" / "interval_csv_not_counted.csv"


def test_per_socket_table_header_and_footer() -> None:
    with sample(PER_SOCKET).open("rb") as f:
        result = perf_stat.parse(f)
    assert (result.target, result.started_at, result.elapsed_s) == (
        "system wide", "2026-09-15T19:52:49", 400.018603371
    )  # fmt: skip
    assert len(result.events) == 24
    clock = result.events[0]
    assert (clock.event, clock.value, clock.unit, clock.scope, clock.cpus) == (
        "task-clock", 44802562.79, "msec", "S0", 112
    )  # fmt: skip
    assert clock.metric == "112.001 CPUs utilized"
    cycles = next(e for e in result.events if e.event == "cycles" and e.scope == "S1")
    assert cycles.value == 6663897418596 and cycles.metric == "0.149 GHz"
    assert result.events[-1].event == "major-faults" and result.events[-1].value == 78
    assert result.summary()["ipc"] == pytest.approx(
        (8197017132747 + 7860064097764) / (6887216716185 + 6663897418596), abs=1e-3
    )
    rows = {(s.device, s.counter): s.value for s in result.samples}
    assert rows[("S1", "context-switches")] == 50412443
    json.dumps(result.to_json())


def test_interval_csv_with_not_counted_events() -> None:
    result = perf_stat.parse(CSV.open("rb"))
    assert [(e.interval_s, e.event, e.status) for e in result.events[:3]] == [
        (1.001035513, "cycles", "counted"),
        (1.001035513, "instructions", "counted"),
        (1.001035513, "cache-misses", "not counted"),
    ]
    assert result.events[1].metric == "2.00 insn per cycle"
    snapshots = [(s.snapshot, s.counter, s.value) for s in result.samples]
    assert snapshots[2] == (1, "cycles", 1300000000) and len(snapshots) == 4
    assert result.summary()["not_counted"] == ["cache-misses"]
    assert result.warnings == ()  # not-counted events are not "multiplexed"


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no perf stat counter rows"):
        perf_stat.parse(io.BytesIO(b"Performance counter stats for 'x':\n\n"))


def test_detection() -> None:
    path = sample(PER_SOCKET)
    assert detect_kind(path.name, path.read_bytes()) == "perf_stat"
    assert detect_kind(CSV.name, CSV.read_bytes()) == "perf_stat"


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(perf_stat.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=2696), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = sample(PER_SOCKET).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(perf_stat.parse(io.BytesIO(blob)).to_json())


def test_event_rows_beyond_the_cap_are_counted_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long -I log: rows past MAX_EVENTS are dropped with a warning, runs count them all."""
    monkeypatch.setattr(perf_stat, "MAX_EVENTS", 30)
    data = sample(PER_SOCKET).read_bytes()
    result = perf_stat.parse(io.BytesIO(data + b"\n" + data))
    assert len(result.events) == 30 and len(result.samples) == 30
    assert sum(run.events for run in result.runs) == 48
    assert any("18 event row(s) beyond 30 were not kept" in w for w in result.warnings)
    assert result.events[-1].run == 1  # the second copy's first rows are kept
