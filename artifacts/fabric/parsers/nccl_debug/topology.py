"""Communicators and what NCCL builds for them: ``comm 0x... rank R`` lines (which rank a
thread speaks for), init timings, channel counts, paths, rings, trees and graph searches.
"""

from __future__ import annotations

import re
from typing import Any

from artifacts.fabric.parsers.nccl_debug import limits
from artifacts.fabric.parsers.nccl_debug.model import GraphSearch, RingNeighbor, RingOrder, TreeLink
from artifacts.fabric.parsers.nccl_debug.store import Segment, Store

_COMM_STATE = re.compile(
    r"comm (?P<comm>0x[0-9a-fA-F]+) rank (?P<rank>\d+) nranks (?P<nranks>\d+)"
    r"(?: cudaDev (?P<cuda>-?\d+))?(?: nvmlDev (?P<nvml>-?\d+))?(?: busId (?P<bus>[0-9a-fA-F]+))?"
    r"(?P<rest>.*?) - (?P<what>Init|Destroy|Abort) (?P<state>COMPLETE|START)"
)
_COMM_TOPO = re.compile(
    r"comm (?P<comm>0x[0-9a-fA-F]+) rank (?P<rank>\d+) nRanks (?P<nranks>\d+)"
    r" nNodes (?P<nnodes>\d+) localRanks (?P<lranks>\d+) localRank (?P<lrank>\d+)"
    r"(?: MNNVL (?P<mnnvl>\d+))?"
)
_COMM_ID = re.compile(r"commId (0x[0-9a-fA-F]+)")
_INIT_TIMINGS = re.compile(
    r"Init timings(?: - \w+)?: rank (?P<rank>\d+) nranks (?P<nranks>\d+) total (?P<total>[\d.]+)"
    r"(?: \((?P<phases>[^)]*)\))?"
)
_PHASE = re.compile(r"(\w+) ([\d.]+)")
_CHANNEL_COUNTS = re.compile(
    r"(?P<coll>\d+) coll channels, (?:(?P<collnet>\d+) collnet channels, )?"
    r"(?:(?P<nvls>\d+) nvls channels, )?(?P<p2p>\d+) p2p channels, "
    r"(?P<peer>\d+) p2p channels per peer"
)
_PATH = re.compile(
    r"^(?:Channel|Ring) (?P<ch>\d+)(?:/\d+)? : (?P<src>\d+)(?:\[(?P<sdev>\d+)\])? -> "
    r"(?P<dst>\d+)(?:\[(?P<ddev>\d+)\])?(?: \[(?P<dir>send|receive)\])? via (?P<via>.+?)\s*$"
)
_RING_ORDER = re.compile(
    r"^(?:Channel|Ring) (?P<ch>\d+)(?:/(?P<n>\d+))? :(?P<ranks>(?: +\d+)+)\s*$"
)
_RING_NEIGHBOR = re.compile(
    r"^Ring (?P<ch>\d+) : (?P<prev>-?\d+) -> (?P<rank>\d+) -> (?P<next>-?\d+)\s*$"
)
_TREES = re.compile(r"\[(?P<ch>\d+)\] (?P<down>-?\d+(?:/-?\d+)*)->(?P<rank>\d+)->(?P<up>-?\d+)")
_TREE = re.compile(
    r"^Tree (?P<ch>\d+) : (?P<up>-?\d+) -> (?P<rank>\d+) -> (?P<down>-?\d+(?:/-?\d+)*)\s*$"
)
_GRAPH = re.compile(
    r"^Pattern (?P<pattern>\d+), crossNic (?P<cross>\d+), nChannels (?P<n>\d+), "
    r"bw (?P<intra>[\d.]+)/(?P<inter>[\d.]+), type (?P<ti>[^/\s]+)/(?P<te>\S+?), "
    r"sameChannels (?P<same>\d+)"
)
_STATUS_ORDER = {"started": 0, "complete": 1, "destroyed": 2, "aborted": 2}


def _down_ranks(text: str) -> tuple[int, ...]:
    """A tree's ``down`` ranks (``3/-1/-1``), each read once; -1 marks an empty slot."""
    return tuple(d for d in map(int, text.split("/")) if d >= 0)


