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
    "nccl_tests": "artifacts.parsers.nccl_tests",
    "torch_trace": "artifacts.parsers.torch_trace",
    # Fabric and host evidence: most specific sniffers first, the generic "name: value"
    # ethtool sniffer last (RDMA counter lists look alike and must reach rdma_counters).
    "nccl_debug": "artifacts.parsers.nccl_debug",
    "nccl_topology": "artifacts.parsers.nccl_topology",
    "nvidia_smi": "artifacts.parsers.nvidia_smi",
    "ib_status": "artifacts.parsers.ib_status",
    "rdma_counters": "artifacts.parsers.rdma_counters",
    "mlxlink": "artifacts.parsers.mlxlink",
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
