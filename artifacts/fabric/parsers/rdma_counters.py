"""RDMA port counters: sysfs ``counters``/``hw_counters`` dumps and iproute2 ``rdma`` output.

Forms read:

- ``grep -r . /sys/class/infiniband/*/ports/*/{counters,hw_counters}`` style ``path:value``
  lines (absolute or relative paths; device attributes such as ``fw_ver`` and port
  attributes such as ``state``/``rate``/``link_layer`` become facts, not counters);
- ``head`` style ``==> path <==`` headers followed by the value;
- bare ``name:value`` lines (``grep -H . *`` inside one ``hw_counters`` directory): the device
  and port then come from the file name when it names them (``mlx5_0_port1_hw_counters.txt``);
- ``rdma statistic show [link dev/port]`` (wrapped lines and the ``Optional-set:`` counters)
  and ``rdma link show`` (port state);
- per-QP output (rdma_qp.py): ``rdma statistic qp show`` counter sets (``cntn``, ``qp-type``,
  ``pid``, ``comm``, ``LQPN``), ``rdma resource show qp`` and the ``-j`` JSON of all of these.
"""

from __future__ import annotations

import dataclasses
import re
from itertools import compress, count
from operator import ne
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.counters_common import (
    CounterSample,
    HcaInfo,
    LinkPort,
    SampleBuffer,
    Snapshot,
    counter_unit,
    normalise_guid,
    normalise_phys_state,
    normalise_state,
    prompt,
    rate_gbps,
    samples_of,
)
from artifacts.fabric.parsers.line_blocks import BlockReader
from artifacts.fabric.parsers.rdma_qp import (
    JsonBlock,
    QpCounterSet,
    QpInfo,
    clean_comm,
    counter_device,
    is_resource_line,
    json_counters,
    json_int,
    json_lqpns,
    json_text,
    lqpn_continuation,
    qp_info,
    split_words,
)
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import find_timestamp, head_text

KIND = "rdma_counters"
VERSION = 1
# Counter rows one file keeps (sysfs dumps polled for hours hold millions); every snapshot
# is still counted and the warning says how many rows were dropped (issue 27).
MAX_ROWS = 250_000
# Snapshots listed: a polled dump starts one per reading; later ones are counted in a warning.
MAX_SNAPSHOTS = 20_000

# A sysfs file and its value, however the shell printed the pair: ``grep -r .`` (path:value),
# ``for f in ...; do echo $f $(cat $f); done`` (path value), ``path=value``; ``head``
# (``==> path <==`` then the value) and ttar archives (``Path: path``, ``Lines: 1``, the
# value, ``Mode: 644``) give the path on a line of its own.
_PATH_LINE = re.compile(r"^\s*(?P<path>[^\s:=]*/[^\s:=]+?)(?:\s*[:=]\s*|\s+)(?P<value>\S.*?)\s*$")
_PATH_COUNTER = re.compile(
    r"(?:^|/)(?P<dev>[^/\s:]+)/ports/(?P<port>\d+)/(?P<group>hw_counters|counters)/"
    r"(?P<name>[^/:\s]+)$"
)
_PATH_PORT_ATTR = re.compile(
    r"(?:^|/)(?P<dev>[^/\s:]+)/ports/(?P<port>\d+)/"
    r"(?P<attr>state|phys_state|rate|link_layer|lid|sm_lid|lid_mask_count|cap_mask)$"
)
_PATH_DEV_ATTR = re.compile(
    r"(?:infiniband/|^)(?P<dev>[^/\s:]+)/"
    r"(?P<attr>fw_ver|board_id|hca_type|node_guid|sys_image_guid|hw_rev|node_type)$"
)
_SYSFS_TREE = re.compile(r"(?:^|/)infiniband/|/ports/\d+/")
_HEAD_HEADER = re.compile(r"^==> (?P<path>.+?) <==\s*$")
_TTAR_PATH = re.compile(r"^\s*Path:\s*(?P<path>\S+/\S+)\s*$")
_TTAR_META = re.compile(r"^\s*(?:Lines|Mode|Directory|SymlinkTo):|^# ttar\b")
_SHOW_COUNTERS = re.compile(r"\bshow_counters\s+(?P<dev>[A-Za-z][\w.\-]*)")
_PORT_TITLE = re.compile(r"^\s*Port\s+(?P<port>\d+)\s+(?:hw[_ ])?counters\s*:?\s*$", re.I)
# a note after the value ("131   # after the reboot") is the person's, not the counter's
_BARE = re.compile(r"^\s*(?P<name>[A-Za-z][\w]*):\s*(?P<value>-?\d+)(?:\s+(?:#|//|<-)[^\n]*)?\s*$")
# "link mlx5_0/1 ..."; "link mlx5_0/- ..." for a QP not bound to a port yet.
_RDMA_LINK = re.compile(r"^\s*link (?P<dev>[^/\s]+)/(?P<port>\d+|-)\s+(?P<rest>.*)$")
# The start of `rdma -j [-p]` output: "[{", "[" alone, "{" alone, '{"'.
_JSON_START = re.compile(r'^\s*(?:\[\s*(?:[\[{\]]|$)|\{\s*(?:"|$))')
_JSON_MARKERS = (
    '"cntn"',
    '"lqpn"',
    '"rx_write_requests"',
    '"out_of_sequence"',
    '"local_ack_timeout_err"',
)
_PAIR = re.compile(r"(?P<name>[A-Za-z][\w\-]*) (?P<value>-?\d+)(?=\s|$)")
_NAME_HINT = re.compile(
    r"(?P<dev>mlx\d+_(?:bond_)?\d+|bnxt_re\d+|irdma\d+|rocep\d+s\d+(?:f\d+)?|ionic_\d+|hfi1_\d+"
    r"|qedr\d+|efa_\d+)(?:[_\-.]?port[_\-]?(?P<port>\d+))?"
)

