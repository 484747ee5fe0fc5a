"""From what a reading collected (``Store``) to the result model: hosts whose name is a
damaged form of another's merged into it, the rank of each event and completion (its
thread's communicator, else its process's world rank), and every table sorted.
"""

from __future__ import annotations

from typing import Any

from artifacts.fabric.parsers.nccl_debug.hosts import damaged_form
from artifacts.fabric.parsers.nccl_debug.model import (
    AlgoChoice,
    CollectiveCalls,
    CollectiveTimeout,
    CommRank,
    EnvSetting,
    IbCompletion,
    NcclDebugResult,
    NcclEvent,
    NcclVersion,
    PathGroup,
)
from artifacts.fabric.parsers.nccl_debug.store import Store
from artifacts.parsers.base import ParseError


def finish(state: Store, reader_warnings: list[str]) -> NcclDebugResult:
    """The result of a whole reading; a file without an NCCL line nor error is no NCCL log."""
    if not state.nccl_lines and not state.events:
        raise ParseError(
            "no NCCL_DEBUG lines (host:pid:tid [dev] NCCL INFO ...) nor PyTorch NCCL errors found"
        )
    return _result(state, reader_warnings)


def _merge_damaged_hosts(state: Store) -> None:
    """Hosts whose name is a damaged form of another host's, and whose processes all
    printed under that host too, are that host: a process's first line (before its pid was
    known) can be garbled by another process's write. Their lines move to it."""
    lines = state.host_lines
    names = sorted(state.hosts, key=lambda h: (lines.get(h, 0), h))
    alias: dict[str, str] = {}
    for name in names:
        for real in reversed(names):
            if real == name or real in alias or lines.get(real, 0) <= lines.get(name, 0):
                continue
            if state.hosts[name].pids <= state.hosts[real].pids and damaged_form(real, name):
                alias[name] = real
                break
    if not alias:
        return
    for name, real in alias.items():
        state.hosts[real].absorb(state.hosts.pop(name))
    for e in state.events:
        if e["host"] in alias:
            e["host"] = alias[e["host"]]
            thread = e["_thread"]
            e["_thread"] = (alias[thread[0]], *thread[1:]) if thread else None
    state.versions = {
        (alias.get(k[0], k[0]) if k[0] else None, *k[1:]): v  # type: ignore[misc]
        for k, v in state.versions.items()
    }
    state.env = {
        (k[0], k[1], alias.get(k[2], k[2]) if k[2] else None, k[3]): None for k in state.env
    }
    completions: dict[tuple[Any, ...], dict[str, Any]] = {}
    for key, entry in state.completions.items():
        thread = entry["_thread"]
        entry["_thread"] = (alias.get(thread[0], thread[0]), *thread[1:]) if thread else None
        completions.setdefault((alias.get(key[0], key[0]), *key[1:]), entry)
    state.completions = completions
    comms: dict[tuple[str, int, str], dict[str, Any]] = {}
    for (host, pid, address), comm in state.comms.items():
        comm["host"] = alias.get(host, host)
        comms.setdefault((comm["host"], pid, address), comm)
    state.comms = comms
    state.thread_comm = {(alias.get(t[0], t[0]), *t[1:]): c for t, c in state.thread_comm.items()}  # type: ignore[misc]


