"""Nsight Systems SQLite exports (``nsys export --type sqlite``), any schema version.

The schema "can and will change" between nsys releases, and a table exists only when its
data was captured, so nothing is assumed: tables come from ``sqlite_master`` and columns from
``PRAGMA table_info``; a missing table is "no data", never an error. From what is there:

* kernel, memory-operation, CUDA API, OS runtime and NVTX range summaries shaped like
  ``nsys stats`` (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum/_size_sum, cuda_api_sum,
  osrt_sum, nvtx_sum): count, total, avg, median, min, max, sample stddev, Time %;
* NCCL kernels flagged, and per kernel the launching API and its launch delay, joining
  kernels to runtime calls on (globalPid, correlationId): correlation ids are per process;
* GPU utilisation over time: per device, the union of kernel/memcpy/memset intervals
  (overlapping streams count once) in fixed bins, plus the NCCL-kernel share;
* target info: GPUs, driver and CUDA driver versions, host, OS, CPU; nsys and schema
  versions; the profiler's own warnings (DIAGNOSTIC_EVENT).

SQLite needs a file: the stream is spooled to a temporary file in chunks and opened
read-only. Statistics are computed by SQLite itself (window functions over integer name ids;
large sorts spill to disk) and only one row per distinct name comes back to Python, so
memory grows with the number of names, never with the number of events.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import sqlite3
import tempfile
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, ClassVar

from artifacts.nsight.parsers.nsys.common import (
    KernelStat,
    MemStat,
    RangeStat,
    TimeStat,
    api_display_name,
    is_nccl,
    throughput_gbps,
    with_time_pct,
)
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import cuda_version_text

KIND = "nsys_sqlite"
VERSION = 1

SQLITE_MAGIC = b"SQLite format 3\x00"
# Table names nsys writes into the schema at the start of the file.
_NSYS_MARKERS = (
    b"StringIds",
    b"CUPTI_ACTIVITY",
    b"NVTX_EVENTS",
    b"TARGET_INFO",
    b"META_DATA_EXPORT",
    b"EXPORT_META_DATA",
)
SPOOL_CHUNK = 1024 * 1024
UTIL_BINS = 100
MAX_NAMES = 50_000  # distinct names kept per summary
MAX_DIAGNOSTICS = 50
MAX_PROCESSES = 200

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
NVTX = "NVTX_EVENTS"
OSRT = "OSRT_API"
CUDA_TABLES = (KERNEL, RUNTIME, MEMCPY, MEMSET)
# Fallback when ENUM_CUDA_MEMCPY_OPER is absent (labels as nsys 2023-2025 write them).
_COPY_KINDS = {
    0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array",
    4: "Array-to-Host", 5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array",
    8: "Device-to-Device", 9: "Host-to-Host", 10: "Peer-to-Peer",
    11: "Unified Host-to-Device", 12: "Unified Device-to-Host", 13: "Unified Device-to-Device",
}  # fmt: skip
_NVTX_RANGE_TYPES = {
    "NvtxPushPopRange": "PushPop",
    "NvtxStartEndRange": "StartEnd",
    "NvtxtPushPopRange": "PushPop",
    "NvtxtStartEndRange": "StartEnd",
}
_NVTX_RANGE_IDS = {59: "PushPop", 60: "StartEnd", 70: "PushPop", 71: "StartEnd"}
_GPU_COLUMNS = {
    "id": "id", "name": "name", "busLocation": "bus_location", "chipName": "chip",
    "smCount": "sm_count", "totalMemory": "memory_bytes", "memoryBandwidth": "memory_bandwidth",
    "clockRate": "clock_hz", "computeMajor": "compute_major", "computeMinor": "compute_minor",
    "uuid": "uuid",
}  # fmt: skip
_ENV_KEYS = {
    "Hostname": "host", "NvDriverVersion": "driver_version",
    "CudaDriverVersion": "cuda_driver_version", "OsDescription": "os",
    "CpuDescription": "cpu", "CpuCores": "cpu_cores", "HardwarePlatform": "platform",
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Gpu:
    id: int | None = None
    name: str | None = None
    bus_location: str | None = None
    chip: str | None = None
    sm_count: int | None = None
    memory_bytes: int | None = None
    memory_bandwidth: int | None = None
    clock_hz: int | None = None
    compute_major: int | None = None
    compute_minor: int | None = None
    uuid: str | None = None


@dataclasses.dataclass(frozen=True)
class Target:
    host: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    os: str | None = None
    cpu: str | None = None
    cpu_cores: str | None = None
    platform: str | None = None
    gpus: tuple[Gpu, ...] = ()


@dataclasses.dataclass(frozen=True)
class ExportInfo:
    nsys_version: str | None = None
    schema_version: str | None = None
    exported_at: str | None = None
    session_start_utc: str | None = None
    duration_ns: int | None = None


@dataclasses.dataclass(frozen=True)
class DeviceUtilisation:
    """Busy share per bin of ``bin_ns`` from ``start_ns`` (session clock), in percent."""

    device_id: int
    start_ns: int
    bin_ns: int
    busy_ns: int
    busy_pct: tuple[float, ...]
    nccl_pct: tuple[float, ...] = ()


@dataclasses.dataclass(frozen=True)
class Process:
    pid: int | None
    name: str | None


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    severity: str
    text: str


@dataclasses.dataclass(frozen=True)
class NvtxDomain:
    """NVTX ranges of one domain (``nvtxDomainCreate``; id 0 / none is the default domain)."""

    domain: str
    domain_ids: tuple[int, ...]
    ranges: int
    names: int
    total_ns: float
    max_ns: float


@dataclasses.dataclass(frozen=True)
class NsysSqliteResult(ParseResult):
    kind: ClassVar[str] = KIND
    export: ExportInfo = ExportInfo()
    target: Target = Target()
    activity_tables: dict[str, int] = dataclasses.field(default_factory=dict)
    processes: tuple[Process, ...] = ()
    kernels: tuple[KernelStat, ...] = ()
    memory: tuple[MemStat, ...] = ()
    api_calls: tuple[TimeStat, ...] = ()
    os_runtime: tuple[TimeStat, ...] = ()
    ranges: tuple[RangeStat, ...] = ()
    nvtx_domains: tuple[NvtxDomain, ...] = ()
    utilisation: tuple[DeviceUtilisation, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    def summary(self) -> dict[str, Any]:
        kernel_ns = sum(k.total_ns for k in self.kernels)
        nccl_ns = sum(k.total_ns for k in self.kernels if k.is_nccl)
        return {
            "nsys_version": self.export.nsys_version,
            "gpus": [g.name for g in self.target.gpus if g.name],
            "kernels": len(self.kernels),
            "kernel_instances": sum(k.count for k in self.kernels),
            "kernel_time_ms": round(kernel_ns / 1e6, 3),
            "nccl_kernel_pct": round(100 * nccl_ns / kernel_ns, 2) if kernel_ns else None,
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    return head.startswith(SQLITE_MAGIC) and any(m in head for m in _NSYS_MARKERS)


def parse(stream: BinaryIO) -> NsysSqliteResult:
    with _spooled(stream) as (path, truncated):
        try:
            conn = sqlite3.connect(_readonly_uri(path), uri=True)
        except sqlite3.Error as exc:
            raise ParseError(f"could not open the SQLite database: {exc}") from exc
        try:
            result = _Reader(conn).read()
        except ParseError as exc:
            # SQLite can only say "malformed"; the header tells us why
            raise ParseError(f"{truncated}: {exc.message}" if truncated else exc.message) from exc
        finally:
            conn.close()
    if truncated:
        result = dataclasses.replace(result, warnings=(truncated, *result.warnings))
    return result


def _truncation(header: bytes, size: int) -> str | None:
    """The header's page count (when valid) against the bytes received."""
    if len(header) < 100:
        return None
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    counter_ok = header[24:28] == header[92:96] and pages > 0
    expected = page_size * pages
    if counter_ok and size < expected:
        return (
            f"the file is truncated: it holds {size} of the {expected} bytes its SQLite header "
            "announces (upload the complete export)"
        )
    return None


