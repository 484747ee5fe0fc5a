"""Loaders for fabric and host evidence: counter snapshots, log events and host/device facts.

Called inside the parse transaction (see loaders.py). Each loader first removes what an
earlier parse of the same artifact stored, so a re-parse replaces rows instead of adding
to them. Rates and findings are derived later by the findings task (artifacts/fabric/).

Times: a snapshot's time comes from the file when it carries one, else from the upload
metadata (``captured_at``), else from the upload time; ``time_source`` says which. With
upload metadata ``snapshot_interval_s`` (seconds between readings, e.g. a before/after pair
taken with ``sleep 10``), the k-th reading of a device without a time in the file is placed
k x interval after the base time, so its counters can become rates.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from artifacts.fabric.nccl_gpus import nccl_gpu_facts
from artifacts.fabric.parsers.nvidia_smi_views import nic_placements
from artifacts.models import Artifact, CounterSample, CounterSnapshot, HostFact, LogEvent
from artifacts.parsers.textutil import cuda_version_text
from artifacts.times import aware_datetime

MAX_EVENT_TEXT = 4000
MAX_FACT_VALUE = 2000


def clear_fabric_rows(artifact: Artifact) -> None:
    """Remove the evidence an earlier parse stored (rates go with their snapshots)."""
    artifact.counter_snapshots.all().delete()
    artifact.log_events.all().delete()
    artifact.host_facts.all().delete()


# --- times ------------------------------------------------------------------------------------


def file_time(text: str | None) -> datetime | None:
    try:
        return aware_datetime(text) if text else None
    except ValueError:
        return None  # an odd timestamp in the file is no reason to lose the evidence


def base_time(artifact: Artifact) -> tuple[datetime, str]:
    if artifact.captured_at:
        return artifact.captured_at, CounterSnapshot.TimeSource.METADATA
    return artifact.uploaded_at, CounterSnapshot.TimeSource.UPLOAD


def observed_at(artifact: Artifact, text: str | None = None) -> datetime:
    return file_time(text) or base_time(artifact)[0]


def _interval(artifact: Artifact) -> float | None:
    raw = (artifact.metadata or {}).get("snapshot_interval_s")
    try:
        value = float(raw) if raw not in (None, "") else None
    except (TypeError, ValueError):
        return None
    return value if value and value > 0 else None


# --- counters ---------------------------------------------------------------------------------


def load_counter_samples(
    artifact: Artifact, samples: Iterable[Any], snapshots: Iterable[Any] = ()
) -> int:
    """Group parser sample rows into snapshots (file snapshot x host x device x port).

    Returns the number of samples stored. A counter repeated inside one group keeps its
    last value (a tool that prints a name twice in one reading).
    """
    labels = {s.index: s.label for s in snapshots}
    groups: dict[tuple[int, str, str, int | None], dict[str, tuple[float, str]]] = {}
    times: dict[tuple[int, str, str, int | None], str | None] = {}
    unnamed = default_device(artifact)
    for row in samples:
        key = (row.snapshot, row.host or artifact.host, row.device or unnamed, row.port)
        groups.setdefault(key, {})[row.counter] = (float(row.value), row.unit)
        times.setdefault(key, row.captured_at)
    if not groups:
        return 0
    base, base_source = base_time(artifact)
    interval = _interval(artifact)
    readings: dict[tuple[str, str, int | None], int] = defaultdict(int)
    snapshot_rows = []
    ordered = sorted(groups, key=_group_order)
    for key in ordered:
        index, host, device, port = key
        taken = file_time(times[key])
        source = CounterSnapshot.TimeSource.FILE
        if taken is None:
            nth = readings[(host, device, port)]
            taken = base + timedelta(seconds=nth * interval) if interval else base
            source = base_source
        readings[(host, device, port)] += 1
        snapshot_rows.append(
            CounterSnapshot(
                artifact=artifact,
                index=index,
                source=artifact.kind,
                host=host[:255],
                device=device[:255],
                port=port,
                label=(labels.get(index) or "")[:255],
                taken_at=taken,
                time_source=source,
            )
        )
    created = CounterSnapshot.objects.bulk_create(snapshot_rows)
    stored = 0
    batch: list[CounterSample] = []
    for snapshot, key in zip(created, ordered, strict=True):
        for counter, (value, unit) in groups[key].items():
            batch.append(
                CounterSample(snapshot=snapshot, counter=counter[:200], value=value, unit=unit)
            )
        if len(batch) >= 5000:
            stored += len(CounterSample.objects.bulk_create(batch))
            batch = []
    stored += len(CounterSample.objects.bulk_create(batch))
    return stored


# Linux interface and RDMA device names as people put them in file names ("eth3-before.txt").
_DEVICE_IN_NAME = re.compile(
    r"(?<![A-Za-z0-9])(eth\d+|en[opsx]\w*?\d+(?:f\d+)?(?:np\d+)?|eno\d+|ib\d+|bond\d+|mlx5_\d+)"
    r"(?![A-Za-z0-9])"
)


def default_device(artifact: Artifact) -> str:
    """The device of readings whose file does not name one (a bare ``ethtool -S`` paste):
    upload metadata ``device``, else an interface name in the file name, else unnamed."""
    given = artifact.metadata.get("device") if isinstance(artifact.metadata, dict) else None
    if isinstance(given, str) and given.strip():
        return given.strip()[:255]
    match = _DEVICE_IN_NAME.search(artifact.original_name or "")
    return match.group(1) if match else ""


def _group_order(key: tuple[int, str, str, int | None]) -> tuple[int, str, str, int]:
    return key[0], key[1], key[2], -1 if key[3] is None else key[3]


# --- facts ------------------------------------------------------------------------------------


class FactBuffer:
    """Collects HostFact rows for one artifact and writes them in one bulk insert."""

    def __init__(self, artifact: Artifact, at: datetime) -> None:
        self.artifact = artifact
        self.at = at
        self.rows: list[HostFact] = []

    def add(
        self,
        name: str,
        value: Any,
        *,
        host: str | None = None,
        device: str | None = None,
        port: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        if value is None or value == "" or value == ():
            return
        if isinstance(value, bool):
            text, number = ("true" if value else "false"), float(value)
        elif isinstance(value, int | float):
            text, number = f"{value:g}" if isinstance(value, float) else str(value), float(value)
        elif isinstance(value, list | tuple):
            text, number = ", ".join(str(v) for v in value), None
        else:
            text, number = str(value), None
        self.rows.append(
            HostFact(
                artifact=self.artifact,
                host=(host or self.artifact.host or "")[:255],
                device=(device or "")[:255],
                port=port,
                name=name[:120],
                value=text[:MAX_FACT_VALUE],
                number=number,
                extra=extra or {},
                observed_at=self.at,
            )
        )

    def save(self) -> None:
        HostFact.objects.bulk_create(self.rows, batch_size=2000)


def _port_facts(facts: FactBuffer, ports: Iterable[Any]) -> None:
    for p in ports:
        where = {"host": p.host, "device": p.device, "port": p.port}
        facts.add("port.state", p.state, **where)
        facts.add("port.phys_state", p.phys_state, **where)
        facts.add("port.rate_gbps", p.rate_gbps, **where)
        facts.add("port.link_layer", p.link_layer, **where)
        facts.add("port.active_mtu", getattr(p, "active_mtu", None), **where)
        facts.add("port.netdev", (getattr(p, "details", None) or {}).get("netdev"), **where)


def _hca_facts(facts: FactBuffer, hcas: Iterable[Any]) -> None:
    for h in hcas:
        where = {"host": h.host, "device": h.device}
        facts.add("hca.firmware", h.firmware, **where)
        facts.add("hca.type", h.hca_type, **where)
        facts.add("hca.board_id", h.board_id, **where)


# --- per kind ---------------------------------------------------------------------------------


def load_ethtool_stats(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    load_counter_samples(artifact, result.samples, result.snapshots)
    facts = FactBuffer(artifact, observed_at(artifact))
    for d in result.drivers:
        facts.add("nic.driver", d.driver, device=d.device)
        facts.add("nic.driver_version", d.version, device=d.device)
        facts.add("nic.firmware", d.firmware, device=d.device)
        facts.add("nic.bus_info", d.bus_info, device=d.device)
    for link in result.links:  # `ethtool <dev>`: the negotiated link (baselines.limits)
        where = {"host": link.host, "device": link.device}
        facts.add(
            "ethtool.speed_gbps", link.speed_mbps / 1000 if link.speed_mbps else None, **where
        )
        facts.add("ethtool.link_detected", link.link_detected, **where)
        facts.add("ethtool.duplex", link.duplex, **where)
        facts.add("ethtool.port", link.port, **where)
    facts.save()


def load_rdma_counters(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    load_counter_samples(artifact, result.samples, result.snapshots)
    facts = FactBuffer(artifact, observed_at(artifact))
    _hca_facts(facts, result.hcas)
    _port_facts(facts, result.ports)
    _qp_facts(facts, getattr(result, "qp_counters", ()), getattr(result, "qps", ()))
    facts.save()


def _qp_facts(facts: FactBuffer, counter_sets: Iterable[Any], qps: Iterable[Any]) -> None:
    """QP counter sets and QPs (rdma statistic qp / rdma resource show qp). A set's device is
    the one its counter rows carry; a QP's is ``<hca> qp <lqpn>``, one row per QP on pages."""
    for c in counter_sets:
        where = {"host": c.host, "device": c.counter_device, "port": c.port}
        extra = {"hca": c.device, "cntn": c.cntn, "pid": c.pid, "comm": c.comm}
        facts.add("qp_counter.qp_type", c.qp_type, **where, extra=extra)
        facts.add("qp_counter.lqpns", list(c.lqpns), **where, extra=extra)
    for q in qps:
        where = {"host": q.host, "device": f"{q.device} qp {q.lqpn}", "port": q.port}
        extra = {
            "hca": q.device, "lqpn": q.lqpn, "rqpn": q.rqpn, "type": q.qp_type,
            "sq_psn": q.sq_psn, "rq_psn": q.rq_psn, "pid": q.pid, "comm": q.comm,
        }  # fmt: skip
        facts.add("qp.state", q.state, **where, extra=extra)
        facts.add("qp.type", q.qp_type, **where, extra=extra)
        owner = " ".join(p for p in (q.comm, f"pid {q.pid}" if q.pid is not None else "") if p)
        facts.add("qp.owner", owner, **where, extra=extra)


