"""What the counter parsers share: the sample row, snapshots, link/HCA facts and small helpers.

Every counter-like parser (ethtool_stats, rdma_counters, ...) emits the same row shape::

    {"host", "device", "port", "counter", "value", "unit", "captured_at", "snapshot"}

so that pairing snapshots into rates and the findings rules work on one table whatever the
tool was. ``snapshot`` numbers the snapshots of one file (before/after excerpts, several
NICs concatenated); ``captured_at`` is ISO 8601 or null when the file carries no time.
"""

from __future__ import annotations

import dataclasses
import functools
import re

MAX_SAMPLES = 1_000_000  # one file may not add more rows than this (memory bound)


@dataclasses.dataclass(frozen=True)
class CounterSample:
    host: str | None
    device: str | None
    port: int | None
    counter: str
    value: int | float
    unit: str
    captured_at: str | None
    snapshot: int = 0


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """One block of counters read at one moment (``label``: the text that introduced it)."""

    index: int
    host: str | None
    device: str | None
    label: str | None
    captured_at: str | None
    counters: int


@dataclasses.dataclass(frozen=True)
class HcaInfo:
    """An RDMA adapter as ibstat / ibv_devinfo / sysfs describe it."""

    host: str | None
    device: str
    hca_type: str | None  # "MT4129" (ibstat CA type, sysfs hca_type) or vendor_part_id
    firmware: str | None
    hardware_version: str | None
    board_id: str | None
    node_guid: str | None
    system_image_guid: str | None
    transport: str | None
    ports: int | None
    # every other field the tool printed for the adapter, snake_case key -> text as printed
    # (ibv_devinfo's vendor_id, ibv_devinfo -v's max_qp, max_cqe, ...)
    details: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class LinkPort:
    """The state of one port of an RDMA adapter."""

    host: str | None
    device: str
    port: int
    state: str | None  # normalised: ACTIVE, DOWN, INIT, ARMED, ...
    phys_state: str | None  # as named by the tool, without the number: LinkUp, Disabled, Polling
    rate_gbps: float | None
    rate: str | None  # as printed: "400", "200 Gb/sec (4X HDR)"
    link_layer: str | None  # InfiniBand | Ethernet
    base_lid: str | None = None
    sm_lid: str | None = None
    lmc: str | None = None
    port_guid: str | None = None
    default_gid: str | None = None
    capability_mask: str | None = None
    active_mtu: int | None = None
    max_mtu: int | None = None
    # every other field printed for the port (ibv_devinfo -v: max_msg_sz, gid_tbl_len,
    # GID[ n] -> gid_n, ...), snake_case key -> text as printed
    details: dict[str, str] = dataclasses.field(default_factory=dict)


_new = object.__new__


def samples_of(
    host: str | None,
    device: str | None,
    port: int | None,
    counters: list[str],
    values: list[int | float],
    units: list[str],
    captured_at: str | None,
    snapshot: int,
) -> list[CounterSample]:
    """``CounterSample(host, device, port, counter, value, unit, captured_at, snapshot)`` for
    each counter, value and unit, the same rows built three times faster: a frozen
    dataclass's ``__init__`` goes through ``object.__setattr__`` per field, which for a
    capped 250,000 rows was most of a counter file's parse (issue 27)."""
    rows = []
    append = rows.append
    for counter, value, unit in zip(counters, values, units, strict=True):
        row = _new(CounterSample)
        fields = row.__dict__
        fields["host"] = host
        fields["device"] = device
        fields["port"] = port
        fields["counter"] = counter
        fields["value"] = value
        fields["unit"] = unit
        fields["captured_at"] = captured_at
        fields["snapshot"] = snapshot
        append(row)
    return rows


