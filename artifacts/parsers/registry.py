"""The parser registry: artifact kind -> module (imported lazily) and the kind's label.

The labels live here, not in the modules, so that choices and display names (a model field's
choices, every artifact page) never import a parser.

Adding a kind = copy a sibling module, fill in KIND/VERSION/accepts/parse (and a
``score`` when the format has an exact banner), add it here (order breaks ties between equal
scores: specific sniffers first) and add fixtures; the registry test fails when a kind has
no golden test. Detection itself (sampling, cleaning, ranking) is in detection.py.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import NamedTuple

from artifacts.parsers.base import ParseError


class Kind(NamedTuple):
    module: str
    label: str


PARSERS: dict[str, Kind] = {
    # Support bundles first: their sniffers are exact (the bug report's banner, a tar header
    # naming sysinfo-snapshot) and their content would otherwise pass for the kinds inside.
    "nvidia_bug_report": Kind(
        "artifacts.bundles.parsers.nvidia_bug_report",
        "nvidia-bug-report log (support bundle)",
    ),
    "sysinfo_snapshot": Kind(
        "artifacts.bundles.parsers.sysinfo_snapshot",
        "NVIDIA sysinfo-snapshot archive (support bundle)",
    ),
    "trace_archive": Kind(
        "artifacts.bundles.parsers.trace_archive",
        "Archive of PyTorch Profiler traces (one per rank, unpacked)",
    ),
    "nccl_tests": Kind("artifacts.runs.parsers.nccl_tests", "nccl-tests output"),
    "torch_trace": Kind("artifacts.traces.parsers.torch_trace", "PyTorch Profiler trace"),
    # Nsight: binary signatures first (SQLite, .nsys-rep), then text reports with their own
    # markers ("Executing '...' stats report", the ncu CSV header, ==PROF== + "Section:"),
    # all before the NCCL log sniffer (a profiled job's output may hold NCCL INFO lines).
    "nsys_sqlite": Kind("artifacts.nsight.parsers.nsys.sqlite", "Nsight Systems SQLite export"),
    "nsys_rep": Kind(
        "artifacts.nsight.parsers.nsys.rep",
        "Nsight Systems report (.nsys-rep, kept as evidence)",
    ),
    "nsys_stats": Kind(
        "artifacts.nsight.parsers.nsys.stats",
        "nsys stats output (--stats=true console, column/CSV reports)",
    ),
    "ncu_csv": Kind(
        "artifacts.nsight.parsers.ncu.csv",
        "Nsight Compute CSV (--csv details or raw page)",
    ),
    "ncu_text": Kind(
        "artifacts.nsight.parsers.ncu.text",
        "Nsight Compute text output (details page)",
    ),
    # Fabric and host evidence: most specific sniffers first, the generic "name: value"
    # ethtool sniffer last (RDMA counter lists look alike and must reach rdma_counters).
    "nccl_debug": Kind("artifacts.fabric.parsers.nccl_debug", "NCCL debug log (NCCL_DEBUG)"),
    "nccl_topology": Kind(
        "artifacts.fabric.parsers.nccl_topology",
        "NCCL topology XML (NCCL_TOPO_DUMP_FILE)",
    ),
    "nvidia_smi": Kind(
        "artifacts.fabric.parsers.nvidia_smi",
        "nvidia-smi (-q, -q -x, table, topo -m, nvlink)",
    ),
    "ib_status": Kind(
        "artifacts.fabric.parsers.ib_status", "ibstat / ibstatus / ibv_devinfo / ibdev2netdev"
    ),
    "ibnetdiscover": Kind(
        "artifacts.fabric.parsers.ibnetdiscover", "ibnetdiscover (InfiniBand fabric topology)"
    ),
    "rdma_counters": Kind(
        "artifacts.fabric.parsers.rdma_counters",
        "RDMA port counters (sysfs, rdma statistic)",
    ),
    "mlxlink": Kind("artifacts.fabric.parsers.mlxlink", "mlxlink (link, FEC, module, BER)"),
    "superbench_monitor": Kind(
        "artifacts.fabric.parsers.superbench_monitor",
        "SuperBench monitor (JSON lines of GPU, CPU and NIC readings)",
    ),
    # Host and tool outputs with their own markers (banners, table headers, prefixes).
    "dcgm": Kind("artifacts.fabric.parsers.dcgm", "DCGM (dcgmi diag, dcgmi dmon)"),
    "perftest": Kind(
        "artifacts.fabric.parsers.perftest",
        "perftest (ib_write_bw, ib_read_bw, ib_send_bw, *_lat)",
    ),
    "perf_stat": Kind("artifacts.fabric.parsers.perf_stat", "perf stat"),
    "mlxconfig": Kind("artifacts.fabric.parsers.mlxconfig", "mlxconfig -q (NIC firmware settings)"),
    "show_gids": Kind("artifacts.fabric.parsers.show_gids", "show_gids (RoCE/IB GID table)"),
    "mlnx_qos": Kind("artifacts.fabric.parsers.mlnx_qos", "mlnx_qos -i (NIC trust, PFC, ETS)"),
    "numa": Kind("artifacts.fabric.parsers.numa", "NUMA (numactl -H, numastat, lscpu)"),
    "proc_interrupts": Kind(
        "artifacts.fabric.parsers.proc_interrupts",
        "/proc/interrupts (IRQ counts per CPU)",
    ),
    "ebpf_hist": Kind("artifacts.fabric.parsers.ebpf_hist", "eBPF histograms (bpftrace, BCC)"),
    # Monitoring data: '# TYPE' lines / labelled samples, and the API's resultType JSON.
    "prometheus_text": Kind(
        "artifacts.metrics.parsers.prometheus.text",
        "Prometheus exposition text (/metrics scrape)",
    ),
    "prometheus_range": Kind(
        "artifacts.metrics.parsers.prometheus.range",
        "Prometheus query/query_range JSON result",
    ),
    # Fabric Manager's "[Mon DD YYYY HH:MM:SS] [LEVEL] [tid N]" entries, before the dmesg
    # sniffer; sysctl's "top.level.key = value" lines before the generic "name: value" one.
    "fabric_manager": Kind("artifacts.fabric.parsers.fabric_manager", "NVIDIA Fabric Manager log"),
    "dmesg": Kind(
        "artifacts.fabric.parsers.dmesg",
        "Kernel log (dmesg, journalctl -k) with NVRM Xid",
    ),
    "sysctl": Kind("artifacts.fabric.parsers.sysctl", "sysctl -a (kernel settings)"),
    # Generic metrics uploads (JSON/CSV with benchmark + metric keys): strict sniffer.
    "metrics": Kind("artifacts.metrics.parsers.metrics", "Metrics upload (JSON/CSV)"),
    "ethtool_stats": Kind(
        "artifacts.fabric.parsers.ethtool_stats",
        "ethtool -S NIC statistics (and ethtool <dev> link settings)",
    ),
}

# Kinds whose module is costly to import (the trace reader loads numpy): detection imports
# them only for a sample that could be theirs at all, so sniffing a small text file (and
# ``manage.py parse`` of one) stays cheap. The module's own ``accepts`` still decides.
MAY_BE: dict[str, Callable[[bytes], bool]] = {
    "torch_trace": lambda head: head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{",
}


# sysctl's top-level names (sysctl._TOP)
_SYSCTL_TOPS = (
    b"abi",
    b"crypto",
    b"debug",
    b"dev",
    b"fs",
    b"kernel",
    b"net",
    b"sunrpc",
    b"user",
    b"vm",
)


def _any_of(*needles: bytes) -> Callable[[bytes], bool]:
    return lambda head: any(needle in head for needle in needles)


# Byte strings without which a kind's sniffer accepts nothing: detection skips the sniffer
# of a cleaned sample that holds none of them (a substring search costs microseconds, a
# sniffer's line patterns over 64 KiB up to a millisecond, and a sample is sniffed up to a
# dozen times). A necessary condition read off the sniffer, never a guess: it stays true
# only while the sniffer does (tests/artifacts/test_sniff_needs.py checks it on every
# sample). Unlike MAY_BE it says nothing about what the parser reads ("nearest kinds").
SNIFF_NEEDS: dict[str, Callable[[bytes], bool]] = {
    # "Executing '", "** title (cuda_...)", legacy "... (nanoseconds)", the table headers
    "nsys_stats": _any_of(b"Executing '", b"** ", b"(nanoseconds)", b"Total Time (", b"Total ("),
    "ncu_csv": _any_of(b"Kernel Name"),
    # the root element or one of the elements the sniffer counts
    "nccl_topology": _any_of(b"<system", b"<cpu", b"<pci", b"<gpu", b"<net", b"<nvlink"),
    # "| Diagnostic |" tables, the dcgmi command, dmon's "#Entity" header
    "dcgm": _any_of(b"|", b"dcgmi", b"Entity"),
    # the results table ("#bytes ... #iterations") or "Number of qps" under the banner
    "perftest": _any_of(b"#bytes", b"Number of qps"),
    # "Configurations:", or rows like FLAG_NAME  True(1) / Array[0..7]
    "mlxconfig": lambda head: (
        b"Configurations:" in head or (b"_" in head and (b"(" in head or b"Array[" in head))
    ),
    # two of five blocks, at most one of them the trust line
    "mlnx_qos": _any_of(b"PFC configuration:", b"DCBX mode:", b"dscp2prio mapping", b"ratelimit:"),
    # every numactl/numastat/lscpu marker names a node, but numastat's numa_hit lines
    "numa": _any_of(b"node", b"Node", b"numa_hit"),
    # '"S-...' / '"H-...' node and port names, or "SW|CA <n> <n> 0x<guid>" listings
    "ibnetdiscover": lambda head: (
        any(n in head for n in (b'"S-', b'"H-', b'"R-'))
        or (b"0x" in head and (b"SW" in head or b"CA" in head))
    ),
    # dmesg: a line with a stamp and one of its _MARKERS ("NVRM: Xid" and "SXid (PCI:"
    # hold "NVRM:" and "Xid")
    "dmesg": _any_of(
        *(b"NVRM:", b"mlx5_core", b"nvidia-nvswitch", b"AER:", b"kernel:", b"pcieport", b"Xid"),
        *(b"Hardware Error", b"EDAC", b"soft lockup", b"blocked for more than"),
        *(b"NETDEV WATCHDOG", b"PCIe bandwidth"),
    ),
    # an entry's "[tid N]", a journal line of nv-fabricmanager, or "detected NVSwitch ...
    # error" (matched ignoring case; none of the letters of "detected" has a non-ASCII
    # case form)
    "fabric_manager": lambda head: (
        b"[tid " in head or b"nv-fabricmanager[" in head or b"detected" in head.lower()
    ),
    # "top.level.key = value" (a top-level name and its dot) or /proc/sys/ paths
    "sysctl": lambda head: (
        b"/proc/sys/" in head or (b"=" in head and any(top + b"." in head for top in _SYSCTL_TOPS))
    ),
    # the "DEV PORT INDEX GID ..." header, or rows with a GID (colons) and its version
    "show_gids": lambda head: (
        b"INDEX" in head or (b":" in head and (b"v1" in head or b"v2" in head or b"IB" in head))
    ),
    # TYPE/HELP comments, or labelled samples (name{key="value"})
    "prometheus_text": lambda head: (
        b"TYPE" in head or b"HELP" in head or (b"{" in head and b"=" in head and b'"' in head)
    ),
}

# Files no parser accepts are kept as plain evidence attachments under this kind.
OTHER = "other"


@cache
def get_parser(kind: str) -> ModuleType:
    try:
        return importlib.import_module(PARSERS[kind].module)
    except KeyError:
        raise ParseError(f"unknown kind {kind!r}; known kinds: {', '.join(PARSERS)}") from None


def kind_label(kind: str) -> str:
    if kind == OTHER:
        return "Other attachment"
    return PARSERS[kind].label if kind in PARSERS else kind


def kind_choices() -> list[tuple[str, str]]:
    """Model/form choices, derived from the registry so they never drift from it."""
    return [(kind, entry.label) for kind, entry in PARSERS.items()] + [(OTHER, kind_label(OTHER))]