# Counter names of mlx5 hw_counters and IB PortCounters (REFERENCE.md section A, kernel docs):
# they tell a bare "name:value" list of RDMA counters from any other list of numbers.
_KNOWN_WORDS = """
    out_of_buffer out_of_sequence duplicate_request rnr_nak_retry_err packet_seq_err
    implied_nak_seq_err local_ack_timeout_err resp_local_length_error resp_cqe_error req_cqe_error
    req_remote_invalid_request req_remote_access_errors resp_remote_access_errors
    resp_cqe_flush_error req_cqe_flush_error roce_adp_retrans roce_adp_retrans_to
    roce_slow_restart roce_slow_restart_cnps roce_slow_restart_trans rp_cnp_ignored rp_cnp_handled
    np_ecn_marked_roce_packets np_cnp_sent rx_icrc_encapsulated rx_write_requests rx_read_requests
    rx_atomic_requests rx_dct_connect lifespan port_xmit_data port_rcv_data port_xmit_packets
    port_rcv_packets port_xmit_wait port_xmit_discards port_rcv_errors symbol_error link_downed
    link_error_recovery VL15_dropped excessive_buffer_overrun_errors local_link_integrity_errors
    port_rcv_remote_physical_errors port_rcv_switch_relay_errors port_rcv_constraint_errors
    port_xmit_constraint_errors unicast_rcv_packets unicast_xmit_packets multicast_rcv_packets
    multicast_xmit_packets cc_rx_ce_pkts cc_tx_cnp_pkts
    """
KNOWN_COUNTERS = frozenset(_KNOWN_WORDS.split())
_BARE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
# Words followed by a text value: "comm ib_send_bw", "qp-type RC" never dangle.
_SET_VALUE_WORDS = frozenset({"comm", "qp-type", "type", "state", "subtype", "path-mig-state"})
_JSON_SKIP = frozenset({"ifindex", "ifname", "port", "dev"})


@dataclasses.dataclass(frozen=True)
class RdmaCountersResult(ParseResult):
    kind: ClassVar[str] = "rdma_counters"

    snapshots: tuple[Snapshot, ...] = ()
    samples: tuple[CounterSample, ...] = ()
    hcas: tuple[HcaInfo, ...] = ()
    ports: tuple[LinkPort, ...] = ()
    qp_counters: tuple[QpCounterSet, ...] = ()  # rdma statistic qp show: one per cntn
    qps: tuple[QpInfo, ...] = ()  # rdma resource show qp
    # what the file showed: sysfs_counters, sysfs_port_attributes, sysfs_device_attributes,
    # bare_counters, rdma_statistic, rdma_link, rdma_qp_counters, rdma_resource_qp, json
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "devices": sorted(
                {s.device for s in self.samples if s.device} | {h.device for h in self.hcas}
            ),
            "samples": len(self.samples),
            "nonzero": sum(1 for s in self.samples if s.value),
            "ports_not_active": sum(1 for p in self.ports if p.state not in (None, "ACTIVE")),
            "qp_counters": len(self.qp_counters),
            "qps": len(self.qps),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    sysfs = rdma = known = bare = 0
    for line in text.splitlines()[:5000]:
        # each regex runs only on lines holding the literal it needs ("/ports/", "link ",
        # ":"): the same counts, without matching every line three times
        if "/ports/" in line and "counters/" in line and _is_counter_path_line(line):
            sysfs += 1
        elif "link " in line and _RDMA_LINK.match(line) and len(_PAIR.findall(line)) >= 2:
            rdma += 1
        elif ":" in line and (m := _BARE.match(line)):
            bare += 1
            known += m.group(1) in KNOWN_COUNTERS
    if sysfs >= 3 or rdma >= 1:
        return True
    # `rdma -j` output: an array of objects naming their device, with RDMA counter/QP keys.
    if _JSON_START.match(text) and '"ifname"' in text and any(m in text for m in _JSON_MARKERS):
        return True
    # A bare list: mostly names that only RDMA counters carry.
    return known >= 3 and known >= 0.6 * bare


