"""NCCL INFO messages: which reader each kind (``info_kinds``) goes to, and the readers of
the kinds that describe a host: versions, settings, host details, CUDA driver, network.

``InfoReader`` joins the collective and topology readers, whose kinds it dispatches to.
"""

from __future__ import annotations

import re
from typing import Any

from artifacts.fabric.parsers.nccl_debug.collectives import CollectiveReader
from artifacts.fabric.parsers.nccl_debug.hosts import HostState, ofi_line, plugin_line
from artifacts.fabric.parsers.nccl_debug.info_kinds import InfoKind, info_kind
from artifacts.fabric.parsers.nccl_debug.model import SocketDevice
from artifacts.fabric.parsers.nccl_debug.patterns import ENV_NCCL, clean_env_value
from artifacts.fabric.parsers.nccl_debug.store import Segment
from artifacts.fabric.parsers.nccl_debug.topology import TopologyReader
from artifacts.fabric.parsers.nccl_debug.versions import read_detail, read_version

_AFFINITY = re.compile(r"^Setting affinity for GPU (?P<gpu>\d+) to (?P<cpus>\S+)")
_KERNEL = re.compile(r"^Kernel version: (?P<v>\S+)")
_SUPPORT = re.compile(r"^(?P<what>DMA-BUF|NVLS multicast support) is (?P<not>not )?available")
_IB_USING = re.compile(r"\[(?P<i>\d+)\](?P<name>[^:\s\[]+):(?P<port>\d+)/(?P<ll>\w+)")
_IB_DEVICE = re.compile(
    r"^NET/IB ?: \[(?P<i>\d+)\] (?P<name>[^:\s]+):[^:\s]*:(?P<port>\d+)/(?P<ll>\w+)"
    r"(?: provider=\S+)? speed=(?P<speed>\d+)"
)
_OOB = re.compile(r"OOB (\S+?)(?:<\d+>)?(?:\s|$)")
_VDEV = re.compile(r"Made virtual device \[\d+\] name=(?P<name>\S+) speed=(?P<speed>\d+)")
_SOCKET_USING = re.compile(r"\[(?P<i>\d+)\](?P<ifc>[^:\s\[]+):(?P<addr>\S+?)(?:<\d+>)?(?=\s|$)")
_GDR = re.compile(
    r"GPU Direct RDMA (?P<state>Enabled|Disabled) for (?:GPU \S+ / )?HCA (?P<i>\d+)"
    r"(?: '(?P<name>[^']+)')?"
)


