"""The JSON outputs of nccl-tests and rccl-tests, and how to tell them from other JSON.

Package-private to ``artifacts.runs.parsers.nccl_tests``. Three writers, three shapes:

* upstream ``-J/--output_file`` (JSON_FILE_VERSION 2/3): one document, rows in ``results``;
* the ``--json`` console line of the nccl-tests PR #318 fork (``"identifier": "nccl-tests
  structured output"``), rows keyed by size under ``benchmark``, possibly after junk lines;
* rccl-tests ``-Z json``: JSON lines, one record per size and per in/out-of-place half,
  which may also appear among text output.

Documents are walked with JsonCursor, so a huge or cut file keeps every complete row.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any, BinaryIO

from artifacts.runs.parsers.nccl_tests.jsoncursor import BadJson, JsonCursor, Truncated
from artifacts.runs.parsers.nccl_tests.lines import TEXT_MARKER_RE, strip_prefixes
from artifacts.runs.parsers.nccl_tests.model import NcclMeasurement, NcclRank, NcclRow
from artifacts.runs.parsers.nccl_tests.run import MAX_LINE_BYTES, Collector, RunBuilder
from artifacts.runs.parsers.nccl_tests.values import (
    INT_RE,
    decode_nccl_version,
    json_int,
    json_num,
    json_str,
    wrong_value,
)

MAX_JSON_LINE_CHARS = 64 * 1024

# Upstream config keys -> the names the text parameter line uses.
_CONFIG_KEYS = {
    "nthreads": "nThread",
    "ngpus": "nGpus",
    "minimum_bytes": "minBytes",
    "maximum_bytes": "maxBytes",
    "warmup_iters": "warmup_iters",
    "iterations": "iters",
    "aggregated_iterations": "agg_iters",
    "validation": "validation",
    "graph": "graph",
}


def _measurement(time: Any, algbw: Any, busbw: Any, wrong: Any) -> NcclMeasurement:
    """One half of a row from JSON values (a count of wrong elements in every JSON writer)."""
    return NcclMeasurement(
        time_us=json_num(time),
        algbw_gbps=json_num(algbw),
        busbw_gbps=json_num(busbw),
        wrong=wrong_value(json_num(wrong), error_column=False),
    )


def _row(
    size: int,
    record: dict[str, Any],
    out_of_place: NcclMeasurement | None,
    in_place: NcclMeasurement | None,
) -> NcclRow:
    """A row whose count/type/redop/root sit in ``record`` under the same keys everywhere."""
    return NcclRow(
        size_bytes=size,
        count=json_int(record.get("count")),
        dtype=json_str(record.get("type")),
        redop=json_str(record.get("redop")),
        root=json_int(record.get("root")),
        out_of_place=out_of_place,
        in_place=in_place,
    )


# --------------------------------------------------------------------------- detection


def _first_json_line(text: str) -> tuple[int, str] | None:
    """(offset, line) of the first line starting with '{', unless a text table comes first."""
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped.startswith("{"):
            return offset + len(line) - len(stripped), stripped
        # markers start "#": a line without one cannot be a marker after prefix stripping
        if "#" in stripped and TEXT_MARKER_RE.match(strip_prefixes(stripped).strip()):
            return None
        offset += len(line)
    return None


def is_rccl_record(line: str) -> bool:
    return bool(re.search(r'"busBw"\s*:', line) and re.search(r'"algBw"\s*:', line))


def looks_like_json_doc(text: str) -> bool:
    """Whether the head of a file is an nccl-tests JSON document (not rccl lines, not a trace)."""
    found = _first_json_line(text)
    if found is None:
        return False
    offset, line = found
    if is_rccl_record(line):
        return False
    body = text[offset:]
    if "traceEvents" in body:  # a PyTorch profiler trace may mention nccl_version too
        return False
    if re.search(r'"identifier"\s*:\s*"nccl-tests structured output"', body):
        return True
    if re.search(r'"(?:bus_bw|alg_bw)"\s*:', body):
        return True
    if re.search(r'"args"\s*:\s*\[\s*"[^"]*_perf(?:_mpi)?"', body):
        return True
    return bool(
        re.search(r'"nccl_version"\s*:\s*\d', body)
        and re.search(r'"(?:config|start_time|results)"\s*:', body)
    )


# --------------------------------------------------------------------------- rccl JSON lines


class RcclLines:
    """rccl-tests JSON records; consecutive records of one collective and dtype form a run."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.run: RunBuilder | None = None

    def feed(self, text: str) -> bool:
        """Take ``text`` when it is an rccl record; False leaves it to the text reader."""
        if len(text) > MAX_JSON_LINE_CHARS or '"busBw"' not in text:
            return False
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            return False
        if not isinstance(record, dict) or "size" not in record:
            return False
        self._on_record(record)
        return True

    def _on_record(self, record: dict[str, Any]) -> None:
        size = json_int(record.get("size"))
        if size is None:
            self.collector.malformed += 1
            return
        name, dtype = json_str(record.get("name")), json_str(record.get("type"))
        in_place = json_int(record.get("inPlace")) == 1
        run = self.run
        if run is not None:
            index = run.row_slots.get(size)
            slot_taken = index is not None and (
                (run.rows[index].in_place if in_place else run.rows[index].out_of_place) is not None
            )
            same = (run.collective_named, run.rows[0].dtype if run.rows else dtype) == (
                name,
                dtype,
            )
            if slot_taken or not same:
                run = None
        if run is None:
            run = self.collector.new_run("rccl_jsonl")
            if run is None:
                return
            run.collective_named = name
            run.nranks_hint = json_int(record.get("gpus"))
            self.run = run
        half = _measurement(
            record.get("time"), record.get("algBw"), record.get("busBw"), record.get("#wrong")
        )
        index = run.row_slots.get(size)
        if index is None:
            if not self.collector.row_allowed():
                return
            run.row_slots[size] = len(run.rows)
            run.rows.append(
                _row(size, record, None if in_place else half, half if in_place else None)
            )
        else:
            field = "in_place" if in_place else "out_of_place"
            run.rows[index] = dataclasses.replace(run.rows[index], **{field: half})