def _is_counter_path_line(line: str) -> bool:
    m = _PATH_LINE.match(line) or _HEAD_HEADER.match(line) or _TTAR_PATH.match(line)
    return bool(m and _PATH_COUNTER.search(m["path"]))


def parse(stream: BinaryIO, *, name: str | None = None) -> RdmaCountersResult:
    """``name`` (the upload's file name) helps bare name:value lists find their device."""
    reader = BlockReader(stream)
    state = _State(name)
    for piece in reader:
        if type(piece) is str:
            state.recording = None
            state.feed(piece)
        else:
            state.feed_block(piece)
    state.finish()
    if not state.buffer.rows and not state.ports and not state.hcas and not state.qps:
        raise ParseError(
            "no RDMA counters (sysfs path:value lines or 'rdma statistic' output) found"
        )
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self, name: str | None) -> None:
        self.buffer = SampleBuffer(MAX_ROWS)
        hint = _NAME_HINT.search(name or "")
        # the device and port of bare "name: value" lines: from the file name, then from a
        # show_counters command and a "Port N hw counters:" title in the file
        self.bare_device = hint["dev"] if hint else None
        self.bare_port = int(hint["port"]) if hint and hint["port"] else None
        self.host: str | None = None
        self.time: str | None = None
        self.label: str | None = None
        self.snapshots: list[dict[str, Any]] = []  # the first MAX_SNAPSHOTS
        self.last: dict[str, Any] | None = None  # the snapshot being read (listed or not)
        self.unlisted = 0  # snapshots beyond MAX_SNAPSHOTS
        self.seen: set[tuple[str | None, int | None, str]] = set()
        self.hcas: dict[str, dict[str, str]] = {}
        self.ports: dict[tuple[str, int], dict[str, str]] = {}
        self.head_path: tuple[str, int, str] | None = None
        # The "link dev/port" that a wrapped `rdma statistic` line continues.
        self.link: tuple[str, int] | None = None
        self.force_new = (
            False  # set by a command/date/label line: the next counter opens a snapshot
        )
        # QP-mode counter sets by (device of their rows, snapshot); the one a wrapped line
        # continues; QPs of `rdma resource show qp`; the JSON document being collected.
        self.sets: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None
        self.qps: list[QpInfo] = []
        self.json: JsonBlock | None = None
        self.json_errors = 0
        self.replaying = False
        self.pending: str | None = None  # a counter name whose value wrapped to the next line
        self.parts: dict[str, None] = {}  # the shapes seen (RdmaCountersResult.parts)
        self.ttar = False  # a ttar archive: values may end in its "EOF" marker
        # Reading whole blocks (issue 27): a run of lines read one by one up to the next copy
        # of its first line becomes a template (_Unit) when what it did depended only on the
        # state it began in; a later run that begins in the same state and repeats its lines
        # (numbers may differ) then adds the same snapshots and rows in bulk.
        self.template: _Unit | None = None
        self.recording: _Recording | None = None
        self.side = 0  # reads that changed anything but rows and snapshots (ports, QPs, ...)
        self.at = 0  # the index in its block of the line being read
        # a run that did not begin with a new snapshot: the next one begins where it opened
        self.start_hint: bytes | None = None

    def feed_block(self, chunk: bytes) -> None:
        lines = chunk.split(b"\n")
        lines.pop()
        self.recording, self.start_hint = None, None
        i, size = 0, len(lines)
        while i < size:
            line = lines[i]
            template = self.template
            if template is not None and template.holds(0, line):
                taken = self._follow(template, lines, i)
                if taken:
                    self.recording = None
                    i += taken
                    continue
            recording = self.recording
            stripped = line.translate(None, _DIGITS)
            # the run ends where its first line comes again (its numbers may differ)
            if recording is not None and stripped == recording.first:
                self._learn(lines, recording, i)
                self.recording = None
                if self.template is not None and self.template is not template:
                    continue  # the run just learned may begin here
            if (
                self.recording is None or i - self.recording.start > _MAX_UNIT_LINES
            ) and self.start_hint in (None, stripped):
                self.recording = _Recording(i, stripped, self._state(), self.side)
                self.start_hint = None
            self.at = i
            self.feed(line.decode())
            i += 1
        self.recording = None

    def _state(self) -> tuple[Any, ...]:
        """What a line's reading depends on, other than the snapshot it adds to."""
        return (
            self.bare_device, self.bare_port, self.host, self.time, self.label, self.last is None,
            self.head_path, self.link, self.force_new, self.current is None, self.json is None,
            self.replaying, self.pending, self.ttar, len(self.sets), len(self.qps),
            self.json_errors,
        )  # fmt: skip

    def _learn(self, lines: list[bytes], recording: _Recording, end: int) -> None:
        samples = recording.samples
        if recording.open_at is not None:
            self.start_hint = lines[recording.open_at].translate(None, _DIGITS)
        if (
            not samples
            or not recording.opens
            or recording.opens[0][0] != 0  # the first sample opened a snapshot
            or self.side != recording.side
            or self.current is not None
            or self.json is not None
            or self.head_path is not None
            or not recording.before[10]  # a JSON document was being collected
        ):
            return
        after = self._state()
        if after[14:] != recording.before[14:]:  # counter sets, QPs, JSON errors added
            return
        unit = _Unit.of(lines[recording.start : end], recording, after, self.seen)
        if unit is not None:
            self.template = unit

    def _follow(self, unit: _Unit, lines: list[bytes], i: int) -> int:
        """How many lines from ``i`` on were added in bulk as copies of the template (0:
        none). A unit that ends in the state it began in can follow itself."""
        if self._state() != unit.before or not (unit.first_forced or unit.first_key in self.seen):
            return 0
        size, end, start = len(unit.lines), len(lines), i
        while i + size <= end:
            part = lines[i : i + size]
            values = unit.values
            if part != unit.lines:
                values = list(values)
                for j in compress(count(), map(ne, part, unit.lines)):
                    found = unit.numbers(j, part[j])
                    if found is None:
                        break
                    at = unit.value_at[j]
                    values[at : at + len(found)] = found
                else:
                    found = []
                if found is None:
                    break
            self._add(unit, values)
            i += size
            if not unit.follows_itself:
                break
        if i == start:
            return 0
        (
            self.bare_device, self.bare_port, self.host, self.time, self.label, _,
            self.head_path, self.link, self.force_new, _, _,
            self.replaying, self.pending, self.ttar, *_,
        ) = unit.after  # fmt: skip
        self.current = None
        self.seen = set(unit.seen)
        return i - start

    def _add(self, unit: _Unit, values: list[int]) -> None:
        """The snapshots and rows of one copy of the unit (what _open and _sample do)."""
        buffer, snapshots = self.buffer, self.snapshots
        first = 0
        for group in unit.groups:
            snapshot = {
                "index": len(snapshots) + self.unlisted,
                **group.snapshot,
                "devices": set(group.devices),
            }
            if len(snapshots) < MAX_SNAPSHOTS:
                snapshots.append(snapshot)
            else:
                self.unlisted += 1
            self.last = snapshot
            taken = len(group.names)
            room = 0 if buffer.full() else min(buffer.room(), taken)
            if room:
                buffer.rows += group.rows(snapshot["index"], values[first : first + room])
            buffer.dropped += taken - room
            first += taken

    def feed(self, line: str) -> None:
        if self.json is not None:
            if self.json.add(line):
                self._json_done()
            return
        if _JSON_START.match(line) and not self.replaying:
            self.side += 1
            self.link = None
            self.json = JsonBlock()
            self.feed(line)
            return
        if self.head_path is not None:
            self._head_value(line)
            return
        # another file of the same tree (gids/0, pkeys/0) is not read, and is not a label
        # that would split the reading into snapshots either
        if (
            "/" in line
            and (m := _PATH_LINE.match(line))
            and (self._path_value(m["path"], m["value"]) or _SYSFS_TREE.search(m["path"]))
        ):
            self.link = None
            return
        for reader in (self._rdma_line, self._head_header, self._bare):
            if reader(line):
                return
        self._text(line)

    def _rdma_line(self, line: str) -> bool:
        m = _RDMA_LINK.match(line)
        if m:
            self._link_line(m)
            return True
        if self.link is None:
            return False
        lqpns = lqpn_continuation(line)
        if lqpns is not None:  # "LQPN: <258,259>" after a counter set's counters
            if self.current is not None:
                self.current["lqpns"].extend(lqpns)
            return True
        rest = line.strip()
        if rest.startswith("Optional-set:"):
            rest = rest[len("Optional-set:") :]
        words = rest.split()
        if self.pending and words and words[0].lstrip("-").isdigit():
            rest = f"{self.pending} {rest}"  # "out_of_sequence" / "0" split over two lines
            words.insert(0, self.pending)
        pairs = _PAIR.findall(rest)
        # a wrapped continuation line: name/value pairs (a name may end it, its value next)
        if pairs and len(pairs) * 2 >= len(words) - 1:
            self._rdma_pairs(self._hold_dangling(rest))
            return True
        self.link = None
        self.current = None
        self.pending = None
        return False

    def _link_line(self, m: re.Match[str]) -> None:
        self.link = (m["dev"], None if m["port"] == "-" else int(m["port"]))
        self.current = None  # a new "link" line starts a new set (or port counters)
        self.pending = None
        self._rdma_pairs(self._hold_dangling(m["rest"]))

    def _hold_dangling(self, text: str) -> str:
        """Keep a counter name that ends the line without its value for the next line
        (mail clients and terminals wrap `rdma statistic` lines anywhere)."""
        words = text.split()
        self.pending = None
        if len(words) % 2 and _BARE_NAME.match(words[-1]) and not _PAIR.search(words[-1]):
            last = words[-1]
            if last.lower() not in _SET_VALUE_WORDS and (
                len(words) < 2 or words[-2].lower() not in _SET_VALUE_WORDS
            ):
                self.pending = last
                return " ".join(words[:-1])
        return text

    def _rdma_pairs(self, text: str) -> None:
        assert self.link is not None
        device, port = self.link
        words = text.split()
        lowered = {w.lower() for w in words}
        if "state" in words and not lowered & {"lqpn", "cntn"}:
            # rdma link show: "state ACTIVE physical_state LINK_UP ..."
            attrs = dict(zip(words[::2], words[1::2], strict=False))
            self.side += 1
            self.parts["rdma_link"] = None
            if port is not None:
                entry = self.ports.setdefault((device, port), {})
                entry["state"] = attrs.get("state", "")
                entry["phys_state"] = attrs.get("physical_state", "")
            return
        attributes, counters, lqpns = split_words(text)
        if self.current is None and is_resource_line(attributes, counters):
            info = qp_info(self.host, device, port, attributes)
            if info is not None:
                self.qps.append(info)
                self.parts["rdma_resource_qp"] = None
            self.link = None  # resource lines do not wrap
            return
        if "cntn" in attributes and attributes["cntn"].isdigit():
            self.current = self._counter_set(device, port, attributes)
        if counters:
            self.parts["rdma_qp_counters" if self.current else "rdma_statistic"] = None
        target = self.current
        if target is not None:
            target["lqpns"].extend(lqpns)
        for name, value in counters:
            if target is not None:
                self._sample(target["counter_device"], port, name, value)
                target["snapshot"] = self._index()
            else:
                self._sample(device, port, name, value)

    def _counter_set(self, device: str, port: int | None, attrs: dict[str, str]) -> dict[str, Any]:
        pid = int(attrs["pid"]) if attrs.get("pid", "").isdigit() else None
        comm = clean_comm(attrs.get("comm"))
        entry = {
            "host": self.host, "device": device, "port": port, "cntn": int(attrs["cntn"]),
            "qp_type": attrs.get("qp-type"), "pid": pid, "comm": comm, "lqpns": [],
            "counter_device": counter_device(device, int(attrs["cntn"]), comm, pid),
            "snapshot": None,  # the reading its first counter lands in
        }  # fmt: skip
        self.sets.append(entry)
        return entry

    # --- JSON ---------------------------------------------------------------------------

    def _json_done(self) -> None:
        self.side += 1
        block, self.json = self.json, None
        assert block is not None
        try:
            objects = block.objects()
        except ValueError:  # JSONDecodeError is a ValueError
            # Not JSON after all (a lone "[" line in a text dump): read its lines as text.
            if any('"ifname"' in line for line in block.lines):
                self.json_errors += 1
            self._replay(block.lines)
            return
        for obj in objects:
            self._json_object(obj)
        self.parts["json"] = None

    def _replay(self, lines: list[str]) -> None:
        if not lines:
            return
        self.replaying = True
        self.feed(lines[0])  # the line that looked like a JSON start is read as text
        self.replaying = False
        for line in lines[1:]:
            self.feed(line)

    def _json_object(self, obj: dict[str, Any]) -> None:
        device = json_text(obj.get("ifname")) or json_text(obj.get("dev"))
        if not device:
            return
        port = json_int(obj.get("port"))
        if "cntn" in obj and json_int(obj["cntn"]) is not None:
            attrs = {k: str(v) for k, v in obj.items() if isinstance(v, str | int)}
            entry = self._counter_set(device, port, attrs)
            entry["lqpns"].extend(json_lqpns(obj.get("lqpn")))
            skip = _JSON_SKIP | {"cntn", "pid", "lqpn", "pdn"}
            for name, value in json_counters(obj, skip):
                self._sample(entry["counter_device"], port, name, value)
                entry["snapshot"] = self._index()
        elif "lqpn" in obj:
            attrs = {k: str(v) for k, v in obj.items() if isinstance(v, str | int)}
            info = qp_info(self.host, device, port, attrs)
            if info is not None:
                self.qps.append(info)
        elif "physical_state" in obj and port is not None:
            entry_port = self.ports.setdefault((device, port), {})
            entry_port["state"] = json_text(obj.get("state")) or ""
            entry_port["phys_state"] = json_text(obj.get("physical_state")) or ""
        else:
            for name, value in json_counters(obj, _JSON_SKIP):
                self._sample(device, port, name, value)

    def finish(self) -> None:
        if self.json is not None:  # brackets never closed: try what there is
            self._json_done()

    def _path_value(self, path: str, value: str) -> bool:
        """One sysfs file's value: a counter, a port attribute or a device attribute."""
        if m := _PATH_COUNTER.search(path):
            if not value.lstrip("-").isdigit():
                return False
            self._sample(m["dev"], int(m["port"]), m["name"], int(value))
            self.parts["sysfs_counters"] = None
            return True
        if m := _PATH_PORT_ATTR.search(path):
            self.side += 1
            self.ports.setdefault((m["dev"], int(m["port"])), {})[m["attr"]] = value
            self.parts["sysfs_port_attributes"] = None
            return True
        m = _PATH_DEV_ATTR.search(path)
        if m and ("infiniband/" in path or _NAME_HINT.fullmatch(m["dev"])):
            self.side += 1
            self.hcas.setdefault(m["dev"], {})[m["attr"]] = value
            self.parts["sysfs_device_attributes"] = None
            return True
        return False

    def _head_header(self, line: str) -> bool:
        m = _HEAD_HEADER.match(line) or _TTAR_PATH.match(line)
        if m is not None and m.re is _TTAR_PATH:
            self.ttar = True
        if not m:
            return bool(_TTAR_META.match(line))  # ttar's bookkeeping lines around each file
        self.head_path = m["path"]
        self.side += 1
        return True

    def _head_value(self, line: str) -> None:
        assert self.head_path is not None
        if _TTAR_META.match(line):
            return  # "Lines: 1" between ttar's "Path:" and the value
        path, self.head_path = self.head_path, None
        value = line.strip()
        if self.ttar and value.endswith("EOF"):
            value = value[: -len("EOF")]  # ttar marks a file without a final newline so
        if not value or not self._path_value(path, value):
            self.feed(line)  # not a value of a file we read: the line is read on its own

    def _bare(self, line: str) -> bool:
        m = _BARE.match(line)
        if not m:
            return False
        self._sample(self.bare_device, self.bare_port, m["name"], int(m["value"]))
        self.parts["bare_counters"] = None
        return True

    def _text(self, line: str) -> None:
        if m := _SHOW_COUNTERS.search(line):
            # mlnx-tools "show_counters mlx5_bond_0" (after a prompt or a "# " comment):
            # the bare list that follows is this device's
            self.bare_device, self.bare_port = m["dev"], None
        elif m := _PORT_TITLE.match(line):
            self.bare_port = int(m["port"])  # "Port 1 hw counters:" heads the list
        shell = prompt(line)
        if shell is not None:
            if shell[0]:
                self.host = shell[0]
            self._new_snapshot(label=None)
            return
        stripped = line.strip().strip("`").strip()
        if not stripped:
            return
        stamp = find_timestamp(stripped)
        if stamp and len(stripped) < 60:
            self.time = stamp[0]
            self._new_snapshot(label=None)
        elif len(stripped) <= 80 and not set(stripped) <= set("-=#*~ "):
            self._new_snapshot(label=stripped.rstrip(":"))

    def _new_snapshot(self, label: str | None) -> None:
        """The next counter starts a new snapshot (a command, a date or a label came first)."""
        self.label = label
        self.force_new = True

    def _sample(self, device: str | None, port: int | None, name: str, value: int) -> None:
        key = (device, port, name)
        forced = self.last is None or self.force_new
        if forced or key in self.seen:
            self._open()
            if self.recording is not None:
                self.recording.opened(forced, self.last, self.at)
        if self.recording is not None:
            self.recording.samples.append((device, port, name, value))
        self.seen.add(key)
        snapshot = self._current()
        snapshot["counters"] += 1
        snapshot["devices"].add(device)
        if self.buffer.full():
            self.buffer.dropped += 1
            return
        unit = counter_unit(name)
        self.buffer.add(
            CounterSample(self.host, device, port, name, value, unit, self.time, snapshot["index"])
        )

    def _open(self) -> None:
        self.seen = set()
        self.force_new = False
        self.last = {
            "index": len(self.snapshots) + self.unlisted,
            "host": self.host,
            "label": self.label,
            "time": self.time,
            "counters": 0,
            "devices": set(),
        }
        if len(self.snapshots) < MAX_SNAPSHOTS:
            self.snapshots.append(self.last)
        else:
            self.unlisted += 1  # read and counted, not listed: memory stays bounded
        self.label = None

    def _current(self) -> dict[str, Any]:
        assert self.last is not None  # called after a sample opened one
        return self.last

    def _index(self) -> int:
        return int(self._current()["index"])

    def result(self, warnings: list[str]) -> RdmaCountersResult:
        warnings = warnings + self.buffer.warnings()
        if self.unlisted:
            warnings.append(f"{self.unlisted} snapshot(s) beyond {MAX_SNAPSHOTS} were not listed")
        if self.json_errors:
            warnings.append(f"{self.json_errors} JSON block(s) could not be read (not valid JSON)")
        if any(s.device is None for s in self.buffer.rows):
            warnings.append("some counters do not name their device (bare name:value lines)")
        snapshots = []
        for s in self.snapshots:
            if not s["counters"]:
                continue
            devices = {d for d in s["devices"] if d}
            device = devices.pop() if len(devices) == 1 else None
            snapshots.append(
                Snapshot(s["index"], s["host"], device, s["label"], s["time"], s["counters"])
            )
        return RdmaCountersResult(
            snapshots=tuple(snapshots),
            samples=tuple(self.buffer.rows),
            hcas=tuple(self._hca(device, attrs) for device, attrs in sorted(self.hcas.items())),
            ports=tuple(
                self._port(device, port, attrs)
                for (device, port), attrs in sorted(self.ports.items())
            ),
            qp_counters=tuple(self._qp_set(entry) for entry in self.sets),
            qps=tuple(self.qps),
            parts=tuple(self.parts),
            warnings=tuple(warnings),
        )

    def _qp_set(self, entry: dict[str, Any]) -> QpCounterSet:
        snapshot = entry["snapshot"]
        if snapshot is None:  # a set listed without counters
            snapshot = self.last["index"] if self.last else 0
        return QpCounterSet(
            host=entry["host"],
            device=entry["device"],
            port=entry["port"],
            cntn=entry["cntn"],
            qp_type=entry["qp_type"],
            pid=entry["pid"],
            comm=entry["comm"],
            lqpns=tuple(dict.fromkeys(entry["lqpns"])),
            counter_device=entry["counter_device"],
            snapshot=snapshot,
        )

    def _hca(self, device: str, attrs: dict[str, str]) -> HcaInfo:
        return HcaInfo(
            host=self.host,
            device=device,
            hca_type=attrs.get("hca_type"),
            firmware=attrs.get("fw_ver"),
            hardware_version=attrs.get("hw_rev"),
            board_id=attrs.get("board_id"),
            node_guid=normalise_guid(attrs.get("node_guid")),
            system_image_guid=normalise_guid(attrs.get("sys_image_guid")),
            transport=attrs.get("node_type"),
            ports=None,
        )

    def _port(self, device: str, port: int, attrs: dict[str, str]) -> LinkPort:
        phys = attrs.get("phys_state")
        if phys and phys.isupper():  # rdma link show: LINK_UP, DISABLED
            phys = "".join(part.capitalize() for part in phys.split("_"))
        return LinkPort(
            host=self.host,
            device=device,
            port=port,
            state=normalise_state(attrs.get("state")),
            phys_state=normalise_phys_state(phys),
            rate_gbps=rate_gbps(attrs.get("rate")),
            rate=attrs.get("rate"),
            link_layer=attrs.get("link_layer"),
            base_lid=attrs.get("lid"),
            sm_lid=attrs.get("sm_lid"),
            lmc=attrs.get("lid_mask_count"),
            capability_mask=attrs.get("cap_mask"),
        )


