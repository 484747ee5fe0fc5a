"""What the reading of an NCCL_DEBUG log collects (``Store``), and a header's piece of a line
(``Segment``).

``Store`` holds every table the readers fill and the few ways in that all of them use: a
host's state, a setting, an event (stored once, repeats counted), a bounded table entry.
The readers (collectives, topology, INFO messages, errors, lines, blocks) are subclasses,
one module each, that only add methods; ``result`` turns a ``Store`` into the result model.
"""

from __future__ import annotations

from typing import Any, Literal

from artifacts.fabric.parsers.nccl_debug import limits
from artifacts.fabric.parsers.nccl_debug.hosts import HostState
from artifacts.fabric.parsers.nccl_debug.info_kinds import InfoKind
from artifacts.fabric.parsers.nccl_debug.model import (
    GraphSearch,
    RingNeighbor,
    RingOrder,
    TreeLink,
    TuningEntry,
)


class Segment:
    """One ``host:pid:tid [dev] ... NCCL LEVEL message`` piece of a physical line."""

    __slots__ = ("dev", "host", "level", "mid", "msg", "pid", "tid")

    def __init__(
        self, host: str, pid: int, tid: int, dev: int | None, level: str, mid: str, msg: str
    ):
        self.host = host
        self.pid = pid
        self.tid = tid
        self.dev = dev
        self.level = level
        self.mid = mid
        self.msg = msg


class Store:
    """Everything collected so far, and the ways in that every reader uses."""

    def __init__(self) -> None:
        self.nccl_lines = 0
        self.garbled = 0
        self.error_traces = 0
        self.dropped = 0
        self.known_hosts: set[str] = set()
        self.hosts: dict[str, HostState] = {}
        # (host, library, version, build, revision) -> {"hip": ..., "rocm": ...}
        self.versions: dict[
            tuple[str | None, str, str, str | None, str | None], dict[str, str]
        ] = {}
        self.last_version: (
            tuple[tuple[str | None, str, str, str | None, str | None], int] | None
        ) = None
        self.pid_hosts: dict[int, set[str]] = {}
        self.host_lines: dict[str, int] = {}
        self.completions: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.pending_completion: tuple[dict[str, Any], int] | None = None
        self.parts: dict[str, None] = {}
        self.env: dict[tuple[str, str, str | None, str], None] = {}
        self.comms: dict[tuple[str, int, str], dict[str, Any]] = {}
        self.thread_comm: dict[tuple[str, int, int], str] = {}
        self.pending_channels: dict[tuple[str, int, int], dict[str, int]] = {}
        self.paths: dict[tuple[Any, ...], set[int]] = {}
        self.path_devs: dict[tuple[Any, ...], tuple[int | None, int | None]] = {}
        self.rings: dict[tuple[Any, ...], RingOrder] = {}
        self.neighbors: dict[tuple[Any, ...], RingNeighbor] = {}
        self.trees: dict[tuple[Any, ...], TreeLink] = {}
        self.graphs: dict[GraphSearch, None] = {}
        self.algos: dict[tuple[str | None, str, str], list[int]] = {}
        self.colls: dict[tuple[str, str], list[int]] = {}
        self.tuning: dict[tuple[str, str, str], TuningEntry] = {}
        self.tuning_source: tuple[str, int, int] | None = None
        self.tuning_columns: dict[tuple[str, int, int], tuple[list[str], list[str]]] = {}
        self.events: list[dict[str, Any]] = []
        self.event_index: dict[tuple[Any, ...], int] = {}
        self.timeouts: dict[tuple[Any, ...], dict[str, Any]] = {}
        # block reading: a line's text up to its level word -> its plain header, or False
        self.plain_headers: dict[str, Segment | Literal[False]] = {}
        self.inert_lines: set[str] = set()
        # block reading: an INFO message's text after "NCCL INFO " -> its kind
        self.info_kinds: dict[str, InfoKind | None] = {}

    def _host(self, name: str) -> HostState:
        host = self.hosts.get(name)
        if host is None:
            host = self.hosts[name] = HostState(name)
        return host

    def _add_env(self, name: str, value: str, host: str | None, source: str) -> None:
        if len(self.env) < limits.MAX_ENV:
            self.env.setdefault((name, value, host, source), None)
        else:
            self.dropped += 1

    def _event(
        self,
        kind: str,
        time: str | None,
        seg: Segment,
        line_no: int,
        text: str,
        details: dict[str, Any],
        launcher: int | None,
        rank: int | None = None,
    ) -> None:
        self._record(
            (kind, seg.host, seg.pid, rank, text),
            {
                "kind": kind,
                "time": time,
                "host": seg.host,
                "rank": rank,
                "text": text,
                "pid": seg.pid,
                "line": line_no,
                "details": {**details, "repeats": 1},
                "_thread": (seg.host, seg.pid, seg.tid),
                "_dev": seg.dev,
                "_launcher": launcher,
            },
        )

    def _record(self, key: tuple[Any, ...], event: dict[str, Any]) -> None:
        """Store an event once: the same WARN repeated is counted, not a new timeline entry."""
        if key in self.event_index:
            self.events[self.event_index[key]]["details"]["repeats"] += 1
        elif len(self.events) >= limits.MAX_EVENTS:
            self.dropped += 1
        else:
            self.event_index[key] = len(self.events)
            self.events.append(event)

    def _bounded_put(self, store: dict[Any, Any], key: Any, value: Any) -> None:
        if key in store:
            return
        if len(store) >= limits.MAX_ITEMS:
            self.dropped += 1
            return
        store[key] = value
