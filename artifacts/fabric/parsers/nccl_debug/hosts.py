"""Per-host state of an NCCL log, and the repair of host names damaged by interleaved writes.

``HostState`` gathers what NCCL said about one host (network, plugin, GPU Direct RDMA...) and
freezes into ``HostInfo``. Processes writing to one stream cut each other's lines: a host
name loses its head, gets another write's debris glued before it, or loses its middle; the
functions below tell such a damaged name from a real host (see ``host_of_pid``).
"""

from __future__ import annotations

import re
from typing import Any

from artifacts.fabric.parsers.nccl_debug.model import HostInfo, NetDevice, SocketDevice
from artifacts.parsers.textutil import find_timestamp

PARTIAL_HEADER = re.compile(r"[A-Za-z0-9][\w.\-]*:\d+:\d+[ \t]")


class HostState:
    """Mutable per-host accumulator, frozen into HostInfo at the end."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.pids: set[int] = set()
        self.cuda_driver: int | None = None
        self.transports: list[str] = []
        self.plugin: str | None = None
        self.ofi_provider: str | None = None
        self.ofi_nics: int | None = None
        self.ib_devices: dict[str, dict[str, Any]] = {}
        self.ib_found: bool | None = None
        self.relaxed_ordering: bool | None = None
        self.oob: str | None = None
        self.sockets: dict[str, SocketDevice] = {}
        self.bootstrap: str | None = None
        self.gdr_on: set[str] = set()
        self.gdr_off: set[str] = set()
        self.gdrdma_paths = False
        self.vdev_speed: dict[str, int] = {}
        self.kernel_version: str | None = None
        self.gpu_affinity: dict[str, str] = {}
        self.dmabuf: bool | None = None
        self.nvls_multicast: bool | None = None

    def absorb(self, other: HostState) -> None:
        """Take what a damaged spelling of this host's name said (see _merge_damaged_hosts)."""
        self.pids |= other.pids
        for name in ("cuda_driver", "plugin", "ofi_provider", "ofi_nics", "ib_found",
                     "relaxed_ordering", "oob", "bootstrap", "kernel_version", "dmabuf",
                     "nvls_multicast"):  # fmt: skip
            if getattr(self, name) is None:
                setattr(self, name, getattr(other, name))
        self.transports += [t for t in other.transports if t not in self.transports]
        for key, device in other.ib_devices.items():
            self.ib_devices.setdefault(key, device)
        for key, socket in other.sockets.items():
            self.sockets.setdefault(key, socket)
        self.gdr_on |= other.gdr_on
        self.gdr_off |= other.gdr_off
        self.gdrdma_paths |= other.gdrdma_paths
        for key, speed in other.vdev_speed.items():
            self.vdev_speed.setdefault(key, speed)
        for key, cpus in other.gpu_affinity.items():
            self.gpu_affinity.setdefault(key, cpus)

    def freeze(self) -> HostInfo:
        gdr: bool | None = None
        if self.gdr_on or self.gdrdma_paths:
            gdr = True
        elif self.gdr_off:
            gdr = False
        devices = tuple(
            NetDevice(
                d["index"],
                name,
                d["port"],
                d["link_layer"],
                d["speed"] or self.vdev_speed.get(name),
            )
            for name, d in sorted(self.ib_devices.items(), key=lambda kv: (kv[1]["index"], kv[0]))
        )
        return HostInfo(
            host=self.name,
            pids=tuple(sorted(self.pids)),
            cuda_driver_version=self.cuda_driver,
            transports=tuple(self.transports),
            plugin=self.plugin,
            ofi_provider=self.ofi_provider,
            ofi_nics=self.ofi_nics,
            ib_devices=devices,
            ib_device_found=self.ib_found,
            relaxed_ordering=self.relaxed_ordering,
            oob_interface=self.oob,
            socket_devices=tuple(sorted(self.sockets.values(), key=lambda s: s.index)),
            bootstrap_interface=self.bootstrap,
            gdr=gdr,
            gdr_enabled_hcas=tuple(sorted(self.gdr_on)),
            gdr_disabled_hcas=tuple(sorted(self.gdr_off - self.gdr_on)),
            kernel_version=self.kernel_version,
            gpu_cpu_affinity=dict(sorted(self.gpu_affinity.items())),
            dmabuf=self.dmabuf,
            nvls_multicast=self.nvls_multicast,
        )