class SampleBuffer:
    """Collects CounterSample rows up to MAX_SAMPLES; counts what had to be dropped."""

    def __init__(self, limit: int = MAX_SAMPLES) -> None:
        self.rows: list[CounterSample] = []
        self.dropped = 0
        self._limit = limit

    def full(self) -> bool:
        """True when the next row would be dropped: callers count it without building it."""
        return len(self.rows) >= self._limit

    def room(self) -> int:
        """How many more rows are kept."""
        return max(0, self._limit - len(self.rows))

    def add(self, sample: CounterSample) -> None:
        if len(self.rows) < self._limit:
            self.rows.append(sample)
        else:
            self.dropped += 1

    def warnings(self) -> list[str]:
        if not self.dropped:
            return []
        return [f"{self.dropped} counter value(s) beyond {self._limit} were not kept"]


@functools.lru_cache(maxsize=4096)  # a file repeats the same few hundred names
def counter_unit(name: str) -> str:
    """Best unit for a counter from its name (mlx5 / IB naming conventions)."""
    lowered = name.lower()
    if lowered in ("port_xmit_data", "port_rcv_data") or lowered.endswith(
        ("_xmit_data", "_rcv_data")
    ):
        return "4 bytes"  # IB PortCounters count data in units of 4 octets
    if "duration" in lowered:
        return "us"  # mlx5 pause durations are microseconds
    if "bytes" in lowered or lowered.endswith("_octets"):
        return "bytes"
    if "pause" in lowered:
        return "frames"
    if "packets" in lowered or "pkts" in lowered or lowered.endswith("_frames"):
        return "packets"
    return "count"


# --- shell transcripts ----------------------------------------------------------------------

# "user@host:~$ cmd", "[user@host dir]$ cmd", "root@host# cmd", "host$ cmd", "sh-5.1# cmd"
_PROMPT = re.compile(
    r"^\s*(?:\[(?P<u1>[\w.\-]+)@(?P<h1>[\w.\-]+)[^\]]*\]|(?P<u2>[\w.\-]+)@(?P<h2>[\w.\-]+)(?::\S*)?)"
    r"\s*[$#>]\s*(?P<cmd>.*)$"
)
_BARE_PROMPT = re.compile(r"^\s*(?:(?:sh|bash|zsh)-\d+(?:\.\d+)*)?[$#>]\s+(?P<cmd>\S.*)$")


def prompt(line: str) -> tuple[str | None, str] | None:
    """(host, command) of a shell prompt line, or None. Host is None for a bare ``$ cmd``."""
    m = _PROMPT.match(line)
    if m:
        return m["h1"] or m["h2"], m["cmd"].strip()
    m = _BARE_PROMPT.match(line)
    if m:
        return None, m["cmd"].strip()
    return None


def normalise_state(text: str | None) -> str | None:
    """'4: ACTIVE', 'Active', 'PORT_ACTIVE (4)' -> 'ACTIVE'."""
    if not text:
        return None
    cleaned = re.sub(r"^\s*\d+\s*:\s*", "", text)
    cleaned = re.sub(r"\s*\(\d+\)\s*$", "", cleaned).strip()
    cleaned = cleaned.removeprefix("PORT_").removeprefix("IBV_PORT_")
    return cleaned.upper() or None


def normalise_phys_state(text: str | None) -> str | None:
    """'5: LinkUp', 'LinkUp', 'Disabled' -> the name without its number."""
    if not text:
        return None
    cleaned = re.sub(r"^\s*\d+\s*:\s*", "", text).strip()
    return cleaned or None


_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)")


def rate_gbps(text: str | None) -> float | None:
    """'400' (ibstat) or '200 Gb/sec (4X HDR)' (ibstatus, sysfs) -> Gb/s."""
    if not text:
        return None
    m = _RATE.match(text)
    return float(m.group(1)) if m else None


def normalise_guid(text: str | None) -> str | None:
    """'a088:c203:0096:05fc' (ibv_devinfo, sysfs) and '0xa088c203009605fc' (ibstat) -> the
    latter; anything else is kept as printed."""
    if not text:
        return None
    compact = text.strip().lower().removeprefix("0x").replace(":", "")
    return "0x" + compact if re.fullmatch(r"[0-9a-f]{1,16}", compact) else text.strip()