# --------------------------------------------------------------------------- JSON documents


class JsonDocuments:
    """Upstream -J and PR #318 fork documents; lines before the first '{' go to ``feed``."""

    def __init__(self, collector: Collector, feed: Callable[[str], None]) -> None:
        self.collector = collector
        self.feed = feed

    def read(self, stream: BinaryIO) -> None:
        """Junk lines (MPI warnings, the command) up to a line starting with '{', then JSON."""
        first = b""
        while True:
            chunk = stream.readline(MAX_LINE_BYTES)
            if not chunk:
                return
            if chunk.lstrip().startswith(b"{"):
                first = chunk
                break
            self.feed(chunk.decode("utf-8", "replace").rstrip("\r\n"))
        self.collector.close_all()  # nothing in the preamble is a run of its own
        cursor = JsonCursor(stream.read, first.decode("utf-8", "replace"))
        while cursor.peek() == "{":
            if not self._document(cursor):
                return
        if cursor.peek():
            self.collector.warnings.append("data after the JSON document was ignored")

    def _document(self, cursor: JsonCursor) -> bool:
        """One JSON document; returns False when the rest of the input cannot be trusted."""
        run = self.collector.new_run("nccl_tests_json")
        if run is None:
            return False
        top: dict[str, Any] = {}
        ok = True
        try:
            for key in cursor.members():
                if key == "results":
                    for _ in cursor.elements():
                        self._add_result(run, cursor.value())
                elif key == "benchmark":
                    run.format = "nccl_tests_fork_json"
                    self._fork_benchmark(cursor, run)
                elif key in ("env", "per_process_max_times_us"):
                    cursor.skip_value()
                else:
                    top[key] = cursor.value()
        except Truncated:
            run.json_truncated = True
        except BadJson as exc:
            run.json_truncated = True
            run.json_problem = str(exc)
            ok = False
        _apply_top(run, top)
        known = {"identifier", "config", "results", "benchmark", "devices", "nccl_version"}
        if not run.rows and not (known & set(top)) and run.format == "nccl_tests_json":
            self.collector.runs.remove(run)  # some other JSON document
        return ok and not run.json_truncated

    def _fork_benchmark(self, cursor: JsonCursor, run: RunBuilder) -> None:
        for _ in cursor.elements():
            if cursor.peek() != "{":
                cursor.skip_value()
                continue
            for size in cursor.members():
                record = cursor.value()
                if isinstance(record, dict) and INT_RE.match(size.strip()):
                    self._add_fork_row(run, int(size.strip()), record)

    def _add_fork_row(self, run: RunBuilder, size: int, record: dict[str, Any]) -> None:
        def half(prefix: str) -> NcclMeasurement | None:
            if not any(k.startswith(prefix) for k in record):
                return None
            return _measurement(
                record.get(prefix + "time"),
                record.get(prefix + "algbw"),
                record.get(prefix + "busbw"),
                record.get(prefix + "error"),
            )

        self.collector.append_row(run, _row(size, record, half("oop_"), half("ip_")))

    def _add_result(self, run: RunBuilder, item: Any) -> None:
        if not isinstance(item, dict):
            self.collector.malformed += 1
            return
        size = json_int(item.get("size"))
        if size is None:
            self.collector.malformed += 1
            return

        def half(value: Any) -> NcclMeasurement | None:
            if not isinstance(value, dict):
                return None
            time = value.get("time", value.get("cpu_time"))
            return _measurement(time, value.get("alg_bw"), value.get("bus_bw"), value.get("nwrong"))

        row = _row(size, item, half(item.get("out_of_place")), half(item.get("in_place")))
        self.collector.append_row(run, row)