def _result(state: Store, reader_warnings: list[str]) -> NcclDebugResult:
    _merge_damaged_hosts(state)
    only_host = next(iter(state.hosts)) if len(state.hosts) == 1 else None
    ranks = _ranks(state)
    versions = tuple(
        NcclVersion(
            host if host is not None else only_host,
            version,
            build,
            library=library,
            revision=revision,
            hip_version=details.get("hip"),
            rocm_version=details.get("rocm"),
        )
        for (host, library, version, build, revision), details in state.versions.items()
    )
    versions = tuple(dict.fromkeys(versions))
    warnings = list(reader_warnings)
    if state.garbled:
        warnings.append(
            f"{state.garbled} line(s) held interleaved output of several processes; "
            "each piece was read on its own"
        )
    if state.dropped:
        warnings.append(f"{state.dropped} item(s) beyond the per-file limits were not kept")
    return NcclDebugResult(
        hosts=tuple(h.freeze() for _, h in sorted(state.hosts.items())),
        versions=tuple(
            sorted(
                versions,
                key=lambda v: (
                    v.host or "",
                    v.library,
                    v.version,
                    v.build or "",
                    v.revision or "",
                ),
            )
        ),
        version_mismatch=len({(v.library, v.version) for v in versions}) > 1,
        env=tuple(
            EnvSetting(name, value, host, source)
            for name, value, host, source in sorted(
                state.env, key=lambda k: (k[0], k[3], k[2] or "", k[1])
            )
        ),
        nranks=max((r.nranks for r in ranks), default=None),
        ranks=ranks,
        paths=_paths(state),
        rings=tuple(
            sorted(state.rings.values(), key=lambda r: (r.host, r.comm or "", r.channel, r.ranks))
        ),
        ring_neighbors=tuple(
            sorted(
                state.neighbors.values(), key=lambda r: (r.host, r.comm or "", r.rank, r.channel)
            )
        ),
        trees=tuple(
            sorted(state.trees.values(), key=lambda t: (t.host, t.comm or "", t.rank, t.channel))
        ),
        graphs=tuple(state.graphs),
        algorithms=tuple(
            AlgoChoice(coll, algo, proto, v[0], v[1], v[2], v[3] if v[3] >= 0 else None)
            for (coll, algo, proto), v in sorted(
                state.algos.items(), key=lambda kv: tuple(x or "" for x in kv[0])
            )
        ),
        collectives=tuple(
            CollectiveCalls(coll, dt, v[0], v[1], v[2])
            for (coll, dt), v in sorted(state.colls.items())
        ),
        tuning_model=tuple(state.tuning.values()),
        timeouts=_timeouts(state),
        events=_events(state, only_host),
        ib_completions=_ib_completions(state, only_host),
        parts=_parts(state, ranks),
        stats={
            "nccl_lines": state.nccl_lines,
            "garbled_lines": state.garbled,
            "error_traces": state.error_traces,
        },
        warnings=tuple(warnings),
    )


def _ranks(state: Store) -> tuple[CommRank, ...]:
    out = []
    for c in state.comms.values():
        out.append(CommRank(**{**c, "pci_address": _pci_address(c["bus_id"])}))
    out.sort(key=lambda r: (-r.nranks, r.comm_id or "", r.rank, r.host, r.pid, r.comm))
    return tuple(out)


def _paths(state: Store) -> tuple[PathGroup, ...]:
    out = []
    for key, channels in state.paths.items():
        host, src, dst, direction, via = key
        sdev, ddev = state.path_devs[key]
        transport = via.split("/", 1)[0].upper()
        out.append(
            PathGroup(
                host,
                src,
                sdev,
                dst,
                ddev,
                direction,
                transport,
                via,
                "GDRDMA" in via,
                tuple(sorted(channels)),
            )
        )
    out.sort(key=lambda p: (p.host, p.src_rank, p.dst_rank, p.direction or "", p.via))
    return tuple(out)


def _timeouts(state: Store) -> tuple[CollectiveTimeout, ...]:
    out = [
        CollectiveTimeout(
            pgs=tuple(sorted(g["pgs"])),
            collective=g["collective"],
            seq=g["seq"],
            timeout_ms=g["timeout_ms"],
            max_ran_ms=g["max_ran_ms"],
            numel_in=g["numel_in"],
            numel_out=g["numel_out"],
            ranks=tuple(sorted(g["ranks"])),
        )
        for g in state.timeouts.values()
    ]
    out.sort(key=lambda t: (t.seq if t.seq is not None else -1, t.collective or "", t.pgs))
    return tuple(out)


def _ib_completions(state: Store, only_host: str | None) -> tuple[IbCompletion, ...]:
    out = []
    for (host, *_), entry in state.completions.items():
        f = entry["fields"]
        rank = _thread_rank(state, entry["_thread"], entry["_dev"])
        out.append(
            IbCompletion(
                host=host if host is not None else only_host,
                rank=rank,
                hca=f["hca"],
                peer=f["peer"],
                status=f["status"],
                status_name=f["status_name"],
                vendor_err=f["vendor_err"],
                local_gid=f["local_gid"],
                remote_gid=f["remote_gid"],
                count=entry["count"],
                first_line=entry["line"],
            )
        )
    return tuple(out)