class TopologyReader(Store):
    """Communicators, channels, paths, rings, trees and graphs of ``comm``/``channel`` lines."""

    def _comm_line(
        self, seg: Segment, msg: str, line_no: int, time: str | None, launcher: int | None
    ) -> None:
        state = _COMM_STATE.search(msg)
        if state:
            self._comm_state(seg, state, msg, line_no, time, launcher)
            return
        topo = _COMM_TOPO.search(msg)
        if topo:
            comm = self._comm(seg, topo["comm"], int(topo["rank"]), int(topo["nranks"]))
            if comm is not None:
                comm.update(
                    nnodes=int(topo["nnodes"]),
                    local_ranks=int(topo["lranks"]),
                    local_rank=int(topo["lrank"]),
                    mnnvl=int(topo["mnnvl"]) if topo["mnnvl"] else comm.get("mnnvl"),
                )
            return
        creating = re.search(r"comm (0x[0-9a-fA-F]+) rank (\d+)", msg)
        if creating:  # "UDS: Creating service thread comm 0x... rank 2": binds the thread
            self.thread_comm[(seg.host, seg.pid, seg.tid)] = creating.group(1)

    def _comm(self, seg: Segment, address: str, rank: int, nranks: int) -> dict[str, Any] | None:
        key = (seg.host, seg.pid, address)
        comm = self.comms.get(key)
        if comm is None:
            if len(self.comms) >= limits.MAX_ITEMS:
                self.dropped += 1
                return None
            comm = self.comms[key] = {
                "host": seg.host,
                "pid": seg.pid,
                "comm": address,
                "comm_id": None,
                "rank": rank,
                "nranks": nranks,
                "cuda_dev": seg.dev,
                "nvml_dev": None,
                "bus_id": None,
                "status": "started",
                "nnodes": None,
                "local_rank": None,
                "local_ranks": None,
                "channels": {},
                "init_seconds": None,
                "init_phases": {},
                "mnnvl": None,
            }
        thread = (seg.host, seg.pid, seg.tid)
        self.thread_comm[thread] = address
        pending = self.pending_channels.pop(thread, None)
        if pending and not comm["channels"]:
            comm["channels"] = pending
        return comm

    def _comm_state(
        self,
        seg: Segment,
        m: re.Match[str],
        msg: str,
        line_no: int,
        time: str | None,
        launcher: int | None,
    ) -> None:
        comm = self._comm(seg, m["comm"], int(m["rank"]), int(m["nranks"]))
        if comm is None:
            return
        if m["cuda"] is not None:
            comm["cuda_dev"] = int(m["cuda"])
        if m["nvml"] is not None:
            comm["nvml_dev"] = int(m["nvml"])
        if m["bus"] is not None:
            comm["bus_id"] = m["bus"]
        comm_id = _COMM_ID.search(m["rest"])
        if comm_id:
            comm["comm_id"] = comm_id.group(1)
        status = {"Init": "complete", "Destroy": "destroyed", "Abort": "aborted"}[m["what"]]
        if m["state"] == "START":
            status = "started"
        if _STATUS_ORDER[status] >= _STATUS_ORDER[comm["status"]]:
            comm["status"] = status
        if m["state"] == "COMPLETE":
            kind = {"Init": "comm_init", "Destroy": "comm_destroy", "Abort": "comm_abort"}[
                m["what"]
            ]
            details = {"comm": m["comm"], "nranks": int(m["nranks"])}
            self._event(kind, time, seg, line_no, msg, details, launcher, rank=int(m["rank"]))

    def _init_timings(self, seg: Segment, msg: str) -> None:
        m = _INIT_TIMINGS.search(msg)
        if not m:
            return
        rank, nranks = int(m["rank"]), int(m["nranks"])
        address = self.thread_comm.get((seg.host, seg.pid, seg.tid))
        comm = self.comms.get((seg.host, seg.pid, address)) if address else None
        if comm is None or comm["rank"] != rank:
            comm = next(
                (
                    c
                    for c in reversed(self.comms.values())
                    if c["host"] == seg.host
                    and c["pid"] == seg.pid
                    and c["rank"] == rank
                    and c["nranks"] == nranks
                ),
                None,
            )
        if comm is None:
            return
        comm["init_seconds"] = float(m["total"])
        comm["init_phases"] = {k: float(v) for k, v in _PHASE.findall(m["phases"] or "")}

    def _channel_counts(self, seg: Segment, msg: str) -> None:
        m = _CHANNEL_COUNTS.search(msg)
        if not m:
            return
        counts = {
            k: int(v)
            for k, v in (
                ("coll", m["coll"]),
                ("collnet", m["collnet"]),
                ("nvls", m["nvls"]),
                ("p2p", m["p2p"]),
                ("p2p_per_peer", m["peer"]),
            )
            if v is not None
        }
        thread = (seg.host, seg.pid, seg.tid)
        address = self.thread_comm.get(thread)
        comm = self.comms.get((seg.host, seg.pid, address)) if address else None
        if comm is not None:
            comm["channels"] = counts
        else:  # older NCCL prints the counts before the comm line of this thread
            self.pending_channels[thread] = counts

    def _channel_line(self, seg: Segment, msg: str) -> None:
        path = _PATH.match(msg)
        if path:
            self._path(seg, path)
            return
        order = _RING_ORDER.match(msg)
        if order:
            comm = self.thread_comm.get((seg.host, seg.pid, seg.tid))
            ranks = tuple(int(r) for r in order["ranks"].split())
            key = (seg.host, comm, int(order["ch"]), ranks)
            nchannels = int(order["n"]) if order["n"] else None
            self._bounded_put(
                self.rings, key, RingOrder(seg.host, comm, int(order["ch"]), nchannels, ranks)
            )
            return
        neighbor = _RING_NEIGHBOR.match(msg)
        if neighbor:
            comm = self.thread_comm.get((seg.host, seg.pid, seg.tid))
            rank, channel = int(neighbor["rank"]), int(neighbor["ch"])
            item = RingNeighbor(
                seg.host, comm, rank, channel, int(neighbor["prev"]), int(neighbor["next"])
            )
            self._bounded_put(self.neighbors, (seg.host, seg.pid, comm, rank, channel), item)

    def _path(self, seg: Segment, m: re.Match[str]) -> None:
        via = m["via"]
        key = (seg.host, int(m["src"]), int(m["dst"]), m["dir"], via)
        channels = self.paths.get(key)
        if channels is None:
            if len(self.paths) >= limits.MAX_ITEMS:
                self.dropped += 1
                return
            channels = self.paths[key] = set()
            sdev = int(m["sdev"]) if m["sdev"] is not None else None
            ddev = int(m["ddev"]) if m["ddev"] is not None else None
            self.path_devs[key] = (sdev, ddev)
        channels.add(int(m["ch"]))
        if "GDRDMA" in via:
            self._host(seg.host).gdrdma_paths = True

    def _tree_line(self, seg: Segment, msg: str) -> None:
        comm = self.thread_comm.get((seg.host, seg.pid, seg.tid))
        if msg.startswith("Trees"):
            for m in _TREES.finditer(msg):
                down = _down_ranks(m["down"])
                self._tree(seg, comm, int(m["rank"]), int(m["ch"]), int(m["up"]), down)
            return
        single = _TREE.match(msg)
        if single:
            down = _down_ranks(single["down"])
            self._tree(seg, comm, int(single["rank"]), int(single["ch"]), int(single["up"]), down)

    def _tree(
        self,
        seg: Segment,
        comm: str | None,
        rank: int,
        channel: int,
        up: int,
        down: tuple[int, ...],
    ) -> None:
        key = (seg.host, seg.pid, comm, rank, channel)
        if key not in self.trees:
            self._bounded_put(self.trees, key, TreeLink(seg.host, comm, rank, channel, up, down))

    def _graph(self, host: str, msg: str) -> None:
        m = _GRAPH.match(msg)
        if m and len(self.graphs) < limits.MAX_ITEMS:
            graph = GraphSearch(
                host,
                int(m["pattern"]),
                int(m["cross"]),
                int(m["n"]),
                float(m["intra"]),
                float(m["inter"]),
                m["ti"],
                m["te"],
                int(m["same"]),
            )
            self.graphs.setdefault(graph, None)