def plugin_line(host: HostState, msg: str) -> None:
    lowered = msg.lower()
    loaded = re.search(r"Loaded (?:net|coll) plugin (.+?)(?: \(v\d+\))?\s*$", msg)
    external = re.search(r"[Ss]uccessfully loaded external plugin (\S+)", msg)
    if loaded:
        host.plugin = loaded.group(1)
    elif external:
        host.plugin = external.group(1)
    elif host.plugin is None and any(
        marker in lowered
        for marker in ("using internal", "no plugin found", "could not find: libnccl-net")
    ):
        host.plugin = "internal"


def ofi_line(host: HostState, msg: str) -> None:
    version = re.search(r"(?:Using|Initializing) (aws-ofi-nccl \S+)", msg)
    provider = re.search(r"Selected [Pp]rovider is (\w+)", msg)
    if version:
        host.plugin = version.group(1)
    elif host.plugin in (None, "internal"):
        host.plugin = "aws-ofi-nccl"
    if provider:
        host.ofi_provider = provider.group(1)
    # "Selected Provider is efa (found 32 nics)": the NICs the plugin stripes over
    if found := re.search(r"\(found (\d+) nics?\)", msg):
        host.ofi_nics = int(found.group(1))


SURE_HOST_LINES = 3


def host_of_pid(hosts: set[str] | tuple[()], name: str, lines: dict[str, int]) -> str | None:
    """The known host a damaged host name stands for: interleaved writes cut the head off a
    name (``06c0s1b1n0`` for ``x3006c0s1b1n0``), glue debris before it (``x3006c0s19b1`` +
    ``x3006c0s1b0n0``) or lose its middle (``xn0``). The process id is the witness: a name that
    is not known, on a pid that exactly one related known host printed."""
    related = [
        known
        for known in hosts
        if known != name
        and damaged_form(known, name)
        # a shorter name is the damaged one only beside a host that printed several lines;
        # else the known name may be the damaged one (a process's first line garbled)
        and (len(name) > len(known) or lines.get(known, 0) >= SURE_HOST_LINES)
    ]
    if len(related) > 1:  # a damaged spelling printed earlier by the same pid: the host that
        # printed most lines is the real one
        related.sort(key=lambda h: lines.get(h, 0), reverse=True)
        if lines.get(related[0], 0) > lines.get(related[1], 0):
            return related[0]
    return related[0] if len(related) == 1 else None


def damaged_form(known: str, name: str) -> bool:
    """Could ``name`` be ``known`` with its head cut, debris glued before it, or its middle lost?"""
    if known.endswith(name) or name.endswith(known):
        return True
    tail = min(len(name) - 1, 2)
    return (
        len(name) < len(known) and tail > 0 and known[0] == name[0] and known.endswith(name[-tail:])
    )


def has_partial_header(prefix: str) -> bool:
    if "NCCL" not in prefix and not PARTIAL_HEADER.search(prefix):
        return False
    stamp = find_timestamp(prefix)  # "12:00:00 " in a time is not a host:pid:tid
    return PARTIAL_HEADER.search(prefix, stamp[2] if stamp else 0) is not None


def looks_glued(line: str, begin: int, glued: str, index: int, broken: bool) -> bool:
    """Is ``glued`` (the part of a host name before a known host) debris of another write?

    Only later pieces of a line, digits (the tail of a number), or text stuck to a
    non-space character, or anything after a cut-off header, are treated so: a line that
    starts with "gpu-node1:..." while
    "node1" is known is a different host, not debris.
    """
    return index > 0 or broken or glued.isdigit() or (begin > 0 and not line[begin - 1].isspace())