_MAX_UNIT_LINES = 10_000


class _Recording:
    """What the lines read one by one since ``start`` did: their samples and snapshots."""

    def __init__(self, start: int, line: bytes, before: tuple[Any, ...], side: int) -> None:
        self.start = start
        self.first = line
        self.open_at: int | None = None
        self.before = before
        self.side = side
        self.samples: list[tuple[str | None, int | None, str, int]] = []
        self.first_forced = False  # the first sample opened a snapshot whatever was seen
        self.opens: list[tuple[int, dict[str, Any]]] = []  # (sample index, snapshot)

    def opened(self, forced: bool, snapshot: dict[str, Any] | None, at: int) -> None:
        if not self.samples:
            self.first_forced = forced
        elif not self.opens:
            self.open_at = at  # where a run that begins with a new snapshot would begin
        assert snapshot is not None
        self.opens.append((len(self.samples), snapshot))


class _Group:
    """The samples of one snapshot a unit opens."""

    def __init__(
        self,
        snapshot: dict[str, Any],
        samples: list[tuple[str | None, int | None, str, int]],
    ) -> None:
        self.snapshot = {k: snapshot[k] for k in ("host", "label", "time")}
        self.snapshot["counters"] = len(samples)
        self.devices = frozenset(snapshot["devices"])
        self.devices_of = [s[0] for s in samples]
        self.ports = [s[1] for s in samples]
        self.names = [s[2] for s in samples]
        self.units = [counter_unit(s[2]) for s in samples]
        self.one_device = len(set(zip(self.devices_of, self.ports, strict=True))) == 1

    def rows(self, index: int, values: list[int]) -> list[CounterSample]:
        """The rows of the first ``len(values)`` samples, in the snapshot ``index``."""
        host, time, room = self.snapshot["host"], self.snapshot["time"], len(values)
        if self.one_device:
            device, port = self.devices_of[0], self.ports[0]
            units = self.units[:room]
            return samples_of(host, device, port, self.names[:room], values, units, time, index)
        return [
            CounterSample(host, device, port, name, value, unit, time, index)
            for device, port, name, value, unit in zip(
                self.devices_of, self.ports, self.names, values, self.units, strict=False
            )
        ]


