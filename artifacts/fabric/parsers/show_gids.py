"""``show_gids`` (MLNX_OFED / DOCA script): the GID table of every RDMA port.

The script walks ``/sys/class/infiniband/<dev>/ports/<port>/gids`` and prints a tab-separated
table, one row per non-empty GID::

    DEV     PORT  INDEX  GID                                      IPv4          VER  DEV
    ---     ----  -----  ---                                      ------------  ---  ---
    mlx5_0  1     0      fe80:0000:0000:0000:0ac0:ebff:fe3d:ca54                v1   eth2
    mlx5_0  1     3      0000:0000:0000:0000:0000:ffff:0a6e:0021  10.110.0.33   v2   eth2
    n_gids_found=4

The IPv4 column is empty for link-local and IPv6 GIDs, and the netdev is empty on
InfiniBand ports (VER is then ``v1``: sysfs calls the type "IB/RoCE v1"). Rows are read by
shape, not by column position, because the padding is tabs and spaces in varying numbers.
The per-port summary says which index NCCL_IB_GID_INDEX should name (the RoCE v2 GID of an
IPv4 address), and which ports have no RoCE v2 GID at all.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import prompt
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text

KIND = "show_gids"
VERSION = 1

MAX_GIDS = 100_000

_HEADER = re.compile(r"^\s*DEV\s+PORT\s+INDEX\s+GID\s+IPv4\s+VER\s+DEV\s*$")
_GID = r"[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}"
_ROW = re.compile(
    rf"^\s*(?P<dev>[A-Za-z][\w.\-]*)\s+(?P<port>\d+)\s+(?P<index>\d+)\s+(?P<gid>{_GID})"
    r"(?:\s+(?P<ipv4>\d{1,3}(?:\.\d{1,3}){3}))?\s+(?P<ver>v[12]|IB|RoCE\s?v[12])"
    r"(?:\s+(?P<netdev>\S+))?\s*$"
)
_FOUND = re.compile(r"^\s*n_gids_found\s*=\s*(?P<n>\d+)\s*$")
_IPV4_MAPPED = "0000:0000:0000:0000:0000:ffff:"


@dataclasses.dataclass(frozen=True)
class GidEntry:
    host: str | None
    device: str  # mlx5_0
    port: int
    index: int
    gid: str
    ipv4: str | None
    version: str  # "v1" | "v2" (RoCE); InfiniBand ports show v1
    netdev: str | None
    scope: str  # "link-local" | "ipv4" | "ipv6"


@dataclasses.dataclass(frozen=True)
class GidPort:
    """One port's GID table in a nutshell."""

    host: str | None
    device: str
    port: int
    netdev: str | None
    gids: int
    v1: int
    v2: int
    # the index NCCL_IB_GID_INDEX should name: RoCE v2 of an IPv4 address (first one)
    v2_ipv4_index: int | None
    v2_ipv4: str | None
    v2_indexes: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class ShowGidsResult(ParseResult):
    kind: ClassVar[str] = "show_gids"

    gids: tuple[GidEntry, ...] = ()
    ports: tuple[GidPort, ...] = ()
    reported_count: int | None = None  # n_gids_found=N

    def summary(self) -> dict[str, Any]:
        return {
            "gids": len(self.gids),
            "ports": len(self.ports),
            "roce_ports": sum(1 for p in self.ports if p.netdev),
            "ports_without_v2": sum(1 for p in self.ports if p.netdev and not p.v2),
            "ports_without_v2_ipv4": sum(
                1 for p in self.ports if p.netdev and p.v2_ipv4_index is None
            ),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    rows = 0
    for line in head_text(head).splitlines()[:2000]:
        if _HEADER.match(line):
            return True
        rows += bool(_ROW.match(line))
    return rows >= 2


def parse(stream: BinaryIO) -> ShowGidsResult:
    reader = LineReader(stream)
    host: str | None = None
    entries: list[GidEntry] = []
    reported: int | None = None
    dropped = 0
    for line in reader:
        if (shell := prompt(line)) is not None:
            host = shell[0] or host
            continue
        if m := _FOUND.match(line):
            reported = (reported or 0) + int(m["n"])  # several runs pasted: add them up
            continue
        m = _ROW.match(line)
        if m is None:
            continue
        if len(entries) >= MAX_GIDS:
            dropped += 1
            continue
        entries.append(_entry(host, m))
    if not entries:
        raise ParseError("no show_gids rows found (DEV PORT INDEX GID IPv4 VER DEV)")
    warnings = reader.repair_warnings()
    if dropped:
        warnings.append(f"{dropped} GID row(s) beyond {MAX_GIDS} were not kept")
    if reported is not None and reported != len(entries) + dropped:
        warnings.append(
            f"n_gids_found says {reported} GIDs but {len(entries) + dropped} rows were read"
        )
    return ShowGidsResult(
        gids=tuple(entries),
        ports=_ports(entries),
        reported_count=reported,
        warnings=tuple(warnings),
    )


def _entry(host: str | None, m: re.Match[str]) -> GidEntry:
    gid = m["gid"].lower()
    version = m["ver"].replace(" ", "")
    version = "v" + version[-1] if version.lower().startswith("roce") else version
    if version == "IB":
        version = "v1"
    if gid.startswith("fe80:"):
        scope = "link-local"
    elif gid.startswith(_IPV4_MAPPED):
        scope = "ipv4"
    else:
        scope = "ipv6"
    ipv4 = m["ipv4"]
    if ipv4 is None and scope == "ipv4":
        ipv4 = _mapped_ipv4(gid)
    return GidEntry(
        host=host,
        device=m["dev"],
        port=int(m["port"]),
        index=int(m["index"]),
        gid=gid,
        ipv4=ipv4,
        version=version,
        netdev=m["netdev"],
        scope=scope,
    )


def _mapped_ipv4(gid: str) -> str | None:
    """'...:ffff:0a6e:0021' -> '10.110.0.33' (the script leaves the column empty sometimes)."""
    tail = gid[len(_IPV4_MAPPED) :].split(":")
    if len(tail) != 2:
        return None
    raw = bytes.fromhex("".join(tail))
    return ".".join(str(b) for b in raw)


def _ports(entries: list[GidEntry]) -> tuple[GidPort, ...]:
    grouped: dict[tuple[str | None, str, int], list[GidEntry]] = {}
    for e in entries:
        grouped.setdefault((e.host, e.device, e.port), []).append(e)
    out = []
    for (host, device, port), rows in grouped.items():
        rows.sort(key=lambda e: e.index)
        v2 = [e for e in rows if e.version == "v2"]
        v2_ipv4 = next((e for e in v2 if e.scope == "ipv4"), None)
        out.append(
            GidPort(
                host=host,
                device=device,
                port=port,
                netdev=next((e.netdev for e in rows if e.netdev), None),
                gids=len(rows),
                v1=sum(1 for e in rows if e.version == "v1"),
                v2=len(v2),
                v2_ipv4_index=v2_ipv4.index if v2_ipv4 else None,
                v2_ipv4=v2_ipv4.ipv4 if v2_ipv4 else None,
                v2_indexes=tuple(e.index for e in v2),
            )
        )
    out.sort(key=lambda p: (p.host or "", _natural(p.device), p.port))
    return tuple(out)


def _natural(name: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))
