"""The parser registry: artifact kind -> module, imported lazily.

Adding a kind = copy a sibling module, fill in KIND/LABEL/VERSION/accepts/parse, add it here
(order matters: detection asks parsers in this order) and add fixtures; the registry test
fails when a kind has no golden test.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

from .base import ParseError, ParseResult

PARSERS: dict[str, str] = {
    # Support bundles first: their sniffers are exact (the bug report's banner, a tar header
    # naming sysinfo-snapshot) and their content would otherwise pass for the kinds inside.
    "nvidia_bug_report": "artifacts.parsers.nvidia_bug_report",
    "sysinfo_snapshot": "artifacts.parsers.sysinfo_snapshot",
    "nccl_tests": "artifacts.parsers.nccl_tests",
    "torch_trace": "artifacts.parsers.torch_trace",
    # Nsight: binary signatures first (SQLite, .nsys-rep), then text reports with their own
    # markers ("Executing '...' stats report", the ncu CSV header, ==PROF== + "Section:"),
    # all before the NCCL log sniffer (a profiled job's output may hold NCCL INFO lines).
    "nsys_sqlite": "artifacts.parsers.nsys_sqlite",
    "nsys_rep": "artifacts.parsers.nsys_rep",
    "nsys_stats": "artifacts.parsers.nsys_stats",
    "ncu_csv": "artifacts.parsers.ncu_csv",
    "ncu_text": "artifacts.parsers.ncu_text",
    # Fabric and host evidence: most specific sniffers first, the generic "name: value"
    # ethtool sniffer last (RDMA counter lists look alike and must reach rdma_counters).
    "nccl_debug": "artifacts.parsers.nccl_debug",
    "nccl_topology": "artifacts.parsers.nccl_topology",
    "nvidia_smi": "artifacts.parsers.nvidia_smi",
    "ib_status": "artifacts.parsers.ib_status",
    "rdma_counters": "artifacts.parsers.rdma_counters",
    "mlxlink": "artifacts.parsers.mlxlink",
    # Host and tool outputs with their own markers (banners, table headers, prefixes).
    "dcgm": "artifacts.parsers.dcgm",
    "perftest": "artifacts.parsers.perftest",
    "perf_stat": "artifacts.parsers.perf_stat",
    "mlxconfig": "artifacts.parsers.mlxconfig",
    "show_gids": "artifacts.parsers.show_gids",
    "mlnx_qos": "artifacts.parsers.mlnx_qos",
    "numa": "artifacts.parsers.numa",
    "proc_interrupts": "artifacts.parsers.proc_interrupts",
    "ebpf_hist": "artifacts.parsers.ebpf_hist",
    # Monitoring data: '# TYPE' lines / labelled samples, and the API's resultType JSON.
    "prometheus_text": "artifacts.parsers.prometheus_text",
    "prometheus_range": "artifacts.parsers.prometheus_range",
    # Fabric Manager's "[Mon DD YYYY HH:MM:SS] [LEVEL] [tid N]" entries, before the dmesg
    # sniffer; sysctl's "top.level.key = value" lines before the generic "name: value" one.
    "fabric_manager": "artifacts.parsers.fabric_manager",
    "dmesg": "artifacts.parsers.dmesg",
    "sysctl": "artifacts.parsers.sysctl",
    # Generic metrics uploads (JSON/CSV with benchmark + metric keys): strict sniffer.
    "metrics": "artifacts.parsers.metrics",
    "ethtool_stats": "artifacts.parsers.ethtool_stats",
}

# Files no parser accepts are kept as plain evidence attachments under this kind.
OTHER = "other"

__all__ = ["OTHER", "PARSERS", "ParseError", "ParseResult", "detect_kind", "get_parser"]


@cache
def get_parser(kind: str) -> ModuleType:
    try:
        return importlib.import_module(PARSERS[kind])
    except KeyError:
        raise ParseError(f"unknown kind {kind!r}; known kinds: {', '.join(PARSERS)}") from None


def detect_kind(name: str, head: bytes) -> str:
    """Ask each parser, in registry order, whether it accepts the file's first bytes."""
    for kind in PARSERS:
        if get_parser(kind).accepts(name, head):
            return kind
    return OTHER


def kind_choices() -> list[tuple[str, str]]:
    """Model/form choices, derived from the registry so they never drift from it."""
    return [(kind, get_parser(kind).LABEL) for kind in PARSERS] + [(OTHER, "Other attachment")]
