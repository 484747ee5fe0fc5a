"""The line-oriented nvidia-smi views: the default table, ``topo -m``, ``topo -p2p <r|w|n|a|p>``
and ``nvlink --status``.

Used by the nvidia_smi parser; one ViewReader takes every line that is not ``-q`` output.
A matrix is read from its header row (``GPU0 GPU1 ...``) whether or not its legend follows;
a ``topo -p2p`` matrix is told from ``topo -m`` by its cells (``OK``, ``CNS``, ``GNS``,
``TNS``, ``NS``, ``U`` rather than link types), and its mode comes from the command line
above it when the paste kept one. ``--query-gpu=... --format=csv`` output is read by its
header row (``index, memory.total [MiB], pcie.link.gen.current``): one row of named values
per GPU, as printed.
"""

from __future__ import annotations

import dataclasses
import re

from artifacts.parsers.textutil import find_timestamp, to_number

MAX_ROWS = 100_000

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_VERSIONS = re.compile(
    r"Driver Version:\s*(?P<driver>\S+)(?:\s+CUDA Version:\s*(?P<cuda>[\d.]+|N/A))?"
)
_ROW1 = re.compile(
    r"^\|\s*(?P<index>\d+)\s+(?P<name>.+?)\s+(?P<persist>On|Off)\s*\|\s*"
    r"(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+(?P<disp>On|Off)\s*\|"
    r"\s*(?P<ecc>\S+)\s*\|"
)
_ROW2 = re.compile(
    r"^\|\s*(?P<fan>\S+)\s+(?P<temp>\S+)\s+(?P<perf>\S+)\s+(?P<pwr>\S+)\s*/\s*(?P<cap>\S+)\s*\|"
    r"\s*(?P<used>\d+)MiB\s*/\s*(?P<total>\d+)MiB\s*\|\s*(?P<util>\S+)\s+(?P<mode>.*?)\s*\|"
)
_ROW3 = re.compile(r"^\|\s*\|\s*\|\s*(?P<mig>\S+)\s*\|\s*$")
_TOPO_DEVICE = re.compile(r"^(?:GPU\d+|NIC\d+|mlx\d+_\d+|CPU\d+|NODE\d+|nvme\d+)$")
_TOPO_EXTRAS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_P2P_CELLS = frozenset({"OK", "CNS", "GNS", "TNS", "NS", "U"})
_P2P_COMMAND = re.compile(r"\btopo\s+(?:-p2p|--p2pstatus)[\s=]+(?P<mode>[rwnap])\b")
_P2P_MODES = {"r": "read", "w": "write", "n": "nvlink", "a": "atomics", "p": "prop"}
_QUERY_FIELD = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*(?:\s*\[(?P<unit>[^\]]+)\])?$")
_LEGEND = re.compile(r"^\s*(?P<key>NIC\d+):\s*(?P<value>\S+)\s*$")
_NVLINK_GPU = re.compile(r"^GPU (?P<index>\d+): (?P<name>.*?)\s*\(UUID: (?P<uuid>[^)]+)\)\s*$")
_NVLINK_LINK = re.compile(r"^\s+Link (?P<link>\d+): (?P<value>.*?)\s*$")


@dataclasses.dataclass(frozen=True)
class TableGpu:
    """One GPU row of the default ``nvidia-smi`` table."""

    index: int
    name: str
    bus_id: str
    persistence: str | None
    display_active: str | None
    ecc_uncorrected_volatile: int | None
    fan_percent: float | None
    temperature_c: float | None
    pstate: str | None
    power_draw_w: float | None
    power_limit_w: float | None
    memory_used_mib: int | None
    memory_total_mib: int | None
    utilization_gpu_percent: float | None
    compute_mode: str | None
    mig_mode: str | None


@dataclasses.dataclass(frozen=True)
class TopoLink:
    a: str
    b: str
    link: str  # X, NV18, PIX, PXB, PHB, NODE, SYS, ...


@dataclasses.dataclass(frozen=True)
class DeviceAffinity:
    device: str
    cpu_affinity: str | None
    numa_affinity: str | None
    gpu_numa_id: str | None