def _thread_rank(state: Store, thread: tuple[str, int, int] | None, dev: int | None) -> int | None:
    """The rank a thread spoke for: its communicator, else its process's world rank."""
    if thread is None:
        return None
    address = state.thread_comm.get(thread)
    comm = state.comms.get((thread[0], thread[1], address)) if address else None
    if comm is not None:
        return int(comm["rank"])
    best: tuple[int, int] | None = None
    for c in state.comms.values():
        same = (c["host"], c["pid"], c["cuda_dev"]) == (thread[0], thread[1], dev)
        if same and (best is None or c["nranks"] > best[0]):
            best = (c["nranks"], c["rank"])
    return best[1] if best else None


def _parts(state: Store, ranks: tuple[CommRank, ...]) -> tuple[str, ...]:
    """The parts of an NCCL log this file held, in the order NCCL prints them."""
    seen = dict(state.parts)
    if state.env:
        seen["env"] = None
    if any(h.transports or h.ib_devices or h.sockets or h.plugin for h in state.hosts.values()):
        seen["network"] = None
    if ranks:
        seen["init"] = None
    if state.paths or state.rings or state.trees or state.neighbors or state.graphs:
        seen["topology"] = None
    if state.tuning:
        seen["tuning_model"] = None
    if state.algos or state.colls:
        seen["collectives"] = None
    if any(e["kind"] == "nccl_warn" for e in state.events):
        seen["warnings"] = None
    if any(e["_thread"] is None and e["kind"] != "nccl_warn" for e in state.events):
        seen["pytorch_errors"] = None
    order = (
        "version", "env", "network", "init", "topology", "tuning_model", "collectives",
        "warnings", "ib_errors", "pytorch_errors",
    )  # fmt: skip
    return tuple(p for p in order if p in seen)


def _world_rank_hosts(state: Store) -> dict[int | None, str]:
    """rank -> host in the largest communicator, for PyTorch lines that name only a rank."""
    largest = max((c["nranks"] for c in state.comms.values()), default=0)
    found: dict[int | None, str] = {}
    conflicting: set[int] = set()
    for c in state.comms.values():
        if c["nranks"] != largest:
            continue
        if found.setdefault(c["rank"], c["host"]) != c["host"]:
            conflicting.add(c["rank"])
    for rank in conflicting:
        del found[rank]
    return found


def _events(state: Store, only_host: str | None) -> tuple[NcclEvent, ...]:
    world: dict[tuple[str, int, int | None], tuple[int, int]] = {}
    for c in state.comms.values():
        key = (c["host"], c["pid"], c["cuda_dev"])
        if key not in world or c["nranks"] > world[key][0]:
            world[key] = (c["nranks"], c["rank"])
    rank_host = _world_rank_hosts(state)
    out = []
    for e in state.events:
        rank = e["rank"]
        if rank is None and e["_thread"] is not None:
            address = state.thread_comm.get(e["_thread"])
            comm = state.comms.get((e["_thread"][0], e["_thread"][1], address)) if address else None
            if comm is not None:
                rank = comm["rank"]
            elif (e["host"], e["pid"], e["_dev"]) in world:
                rank = world[(e["host"], e["pid"], e["_dev"])][1]
        if rank is None:
            rank = e["_launcher"]
        host = e["host"] if e["host"] is not None else rank_host.get(rank, only_host)
        out.append(
            NcclEvent(
                e["kind"], e["time"], host, rank, e["text"], e["pid"], e["line"], e["details"]
            )
        )
    return tuple(out)


def _pci_address(bus_id: str | None) -> str | None:
    """NCCL prints a PCI address as hex with the separators removed: 17000 -> 0000:17:00.0."""
    if not bus_id:
        return None
    digits = bus_id.lower().zfill(9)
    return f"{digits[:-5].zfill(4)[-8:]}:{digits[-5:-3]}:{digits[-3:-1]}.{digits[-1]}"
