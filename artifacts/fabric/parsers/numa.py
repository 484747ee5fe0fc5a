"""NUMA layout and NUMA memory statistics: ``numactl -H``, ``lscpu``, ``numastat`` (default,
``-m``, ``-p PID``) and ``rocm-smi --showtoponuma``, alone or pasted together.

* ``numactl -H``: per node its CPUs, size and free memory (MB), and the distance matrix.
* ``lscpu``: threads per core, cores per socket, sockets, NUMA node count and each node's
  CPU list (``NUMA node0 CPU(s): 0-15,128-143``).
* ``numastat``: each table (a ``Node 0 Node 1 ... Total`` header, one row per statistic)
  with its title; the default ``numa_hit``/``numa_miss``/... counters are running totals
  (pages) and become counter rows, so two readings give NUMA-miss rates; ``-m``/``-p``
  tables are in MB. Warnings numastat prints (``Token Unaccepted not in hash table.``)
  are skipped.
* ``rocm-smi --showtoponuma``: the NUMA node of each GPU.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import CounterSample, SampleBuffer, prompt
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text, to_number

KIND = "numa"
VERSION = 1

_AVAILABLE = re.compile(r"^available: (?P<n>\d+) nodes?")
_NODE_CPUS = re.compile(r"^node (?P<n>\d+) cpus:\s*(?P<cpus>[\d ]*)$")
_NODE_MEM = re.compile(r"^node (?P<n>\d+) (?P<what>size|free): (?P<mb>\d+) MB")
_DIST_HEADER = re.compile(r"^node(?:\s+\d+)+\s*$")
_DIST_ROW = re.compile(r"^\s*(?P<n>\d+):(?P<values>(?:\s+\d+)+)\s*$")
_LSCPU = re.compile(r"^(?P<key>Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node\(s\)"
                    r"|CPU\(s\)|Model name):\s*(?P<v>.+?)\s*$")  # fmt: skip
_LSCPU_NODE = re.compile(r"^NUMA node(?P<n>\d+) CPU\(s\):\s*(?P<cpus>\S*)\s*$")
_TABLE_HEADER = re.compile(r"^\s*(?P<cols>(?:[Nn]ode ?\d+(?:\s+|$))+)(?P<total>Total)?\s*$")
_TABLE_ROW = re.compile(r"^(?P<name>[A-Za-z_][\w()]*?)\s+(?P<values>-?\d[\d.\s-]*)$")
_TITLE = re.compile(
    r"^Per-node (?P<what>.+?)(?: \(in (?P<unit>\w+)\))?"
    r"(?: for PID (?P<pid>\d+) \((?P<proc>[^)]*)\))?:?\s*$"
)
_ROCM = re.compile(
    r"^GPU\[(?P<gpu>\d+)\]\s*: \(Topology\) Numa (?P<what>Node|Affinity): (?P<v>-?\d+)"
)
_LSCPU_KEYS = {"Thread(s) per core": "threads_per_core", "Core(s) per socket": "cores_per_socket",
               "Socket(s)": "sockets", "NUMA node(s)": "numa_nodes", "CPU(s)": "cpus",
               "Model name": "model_name"}  # fmt: skip
# numastat's default table: running page counters, worth pairing into rates
_NUMASTAT_COUNTERS = {"numa_hit", "numa_miss", "numa_foreign", "interleave_hit", "local_node",
                      "other_node"}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class NumaNode:
    node: int
    cpus: str | None  # compact list: "0-15,128-143"
    cpu_count: int | None
    size_mb: int | None
    free_mb: int | None


@dataclasses.dataclass(frozen=True)
class NumaTable:
    title: str | None  # "process memory usage", "system memory usage", None = default
    unit: str | None  # MBs | pages
    pid: int | None
    process: str | None
    nodes: tuple[int, ...]
    rows: dict[str, dict[str, float]]  # statistic -> {"0": v, "1": v, "total": v}


@dataclasses.dataclass(frozen=True)
class GpuNuma:
    gpu: int
    numa_node: int | None
    numa_affinity: int | None


@dataclasses.dataclass(frozen=True)
class NumaResult(ParseResult):
    kind: ClassVar[str] = "numa"

    host: str | None = None
    nodes: tuple[NumaNode, ...] = ()
    distances: tuple[tuple[int, ...], ...] = ()
    cpu_topology: dict[str, Any] = dataclasses.field(default_factory=dict)
    tables: tuple[NumaTable, ...] = ()
    gpus: tuple[GpuNuma, ...] = ()
    samples: tuple[CounterSample, ...] = ()
    # The parts of the tools' output that were read, in the order first seen ("numactl
    # cpus", "numactl memory", "numactl distances", "lscpu", "numastat", "rocm-smi"): a
    # fragment (one `lscpu | grep NUMA`, a distance matrix alone) gives what it holds.
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        remote = [max(row) for row in self.distances if row]
        return {
            "nodes": len(self.nodes) or self.cpu_topology.get("numa_nodes"),
            "sockets": self.cpu_topology.get("sockets"),
            "max_distance": max(remote) if remote else None,
            "tables": len(self.tables),
            "gpus": len(self.gpus),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if _AVAILABLE.search(text) or re.search(r"^node distances:", text, re.MULTILINE):
        return True
    if "Per-node " in text and re.search(r"Node 0\s+", text):
        return True
    if re.search(r"^numa_hit\s+\d", text, re.MULTILINE) and "numa_miss" in text:
        return True
    if "(Topology) Numa Node" in text:
        return True
    if re.search(r"^node \d+ cpus:", text, re.MULTILINE) and re.search(
        r"^node \d+ (?:size|free): \d+ MB", text, re.MULTILINE
    ):
        return True  # numactl -H without its "available:" line
    if re.search(r"^node(?:[ \t]+\d+)+[ \t]*\n[ \t]*\d+:(?:[ \t]+\d+)+", text, re.MULTILINE):
        return True  # its distance matrix alone
    # lscpu, or the NUMA lines of `lscpu | grep NUMA` (two node lines, or one and Socket(s))
    nodes = len(re.findall(r"^NUMA node\d+ CPU\(s\):", text, re.MULTILINE))
    return nodes >= 2 or (nodes == 1 and "Socket(s)" in text)


def parse(stream: BinaryIO) -> NumaResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line)
    state.close_table()
    if not (state.nodes or state.tables or state.gpus or state.lscpu or state.distances):
        raise ParseError("no numactl -H, numastat, lscpu NUMA or rocm-smi NUMA output found")
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.host: str | None = None
        self.nodes: dict[int, dict[str, Any]] = {}
        self.distances: list[tuple[int, ...]] = []
        self.in_distances = False
        self.lscpu: dict[str, Any] = {}
        self.title: dict[str, Any] = {}
        self.table: dict[str, Any] | None = None
        self.tables: list[NumaTable] = []
        self.gpus: dict[int, dict[str, int]] = {}
        self.buffer = SampleBuffer()
        self.readings = 0
        self.parts: dict[str, None] = {}

    def feed(self, line: str) -> None:
        shell = prompt(line)
        if shell is not None:
            self.host = shell[0] or self.host
            self.close_table()
            return
        stripped = line.strip()
        if m := _NODE_CPUS.match(stripped):
            self._node(int(m["n"]))["cpus"] = [int(c) for c in m["cpus"].split()]
            self.parts["numactl cpus"] = None
            return
        if m := _NODE_MEM.match(stripped):
            self._node(int(m["n"]))[f"{m['what']}_mb"] = int(m["mb"])
            self.parts["numactl memory"] = None
            return
        if stripped == "node distances:" or (
            # a distance matrix pasted without its "node distances:" title
            not self.in_distances and self.table is None and _DIST_HEADER.match(stripped)
        ):
            self.in_distances = True
            self.distances = []
            return
        if self.in_distances:
            if _DIST_HEADER.match(stripped):
                return
            if m := _DIST_ROW.match(line):
                self.distances.append(tuple(int(v) for v in m["values"].split()))
                self.parts["numactl distances"] = None
                return
            self.in_distances = False
        if m := _LSCPU_NODE.match(stripped):
            self.lscpu.setdefault("node_cpus", {})[int(m["n"])] = m["cpus"]
            self.parts["lscpu"] = None
            return
        if m := _LSCPU.match(stripped):
            value = m["v"]
            key = _LSCPU_KEYS[m["key"]]
            self.lscpu[key] = int(value) if value.isdigit() else value
            self.parts["lscpu"] = None
            return
        if m := _ROCM.match(stripped):
            self.gpus.setdefault(int(m["gpu"]), {})[m["what"].lower()] = int(m["v"])
            self.parts["rocm-smi"] = None
            return
        if m := _TITLE.match(stripped):
            self.close_table()
            self.title = {
                "title": m["what"],
                "unit": m["unit"],
                "pid": int(m["pid"]) if m["pid"] else None,
                "process": m["proc"],
            }
            return
        if m := _TABLE_HEADER.match(line):
            self.close_table()
            nodes = tuple(int(n) for n in re.findall(r"[Nn]ode ?(\d+)", m["cols"]))
            self.table = {**self.title, "nodes": nodes, "rows": {}, "total": bool(m["total"])}
            self.title = {}
            return
        if self.table is not None:
            if set(stripped) <= set("- ="):
                return
            if m := _TABLE_ROW.match(stripped):
                values = [to_number(v) for v in m["values"].split()]
                if all(v is not None for v in values):
                    self._row(m["name"], [float(v) for v in values])  # type: ignore[arg-type]
                    return
            if stripped:
                self.close_table()

    def _node(self, n: int) -> dict[str, Any]:
        return self.nodes.setdefault(n, {})

    def _row(self, name: str, values: list[float]) -> None:
        assert self.table is not None
        nodes = self.table["nodes"]
        row = {str(n): v for n, v in zip(nodes, values, strict=False)}
        if self.table["total"] and len(values) > len(nodes):
            row["total"] = values[len(nodes)]
        self.table["rows"][name] = row

    def close_table(self) -> None:
        table, self.table = self.table, None
        if table is None or not table["rows"]:
            return
        self.parts["numastat"] = None
        unit = table.get("unit") or ("pages" if table.get("title") is None else None)
        self.tables.append(
            NumaTable(
                title=table.get("title"),
                unit=unit,
                pid=table.get("pid"),
                process=table.get("process"),
                nodes=table["nodes"],
                rows=table["rows"],
            )
        )
        counters = table.get("title") is None and set(table["rows"]) & _NUMASTAT_COUNTERS
        for name, row in table["rows"].items():
            for node, value in row.items():
                if node == "total":
                    continue
                self.buffer.add(
                    CounterSample(
                        host=self.host,
                        device=f"node{node}",
                        port=None,
                        counter=name if counters else f"{_slug(table.get('title'))}.{name}",
                        value=value,
                        unit="pages" if counters else "MiB",
                        captured_at=None,
                        snapshot=self.readings,
                    )
                )
        self.readings += 1

    def result(self, warnings: list[str]) -> NumaResult:
        nodes = []
        for n in sorted(self.nodes):
            info = self.nodes[n]
            cpus = info.get("cpus")
            nodes.append(
                NumaNode(
                    node=n,
                    cpus=_compact(cpus) if cpus is not None else None,
                    cpu_count=len(cpus) if cpus is not None else None,
                    size_mb=info.get("size_mb"),
                    free_mb=info.get("free_mb"),
                )
            )
        if not nodes and "node_cpus" in self.lscpu:
            for n, cpus in sorted(self.lscpu["node_cpus"].items()):
                nodes.append(NumaNode(n, cpus, _count(cpus), None, None))
        topology = {k: v for k, v in self.lscpu.items() if k != "node_cpus"}
        if self.distances and len(self.distances) != len(nodes or self.distances):
            warnings.append("the distance matrix does not have one row per node")
        return NumaResult(
            host=self.host,
            nodes=tuple(nodes),
            distances=tuple(self.distances),
            cpu_topology=topology,
            tables=tuple(self.tables),
            gpus=tuple(
                GpuNuma(g, v.get("node"), v.get("affinity")) for g, v in sorted(self.gpus.items())
            ),
            samples=tuple(self.buffer.rows),
            warnings=tuple(warnings + self.buffer.warnings()),
            parts=tuple(self.parts),
        )


def _compact(cpus: list[int]) -> str:
    """[0, 1, 2, 3, 8] -> '0-3,8' (the notation lscpu and taskset use)."""
    parts: list[str] = []
    ordered = sorted(set(cpus))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def _count(cpus: str) -> int | None:
    total = 0
    for part in cpus.split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            return None
        total += (int(hi) - int(lo) + 1) if hi else 1
    return total


def _slug(title: str | None) -> str:
    return re.sub(r"[^a-z0-9]+", "_", (title or "numastat").lower()).strip("_")