@dataclasses.dataclass(frozen=True)
class P2pMatrix:
    """``nvidia-smi topo -p2p <mode>``: can each GPU reach each other one peer to peer."""

    mode: str | None  # read | write | nvlink | atomics | prop; None when no command line
    devices: tuple[str, ...]
    links: tuple[TopoLink, ...]  # every ordered pair (row -> column), link = OK, NS, ...


@dataclasses.dataclass(frozen=True)
class Topology:
    """``nvidia-smi topo -m``: the connection matrix, affinities and the NIC legend."""

    devices: tuple[str, ...]
    links: tuple[TopoLink, ...]  # each unordered pair once, in matrix order
    affinities: tuple[DeviceAffinity, ...]
    nic_legend: dict[str, str]


# ``topo -m`` link types from nearest to farthest for a GPU and a NIC: one PCIe bridge,
# several bridges, the host bridge, between host bridges of a NUMA node, across sockets.
PCIE_DISTANCE = ("PIX", "PXB", "PHB", "NODE", "SYS")


@dataclasses.dataclass(frozen=True)
class NicPlacement:
    """A GPU's nearest NIC in the ``topo -m`` matrix and how it is reached."""

    gpu: str  # "GPU3"
    nic: str  # the NIC legend's name ("mlx5_3"), else the matrix's ("NIC3")
    link: str  # PIX ... SYS
    cpu_affinity: str | None
    numa_affinity: str | None


def nic_placements(topology: Topology) -> list[NicPlacement]:
    """Per GPU, the NIC it reaches over the fewest PCIe hops (first in matrix order on a tie).
    Empty when the matrix names no NIC."""
    gpus = [d for d in topology.devices if d.upper().startswith("GPU")]
    nics = {d for d in topology.devices if not d.upper().startswith("GPU")}
    affinity = {a.device: a for a in topology.affinities}
    order = {d: i for i, d in enumerate(topology.devices)}
    best: dict[str, tuple[int, int, str]] = {}  # gpu -> (distance, NIC's position, NIC)
    for link in topology.links:
        for gpu, nic in ((link.a, link.b), (link.b, link.a)):
            if gpu in gpus and nic in nics and link.link in PCIE_DISTANCE:
                key = (PCIE_DISTANCE.index(link.link), order[nic], nic)
                if gpu not in best or key < best[gpu]:
                    best[gpu] = key
    out = []
    for gpu in gpus:
        if gpu not in best:
            continue
        distance, _, nic = best[gpu]
        placed = affinity.get(gpu)
        out.append(
            NicPlacement(
                gpu=gpu,
                nic=topology.nic_legend.get(nic, nic),
                link=PCIE_DISTANCE[distance],
                cpu_affinity=placed.cpu_affinity if placed else None,
                numa_affinity=placed.numa_affinity if placed else None,
            )
        )
    return out


@dataclasses.dataclass(frozen=True)
class NvLink:
    """One line of ``nvidia-smi nvlink --status``."""

    gpu_index: int
    gpu_name: str | None
    uuid: str | None
    link: int
    speed_gbps: float | None  # GB/s as printed
    active: bool


# ``nvidia-smi dmon``'s header: "# gpu" (after "Date" / "Time" with -o DT) and then the short
# names of its -s groups (power/temperature, utilization, clocks, violations, memory, ECC,
# PCIe throughput).
_DMON_HEADER = re.compile(
    r"^#\s*(?:Date\s+)?(?:Time\s+)?gpu\s+(?:pwr|gtemp|mtemp|sm|mem|enc|dec|jpg|ofa|mclk|pclk"
    r"|pviol|tviol|fb|bar1|ccpm|sbecc|dbecc|pci|rxpci|txpci)\b",
    re.IGNORECASE | re.MULTILINE,
)