def _apply_top(run: RunBuilder, top: dict[str, Any]) -> None:
    """The document's top-level members (everything but its rows) onto the run."""
    if "identifier" in top:
        run.format = "nccl_tests_fork_json"
        # The fork's "version" is the NCCL version it ran with (matches "NCCL version").
        run.nccl_version = json_str(top.get("version"))
    code = top.get("nccl_version")
    if isinstance(code, int) and not isinstance(code, bool) and code < 10**9:
        run.nccl_version = decode_nccl_version(code)
    elif isinstance(code, str):
        run.nccl_version = code.strip() or None
    run.nccl_tests_version = json_str(top.get("nccl_tests_version"))
    args = top.get("args")
    if isinstance(args, list) and args and all(isinstance(a, str) for a in args):
        run.command_line = " ".join(args)[:2000]
        run.command_collective = args[0]
    run.started_at = json_str(top.get("start_time"))
    run.ended_at = json_str(top.get("end_time"))
    config = top.get("config")
    devices = top.get("devices")
    if isinstance(config, dict):
        run.params.update(_params(config))
        devices = config.get("devices", devices)
    if isinstance(devices, list):
        for device in devices:
            _add_device(run, device)
    oob = top.get("out_of_bounds")
    if isinstance(oob, dict):
        oob = oob.get("count")
    run.oob = json_int(oob)
    avg = top.get("average_bus_bandwidth")
    run.avg_seen = "average_bus_bandwidth" in top
    run.avg = json_num(avg.get("bandwidth") if isinstance(avg, dict) else avg)
    run.footer = run.avg_seen or "out_of_bounds" in top
    if run.format == "nccl_tests_fork_json":
        run.footer = not run.json_truncated  # the fork has no footer: a closed document
    errors = top.get("errors")
    if isinstance(errors, list):
        for error in errors:
            if isinstance(error, str) and error.strip():
                run.add_error(error.strip(), error.strip(), fatal=False)


def _add_device(run: RunBuilder, device: Any) -> None:
    if not isinstance(device, dict):
        return
    number = json_int(device.get("rank"))
    if number is None:
        return
    rank = NcclRank(
        rank=number,
        host=json_str(device.get("hostname")),
        device=json_int(device.get("device")),
        busid=json_str(device.get("device_hex")),
        gpu=json_str(device.get("device_info")),
    )
    run.add_rank(rank, json_int(device.get("pid")))


def _params(config: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for key, value in config.items():
        if key == "devices" or len(params) >= 64:
            continue
        if key in ("step_factor", "step_bytes"):
            params["step"] = json_int(value)
            params["step_kind"] = "factor" if key == "step_factor" else "bytes"
            continue
        name = _CONFIG_KEYS.get(key, key)
        if isinstance(value, str) and value in ("true", "false"):
            params[name] = value == "true"  # nccl-tests writes booleans as strings
        elif isinstance(value, bool | int | float | str) or value is None:
            params[name] = value if not isinstance(value, float) else json_num(value)
    return params