def load_ib_status(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    _hca_facts(facts, result.hcas)
    _port_facts(facts, result.ports)
    facts.save()
    _events(
        artifact,
        ({"kind": "tool_error", "text": e, "extra": {"tool": "ib_status"}} for e in result.errors),
    )


def load_mlxlink(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    load_counter_samples(artifact, result.samples)
    facts = FactBuffer(artifact, observed_at(artifact))
    for p in result.ports:
        where = {"host": p.host, "device": p.device, "port": p.port}
        facts.add("link.state", p.state, **where)
        facts.add("link.phys_state", p.phys_state, **where)
        facts.add("link.speed", p.speed, **where)
        facts.add("link.speed_gbps", p.speed_gbps, **where)
        facts.add("link.width", p.width, **where)
        facts.add("link.fec", p.fec, **where)
        facts.add("link.status_opcode", p.status_opcode, **where)
        facts.add("link.recommendation", p.recommendation, **where)
        facts.add("link.firmware", p.firmware, **where)
        for name in _MODULE_FACTS:  # the cable/transceiver: what a vendor ticket asks for
            facts.add(f"module.{name}", p.cable.get(name), **where)
    facts.save()


_MODULE_FACTS = (
    "identifier",
    "vendor_name",
    "part_number",
    "serial_number",
    "revision",
    "fw_version",
    "cable_type",
    "wavelength_nm",
    "length_m",
    "temperature_c",
    "voltage_mv",
)


_GPU_FACTS = (
    "name",
    "pstate",
    "pcie_gen_current",
    "pcie_gen_max",
    "pcie_width_current",
    "pcie_width_max",
    "temperature_c",
    "slowdown_temp_c",
    "power_draw_w",
    "power_limit_w",
    "clocks_sm_mhz",
    "max_clocks_sm_mhz",
    "utilization_gpu_percent",
    "ecc_mode",
    "ecc_corrected_volatile",
    "ecc_uncorrected_volatile",
    "ecc_uncorrected_aggregate",
    "retired_pages_dbe",
    "retired_pages_pending",
    "remapped_rows_uncorrectable",
    "remapped_rows_pending",
    "remapped_rows_failure",
    "vbios",
    "serial",
    "uuid",
)


def load_nvidia_smi(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    load_counter_samples(artifact, result.samples)
    facts = FactBuffer(artifact, observed_at(artifact, result.timestamp))
    facts.add("gpu.driver_version", result.driver_version)
    facts.add("gpu.cuda_version", result.cuda_version)
    for gpu in result.gpus:
        extra = {"index": gpu.index}
        for field in _GPU_FACTS:
            facts.add(f"gpu.{field}", getattr(gpu, field), device=gpu.bus_id, extra=extra)
        facts.add(
            "gpu.clock_event_reasons",
            list(gpu.clock_event_reasons) or "none",
            device=gpu.bus_id,
            extra={**extra, "reasons": list(gpu.clock_event_reasons)},
        )
    for table_gpu in result.table_gpus:
        extra = {"index": table_gpu.index, "from": "table"}
        facts.add("gpu.name", table_gpu.name, device=table_gpu.bus_id, extra=extra)
        facts.add(
            "gpu.ecc_uncorrected_volatile",
            table_gpu.ecc_uncorrected_volatile,
            device=table_gpu.bus_id,
            extra=extra,
        )
    if result.topology is not None:
        _placement_facts(facts, nic_placements(result.topology))
    for matrix in result.p2p:
        # topo -p2p: the GPU pairs that cannot talk peer to peer in this mode (each GPU once)
        refused = [link for link in matrix.links if link.link != "OK"]
        for gpu in matrix.devices:
            mine = sorted(f"{link.b}:{link.link}" for link in refused if link.a == gpu)
            facts.add(
                f"gpu.p2p_{matrix.mode or 'unknown'}",
                ",".join(mine) or "all OK",
                device=gpu,
                extra={"not_ok": mine},
            )
    for link in result.nvlinks:
        facts.add(
            "nvlink.active",
            link.active,
            device=f"GPU {link.gpu_index}",
            port=link.link,
            extra={"speed_gbps": link.speed_gbps},
        )
    facts.save()


# GPU-NIC paths that leave the PCIe switch: NCCL uses GPUDirect RDMA only up to
# NCCL_NET_GDR_LEVEL (default PXB), so beyond it every network byte is staged in host memory.
_FAR_FROM_NIC = frozenset({"PHB", "NODE", "SYS"})


def _placement_facts(facts: FactBuffer, placements: Iterable[Any]) -> None:
    """``topo -m``: each GPU's nearest NIC and CPU/NUMA affinity; ``gpu.nic_far`` only for a
    GPU whose nearest NIC is past its PCIe switch (the fabric rule reads it)."""
    for p in placements:
        extra = {"nic": p.nic, "link": p.link}
        facts.add("gpu.nearest_nic", p.nic, device=p.gpu, extra=extra)
        facts.add("gpu.nic_link", p.link, device=p.gpu, extra=extra)
        facts.add("gpu.cpu_affinity", p.cpu_affinity, device=p.gpu)
        facts.add("gpu.numa_affinity", p.numa_affinity, device=p.gpu)
        if p.link in _FAR_FROM_NIC:
            facts.add("gpu.nic_far", f"{p.nic} via {p.link}", device=p.gpu, extra=extra)


def load_nccl_debug(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    for v in result.versions:
        # a fork (RCCL, MSCCL) keeps NCCL's version numbers: the library tells them apart
        extra = {"build": v.build, "library": v.library, "revision": v.revision}
        facts.add("nccl.version", v.version, host=v.host, extra=extra)
        facts.add("nccl.library", v.library, host=v.host)
        facts.add("rocm.hip_version", v.hip_version, host=v.host)
        facts.add("rocm.version", v.rocm_version, host=v.host)
    for h in result.hosts:
        # cudaDriverVersion is cudaDriverGetVersion(): the CUDA version the driver supports,
        # the number nvidia-smi prints as "CUDA Version", so it is the same fact
        facts.add(
            "gpu.cuda_version",
            cuda_version_text(h.cuda_driver_version),
            host=h.host,
            extra={"source": "NCCL INFO cudaDriverVersion"},
        )
        facts.add("nccl.transports", list(h.transports), host=h.host)
        facts.add("nccl.plugin", h.plugin, host=h.host)
        facts.add("nccl.ib_device_found", h.ib_device_found, host=h.host)
        facts.add("nccl.gdr", h.gdr, host=h.host)
        facts.add(
            "nccl.ib_devices",
            [f"{d.name}:{d.port}/{d.link_layer}" for d in h.ib_devices],
            host=h.host,
            # the speed newer NCCL prints per device (Mb/s): the limits model's NIC rate
            extra={"speeds_mbps": {d.name: d.speed_mbps for d in h.ib_devices if d.speed_mbps}},
        )
        facts.add("nccl.ofi_nics", h.ofi_nics, host=h.host)
        kernel = getattr(h, "kernel_version", None)
        facts.add("kernel.version", kernel, host=h.host, extra={"source": "NCCL INFO"})
        facts.add("nccl.dmabuf", getattr(h, "dmabuf", None), host=h.host)
        facts.add("nccl.nvls_multicast", getattr(h, "nvls_multicast", None), host=h.host)
        for gpu, cpus in getattr(h, "gpu_cpu_affinity", {}).items():
            # as NCCL prints it: a hex mask or a CPU list (nvidia-smi's is gpu.cpu_affinity)
            facts.add("nccl.cpu_affinity", cpus, host=h.host, device=gpu)
        facts.add(
            "nccl.socket_devices",
            [f"{d.interface}<{d.address}>" for d in h.socket_devices],
            host=h.host,
        )
    hosts = [h.host for h in result.hosts]
    for env in result.env:
        # A launcher line has no host; it applies to every host of the log.
        for host in [env.host] if env.host else hosts or [None]:
            facts.add(f"nccl.env.{env.name}", env.value, host=host, extra={"source": env.source})
    facts.add("nccl.nranks", result.nranks)
    for gpu in nccl_gpu_facts(result.ranks):  # what baselines match nvidia-smi's GPUs to
        facts.add(gpu.name, gpu.value, host=gpu.host, device=gpu.device, extra=gpu.extra)
    facts.save()
    _events(
        artifact,
        (
            {
                "kind": e.kind,
                "time": e.time,
                "host": e.host,
                "rank": e.rank,
                "pid": e.pid,
                "line": e.line,
                "text": e.text,
                "extra": dict(e.details),
            }
            for e in result.events
        ),
    )


def _events(artifact: Artifact, events: Iterable[dict[str, Any]]) -> None:
    rows = [
        LogEvent(
            artifact=artifact,
            kind=str(e["kind"])[:40],
            time=file_time(e.get("time")),
            host=(e.get("host") or artifact.host or "")[:255],
            rank=e.get("rank"),
            pid=e.get("pid"),
            line=e.get("line"),
            text=str(e.get("text", ""))[:MAX_EVENT_TEXT],
            extra=e.get("extra") or {},
        )
        for e in events
    ]
    LogEvent.objects.bulk_create(rows, batch_size=2000)


def load_dmesg(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    host = result.hosts[0] if len(result.hosts) == 1 else None
    facts.add("kernel.version", result.kernel_version, host=host)
    facts.add("hardware.name", result.hardware, host=host)
    facts.add("gpu.driver_version", getattr(result, "driver_version", None), host=host)
    for gpu in result.gpus:
        facts.add("gpu.uuid", gpu.uuid, host=host, device=gpu.pci)
        facts.add("gpu.serial", getattr(gpu, "serial", None), host=host, device=gpu.pci)
    for link in getattr(result, "pcie_links", ()):
        # the link each device trained at boot; limited_at names the bridge that holds it back
        extra = {k: v for k, v in link.items() if k != "device"}
        where = {"host": host, "device": link["device"]}
        facts.add("pcie.available_gbps", link["available_gbps"], **where, extra=extra)
        facts.add("pcie.link", f"{link['speed']} x{link['width']}", **where, extra=extra)
    facts.save()
    _events(
        artifact,
        (
            {
                "kind": e.kind,
                "time": e.time,
                "host": e.host,
                "line": e.line,
                "text": e.text,
                "pid": e.details.get("pid"),
                "extra": dict(e.details),
            }
            for e in result.events
        ),
    )


def load_dcgm(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    load_counter_samples(artifact, result.samples)
    facts = FactBuffer(artifact, observed_at(artifact))
    host = result.host
    for key, value in result.metadata.items():
        facts.add(f"dcgm.{key}", value, host=host)
    for r in result.results:
        devices = [f"GPU {g}" for g in r.gpus] or [""]
        for device in devices:
            extra = {"section": r.section, "scope": r.scope}
            facts.add(f"dcgm.diag.{_slug(r.test)}", r.result, host=host, device=device, extra=extra)
            if r.result == "Fail":
                facts.add("dcgm.diag.failed", r.test, host=host, device=device, extra=extra)
    for m in result.messages:
        if m.level == "Error":
            device = f"GPU {m.gpu}" if m.gpu is not None else ""
            what = m.test or m.section or "diagnostic"
            facts.add("dcgm.diag.failed", what, host=host, device=device, extra={"message": m.text})
    facts.save()
    _events(
        artifact,
        (
            {
                "kind": f"dcgm_{m.level.lower()}",
                "host": host,
                "text": m.text,
                "extra": {"test": m.test, "section": m.section, "gpu": m.gpu},
            }
            for m in result.messages
        ),
    )


def load_perftest(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    for run in result.runs:
        where = {"host": run.host, "device": run.device}
        extra = {
            "test": run.test,
            "qps": run.qps,
            "mtu": run.mtu,
            "link_type": run.link_type,
            "command": run.command,
        }
        tool = run.tool or "perftest"
        if run.peak_bw_gbps is not None:
            best = max(run.rows, key=lambda r: r.bw_avg_gbps or 0)
            facts.add(
                f"perftest.{tool}.bw_avg_gbps",
                run.peak_bw_gbps,
                **where,
                extra={**extra, "bytes": best.bytes},
            )
        latencies = [r for r in run.rows if r.t_typical_us is not None]
        if latencies:
            smallest = min(latencies, key=lambda r: r.bytes)
            facts.add(
                f"perftest.{tool}.t_typical_us",
                smallest.t_typical_us,
                **where,
                extra={**extra, "bytes": smallest.bytes, "p99_us": smallest.p99_us},
            )
    facts.save()
    _events(
        artifact,
        (
            {
                "kind": "perftest_error",
                "host": run.host,
                "text": error,
                "extra": {"tool": run.tool, "command": run.command},
            }
            for run in result.runs
            for error in run.errors
        ),
    )


def load_mlxconfig(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    for d in result.devices:
        where = {"host": d.host, "device": d.device}
        facts.add("nic.type", d.device_type, **where)
        facts.add("nic.part", d.part, **where)
        for p in d.params:
            facts.add(
                f"mlxconfig.{p.name}",
                p.value,
                **where,
                extra={"code": p.number, "modified": p.modified},
            )
    facts.save()


def load_numa(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    load_counter_samples(artifact, result.samples)
    facts = FactBuffer(artifact, observed_at(artifact))
    host = result.host
    for key, value in result.cpu_topology.items():
        facts.add(f"cpu.{key}", value, host=host)
    facts.add("numa.nodes", len(result.nodes) or None, host=host)
    for n in result.nodes:
        where = {"host": host, "device": f"node{n.node}"}
        facts.add("numa.cpus", n.cpus, **where)
        facts.add("numa.size_mb", n.size_mb, **where)
        facts.add("numa.free_mb", n.free_mb, **where)
    for g in result.gpus:
        facts.add("gpu.numa_node", g.numa_node, host=host, device=f"GPU {g.gpu}")
    facts.save()


def load_proc_interrupts(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    load_counter_samples(artifact, result.samples)
    facts = FactBuffer(artifact, observed_at(artifact))
    facts.add("cpu.count", result.cpus or None, host=result.host)
    for d in result.devices:
        where = {"host": result.host, "device": d.pci}
        facts.add("irq.driver", d.driver, **where)
        facts.add("irq.count", d.irqs, **where)
        facts.add("irq.serving_cpus", list(d.serving_cpus), **where)
        facts.add("irq.top_cpu", d.top_cpu, **where)
        if d.irqs > 1 and d.top_cpu_share is not None:
            facts.add(
                "irq.top_cpu_pct",
                round(d.top_cpu_share * 100, 1),
                **where,
                extra={"interrupts": d.interrupts},
            )
    facts.save()


def load_perf_stat(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    load_counter_samples(artifact, result.samples)
    facts = FactBuffer(artifact, observed_at(artifact, result.started_at))
    summary = result.summary()
    facts.add("perf.target", result.target, host=result.host)
    facts.add("perf.elapsed_s", result.elapsed_s, host=result.host)
    facts.add("perf.ipc", summary["ipc"], host=result.host)
    runs = getattr(result, "runs", ())
    if len(runs) > 1:  # runs appended in one file (before/after): each keeps its own times
        for run in runs:
            where = {"host": result.host, "device": f"run {run.index}"}
            extra = {"command": run.command, "target": run.target, "line": run.line}
            facts.add("perf.elapsed_s", run.elapsed_s, **where, extra=extra)
            facts.add("perf.command", run.command, **where)
    facts.save()


def load_ebpf_hist(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    facts = FactBuffer(artifact, observed_at(artifact))
    for h in result.histograms:
        label = f"{h.name}[{h.key}]" if h.key else h.name
        facts.add(
            "ebpf.hist.p99",
            h.p99,
            device=label[:255],
            extra={
                "p50": h.p50,
                "p90": h.p90,
                "total": h.total,
                "unit": h.unit,
                "interval": h.interval,
                "line": h.line,
                "tool": h.tool,
            },
        )
    facts.save()


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_")[:80]


def load_superbench_monitor(artifact: Artifact, result: Any) -> None:
    """Readings only: each line is a snapshot of GPU, CPU and NIC levels at its time."""
    clear_fabric_rows(artifact)
    load_counter_samples(artifact, result.samples, result.snapshots)


FABRIC_LOADERS: dict[str, Callable[[Artifact, Any], None]] = {
    "ethtool_stats": load_ethtool_stats,
    "rdma_counters": load_rdma_counters,
    "ib_status": load_ib_status,
    "mlxlink": load_mlxlink,
    "nvidia_smi": load_nvidia_smi,
    "nccl_debug": load_nccl_debug,
    "dmesg": load_dmesg,
    "dcgm": load_dcgm,
    "perftest": load_perftest,
    "mlxconfig": load_mlxconfig,
    "numa": load_numa,
    "proc_interrupts": load_proc_interrupts,
    "perf_stat": load_perf_stat,
    "ebpf_hist": load_ebpf_hist,
    "superbench_monitor": load_superbench_monitor,
}