@contextlib.contextmanager
def _spooled(stream: BinaryIO) -> Iterator[tuple[str, str | None]]:
    """Copy the upload to a temporary file chunk by chunk, refusing non-SQLite bytes early."""
    with tempfile.NamedTemporaryFile(prefix="perfhub-nsys-", suffix=".sqlite") as spool:
        first = True
        header = b""
        size = 0
        while True:
            try:
                chunk = stream.read(SPOOL_CHUNK)
            except ParseError:
                raise
            except (OSError, ValueError, EOFError) as exc:
                raise ParseError(f"could not read the file: {exc}", permanent=False) from exc
            if not chunk:
                break
            if first:
                if not chunk.startswith(SQLITE_MAGIC[: len(chunk)]) or len(chunk) < 100:
                    raise ParseError(
                        "not an SQLite database: the file does not start with "
                        "'SQLite format 3' (export the report with "
                        "`nsys export --type sqlite --lazy=false report.nsys-rep`)"
                    )
                first = False
                header = chunk[:100]
            size += len(chunk)
            spool.write(chunk)
        if first:
            raise ParseError("the file is empty")
        spool.flush()
        yield spool.name, _truncation(header, size)


def _readonly_uri(path: str) -> str:
    # immutable: the spool is ours and never changes, so SQLite needs no locks or journal
    return f"file:{urllib.parse.quote(path)}?mode=ro&immutable=1"


