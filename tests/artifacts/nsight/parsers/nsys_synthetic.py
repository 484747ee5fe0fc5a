"""A small Nsight Systems SQLite export built by the tests (the real samples hold no NVTX,
memset, NCCL or multi-GPU data). Table and column names are those of real exports
(see ../shared/samples/nsys/nsys_sqlite_schema_notes.md); the numbers are chosen so that
every expected value in the tests can be worked out by hand.

Two processes reuse the same correlation ids, so a join on correlationId alone would pair
the wrong launch calls with kernels: only (globalPid, correlationId) gives the right delays.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def global_pid(pid: int) -> int:
    """nsys's serialised process id: (hardware/vm id << 24 | pid) << 24."""
    return ((1 << 24) | pid) << 24


P1, P2 = global_pid(100), global_pid(200)
STRINGS = {
    1: "gemm_kernel(float*, float const*)",
    2: "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    3: "cudaLaunchKernel_v7000",
    4: "cuLaunchKernelEx",
    5: "cudaMalloc_v3020",
    6: "cudaStreamIsCapturing_v10000",
    7: "epoch",
    8: "ioctl",
}
# (start, end, device, stream, correlationId, globalPid, name id)
KERNELS = [
    (1000, 1100, 0, 7, 1, P1, 1),
    (2000, 2200, 0, 7, 2, P1, 1),
    (3000, 3300, 0, 7, 3, P1, 1),
    (4000, 4400, 0, 7, 4, P1, 1),
    (1500, 2500, 0, 8, 5, P1, 2),
    (3500, 4200, 0, 8, 6, P1, 2),
    (1000, 1600, 1, 7, 1, P2, 1),  # same correlationId 1 as P1's first kernel
]
# (start, end, globalTid, correlationId, name id)
RUNTIME = [
    (950, 960, P1 | 101, 1, 3),
    (1950, 1960, P1 | 101, 2, 3),
    (2950, 2960, P1 | 101, 3, 3),
    (3950, 3960, P1 | 101, 4, 3),
    (1000, 1010, P1 | 101, 5, 4),
    (3000, 3010, P1 | 101, 6, 4),
    (700, 710, P2 | 201, 1, 3),
    (100, 110, P1 | 101, 7, 5),
    (200, 230, P1 | 101, 8, 5),
    (300, 305, P1 | 101, 9, 6),
]
# (start, end, device, bytes, copyKind)
MEMCPY = [(500, 900, 0, 1_000_000, 1), (5000, 5100, 0, 2000, 2)]
MEMSET = [(5200, 5250, 0, 4096)]
# (start, end, eventType, text, textId)
NVTX = [
    (900, 4500, 59, "step", None),
    (4600, 5300, 59, "step", None),
    (800, 5400, 60, None, 7),
    (1234, None, 34, "a mark", None),
]


def build(path: Path, *, old_schema: bool = False) -> Path:
    """Write the export to ``path``. ``old_schema``: the 3.1-era spelling (EXPORT_META_DATA,
    no greenContextId, no ENUM tables), so discovery and fallbacks are exercised."""
    conn = sqlite3.connect(path)
    green = "" if old_schema else "greenContextId INTEGER,"
    conn.executescript(
        f"""
        CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
            start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            contextId INTEGER NOT NULL, {green} streamId INTEGER NOT NULL,
            correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
            shortName INTEGER NOT NULL, mangledName INTEGER, registersPerThread INTEGER NOT NULL,
            gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
            blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
            start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
            globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
            returnValue INTEGER NOT NULL, callchainId INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
            start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
            globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
            start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
            globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL);
        CREATE TABLE NVTX_EVENTS (
            start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
            category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
            textId INTEGER, domainId INTEGER);
        CREATE TABLE OSRT_API (
            start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
            globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
            nestingLevel INTEGER, callchainId INTEGER NOT NULL);
        CREATE TABLE TARGET_INFO_GPU (
            vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
            totalMemory INTEGER, memoryBandwidth INTEGER, smCount INTEGER, chipName TEXT,
            computeMajor INTEGER, computeMinor INTEGER);
        CREATE TABLE TARGET_INFO_SYSTEM_ENV (
            globalVid INTEGER, devStateName TEXT NOT NULL, name TEXT NOT NULL,
            nameEnum INTEGER NOT NULL, value TEXT NOT NULL);
        CREATE TABLE ANALYSIS_DETAILS (
            globalVid INTEGER NOT NULL, duration INTEGER NOT NULL, startTime INTEGER NOT NULL,
            stopTime INTEGER NOT NULL);
        CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
        """
    )
    meta = "EXPORT_META_DATA" if old_schema else "META_DATA_EXPORT"
    conn.execute(f"CREATE TABLE {meta} (name TEXT NOT NULL, value TEXT)")
    conn.executemany(
        f"INSERT INTO {meta} VALUES (?, ?)",
        [("EXPORT_PRODUCT_VERSION", "2024.2.1.106"), ("EXPORT_SCHEMA_VERSION", "3.11.1")],
    )
    if not old_schema:
        conn.executescript(
            """
            CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL, name TEXT, label TEXT);
            INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES
                (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'),
                (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host');
            CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL, name TEXT, label TEXT);
            INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (34, 'NvtxMark', 'NvtxMark'),
                (59, 'NvtxPushPopRange', 'NvtxPushPopRange'),
                (60, 'NvtxStartEndRange', 'NvtxStartEndRange');
            """
        )
    conn.executemany("INSERT INTO StringIds VALUES (?, ?)", STRINGS.items())
    green_value = () if old_schema else (0,)
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
        f"({', '.join('?' * (17 + len(green_value)))})",
        [
            (s, e, dev, 1, *green_value, stream, corr, gp, name, name, None, 32, 8, 1, 1, 256, 1, 1)
            for s, e, dev, stream, corr, gp, name in KERNELS
        ],
    )
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, ?, 0, NULL)", RUNTIME
    )
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, 1, 7, 0, ?, ?, ?)",
        [(s, e, dev, P1, b, kind) for s, e, dev, b, kind in MEMCPY],
    )
    conn.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, ?, 1, 7, 0, ?, 0, ?)",
        [(s, e, dev, P1, b) for s, e, dev, b in MEMSET],
    )
    conn.executemany(
        "INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, NULL, NULL, NULL, ?, ?, NULL, ?, 0)",
        [(s, e, t, text, P1 | 101, tid) for s, e, t, text, tid in NVTX],
    )
    conn.executemany(
        "INSERT INTO OSRT_API VALUES (?, ?, 0, ?, 8, 0, 0, 0)",
        [(10, 20, P1 | 101), (30, 70, P1 | 101)],
    )
    conn.executemany(
        "INSERT INTO TARGET_INFO_GPU VALUES (0, ?, 'NVIDIA H100 80GB HBM3', ?, 85520809984, "
        "3352320000000, 132, 'GH100', 9, 0)",
        [(0, "0000:19:00.0"), (1, "0000:3b:00.0")],
    )
    conn.executemany(
        "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'Local', ?, 0, ?)",
        [("NvDriverVersion", "550.54.15"), ("CudaDriverVersion", "12040"), ("Hostname", "node-a")],
    )
    conn.execute("INSERT INTO ANALYSIS_DETAILS VALUES (0, 10000, 5, 10005)")
    conn.executemany(
        "INSERT INTO PROCESSES VALUES (?, ?, ?)", [(P1, 100, "python"), (P2, 200, "python")]
    )
    conn.commit()
    conn.close()
    return path
