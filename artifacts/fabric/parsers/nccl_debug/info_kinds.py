"""Which reading an ``NCCL INFO`` message gets, decided by its text alone.

``InfoReader._info`` reads a message in two steps: this module names its kind (a collective
call, a channel line, a network line, ...; None for the many that hold no fact), then the
state reads it as that kind, which may depend on the line's host and thread and on what came
before. Only the first step is a function of the text, so it is the one the block reading
memoises (issue 27): a message seen before costs a dict lookup, and one of no kind is skipped
without building its segment.
"""

from __future__ import annotations

import re
from typing import Literal

from artifacts.fabric.parsers.nccl_debug.versions import read_version

InfoKind = Literal[
    "call",
    "algo",
    "channel",
    "tree",
    "tuning",
    "network",
    "comm",
    "version",
    "env",
    "init_timings",
    "cuda_driver",
    "graph",
    "host_detail",
    "channel_counts",
    "error_trace",
]

_ERROR_TRACE = re.compile(r"^[\w/.\-]+\.(?:cc|c|h|cu|cpp|hpp):\d+ -> \d+")
_NETWORK_STARTS = ("NET/", "Using network", "Bootstrap", "Initialized NET", "NET ")
_HOST_DETAIL_STARTS = ("Setting affinity", "Kernel version", "DMA-BUF", "NVLS multicast")


def info_kind(msg: str) -> InfoKind | None:
    """The kind of a stripped INFO message, tested in the order that decides a message that
    looks like several (a collective call that names a channel is a call)."""
    if not msg:
        return None
    head = msg[:12]
    if " opCount " in msg:
        return "call"
    if " Bytes -> Algo " in msg:
        return "algo"
    if head.startswith(("Channel ", "Ring ")):
        return "channel"
    if head.startswith(("Trees", "Tree ")):
        return "tree"
    if "|" in msg:
        return "tuning"
    if msg.startswith(_NETWORK_STARTS):
        return "network"
    if "comm 0x" in msg:
        return "comm"
    if " version" in msg[:16] and _version_banner(msg):
        return "version"
    if msg.startswith("NCCL_"):
        return "env"
    if msg.startswith("Init timings"):
        return "init_timings"
    if msg.startswith("cudaDriverVersion"):
        return "cuda_driver"
    if msg.startswith("Pattern "):
        return "graph"
    if msg.startswith(_HOST_DETAIL_STARTS):
        return "host_detail"
    if " coll channels, " in msg:
        return "channel_counts"
    if _ERROR_TRACE.match(msg):
        return "error_trace"
    return None


def _version_banner(msg: str) -> bool:
    """A version banner at the message's start (one further in is another line's quote)."""
    found = read_version(msg)
    return found is not None and not found[4] > 0