class _Unit:
    """Lines read one by one, what they did, and where in them each sample's value is."""

    def __init__(
        self,
        lines: list[bytes],
        tokens: list[list[bytes]],
        value_at: list[int],
        values: list[int],
        groups: list[_Group],
        before: tuple[Any, ...],
        after: tuple[Any, ...],
        seen: set[Any],
        first_forced: bool,
        first_key: tuple[str | None, int | None, str],
    ) -> None:
        self.lines = lines
        self.tokens = tokens
        self.stripped = [line.translate(None, _DIGITS) for line in lines]
        self.value_at = value_at  # index in values of each line's first number
        self.values = values
        self.groups = groups
        self.before = before
        self.after = after
        self.seen = frozenset(seen)
        # Its first sample opens a snapshot whatever was read before (a command, a date) or
        # because its name was seen in the open snapshot: the one check on what came before.
        self.first_forced = first_forced
        self.first_key = first_key
        self.follows_itself = before == after and (first_forced or first_key in self.seen)

    @classmethod
    def of(
        cls,
        lines: list[bytes],
        recording: _Recording,
        after: tuple[Any, ...],
        seen: set[Any],
    ) -> _Unit | None:
        tokens = [line.split() for line in lines]
        value_at, numbers = [], []
        for words in tokens:
            value_at.append(len(numbers))
            numbers += [int(w) for w in words if w.isdigit()]
        values = [sample[3] for sample in recording.samples]
        if numbers != values:  # every value is a number of the text, in order, and no more
            return None
        bounds = [at for at, _ in recording.opens] + [len(values)]
        groups = [
            _Group(snapshot, recording.samples[at:end])
            for (at, snapshot), end in zip(recording.opens, bounds[1:], strict=True)
        ]
        first = recording.samples[0][:3]
        return cls(
            lines, tokens, value_at, values, groups, recording.before, after, seen,
            recording.first_forced, first,
        )  # fmt: skip

    def holds(self, index: int, line: bytes) -> bool:
        return line == self.lines[index] or self.numbers(index, line) is not None

    def numbers(self, index: int, line: bytes) -> list[int] | None:
        """The numbers of ``line`` where it is the unit's line ``index`` with other digits in
        its numbers (and nowhere else), else None."""
        if line.translate(None, _DIGITS) != self.stripped[index]:
            return None
        words, expected = line.split(), self.tokens[index]
        if len(words) != len(expected):
            return None
        out = []
        for word, was in zip(words, expected, strict=True):
            if was.isdigit():
                if not word.isdigit():
                    return None
                out.append(int(word))
            elif word != was:
                return None
        return out


_DIGITS = b"0123456789"
