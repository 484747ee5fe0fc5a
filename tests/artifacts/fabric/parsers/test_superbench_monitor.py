"""SuperBench monitor JSON lines: GPU, CPU and NIC readings per interval. Expected values
read from the more-samples file (8 V100-class GPUs of 16 GB, 5 samples 11 s apart)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import superbench_monitor
from artifacts.parsers.base import ParseError
from tests.samples import more_sample, sample

MONITOR = "counters/superbench_gpu_monitor.jsonl"


def test_every_line_is_a_snapshot_of_gpu_cpu_and_nic_readings() -> None:
    path = more_sample(MONITOR)
    assert superbench_monitor.accepts(path.name, path.read_bytes())
    result = superbench_monitor.parse(path.open("rb"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(result.snapshots) == len(records) == 5
    assert (result.first_time, result.last_time) == ("2021-12-06T04:19:35", "2021-12-06T04:20:19")
    assert result.gpus == tuple(range(8)) and result.parts == ("cpu", "gpu", "network")
    assert set(result.interfaces) == {"ib0", "ib1", "ib2", "eth0", "eth1", "eth2", "docker0",
                                      "lo", "veth867b62a"}  # fmt: skip
    # every numeric field of every line is one row
    assert len(result.samples) == sum(len(r) - 1 for r in records)
    first = {(s.device, s.counter): (s.value, s.unit) for s in result.samples if s.snapshot == 0}
    assert first[("GPU 0", "utilization.gpu")] == (56, "%")
    assert first[("GPU 6", "temperature.gpu")] == (22, "C")
    assert first[("GPU 3", "power.limit")] == (250, "W")
    # NVML's bytes despite the documented MB: 267517952 B = 255.125 MiB, 16 GB card
    assert first[("GPU 0", "memory.used")] == (255.125, "MiB")
    assert first[("GPU 0", "memory.total")] == (round(17071734784 / 2**20, 3), "MiB")
    assert first[("GPU 0", "ecc.errors.uncorrected.total")] == (0, "count")
    assert first[("cpu", "cpu_usage")][0] == records[0]["cpu_usage"]
    # the monitor writes MiB/s: ib1 received 3.546995388596109e-05 MiB/s = ~37 bytes/s
    assert first[("ib1", "receive_bw")] == (round(3.546995388596109e-05 * 2**20, 3), "bytes/s")
    assert result.summary()["max_temperature_c"] == max(
        v for r in records for k, v in r.items() if k.startswith("gpu_temperature:")
    )


def test_other_lines_between_records_are_skipped_and_counted() -> None:
    lines = more_sample(MONITOR).read_text().splitlines()
    text = "\n".join([lines[0], "INFO monitor restarted", lines[1], "{not json"])
    result = superbench_monitor.parse(io.BytesIO(text.encode()))
    assert len(result.snapshots) == 2
    assert result.warnings == ("2 line(s) that are not monitor records were skipped",)


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no SuperBench monitor lines"):
        superbench_monitor.parse(io.BytesIO(b'{"time": "x", "name": "run"}\n'))


@pytest.mark.parametrize(
    "relative",
    [
        "counters/gpud_nvidia-smi_q_560.35.03.txt",
        "nccl_tests_json/rccl_tests_pr93_output_file_jsonlines_allreduce_4gpu_EXCERPT.jsonl",
        "torch_profiler/hta_backward_thread_tiny.json",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not superbench_monitor.accepts(path.name, path.read_bytes()[: 64 * 1024])


ROBUST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(superbench_monitor.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=10594), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = more_sample(MONITOR).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(superbench_monitor.parse(io.BytesIO(blob)).to_json())