class ViewReader:
    def __init__(self) -> None:
        self.timestamp: str | None = None
        self.driver_version: str | None = None
        self.cuda_version: str | None = None
        self.table_gpus: list[TableGpu] = []
        self.nvlinks: list[NvLink] = []
        self._row1: re.Match[str] | None = None
        self._table = False
        self._topo_columns: list[str] = []
        self._topo_extras: list[str] = []
        self._topo_rows: dict[str, list[str]] = {}
        self._topo_affinity: list[DeviceAffinity] = []
        # every matrix read: (p2p mode from the command line, columns, rows); the first
        # topo -m one also fills the _topo_* fields above
        self._matrices: list[tuple[str | None, list[str], dict[str, list[str]]]] = []
        self._p2p_mode: str | None = None
        self._p2p_legend = False
        # --query-gpu CSV: the header's field names and units, then the rows read under it
        self._query_fields: list[tuple[str, str | None]] = []
        self.query_rows: list[dict[str, str]] = []
        self._query_units: dict[str, str] = {}  # "memory.total" -> "MiB" (from the headers)
        self._legend: dict[str, str] = {}
        self._nvlink_gpu: re.Match[str] | None = None
        # dmon: the columns of the last "# gpu pwr ..." header, its units row, and the rows
        self._dmon_columns: list[str] = []
        self._dmon_units: list[str] = []
        self._dmon_units_next = False
        self.dmon_rows: list[dict[str, str]] = []
        self._dropped = 0
        self._seen_lines = 0
        self._date_above: str | None = None

    @property
    def found(self) -> bool:
        return bool(
            self.table_gpus
            or self._matrices
            or self.nvlinks
            or self._table
            or self.query_rows
            or self.dmon_rows
        )

    def formats(self) -> list[str]:
        return (
            (["table"] if self._table else [])
            + (["query"] if self.query_rows else [])
            + (["topo"] if self.topology() else [])
            + (["p2p"] if self.p2p() else [])
            + (["nvlink"] if self.nvlinks else [])
            + (["dmon"] if self.dmon_rows else [])
        )

    @staticmethod
    def looks_like_topology(text: str) -> bool:
        # a one-GPU machine's p2p matrix is "GPU0" over "GPU0 X": its legend says what it is
        alone = "= Self" in text and ("= Status Ok" in text or "= Connection traversing" in text)
        return any(
            "GPU0" in line
            and ("Affinity" in line or "GPU1" in line or alone)
            and line.split()[0] == "GPU0"
            for line in text.splitlines()[:200]
            if line.strip()
        ) and bool(re.search(r"^\s*GPU0\s+X\b", text, re.MULTILINE))

    @staticmethod
    def looks_like_nvlink_status(text: str) -> bool:
        return bool(re.search(r"^GPU \d+: .*\(UUID: ", text, re.MULTILINE)) and bool(
            re.search(r"^\s+Link \d+: ", text, re.MULTILINE)
        )

    def feed(self, raw: str) -> None:
        line = _ANSI.sub("", raw)
        self._seen_lines += 1
        if not line.strip():
            return
        if self.timestamp is None and len(line) < 60 and not line.startswith(("|", "+")):
            # nvidia-smi prints the date on the line above its table; other programs' lines
            # may come before both, so the date is taken from there, wherever that is
            stamp = find_timestamp(line)
            if stamp and self._seen_lines <= 3:
                self.timestamp = stamp[0]
                return
            self._date_above = stamp[0] if stamp else None
            if stamp:
                return
        if self._dmon_line(line):
            return
        if line.startswith("|") or line.startswith("+"):
            if self.timestamp is None and self._date_above:
                self.timestamp = self._date_above
            self._table_line(line)
        elif self._nvlink_line(line) or self._legend_line(line) or self._query_line(line):
            return
        else:
            self._topo_line(line)

    # --- default table ---------------------------------------------------------------------

    def _table_line(self, line: str) -> None:
        versions = _VERSIONS.search(line)
        if versions and "NVIDIA-SMI" in line:
            self._table = True
            self.driver_version = versions["driver"]
            self.cuda_version = versions["cuda"]
            return
        row1 = _ROW1.match(line)
        if row1:
            self._row1 = row1
            return
        row2 = _ROW2.match(line)
        if row2 and self._row1 is not None:
            self._add_table_gpu(self._row1, row2)
            self._row1 = None
            return
        row3 = _ROW3.match(line)
        if row3 and self.table_gpus and self.table_gpus[-1].mig_mode is None:
            self.table_gpus[-1] = dataclasses.replace(self.table_gpus[-1], mig_mode=row3["mig"])

    def _add_table_gpu(self, row1: re.Match[str], row2: re.Match[str]) -> None:
        if len(self.table_gpus) >= MAX_ROWS:
            self._dropped += 1
            return
        self.table_gpus.append(
            TableGpu(
                index=int(row1["index"]),
                name=row1["name"],
                bus_id=row1["bus"],
                persistence=row1["persist"],
                display_active=row1["disp"],
                ecc_uncorrected_volatile=_int(row1["ecc"]),
                fan_percent=_measure(row2["fan"]),
                temperature_c=_measure(row2["temp"]),
                pstate=None if row2["perf"] == "N/A" else row2["perf"],
                power_draw_w=_measure(row2["pwr"]),
                power_limit_w=_measure(row2["cap"]),
                memory_used_mib=int(row2["used"]),
                memory_total_mib=int(row2["total"]),
                utilization_gpu_percent=_measure(row2["util"]),
                compute_mode=row2["mode"] or None,
                mig_mode=None,
            )
        )

    # --- dmon ------------------------------------------------------------------------------

    @staticmethod
    def looks_like_dmon(text: str) -> bool:
        return bool(_DMON_HEADER.search(text))

    def _dmon_line(self, line: str) -> bool:
        """``nvidia-smi dmon``: a ``# gpu pwr gtemp ...`` header (``#Date Time gpu ...`` with
        ``-o DT``), a ``# Idx W C ...`` units row, then one row per GPU per interval; the
        header is printed again every so often."""
        if line.startswith("#"):
            words = line[1:].split()
            if _DMON_HEADER.match(line):
                self._dmon_columns = [w.lower() for w in words]
                self._dmon_units, self._dmon_units_next = [], True
                return True
            if self._dmon_units_next and len(words) == len(self._dmon_columns):
                self._dmon_units, self._dmon_units_next = words, False
                return True
            return False
        if not self._dmon_columns:
            return False
        words = line.split()
        if len(words) != len(self._dmon_columns):
            return False
        row = dict(zip(self._dmon_columns, words, strict=True))
        if not row["gpu"].isdigit():
            return False
        if len(self.dmon_rows) >= MAX_ROWS:
            self._dropped += 1
        else:
            self.dmon_rows.append(row)
        return True

    def dmon_units(self) -> dict[str, str]:
        return dict(zip(self._dmon_columns, self._dmon_units, strict=False))

    # --- --query-gpu CSV ---------------------------------------------------------------------

    @staticmethod
    def looks_like_query(text: str) -> bool:
        return any(_query_header(line) for line in text.splitlines()[:400] if "," in line)

    def _query_line(self, line: str) -> bool:
        if "," not in line:
            self._query_fields = []
            return False
        if header := _query_header(line):
            self._query_fields = header
            self._query_units.update({name: unit for name, unit in header if unit})
            return True
        cells = [c.strip() for c in line.split(",")]
        if not self._query_fields or len(cells) != len(self._query_fields):
            self._query_fields = []
            return False
        if len(self.query_rows) < MAX_ROWS:
            self.query_rows.append(
                {name: cell for (name, _), cell in zip(self._query_fields, cells, strict=True)}
            )
        return True

    def query_units(self) -> dict[str, str]:
        return dict(self._query_units)

    # --- topo -m ---------------------------------------------------------------------------

    def _topo_line(self, line: str) -> None:
        if m := _P2P_COMMAND.search(line):
            self._p2p_mode = _P2P_MODES[m["mode"]]
            return
        tokens = line.split()
        # a header row: "GPU0 GPU1 ... [CPU Affinity ...]"; a matrix row has "GPU0 X ..."
        if tokens and tokens[0] == "GPU0" and (len(tokens) < 2 or tokens[1] != "X"):
            self._topo_header(line, tokens)
            return
        if self._matrices and tokens and _TOPO_DEVICE.match(tokens[0]):
            self._topo_row(tokens)

    def _topo_header(self, line: str, tokens: list[str]) -> None:
        columns = []
        for token in tokens:
            if not _TOPO_DEVICE.match(token):
                break
            columns.append(token)
        self._matrices.append((self._p2p_mode, columns, {}))
        self._p2p_mode = None
        self._extras = [name for name in _TOPO_EXTRAS if name in line]

    def _topo_row(self, tokens: list[str]) -> None:
        device, cells = tokens[0], tokens[1:]
        _, columns, rows = self._matrices[-1]
        if device in rows or len(rows) >= MAX_ROWS:
            return
        n = len(columns)
        rows[device] = cells[:n]
        if self._is_p2p(rows):
            return
        if not self._topo_rows:  # the first topo -m matrix is the topology
            self._topo_columns, self._topo_rows = columns, rows
            self._topo_extras = self._extras
        if rows is not self._topo_rows:
            return  # a second topo -m matrix: the first one is the topology
        extras = cells[n:]
        if extras:
            values = dict(zip(self._topo_extras, extras, strict=False))
            self._topo_affinity.append(
                DeviceAffinity(
                    device,
                    values.get("CPU Affinity"),
                    values.get("NUMA Affinity"),
                    values.get("GPU NUMA ID"),
                )
            )

    def _legend_line(self, line: str) -> bool:
        if "= Chipset not supported" in line:  # the legend of a topo -p2p matrix
            self._p2p_legend = True
            return True
        m = _LEGEND.match(line)
        if m and self._matrices:
            self._legend[m["key"]] = m["value"]
            return True
        return False

    _extras: list[str] = []

    def _is_p2p(self, rows: dict[str, list[str]]) -> bool:
        cells = {c for row in rows.values() for c in row if c != "X"}
        if not cells:  # one GPU, no peer: only the legend tells p2p from topo -m
            return self._p2p_legend
        return cells <= _P2P_CELLS

    def p2p(self) -> list[P2pMatrix]:
        out = []
        for mode, columns, rows in self._matrices:
            if not self._is_p2p(rows):
                continue
            links = [
                TopoLink(row, column, cell)
                for row, cells in rows.items()
                for column, cell in zip(columns, cells, strict=False)
                if column != row
            ]
            out.append(P2pMatrix(mode, tuple(columns), tuple(links)))
        return out

    def topology(self) -> Topology | None:
        if not self._topo_rows or self._is_p2p(self._topo_rows):
            return None
        order = {name: i for i, name in enumerate(self._topo_columns)}
        links = []
        for row, cells in self._topo_rows.items():
            for column, cell in zip(self._topo_columns, cells, strict=False):
                if column != row and order.get(row, -1) < order[column]:
                    links.append(TopoLink(row, column, cell))
        return Topology(
            devices=tuple(self._topo_columns),
            links=tuple(links),
            affinities=tuple(self._topo_affinity),
            nic_legend=dict(self._legend),
        )

    # --- nvlink --status -------------------------------------------------------------------

    def _nvlink_line(self, line: str) -> bool:
        gpu = _NVLINK_GPU.match(line)
        if gpu:
            self._nvlink_gpu = gpu
            return True
        link = _NVLINK_LINK.match(line)
        if link and self._nvlink_gpu is not None:
            if len(self.nvlinks) >= MAX_ROWS:
                self._dropped += 1
                return True
            value = link["value"]
            speed = _measure(value)
            gpu = self._nvlink_gpu
            active = speed is not None and "inactive" not in value.lower()
            self.nvlinks.append(
                NvLink(
                    int(gpu["index"]),
                    gpu["name"] or None,
                    gpu["uuid"],
                    int(link["link"]),
                    speed,
                    active,
                )
            )
            return True
        return False

    def warnings(self) -> list[str]:
        out = []
        if self._row1 is not None:
            out.append("the GPU table ends after the first line of a GPU row")
        if self._dropped:
            out.append(f"{self._dropped} row(s) beyond {MAX_ROWS} were not kept")
        return out


def _query_header(line: str) -> list[tuple[str, str | None]] | None:
    """``index, memory.total [MiB], pcie.link.gen.max`` -> [(name, unit)], else None."""
    fields = []
    for cell in line.split(","):
        m = _QUERY_FIELD.match(cell.strip())
        if m is None:
            return None
        fields.append((cell.strip().split("[")[0].strip(), m["unit"]))
    if len(fields) < 2 or not any("." in name for name, _ in fields):
        return None
    return fields


def _measure(text: str) -> float | None:
    m = re.match(r"^\s*(-?\d+(?:\.\d+)?)", text)
    if not m:
        return None
    value = to_number(m.group(1))
    return float(value) if value is not None else None


def _int(text: str) -> int | None:
    value = to_number(text)
    return value if isinstance(value, int) else None
