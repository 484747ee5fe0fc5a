"""The parser registry: artifact kind -> module, imported lazily.

Adding a kind = copy a sibling module, fill in KIND/LABEL/VERSION/accepts/parse (and a
``score`` when the format has an exact banner), add it here (order breaks ties between equal
scores: specific sniffers first) and add fixtures; the registry test fails when a kind has
no golden test. Detection itself (sampling, cleaning, ranking) is in detection.py.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache
from types import ModuleType

from artifacts.parsers.base import ParseError

PARSERS: dict[str, str] = {
    # Support bundles first: their sniffers are exact (the bug report's banner, a tar header
    # naming sysinfo-snapshot) and their content would otherwise pass for the kinds inside.
    "nvidia_bug_report": "artifacts.bundles.parsers.nvidia_bug_report",
    "sysinfo_snapshot": "artifacts.bundles.parsers.sysinfo_snapshot",
    "nccl_tests": "artifacts.runs.parsers.nccl_tests",
    "torch_trace": "artifacts.traces.parsers.torch_trace",
    # Nsight: binary signatures first (SQLite, .nsys-rep), then text reports with their own
    # markers ("Executing '...' stats report", the ncu CSV header, ==PROF== + "Section:"),
    # all before the NCCL log sniffer (a profiled job's output may hold NCCL INFO lines).
    "nsys_sqlite": "artifacts.nsight.parsers.nsys.sqlite",
    "nsys_rep": "artifacts.nsight.parsers.nsys.rep",
    "nsys_stats": "artifacts.nsight.parsers.nsys.stats",
    "ncu_csv": "artifacts.nsight.parsers.ncu.csv",
    "ncu_text": "artifacts.nsight.parsers.ncu.text",
    # Fabric and host evidence: most specific sniffers first, the generic "name: value"
    # ethtool sniffer last (RDMA counter lists look alike and must reach rdma_counters).
    "nccl_debug": "artifacts.fabric.parsers.nccl_debug",
    "nccl_topology": "artifacts.fabric.parsers.nccl_topology",
    "nvidia_smi": "artifacts.fabric.parsers.nvidia_smi",
    "ib_status": "artifacts.fabric.parsers.ib_status",
    "rdma_counters": "artifacts.fabric.parsers.rdma_counters",
    "mlxlink": "artifacts.fabric.parsers.mlxlink",
    # Host and tool outputs with their own markers (banners, table headers, prefixes).
    "dcgm": "artifacts.fabric.parsers.dcgm",
    "perftest": "artifacts.fabric.parsers.perftest",
    "perf_stat": "artifacts.fabric.parsers.perf_stat",
    "mlxconfig": "artifacts.fabric.parsers.mlxconfig",
    "show_gids": "artifacts.fabric.parsers.show_gids",
    "mlnx_qos": "artifacts.fabric.parsers.mlnx_qos",
    "numa": "artifacts.fabric.parsers.numa",
    "proc_interrupts": "artifacts.fabric.parsers.proc_interrupts",
    "ebpf_hist": "artifacts.fabric.parsers.ebpf_hist",
    # Monitoring data: '# TYPE' lines / labelled samples, and the API's resultType JSON.
    "prometheus_text": "artifacts.metrics.parsers.prometheus.text",
    "prometheus_range": "artifacts.metrics.parsers.prometheus.range",
    # Fabric Manager's "[Mon DD YYYY HH:MM:SS] [LEVEL] [tid N]" entries, before the dmesg
    # sniffer; sysctl's "top.level.key = value" lines before the generic "name: value" one.
    "fabric_manager": "artifacts.fabric.parsers.fabric_manager",
    "dmesg": "artifacts.fabric.parsers.dmesg",
    "sysctl": "artifacts.fabric.parsers.sysctl",
    # Generic metrics uploads (JSON/CSV with benchmark + metric keys): strict sniffer.
    "metrics": "artifacts.metrics.parsers.metrics",
    "ethtool_stats": "artifacts.fabric.parsers.ethtool_stats",
}

# Kinds whose module is costly to import (the trace reader loads numpy): detection imports
# them only for a sample that could be theirs at all, so sniffing a small text file (and
# ``manage.py parse`` of one) stays cheap. The module's own ``accepts`` still decides.
MAY_BE: dict[str, Callable[[bytes], bool]] = {
    "torch_trace": lambda head: head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{",
}

# Files no parser accepts are kept as plain evidence attachments under this kind.
OTHER = "other"


@cache
def get_parser(kind: str) -> ModuleType:
    try:
        return importlib.import_module(PARSERS[kind])
    except KeyError:
        raise ParseError(f"unknown kind {kind!r}; known kinds: {', '.join(PARSERS)}") from None


def kind_choices() -> list[tuple[str, str]]:
    """Model/form choices, derived from the registry so they never drift from it."""
    return [(kind, get_parser(kind).LABEL) for kind in PARSERS] + [(OTHER, "Other attachment")]