def _q(identifier: str) -> str:
    """Quote an identifier (names come from the file's own schema)."""
    return '"' + identifier.replace('"', '""') + '"'


class _Reader:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.text_factory = lambda b: b.decode("utf-8", errors="replace")
        self.warnings: list[str] = []
        self.tables: dict[str, list[tuple[str, str]]] = {}
        self._nccl_keys: list[Any] = []  # kernel name ids of NCCL kernels, for utilisation

    # --- schema discovery -------------------------------------------------------------------

    def read(self) -> NsysSqliteResult:
        try:
            self.conn.execute("PRAGMA query_only = 1")
            self.conn.execute("PRAGMA cache_size = -16384")  # 16 MiB page cache at most
            names = [
                r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
        except sqlite3.Error as exc:
            raise ParseError(f"not a readable SQLite database: {exc}") from exc
        for name in names:
            try:
                info = self.conn.execute(f"PRAGMA table_info({_q(name)})").fetchall()
            except sqlite3.Error:
                continue
            self.tables[name] = [(row[1], (row[2] or "").upper()) for row in info]
        if not any(
            t == "StringIds"
            or t.startswith(("CUPTI_ACTIVITY", "TARGET_INFO", "NVTX_"))
            or t in ("META_DATA_EXPORT", "EXPORT_META_DATA")
            for t in self.tables
        ):
            raise ParseError(
                "an SQLite database, but not an Nsight Systems export "
                "(no StringIds, TARGET_INFO_*, CUPTI_ACTIVITY_* or META_DATA_EXPORT tables)"
            )
        export = self._section("export metadata", self._export_info, ExportInfo())
        target = self._section("target info", self._target, Target())
        activity = self._section("activity tables", self._activity_counts, {})
        if not any(activity.get(t) for t in CUDA_TABLES):
            self.warnings.append(
                "no CUDA activity in this export (no CUPTI_ACTIVITY_KIND_* rows): CUDA was not "
                "traced (nsys profile --trace=cuda,nvtx,...) or the process made no CUDA calls; "
                "only target info, OS runtime calls and NVTX ranges can be shown"
            )
        kernels = self._section("kernel summary", self._kernels, [])
        memory = self._section("memory summary", self._memory, [])
        api = self._section("CUDA API summary", lambda: self._api_summary(RUNTIME), [])
        osrt = self._section("OS runtime summary", lambda: self._api_summary(OSRT), [])
        ranges = self._section("NVTX range summary", self._ranges, [])
        domains = self._section("NVTX domains", self._nvtx_domains, [])
        util = self._section("GPU utilisation", lambda: self._utilisation(export.duration_ns), [])
        return NsysSqliteResult(
            export=export,
            target=target,
            activity_tables=activity,
            processes=tuple(self._section("processes", self._processes, [])),
            kernels=tuple(kernels),
            memory=tuple(memory),
            api_calls=tuple(api),
            os_runtime=tuple(osrt),
            ranges=tuple(ranges),
            nvtx_domains=tuple(domains),
            utilisation=tuple(util),
            diagnostics=tuple(self._section("diagnostics", self._diagnostics, [])),
            warnings=tuple(self.warnings),
        )

    def _section(self, label: str, read: Callable[[], Any], default: Any) -> Any:
        """One part of the file that fails (truncated, corrupt page) costs only that part."""
        try:
            return read()
        except sqlite3.Error as exc:
            self.warnings.append(
                f"{label}: could not be read ({exc}); the file may be truncated or corrupt"
            )
            return default

    def _has(self, table: str, *columns: str) -> bool:
        have = {c for c, _ in self.tables.get(table, ())}
        return table in self.tables and all(c in have for c in columns)

    def _first_column(self, table: str, *candidates: str) -> str | None:
        have = {c for c, _ in self.tables.get(table, ())}
        return next((c for c in candidates if c in have), None)

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        yield from self.conn.execute(sql, params)

    # --- metadata -----------------------------------------------------------------------------

    def _key_values(self, table: str, key: str, value: str, limit: int = 5000) -> dict[str, str]:
        if not self._has(table, key, value):
            return {}
        sql = f"SELECT {_q(key)}, {_q(value)} FROM {_q(table)} LIMIT {limit}"
        return {str(k): "" if v is None else str(v) for k, v in self._rows(sql)}

    def _export_info(self) -> ExportInfo:
        meta = self._key_values("META_DATA_EXPORT", "name", "value") or self._key_values(
            "EXPORT_META_DATA", "name", "value"
        )
        start = None
        if self._has("TARGET_INFO_SESSION_START_TIME", "utcTime"):
            row = self.conn.execute(
                "SELECT utcTime FROM TARGET_INFO_SESSION_START_TIME LIMIT 1"
            ).fetchone()
            start = row[0] if row else None
        duration = None
        if self._has("ANALYSIS_DETAILS", "duration"):
            row = self.conn.execute("SELECT MAX(duration) FROM ANALYSIS_DETAILS").fetchone()
            duration = int(row[0]) if row and row[0] is not None else None
        return ExportInfo(
            nsys_version=meta.get("EXPORT_PRODUCT_VERSION") or None,
            schema_version=meta.get("EXPORT_SCHEMA_VERSION") or None,
            exported_at=meta.get("EXPORT_TIME_UTC") or None,
            session_start_utc=start,
            duration_ns=duration,
        )

    def _target(self) -> Target:
        env: dict[str, str] = {}
        gpu_info = ""
        if self._has("TARGET_INFO_SYSTEM_ENV", "name", "value"):
            for name, value in self._rows(
                "SELECT name, value FROM TARGET_INFO_SYSTEM_ENV LIMIT 5000"
            ):
                if name in _ENV_KEYS and value not in (None, ""):
                    env.setdefault(_ENV_KEYS[name], str(value))
                elif name == "GpuInfo":
                    gpu_info = str(value or "")
        if "cuda_driver_version" in env:
            env["cuda_driver_version"] = _cuda_version(env["cuda_driver_version"])
        gpus = self._gpus() or _gpus_from_json(gpu_info)
        return Target(**env, gpus=tuple(gpus))

    def _gpus(self) -> list[Gpu]:
        table = "TARGET_INFO_GPU"
        columns = [c for c, _ in self.tables.get(table, ()) if c in _GPU_COLUMNS]
        if not columns:
            return []
        order = "ORDER BY id" if "id" in columns else ""
        sql = f"SELECT {', '.join(_q(c) for c in columns)} FROM {table} {order} LIMIT 4096"
        return [
            Gpu(**{_GPU_COLUMNS[c]: _clean(v) for c, v in zip(columns, row, strict=True)})
            for row in self._rows(sql)
        ]

    def _activity_counts(self) -> dict[str, int]:
        counts = {}
        for table in sorted(self.tables):
            if table.startswith("CUPTI_ACTIVITY_KIND_") or table in (NVTX, OSRT, "GPU_METRICS"):
                counts[table] = int(
                    self.conn.execute(f"SELECT COUNT(*) FROM {_q(table)}").fetchone()[0]
                )
        return counts

    def _processes(self) -> list[Process]:
        pids: set[int] = set()
        for table in (KERNEL, MEMCPY, MEMSET):
            if self._has(table, "globalPid"):
                pids.update(
                    r[0]
                    for r in self._rows(f"SELECT DISTINCT globalPid FROM {table} LIMIT 1000")
                    if r[0] is not None
                )
        if not pids or not self._has("PROCESSES", "globalPid", "pid", "name"):
            return [Process(pid=(p >> 24) & 0xFFFFFF, name=None) for p in sorted(pids)][
                :MAX_PROCESSES
            ]
        names = {
            gp: (pid, name)
            for gp, pid, name in self._rows("SELECT globalPid, pid, name FROM PROCESSES")
            if gp in pids
        }
        out = []
        for gp in sorted(pids)[:MAX_PROCESSES]:
            pid, name = names.get(gp, ((gp >> 24) & 0xFFFFFF, None))
            out.append(Process(pid=pid, name=name))
        return out

    def _diagnostics(self) -> list[Diagnostic]:
        if not self._has("DIAGNOSTIC_EVENT", "severity", "text"):
            return []
        levels = {1: "info", 2: "warning", 3: "error"}
        if self._has("ENUM_DIAGNOSTIC_SEVERITY_LEVEL", "id", "label"):
            levels.update(
                {
                    int(i): str(lbl).lower()
                    for i, lbl in self._rows("SELECT id, label FROM ENUM_DIAGNOSTIC_SEVERITY_LEVEL")
                }
            )
        order = "ORDER BY timestamp" if self._has("DIAGNOSTIC_EVENT", "timestamp") else ""
        sql = (
            f"SELECT severity, text FROM DIAGNOSTIC_EVENT WHERE severity IN (2, 3) {order} "
            f"LIMIT {MAX_DIAGNOSTICS}"
        )
        return [
            Diagnostic(levels.get(sev, str(sev)), " ".join(str(text).split()))
            for sev, text in self._rows(sql)
        ]

    # --- summaries ----------------------------------------------------------------------------

    def _durations(self, table: str, key_expr: str, where: str = "") -> list[dict[str, Any]]:
        """count/total/avg/median/min/max/stddev of ``end - start`` per key, all in SQLite.

        One window pass sorts each key's durations (on disk when large): the median is read at
        the middle row numbers, the stddev from deviations to the partition mean (two-pass
        accurate, sample n-1, as nsys). Keys should be integers (interned string ids): sorting
        1M strings costs several times more than sorting 1M integers.
        """
        cond = f'WHERE t."end" IS NOT NULL AND t.start IS NOT NULL {where}'
        sql = f"""
            SELECT k, COUNT(*), SUM(d), MIN(d), MAX(d), AVG(d),
                   SUM((d - mean) * (d - mean)),
                   AVG(CASE WHEN rn IN ((n + 1) / 2, (n + 2) / 2) THEN d END)
            FROM (SELECT k, d, ROW_NUMBER() OVER w AS rn, COUNT(*) OVER w AS n,
                         AVG(d) OVER w AS mean
                  FROM (SELECT {key_expr} AS k, t."end" - t.start AS d FROM {table} t {cond})
                  WINDOW w AS (PARTITION BY k ORDER BY d
                               ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING))
            GROUP BY k
        """
        out = []
        for key, n, total, lo, hi, mean, m2, median in self._rows(sql):
            if len(out) >= MAX_NAMES:
                self.warnings.append(
                    f"{table}: more than {MAX_NAMES} distinct names, rest left out"
                )
                break
            out.append(
                {
                    "key": key,
                    "count": n,
                    "total_ns": total,
                    "avg_ns": mean,
                    "med_ns": median,
                    "min_ns": lo,
                    "max_ns": hi,
                    "stddev_ns": math.sqrt(max(m2 or 0.0, 0.0) / (n - 1)) if n > 1 else 0.0,
                    "m2": m2 or 0.0,
                }
            )
        return out

    def _median(self, table: str, key_expr: str, keys: list[Any]) -> float | None:
        """The median over several keys at once (when two ids share one display name)."""
        marks = ", ".join("?" * len(keys))
        sql = f"""
            SELECT AVG(d) FROM (
                SELECT d, ROW_NUMBER() OVER (ORDER BY d) AS rn, COUNT(*) OVER () AS n
                FROM (SELECT t."end" - t.start AS d FROM {table} t
                      WHERE {key_expr} IN ({marks}) AND t."end" IS NOT NULL))
            WHERE rn IN ((n + 1) / 2, (n + 2) / 2)
        """
        row = self.conn.execute(sql, tuple(keys)).fetchone()
        return row[0] if row else None

    def _named(
        self, table: str, key_expr: str, rows: list[dict[str, Any]], name_of: Callable[[Any], str]
    ) -> list[dict[str, Any]]:
        """Give each keyed row its name; rows whose keys share a name are merged exactly."""
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            groups.setdefault(name_of(r["key"]), []).append(r)
        out = []
        for name, parts in groups.items():
            if len(parts) == 1:
                merged = dict(parts[0])
            else:
                n = sum(p["count"] for p in parts)
                total = sum(p["total_ns"] for p in parts)
                mean = total / n
                m2 = sum(p["m2"] + p["count"] * (p["avg_ns"] - mean) ** 2 for p in parts)
                merged = {
                    "count": n,
                    "total_ns": total,
                    "avg_ns": mean,
                    "med_ns": self._median(table, key_expr, [p["key"] for p in parts]),
                    "min_ns": min(p["min_ns"] for p in parts),
                    "max_ns": max(p["max_ns"] for p in parts),
                    "stddev_ns": math.sqrt(m2 / (n - 1)) if n > 1 else 0.0,
                }
            merged.pop("key", None)
            merged.pop("m2", None)
            out.append({"name": name, **merged})
        out.sort(key=lambda r: (-r["total_ns"], r["name"]))
        return out

    def _strings(self, table: str, column: str) -> Callable[[Any], str]:
        """id -> text for an interned column (only the ids the table uses are loaded)."""
        col_type = dict(self.tables.get(table, ())).get(column, "")
        if "CHAR" in col_type or "TEXT" in col_type or "StringIds" not in self.tables:
            return lambda key: "" if key is None else str(key)
        sql = (
            f"SELECT id, value FROM StringIds WHERE id IN "
            f"(SELECT DISTINCT {_q(column)} FROM {_q(table)})"
        )
        names = {i: str(v) for i, v in self._rows(sql)}
        return lambda key: names.get(key, "" if key is None else str(key))

    def _kernel_name_column(self) -> str | None:
        return self._first_column(KERNEL, "demangledName", "shortName", "mangledName", "name")

    def _kernels(self) -> list[KernelStat]:
        column = self._kernel_name_column()
        if column is None or not self._has(KERNEL, "start", "end"):
            return []
        key = f"t.{_q(column)}"
        name_of = self._strings(KERNEL, column)
        keyed = self._durations(KERNEL, key)
        self._nccl_keys = [r["key"] for r in keyed if is_nccl(name_of(r["key"]))]
        rows = self._named(KERNEL, key, keyed, name_of)
        launches = self._section("kernel launches", lambda: self._launches(key, name_of), {})
        kernels = []
        for r in rows:
            launch = launches.get(r["name"])
            kernels.append(
                KernelStat(
                    **r,
                    is_nccl=is_nccl(r["name"]),
                    avg_launch_ns=launch[0] if launch else None,
                    launch_api=launch[1] if launch else None,
                )
            )
        return with_time_pct(kernels)

    def _pid_match(self) -> str | None:
        """How a runtime call's process is matched to a kernel's globalPid."""
        if self._has(RUNTIME, "globalPid"):
            return "r.globalPid = t.globalPid"
        if self._has(RUNTIME, "globalTid"):
            # globalTid = globalPid | tid (low 24 bits): the process is the bits above them
            return "(r.globalTid >> 24) = (t.globalPid >> 24)"
        return None

    def _launches(self, key: str, name_of: Callable[[Any], str]) -> dict[str, tuple[float, str]]:
        """Per kernel name: mean (kernel start - launch call start) and the usual launch API."""
        pid_match = self._pid_match()
        if (
            pid_match is None
            or not self._has(KERNEL, "correlationId", "globalPid")
            or not self._has(RUNTIME, "correlationId", "nameId", "start")
        ):
            return {}
        api_name = self._strings(RUNTIME, "nameId")
        sql = (
            f"SELECT {key}, r.nameId, COUNT(*), SUM(t.start - r.start) "
            f"FROM {KERNEL} t JOIN {RUNTIME} r "
            f"ON r.correlationId = t.correlationId AND {pid_match} "
            f"GROUP BY {key}, r.nameId"
        )
        totals: dict[str, list[float]] = {}
        apis: dict[str, dict[str, int]] = {}
        for kernel_key, api_key, n, delay in self._rows(sql):
            name = name_of(kernel_key)
            entry = totals.setdefault(name, [0, 0.0])
            entry[0] += n
            entry[1] += delay or 0
            api = api_display_name(api_name(api_key))
            apis.setdefault(name, {})[api] = apis.get(name, {}).get(api, 0) + n
        return {
            name: (total / n, max(apis[name].items(), key=lambda kv: kv[1])[0])
            for name, (n, total) in totals.items()
            if n
        }

    def _memory(self) -> list[MemStat]:
        rows: list[MemStat] = []
        if self._has(MEMCPY, "start", "end", "copyKind", "bytes"):
            labels = dict(_COPY_KINDS)
            if self._has("ENUM_CUDA_MEMCPY_OPER", "id", "label"):
                labels.update(
                    {
                        int(i): str(lbl)
                        for i, lbl in self._rows("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER")
                    }
                )
            rows += self._memory_ops(
                MEMCPY, "t.copyKind", lambda k: f"[CUDA memcpy {labels.get(k, k)}]"
            )
        if self._has(MEMSET, "start", "end", "bytes"):
            rows += self._memory_ops(MEMSET, "0", lambda _k: "[CUDA memset]")
        rows.sort(key=lambda r: (-r.total_ns, r.name))
        return with_time_pct(rows)

    def _memory_ops(self, table: str, key_expr: str, label: Callable[[Any], str]) -> list[MemStat]:
        sizes = {
            key: (total, avg, lo, hi)
            for key, total, avg, lo, hi in self._rows(
                f"SELECT {key_expr} AS k, SUM(bytes), AVG(bytes), MIN(bytes), MAX(bytes) "
                f"FROM {table} t GROUP BY k"
            )
        }
        out = []
        for r in self._durations(table, key_expr):
            key = r.pop("key")
            r.pop("m2")
            total, avg, lo, hi = sizes.get(key, (None, None, None, None))
            out.append(
                MemStat(
                    name=label(key),
                    **r,
                    total_bytes=total,
                    avg_bytes=avg,
                    min_bytes=lo,
                    max_bytes=hi,
                    throughput_gbps=throughput_gbps(total, r["total_ns"]),
                )
            )
        return out

    def _api_summary(self, table: str) -> list[TimeStat]:
        if not self._has(table, "start", "end", "nameId"):
            return []
        name_of = self._strings(table, "nameId")
        rows = self._durations(table, "t.nameId")
        # both spellings of one API (cudaMalloc, cudaMalloc_v3020) are one row, as in nsys
        named = self._named(table, "t.nameId", rows, lambda k: api_display_name(name_of(k)))
        return with_time_pct(TimeStat(**r) for r in named)

    def _range_styles(self) -> dict[int, str]:
        """eventType id -> "PushPop" / "StartEnd", from the export's enum when it has one."""
        styles = dict(_NVTX_RANGE_IDS)
        if self._has("ENUM_NSYS_EVENT_TYPE", "id", "name"):
            found = {
                int(i): _NVTX_RANGE_TYPES[str(n)]
                for i, n in self._rows("SELECT id, name FROM ENUM_NSYS_EVENT_TYPE")
                if str(n) in _NVTX_RANGE_TYPES
            }
            styles = found or styles
        return styles

    def _nvtx_text_expr(self) -> str:
        parts = []
        if self._has(NVTX, "text"):
            parts.append("t.text")
        if self._has(NVTX, "textId") and "StringIds" in self.tables:
            parts.append("(SELECT value FROM StringIds s WHERE s.id = t.textId)")
        return "COALESCE(" + ", ".join([*parts, "'(unnamed)'"]) + ")"

    def _ranges(self) -> list[RangeStat]:
        if not self._has(NVTX, "start", "end", "eventType"):
            return []
        styles = self._range_styles()
        # Ranges are few next to kernels: their text is grouped directly (no id to sort by).
        name_expr = self._nvtx_text_expr()
        out: list[RangeStat] = []
        for style in sorted(set(styles.values())):
            ids = ", ".join(str(i) for i, s in styles.items() if s == style)
            rows = self._durations(NVTX, name_expr, f"AND t.eventType IN ({ids})")
            for r in self._named(NVTX, name_expr, rows, str):
                out.append(RangeStat(**r, style=style))
        out.sort(key=lambda r: (-r.total_ns, r.name))
        return with_time_pct(out)

    def _nvtx_domains(self) -> list[NvtxDomain]:
        """Ranges per NVTX domain: NCCL, PyTorch (record_function with emit_nvtx), your own.

        Domain names come from the export's domain-create events (the text of the row whose
        eventType is NvtxDomainCreate, for that domainId); ids without one, and 0, are the
        default domain. Ids are per process, so domains are merged by name.
        """
        if not self._has(NVTX, "start", "end", "eventType", "domainId"):
            return []
        range_ids = ", ".join(str(i) for i in self._range_styles())
        create = [75]
        if self._has("ENUM_NSYS_EVENT_TYPE", "id", "name"):
            create = [
                int(i)
                for i, n in self._rows("SELECT id, name FROM ENUM_NSYS_EVENT_TYPE")
                if str(n) in ("NvtxDomainCreate", "NvtxtDomainCreate")
            ] or create
        text = self._nvtx_text_expr()
        names: dict[int, str] = {}
        sql = (
            f"SELECT t.domainId, {text} FROM {NVTX} t "
            f"WHERE t.eventType IN ({', '.join(map(str, create))}) LIMIT {MAX_NAMES}"
        )
        for domain_id, name in self._rows(sql):
            if domain_id is not None:
                names[int(domain_id)] = str(name)[:200]
        sql = f"""
            SELECT t.domainId, COUNT(*), SUM(t."end" - t.start), MAX(t."end" - t.start),
                   COUNT(DISTINCT {text})
            FROM {NVTX} t
            WHERE t."end" IS NOT NULL AND t.start IS NOT NULL AND t.eventType IN ({range_ids})
            GROUP BY t.domainId LIMIT {MAX_NAMES}
        """
        merged: dict[str, list[Any]] = {}
        for domain_id, count, total, longest, distinct in self._rows(sql):
            key = int(domain_id) if domain_id is not None else 0
            label = names.get(key) or ("default" if key == 0 else f"domain {key}")
            row = merged.setdefault(label, [[], 0, 0, 0.0, 0.0])
            row[0].append(key)
            row[1] += count
            row[2] += distinct  # names of two ids of one domain may repeat: an upper bound
            row[3] += float(total or 0)
            row[4] = max(row[4], float(longest or 0))
        out = [
            NvtxDomain(label, tuple(sorted(ids)), count, distinct, total, longest)
            for label, (ids, count, distinct, total, longest) in merged.items()
        ]
        out.sort(key=lambda d: (-d.total_ns, d.domain))
        return out

    # --- utilisation --------------------------------------------------------------------------

    def _gpu_intervals_sql(self, nccl_only: bool) -> tuple[str, tuple[Any, ...]] | None:
        parts = []
        params: tuple[Any, ...] = ()
        if nccl_only:
            keys = self._nccl_keys
            column = self._kernel_name_column()
            if not keys or column is None or not self._has(KERNEL, "start", "end", "deviceId"):
                return None
            params = tuple(keys)
            parts.append(
                f'SELECT t.deviceId, t.start, t."end" FROM {KERNEL} t '
                f"WHERE t.{_q(column)} IN ({', '.join('?' * len(keys))})"
            )
        else:
            for table in (KERNEL, MEMCPY, MEMSET):
                if self._has(table, "start", "end", "deviceId"):
                    parts.append(f'SELECT t.deviceId, t.start, t."end" FROM {table} t')
        if not parts:
            return None
        return " UNION ALL ".join(parts) + " ORDER BY 1, 2", params

    def _utilisation(self, session_ns: int | None) -> list[DeviceUtilisation]:
        query = self._gpu_intervals_sql(nccl_only=False)
        if query is None:
            return []
        sql, params = query
        lo, hi = self.conn.execute(f'SELECT MIN(start), MAX("end") FROM ({sql})', params).fetchone()
        if lo is None or hi is None or hi <= lo:
            return []
        # The whole session when the activity lies in it: idle time before the first kernel
        # is part of the picture.
        if session_ns and 0 <= lo and hi <= session_ns:
            lo, hi = 0, session_ns
        bin_ns = max(1, math.ceil((hi - lo) / UTIL_BINS))
        busy = _binned_union(self.conn.execute(sql, params), lo, bin_ns)
        nccl_query = self._gpu_intervals_sql(nccl_only=True)
        nccl = _binned_union(self.conn.execute(*nccl_query), lo, bin_ns) if nccl_query else {}
        out = []
        for device, (bins, busy_ns) in sorted(busy.items()):
            nccl_bins = nccl.get(device, (None, 0))[0]
            out.append(
                DeviceUtilisation(
                    device_id=int(device),
                    start_ns=int(lo),
                    bin_ns=bin_ns,
                    busy_ns=int(busy_ns),
                    busy_pct=_percent(bins, bin_ns),
                    nccl_pct=_percent(nccl_bins, bin_ns) if nccl_bins else (),
                )
            )
        return out


def _binned_union(
    rows: Iterator[tuple[Any, ...]], lo: int, bin_ns: int
) -> dict[Any, tuple[list[float], int]]:
    """Per device: busy ns per bin of the union of intervals (sorted by device, start)."""
    out: dict[Any, tuple[list[float], int]] = {}
    device = None
    cur_s = cur_e = None
    bins: list[float] = []
    total = 0

    def flush() -> None:
        nonlocal total
        if cur_s is None or cur_e is None or cur_e <= cur_s:
            return
        total += cur_e - cur_s
        first = max(0, (cur_s - lo) // bin_ns)
        last = min(UTIL_BINS - 1, (cur_e - 1 - lo) // bin_ns)
        for b in range(int(first), int(last) + 1):
            b_lo = lo + b * bin_ns
            overlap = min(cur_e, b_lo + bin_ns) - max(cur_s, b_lo)
            if overlap > 0:
                bins[b] += overlap

    for dev, start, end in rows:
        if start is None or end is None:
            continue
        if dev != device:
            flush()
            if device is not None:
                out[device] = (bins, total)
            device, bins, total = dev, [0.0] * UTIL_BINS, 0
            cur_s, cur_e = start, end
            continue
        if cur_e is not None and start <= cur_e:
            cur_e = max(cur_e, end)
        else:
            flush()
            cur_s, cur_e = start, end
    if device is not None:
        flush()
        out[device] = (bins, total)
    return out


def _percent(bins: list[float] | None, bin_ns: int) -> tuple[float, ...]:
    if not bins:
        return ()
    return tuple(round(min(100.0, 100.0 * b / bin_ns), 2) for b in bins)


def _clean(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def _cuda_version(raw: str) -> str:
    """CUDA's integer version (13010) as major.minor (13.1); anything else as it is."""
    try:
        return cuda_version_text(int(raw)) or raw
    except ValueError:
        return raw


def _gpus_from_json(text: str) -> list[Gpu]:
    """TARGET_INFO_SYSTEM_ENV 'GpuInfo' JSON, when the export has no TARGET_INFO_GPU table."""
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return []
    out = []
    for g in (data.get("Gpus") or []) if isinstance(data, dict) else []:
        if not isinstance(g, dict):
            continue
        out.append(
            Gpu(
                id=_int(g.get("Id")),
                name=g.get("Name"),
                bus_location=g.get("BusLocation"),
                chip=g.get("ChipName"),
                sm_count=_int(g.get("SmCount")),
                memory_bytes=_int(g.get("TotalMemory")),
                memory_bandwidth=_int(g.get("MemoryBandwidth")),
                clock_hz=_int(g.get("ClockRate")),
                compute_major=_int(g.get("ComputeMajor")),
                compute_minor=_int(g.get("ComputeMinor")),
                uuid=g.get("Uuid"),
            )
        )
    return out


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
