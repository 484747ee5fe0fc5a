"""perftest bandwidth and latency tables. No public sample is stored in ../shared, so the
fixtures are the project's own (tests/fixtures/perftest), written in perftest's exact
layout (banner, settings block, address lines, table, CPU-frequency noise)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import perftest
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import TESTS_DIR

FIXTURES = TESTS_DIR / "fixtures" / "perftest"
WRITE_BW = FIXTURES / "ib_write_bw_roce_4qp_report_gbits.txt"
SEND_LAT = FIXTURES / "ib_send_lat_ib_all_sizes.txt"
READ_BW = FIXTURES / "ib_read_bw_mb_per_sec_and_a_failed_run.txt"


def parse_file(path: Path) -> perftest.PerftestResult:
    with path.open("rb") as f:
        return perftest.parse(f)


def test_write_bw_settings_and_table_in_gbits() -> None:
    [run] = parse_file(WRITE_BW).runs
    assert (run.tool, run.test, run.measure, run.host) == (
        "ib_write_bw", "RDMA_Write BW Test", "bw", "gpu-node-03"
    )  # fmt: skip
    assert (run.device, run.transport, run.connection, run.link_type) == (
        "mlx5_3", "IB", "RC", "Ethernet"
    )  # fmt: skip
    assert (run.qps, run.mtu, run.gid_index, run.bw_unit) == (4, 4096, 3, "Gb/sec")
    assert run.settings["rdma_cm QPs"] == "OFF" and run.settings["TX depth"] == "128"
    assert len(run.rows) == 8
    assert run.rows[0] == perftest.PerftestRow(
        bytes=2, iterations=20000, bw_peak_gbps=0.11872, bw_avg_gbps=0.117894,
        msg_rate_mpps=7.368375,
    )  # fmt: skip
    assert run.rows[-1].bytes == 8388608 and run.peak_bw_gbps == 391.92
    json.dumps(parse_file(WRITE_BW).to_json())


def test_latency_table_skips_cpu_frequency_noise() -> None:
    [run] = parse_file(SEND_LAT).runs
    assert (run.tool, run.measure, run.link_type, run.device) == (
        "ib_send_lat", "lat", "IB", "mlx5_0"
    )  # fmt: skip
    assert [r.bytes for r in run.rows] == [2, 64, 4096, 65536]
    first = run.rows[0]
    assert (first.t_min_us, first.t_typical_us, first.t_avg_us, first.p99_us, first.p999_us) == (
        0.98, 1.01, 1.03, 1.21, 4.12
    )  # fmt: skip
    assert "Conflicting CPU frequency values detected" not in run.settings
    assert parse_file(SEND_LAT).summary()["min_t_typical_us"] == 1.01


def test_mb_per_sec_is_converted_and_a_failed_run_is_kept() -> None:
    result = parse_file(READ_BW)
    ok, failed = result.runs
    assert ok.bw_unit == "MB/sec" and ok.rows[0].bw_avg_gbps == pytest.approx(88.34856)
    assert ok.settings["Outstand reads"] == "16" and ok.host == "node-b"
    assert (failed.tool, failed.rows) == ("ib_read_bw", ())
    assert failed.errors[0] == "Couldn't connect to node-c:18515"
    assert result.summary()["failed_runs"] == 1


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no perftest output"):
        perftest.parse(io.BytesIO(b"hello\n"))


@pytest.mark.parametrize("path", [WRITE_BW, SEND_LAT, READ_BW])
def test_detection(path: Path) -> None:
    assert detect_kind(path.name, path.read_bytes()) == "perftest"


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(perftest.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=2667), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = WRITE_BW.read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(perftest.parse(io.BytesIO(blob)).to_json())
