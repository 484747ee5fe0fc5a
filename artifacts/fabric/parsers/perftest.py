"""perftest results (``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``, ``ib_atomic_bw`` and the
``*_lat`` tests): the test settings block and the per-size bandwidth or latency table.

A run starts at its banner (``RDMA_Write BW Test``); the settings are the ``Key : value``
pairs of the block under it (two per line, tab or space separated); the table header names
the columns (``BW peak[Gb/sec]`` or ``[MB/sec]``/``[MiB/sec]`` without ``--report_gbits``,
``t_min[usec] ... 99.9% percentile[usec]``). Bandwidths are normalised to Gb/s (decimal, as
perftest's own ``--report_gbits``). Lines perftest interleaves (``Conflicting CPU frequency
values detected``) are skipped. A command line (``ib_write_bw -d mlx5_3 ...`` behind a shell
prompt) names the tool and the host; a command without a table is kept as a failed run with
its error text (``Couldn't connect to ...``).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import prompt
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text, to_number

KIND = "perftest"
VERSION = 1

MAX_ROWS = 10_000
_BANNER = re.compile(
    r"^\s*(?P<op>RDMA_Write|RDMA_Read|Send|Atomic(?: \w+)?|Read|Write)\s+"
    r"(?P<kind>BW|Latency|Bidirectional BW)\s+Test\s*$",
    re.IGNORECASE,
)
_COMMAND = re.compile(
    r"\b(?P<tool>(?:ib|raw_ethernet)_(?:write|read|send|atomic)_(?:bw|lat))\b(?P<args>.*)"
)
_SETTING = re.compile(
    r"([A-Za-z][\w*./() -]*?)\s*:\s*(\S.*?)\s*(?=(?:\t|\s{2,})[A-Za-z][\w*./() -]*?\s*:\s|$)"
)
_HEADER_TOKEN = re.compile(
    r"#bytes|#iterations|BW peak\[[^\]]*\]|BW average\[[^\]]*\]|MsgRate\[[^\]]*\]"
    r"|\d+(?:\.\d+)?% percentile\[[^\]]*\]|tps average|[^\s\[]+(?:\[[^\]]*\])?"
)
_ERROR = re.compile(
    r"Couldn't|Unable to|Failed to|failed|error|No IB devices|not found|Segmentation", re.I
)
_ADDRESS_LINES = ("local address", "remote address", "GID:")
_TO_GBPS = {"gb/sec": 1.0, "mb/sec": 8 / 1000, "mib/sec": 8 * 1.048576 / 1000, "gbit/sec": 1.0}
_COLUMN_NAMES = {
    "#bytes": "bytes", "#iterations": "iterations", "t_min": "t_min_us", "t_max": "t_max_us",
    "t_typical": "t_typical_us", "t_avg": "t_avg_us", "t_stdev": "t_stdev_us",
    "99% percentile": "p99_us", "99.9% percentile": "p999_us", "tps average": "tps_avg",
}  # fmt: skip
_SETTING_KEYS = {
    "device": "device", "number of qps": "qps", "transport type": "transport",
    "connection type": "connection", "mtu": "mtu", "link type": "link_type",
    "gid index": "gid_index", "tx depth": "tx_depth", "rx depth": "rx_depth",
    "cq moderation": "cq_moderation", "using srq": "srq", "dual-port": "dual_port",
    "pcie relax order": "pcie_relaxed_order", "rdma_cm qps": "rdma_cm",
    "data ex. method": "exchange", "max inline data": "max_inline",
    "outstand reads": "outstanding_reads", "ibv_wr* api": "ibv_wr_api",
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class PerftestRow:
    bytes: int
    iterations: int | None
    bw_peak_gbps: float | None = None
    bw_avg_gbps: float | None = None
    msg_rate_mpps: float | None = None
    t_min_us: float | None = None
    t_max_us: float | None = None
    t_typical_us: float | None = None
    t_avg_us: float | None = None
    t_stdev_us: float | None = None
    p99_us: float | None = None
    p999_us: float | None = None


@dataclasses.dataclass(frozen=True)
class PerftestRun:
    tool: str | None  # ib_write_bw, ... (from the command line, else from the banner)
    test: str | None  # banner: "RDMA_Write BW Test"
    measure: str  # "bw" | "lat"
    host: str | None
    command: str | None
    settings: dict[str, str]  # every Key : value as printed
    device: str | None
    transport: str | None
    connection: str | None
    link_type: str | None
    qps: int | None
    mtu: int | None
    gid_index: int | None
    bw_unit: str | None  # as printed in the header: Gb/sec, MB/sec, MiB/sec
    rows: tuple[PerftestRow, ...]
    errors: tuple[str, ...]

    @property
    def peak_bw_gbps(self) -> float | None:
        values = [r.bw_avg_gbps for r in self.rows if r.bw_avg_gbps is not None]
        return max(values) if values else None


@dataclasses.dataclass(frozen=True)
class PerftestResult(ParseResult):
    kind: ClassVar[str] = "perftest"

    runs: tuple[PerftestRun, ...] = ()

    def summary(self) -> dict[str, Any]:
        bws = [r.peak_bw_gbps for r in self.runs if r.peak_bw_gbps is not None]
        lats = [row.t_typical_us for r in self.runs for row in r.rows if row.t_typical_us]
        return {
            "runs": len(self.runs),
            "tools": sorted({r.tool for r in self.runs if r.tool}),
            "devices": sorted({r.device for r in self.runs if r.device}),
            "max_bw_avg_gbps": max(bws) if bws else None,
            "min_t_typical_us": min(lats) if lats else None,
            "failed_runs": sum(1 for r in self.runs if r.errors and not r.rows),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    lines = text.splitlines()[:3000]
    banner = any(_BANNER.match(line) for line in lines)
    table = "#bytes" in text and ("#iterations" in text)
    return (banner and (table or "Number of qps" in text)) or (
        table and bool(re.search(r"BW average\[|t_typical\[|t_avg\[", text))
    )


def parse(stream: BinaryIO) -> PerftestResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    state.close()
    if not state.runs:
        raise ParseError("no perftest output found (no 'RDMA_Write BW Test'-style banner or table)")
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.runs: list[PerftestRun] = []
        self.run: dict[str, Any] | None = None
        self.host: str | None = None
        self.columns: list[tuple[str, float]] | None = None  # (field, scale) per column
        self.dropped = 0

    def feed(self, line: str) -> None:
        shell = prompt(line)
        if shell is not None:
            self.host = shell[0] or self.host
            if m := _COMMAND.search(shell[1]):
                self.close()
                self._open(tool=m["tool"], command=shell[1].strip())
            return
        if (m := _COMMAND.match(line.strip())) and self.run is None:
            self._open(tool=m["tool"], command=line.strip())
            return
        if m := _BANNER.match(line):
            if self.run is None or self.run["test"] is not None or self.run["rows"]:
                self.close()
                self._open(tool=None, command=None)
            assert self.run is not None
            self.run["test"] = " ".join(line.split())
            self.run["measure"] = "lat" if "latency" in m["kind"].lower() else "bw"
            return
        if self.run is None:
            return
        stripped = line.strip()
        if stripped.startswith("#bytes"):
            self.columns = _columns(stripped)
            if any(name.startswith("bw_") for name, _ in self.columns):
                self.run["bw_unit"] = _unit(stripped)
            return
        if self.columns is not None and stripped and stripped[0].isdigit():
            self._row(stripped.split())
            return
        if not stripped or "Conflicting CPU frequency" in stripped:
            return  # perftest's own noise, printed between table rows
        if _ERROR.search(stripped):
            self.run["errors"].append(stripped[:300])
            return
        settings_block = self.columns is None and not self.run["rows"]
        if settings_block and ":" in stripped and not stripped.startswith(_ADDRESS_LINES):
            for key, value in _SETTING.findall(stripped):
                self.run["settings"].setdefault(key.strip(), value.strip())

    def _open(self, *, tool: str | None, command: str | None) -> None:
        self.run = {
            "tool": tool,
            "command": command,
            "test": None,
            "measure": "bw",
            "settings": {},
            "rows": [],
            "errors": [],
            "bw_unit": None,
            "host": self.host,
        }
        self.columns = None
        if tool:
            self.run["measure"] = "lat" if tool.endswith("_lat") else "bw"

    def _row(self, cells: list[str]) -> None:
        assert self.run is not None and self.columns is not None
        values: dict[str, float | int | None] = {}
        for (name, scale), cell in zip(self.columns, cells, strict=False):
            number = to_number(cell)
            if number is None:
                return  # not a table row after all
            values[name] = number * scale if scale != 1 else number
        if "bytes" not in values:
            return
        if len(self.run["rows"]) >= MAX_ROWS:
            self.dropped += 1
            return
        known = {f.name for f in dataclasses.fields(PerftestRow)}
        row = {k: v for k, v in values.items() if k in known}
        row["bytes"] = int(row["bytes"])  # type: ignore[arg-type]
        if row.get("iterations") is not None:
            row["iterations"] = int(row["iterations"])  # type: ignore[arg-type]
        row.setdefault("iterations", None)
        self.run["rows"].append(PerftestRow(**row))  # type: ignore[arg-type]

    def close(self) -> None:
        run, self.run = self.run, None
        self.columns = None
        if run is None or (run["test"] is None and not run["rows"] and not run["errors"]):
            return
        settings = run["settings"]
        named = {_SETTING_KEYS.get(k.lower(), k): v for k, v in settings.items()}
        tool = run["tool"] or _tool_from_banner(run["test"])
        self.runs.append(
            PerftestRun(
                tool=tool,
                test=run["test"],
                measure=run["measure"],
                host=run["host"],
                command=run["command"],
                settings=dict(settings),
                device=named.get("device"),
                transport=named.get("transport"),
                connection=named.get("connection"),
                link_type=named.get("link_type"),
                qps=_int(named.get("qps")),
                mtu=_int(named.get("mtu")),
                gid_index=_int(named.get("gid_index")),
                bw_unit=run["bw_unit"],
                rows=tuple(run["rows"]),
                errors=tuple(run["errors"]),
            )
        )

    def result(self, warnings: list[str]) -> PerftestResult:
        if self.dropped:
            warnings.append(f"{self.dropped} table row(s) beyond {MAX_ROWS} were not kept")
        for run in self.runs:
            if not run.rows and not run.errors:
                warnings.append(f"{run.tool or run.test}: the output ends before its results table")
        return PerftestResult(runs=tuple(self.runs), warnings=tuple(warnings))


def _columns(header: str) -> list[tuple[str, float]]:
    out = []
    for token in _HEADER_TOKEN.findall(header):
        base, _, unit = token.partition("[")
        unit = unit.rstrip("]").lower()
        base = base.strip()
        if base.startswith("BW "):
            name = "bw_peak_gbps" if "peak" in base else "bw_avg_gbps"
            out.append((name, _TO_GBPS.get(unit, 1.0)))
        elif base.startswith("MsgRate"):
            out.append(("msg_rate_mpps", 1.0))
        else:
            out.append((_COLUMN_NAMES.get(base, base.lower()), 1.0))
    return out


def _unit(header: str) -> str | None:
    m = re.search(r"BW average\[([^\]]*)\]", header)
    return m.group(1) if m else None


def _tool_from_banner(test: str | None) -> str | None:
    if not test:
        return None
    lowered = test.lower()
    op = next((o for o in ("write", "read", "send", "atomic") if o in lowered), None)
    if op is None:
        return None
    return f"ib_{op}_{'lat' if 'latency' in lowered else 'bw'}"


def _int(text: str | None) -> int | None:
    if not text:
        return None
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else None