class InfoReader(CollectiveReader, TopologyReader):
    """The INFO message of a header, read as what its kind says it is."""

    def _info(
        self, seg: Segment, raw: str, line_no: int, time: str | None, launcher: int | None
    ) -> None:
        msg = raw.strip()
        kind = info_kind(msg)
        if kind is not None:
            self._read_info(kind, seg, raw, msg, line_no, time, launcher)

    def _read_info(
        self,
        kind: InfoKind,
        seg: Segment,
        raw: str,
        msg: str,
        line_no: int,
        time: str | None,
        launcher: int | None,
    ) -> None:
        """Read an INFO message (``msg``: ``raw`` stripped) as what ``info_kind`` says it is."""
        if kind == "call":
            self._collective_call(msg)
        elif kind == "algo":
            self._algo_choice(msg)
        elif kind == "channel":
            self._channel_line(seg, msg)
        elif kind == "tree":
            self._tree_line(seg, msg)
        elif kind == "tuning":
            self._tuning_row(seg, raw)
        elif kind == "network":
            self._network(seg, msg)
        elif kind == "comm":
            self._comm_line(seg, msg, line_no, time, launcher)
        elif kind == "version":
            self._version(seg.host, msg, line_no, at_start=True)
        elif kind == "env":
            self._nccl_env(seg.host, msg)
        elif kind == "init_timings":
            self._init_timings(seg, msg)
        elif kind == "cuda_driver":
            self._cuda_driver(seg.host, msg)
        elif kind == "graph":
            self._graph(seg.host, msg)
        elif kind == "host_detail":
            self._host_detail(seg, msg)
        elif kind == "channel_counts":
            self._channel_counts(seg, msg)
        else:  # "error_trace"
            self.error_traces += 1

    def _version(self, host: str | None, msg: str, line_no: int, at_start: bool) -> bool:
        found = read_version(msg)
        if found is None or (at_start and found[4] > 0):
            return False
        self._add_version(host, found, line_no)
        return True

    def _add_version(
        self,
        host: str | None,
        found: tuple[str, str, str | None, str | None, int],
        line_no: int,
    ) -> None:
        """Keep a version line ``read_version`` decoded, and the line a detail may follow."""
        library, version, build, revision, _ = found
        key = (host, library, version, build, revision)
        self.versions.setdefault(key, {})
        self.last_version = (key, line_no)
        self.parts.setdefault("version", None)

    def _version_detail(self, line: str, line_no: int) -> bool:
        """RCCL's ``HIP version  : ...`` lines under its version line (no NCCL header)."""
        if self.last_version is None or line_no - self.last_version[1] > 8:
            return False
        detail = read_detail(line)
        if detail is None:
            return False
        key, value = detail
        version_key = self.last_version[0]
        if key == "hostname" and version_key[0] is None:
            # a bare banner (NCCL_DEBUG=VERSION) names its host on this line
            details = self.versions.pop(version_key)
            version_key = (value, *version_key[1:])
            self.versions.setdefault(version_key, {}).update(details)
            self.last_version = (version_key, self.last_version[1])
        elif key in ("hip", "rocm"):
            self.versions[version_key][key] = value
        return True

    def _nccl_env(self, host: str | None, msg: str) -> None:
        match = ENV_NCCL.match(msg)
        if match:
            self._add_env(match["name"], clean_env_value(match["value"]), host, "nccl")

    def _host_detail(self, seg: Segment, msg: str) -> None:
        host = self._host(seg.host)
        if m := _AFFINITY.match(msg):
            host.gpu_affinity[f"GPU {m['gpu']}"] = m["cpus"]
        elif m := _KERNEL.match(msg):
            host.kernel_version = m["v"]
        elif m := _SUPPORT.match(msg):  # a garbled line says neither: left as it was
            value = m["not"] is None
            if m["what"] == "DMA-BUF":
                host.dmabuf = host.dmabuf or value
            else:
                host.nvls_multicast = host.nvls_multicast or value

    def _cuda_driver(self, host: str, msg: str) -> None:
        parts = msg.split()
        if len(parts) >= 2 and parts[1].isdigit():
            self._host(host).cuda_driver = int(parts[1])

    def _network(self, seg: Segment, msg: str) -> None:
        host = self._host(seg.host)
        if msg.startswith("Using network "):
            name = msg[len("Using network ") :].strip()
            if name and name not in host.transports:
                host.transports.append(name)
        elif msg.startswith("Bootstrap"):
            parts = msg.split("Using ", 1)
            if len(parts) == 2 and parts[1].strip():
                host.bootstrap = re.sub(r"<\d+>$", "", parts[1].split()[0])
        elif msg.startswith("NET/IB"):
            self._net_ib(host, msg)
        elif msg.startswith("NET/Socket"):
            if "Using " in msg:
                for m in _SOCKET_USING.finditer(msg.split("Using ", 1)[1]):
                    host.sockets[m["ifc"]] = SocketDevice(int(m["i"]), m["ifc"], m["addr"])
        elif msg.startswith("NET/Plugin"):
            plugin_line(host, msg)
        elif msg.startswith("NET/OFI"):
            ofi_line(host, msg)

    def _net_ib(self, host: HostState, msg: str) -> None:
        if "No device found" in msg:
            host.ib_found = False
            return
        gdr = _GDR.search(msg)
        if gdr:
            name = gdr["name"] or f"HCA {gdr['i']}"
            (host.gdr_on if gdr["state"] == "Enabled" else host.gdr_off).add(name)
            return
        vdev = _VDEV.search(msg)
        if vdev:
            host.vdev_speed.setdefault(vdev["name"], int(vdev["speed"]))
            return
        detail = _IB_DEVICE.match(msg)
        if detail:
            entry = self._ib_entry(
                host, detail["name"], int(detail["i"]), int(detail["port"]), detail["ll"]
            )
            entry["speed"] = int(detail["speed"])
            return
        if " Using " in msg or msg.startswith("NET/IB : Using"):
            body = msg.split("Using", 1)[1]
            for m in _IB_USING.finditer(body.split(";")[0]):
                self._ib_entry(host, m["name"], int(m["i"]), int(m["port"]), m["ll"])
            host.ib_found = True if host.ib_found is None else host.ib_found
            host.relaxed_ordering = "[RO]" in body
            oob = _OOB.search(body)
            if oob:
                host.oob = oob.group(1)

    @staticmethod
    def _ib_entry(
        host: HostState, name: str, index: int, port: int, link_layer: str
    ) -> dict[str, Any]:
        entry = host.ib_devices.setdefault(
            name, {"index": index, "port": port, "link_layer": link_layer, "speed": None}
        )
        entry.update(index=index, port=port, link_layer=link_layer)
        return entry
