"""SuperBench's monitor output: one JSON object per line and sample interval.

SuperBench (microsoft/superbenchmark) samples the host while its benchmarks run and writes
JSON lines such as::

    {"time": "2021-12-06 04:19:35", "cpu_usage": 356.05, "gpu_usage:0": 56,
     "gpu_temperature:0": 26, "gpu_power_limit:0": 250, "gpu_mem_used:0": 267517952,
     "gpu_mem_total:0": 17071734784, "gpu_corrected_ecc:0": 0, ..., "ib0_receive_bw": 51.4,
     "ib0_transmit_bw": 0.0, ...}

Per-GPU metrics carry the GPU index after a colon; network metrics are
``<interface>_receive_bw`` / ``_transmit_bw``: SuperBench's documentation says bytes/s but its
monitor divides the byte delta by the interval and by 2**20, so the values are MiB/s; they
become bytes/s here. Each line is one snapshot of counter
rows: GPU readings under nvidia-smi's query names where one exists (``utilization.gpu``,
``temperature.gpu``, ``power.limit``, ``memory.used``/``memory.total`` in MiB), the others under
SuperBench's own names. SuperBench's documentation gives the memory in MB, but the values it
writes are NVML's bytes (16 GB V100: 17071734784), so values over 10^7 are read as bytes.
Lines that are not JSON objects (a log line between them) are skipped and counted.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import CounterSample, SampleBuffer, Snapshot
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, find_timestamp, head_text

KIND = "superbench_monitor"
VERSION = 1

MAX_LINE_BYTES = 1024 * 1024  # one sample line; a 16-GPU host with 50 NICs is ~10 KiB

# SuperBench name -> (counter, unit); names not here keep SuperBench's name, unit "count"
_GPU = {
    "gpu_usage": ("utilization.gpu", "%"),
    "gpu_temperature": ("temperature.gpu", "C"),
    "gpu_power_limit": ("power.limit", "W"),
    "gpu_mem_used": ("memory.used", "MiB"),
    "gpu_mem_total": ("memory.total", "MiB"),
    "gpu_corrected_ecc": ("ecc.errors.corrected.total", "count"),
    "gpu_uncorrected_ecc": ("ecc.errors.uncorrected.total", "count"),
    "gpu_remap_correctable_error": ("remapped_rows.correctable", "count"),
    "gpu_remap_uncorrectable_error": ("remapped_rows.uncorrectable", "count"),
}
_GPU_KEY = re.compile(r"^(?P<name>gpu_[a-z_]+):(?P<index>\d+)$")
_NET_KEY = re.compile(r"^(?P<dev>[\w.\-]+?)_(?P<dir>receive|transmit)_bw$")
_BYTES_OVER = 10**7  # no GPU has 10 TB of memory: a larger "MB" value is bytes


@dataclasses.dataclass(frozen=True)
class SuperbenchMonitorResult(ParseResult):
    kind: ClassVar[str] = "superbench_monitor"

    snapshots: tuple[Snapshot, ...] = ()
    samples: tuple[CounterSample, ...] = ()
    gpus: tuple[int, ...] = ()  # GPU indexes seen
    interfaces: tuple[str, ...] = ()  # network interfaces seen
    first_time: str | None = None
    last_time: str | None = None
    parts: tuple[str, ...] = ()  # "gpu", "network", "cpu": the metric groups seen

    def summary(self) -> dict[str, Any]:
        return {
            "snapshots": len(self.snapshots),
            "gpus": len(self.gpus),
            "interfaces": list(self.interfaces),
            "samples": len(self.samples),
            "max_temperature_c": max(
                (s.value for s in self.samples if s.counter == "temperature.gpu"), default=None
            ),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    lines = [line for line in text.splitlines()[:200] if line.lstrip().startswith("{")]
    return any(
        '"time"' in line and re.search(r'"gpu_[a-z_]+:\d+"\s*:', line) is not None for line in lines
    )


def parse(stream: BinaryIO) -> SuperbenchMonitorResult:
    reader = LineReader(stream, max_line_bytes=MAX_LINE_BYTES)
    buffer = SampleBuffer()
    snapshots: list[Snapshot] = []
    gpus: set[int] = set()
    interfaces: dict[str, None] = {}
    parts: dict[str, None] = {}
    times: list[str] = []
    skipped = 0
    for line in reader:
        record = _record(line)
        if record is None:
            skipped += bool(line.strip())
            continue
        stamp = find_timestamp(str(record.get("time", "")))
        time = stamp[0] if stamp else None
        if time:
            times.append(time)
        index = len(snapshots)
        rows = 0
        for key, value in record.items():
            if not isinstance(value, int | float) or isinstance(value, bool):
                continue
            row = _row(key, value)
            if row is None:
                continue
            device, counter, number, unit = row
            buffer.add(CounterSample(None, device, None, counter, number, unit, time, index))
            rows += 1
            if device.startswith("GPU "):
                gpus.add(int(device[4:]))
                parts["gpu"] = None
            elif device == "cpu":
                parts["cpu"] = None
            else:
                interfaces[device] = None
                parts["network"] = None
        if rows:
            snapshots.append(Snapshot(index, None, None, None, time, rows))
    if not snapshots:
        raise ParseError("no SuperBench monitor lines found (JSON objects with gpu_*:N keys)")
    warnings = reader.repair_warnings() + buffer.warnings()
    if skipped:
        warnings.append(f"{skipped} line(s) that are not monitor records were skipped")
    return SuperbenchMonitorResult(
        snapshots=tuple(snapshots),
        samples=tuple(buffer.rows),
        gpus=tuple(sorted(gpus)),
        interfaces=tuple(interfaces),
        first_time=times[0] if times else None,
        last_time=times[-1] if times else None,
        parts=tuple(parts),
        warnings=tuple(warnings),
    )


def _record(line: str) -> dict[str, Any] | None:
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _row(key: str, value: int | float) -> tuple[str, str, int | float, str] | None:
    """(device, counter, value, unit) of one metric, or None for one we do not read."""
    if key == "cpu_usage":
        return "cpu", "cpu_usage", value, "%"
    if m := _GPU_KEY.match(key):
        counter, unit = _GPU.get(m["name"], (m["name"], "count"))
        if unit == "MiB" and value > _BYTES_OVER:
            value = round(value / 2**20, 3)
        return f"GPU {m['index']}", counter, value, unit
    if m := _NET_KEY.match(key):
        return m["dev"], f"{m['dir']}_bw", round(value * 2**20, 3), "bytes/s"  # from MiB/s
    return None
