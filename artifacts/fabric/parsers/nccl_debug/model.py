"""Result types of the nccl_debug parser (its JSON shape is documented in docs/formats.md)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from artifacts.parsers.base import ParseResult


@dataclasses.dataclass(frozen=True)
class NcclVersion:
    """One ``NCCL version X+cudaY`` (or a fork's: ``RCCL version : X-HEAD:abc``) seen on a
    host (host is null for bare VERSION lines)."""

    host: str | None
    version: str
    build: str | None
    library: str = "NCCL"  # NCCL, RCCL, MSCCL, ...: the word before "version"
    revision: str | None = None  # "1" of 2.18.3-1, "HEAD:7d8d67c" of RCCL
    hip_version: str | None = None  # RCCL prints its HIP and ROCm versions under its own
    rocm_version: str | None = None


@dataclasses.dataclass(frozen=True)
class IbCompletion:
    """A failed InfiniBand work completion NCCL reported, by (host, peer, status, vendor err)."""

    host: str | None
    rank: int | None
    hca: str | None
    peer: str | None
    status: int
    status_name: str
    vendor_err: int | None
    local_gid: str | None
    remote_gid: str | None
    count: int
    first_line: int


@dataclasses.dataclass(frozen=True)
class EnvSetting:
    """An NCCL_* setting: echoed by NCCL (``source="nccl"``) or seen on a launcher line."""

    name: str
    value: str
    host: str | None
    source: str  # "nccl" | "command"


@dataclasses.dataclass(frozen=True)
class NetDevice:
    index: int
    name: str
    port: int | None
    link_layer: str | None  # "RoCE" | "IB" | ...
    speed_mbps: int | None


@dataclasses.dataclass(frozen=True)
class SocketDevice:
    index: int
    interface: str
    address: str


@dataclasses.dataclass(frozen=True)
class HostInfo:
    """Everything NCCL said about one host's environment and network."""

    host: str
    pids: tuple[int, ...]
    cuda_driver_version: int | None
    transports: tuple[str, ...]  # from "Using network X": IB, Socket, AWS Libfabric, ...
    plugin: str | None  # "internal" or the external net plugin NCCL loaded
    ofi_provider: str | None  # libfabric provider (efa, ...) for aws-ofi-nccl
    ib_devices: tuple[NetDevice, ...]
    ib_device_found: bool | None  # False when NCCL printed "NET/IB : No device found"
    relaxed_ordering: bool | None
    oob_interface: str | None
    socket_devices: tuple[SocketDevice, ...]
    bootstrap_interface: str | None
    gdr: bool | None  # GPU Direct RDMA: True if enabled anywhere, False if only disabled
    gdr_enabled_hcas: tuple[str, ...]
    gdr_disabled_hcas: tuple[str, ...]
    ofi_nics: int | None = None  # aws-ofi-nccl "Selected Provider is efa (found 32 nics)"
    kernel_version: str | None = None  # NCCL >= 2.24: "Kernel version: 6.14.0-35-generic"
    # "Setting affinity for GPU 0 to 03ff,f0003fff" (a mask, or a CPU list in newer NCCL)
    gpu_cpu_affinity: dict[str, str] = dataclasses.field(default_factory=dict)
    dmabuf: bool | None = None  # "DMA-BUF is available on GPU device 0"
    nvls_multicast: bool | None = None  # "NVLS multicast support is (not) available"


@dataclasses.dataclass(frozen=True)
class CommRank:
    """One rank of one communicator, from the ``comm 0x... rank R nranks N ...`` lines."""

    host: str
    pid: int
    comm: str
    comm_id: str | None
    rank: int
    nranks: int
    cuda_dev: int | None
    nvml_dev: int | None
    bus_id: str | None  # as NCCL prints it ("17000")
    pci_address: str | None  # the same, as a PCI address ("0000:17:00.0")
    status: str  # "started" | "complete" | "destroyed" | "aborted"
    nnodes: int | None
    local_rank: int | None
    local_ranks: int | None
    channels: dict[str, int]  # coll, collnet, nvls, p2p, p2p_per_peer
    init_seconds: float | None
    init_phases: dict[str, float]
    mnnvl: int | None = None  # "MNNVL 1": the communicator spans a multi-node NVLink domain


@dataclasses.dataclass(frozen=True)
class PathGroup:
    """A connection between two ranks (``Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/2``)."""

    host: str
    src_rank: int
    src_dev: int | None
    dst_rank: int
    dst_dev: int | None
    direction: str | None  # "send" | "receive" | None (P2P/SHM print no direction)
    transport: str  # P2P | SHM | NET | COLLNET | NVLS | ...
    via: str  # as printed, e.g. "NET/IB/0/GDRDMA"
    gdrdma: bool
    channels: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class RingOrder:
    host: str
    comm: str | None
    channel: int
    nchannels: int | None
    ranks: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class RingNeighbor:
    host: str
    comm: str | None
    rank: int
    channel: int
    prev: int
    next: int


@dataclasses.dataclass(frozen=True)
class TreeLink:
    host: str
    comm: str | None
    rank: int
    channel: int
    up: int  # -1: root of the tree
    down: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class GraphSearch:
    """A topology search result (``Pattern 4, crossNic 0, nChannels 2, bw .../..., type ...``)."""

    host: str
    pattern: int
    cross_nic: int
    nchannels: int
    bw_intra: float
    bw_inter: float
    type_intra: str
    type_inter: str
    same_channels: int


@dataclasses.dataclass(frozen=True)
class AlgoChoice:
    """Algorithm/protocol NCCL picked per collective (NCCL_DEBUG_SUBSYS=TUNE lines)."""

    collective: str | None
    algorithm: str
    protocol: str
    calls: int
    min_bytes: int
    max_bytes: int
    max_channels: int | None


@dataclasses.dataclass(frozen=True)
class CollectiveCalls:
    """Collective calls logged with NCCL_DEBUG_SUBSYS=COLL, summed over all ranks in the file."""

    collective: str
    datatype: str
    calls: int
    min_count: int
    max_count: int


@dataclasses.dataclass(frozen=True)
class TuningEntry:
    """One cell of NCCL's tuning model table: latency (us) / bandwidth (GB/s)."""

    host: str
    collective: str
    algorithm: str
    protocol: str
    latency_us: float
    bandwidth_gbps: float


@dataclasses.dataclass(frozen=True)
class CollectiveTimeout:
    """PyTorch watchdog timeouts of one collective, grouped across the ranks that reported it."""

    pgs: tuple[str, ...]  # process groups named by the lines (PyTorch omits it on some)
    collective: str | None
    seq: int | None
    timeout_ms: int | None
    max_ran_ms: int | None
    numel_in: int | None
    numel_out: int | None
    ranks: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class NcclEvent:
    """A timeline-ready event; ``time`` is ISO 8601 or null when the line carried no date."""

    kind: str
    time: str | None
    host: str | None
    rank: int | None
    text: str
    pid: int | None
    line: int
    details: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class NcclDebugResult(ParseResult):
    kind: ClassVar[str] = "nccl_debug"

    hosts: tuple[HostInfo, ...] = ()
    versions: tuple[NcclVersion, ...] = ()
    version_mismatch: bool = False
    env: tuple[EnvSetting, ...] = ()
    nranks: int | None = None
    ranks: tuple[CommRank, ...] = ()
    paths: tuple[PathGroup, ...] = ()
    rings: tuple[RingOrder, ...] = ()
    ring_neighbors: tuple[RingNeighbor, ...] = ()
    trees: tuple[TreeLink, ...] = ()
    graphs: tuple[GraphSearch, ...] = ()
    algorithms: tuple[AlgoChoice, ...] = ()
    collectives: tuple[CollectiveCalls, ...] = ()
    tuning_model: tuple[TuningEntry, ...] = ()
    timeouts: tuple[CollectiveTimeout, ...] = ()
    events: tuple[NcclEvent, ...] = ()
    ib_completions: tuple[IbCompletion, ...] = ()
    stats: dict[str, int] = dataclasses.field(default_factory=dict)
    # which parts of a log the file held (init, network, topology, ...): a fragment says so
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        transports = sorted({t for h in self.hosts for t in h.transports})
        return {
            "hosts": len(self.hosts),
            "nranks": self.nranks,
            "nccl_versions": sorted({v.version for v in self.versions}),
            "libraries": sorted({v.library for v in self.versions}),
            "version_mismatch": self.version_mismatch,
            "transports": transports,
            "warn_events": sum(1 for e in self.events if e.kind == "nccl_warn"),
            "timeouts": len(self.timeouts),
            "ib_completion_errors": sum(c.count for c in self.ib_completions),
            "warnings": len(self.warnings),
        }
