"""Per-QP pieces of iproute2 ``rdma`` output, for rdma_counters.py. Pure, no Django.

- ``rdma statistic qp show`` (and ``rdma statistic show link X/1`` with QP-mode counters
  bound): one counter set per line, ``link mlx5_2/1 cntn 4 qp-type RC pid 9829 comm
  ib_send_bw rx_write_requests 0 ... out_of_sequence 0 ...``, wrapped, followed by the QPs
  bound to it (``LQPN: <258,259>``; some builds print ``lqpn 258`` inline).
- ``rdma resource show qp``: ``link mlx5_0/1 lqpn 261 type RC state RTS rqpn 262 rq-psn 7
  sq-psn 9 path-mig-state MIGRATED pdn 3 pid 419 comm ib_write_bw`` (kernel owners print
  ``comm [ib_core]``; a QP not bound to a port yet prints ``link mlx5_0/-``).
- the ``-j`` JSON of the same commands: arrays of objects keyed ``ifname``, ``port``,
  ``cntn``, ``qp-type``, ``pid``, ``comm``, ``lqpn``..., counters as numeric members.

A QP counter set keeps its counters as ordinary counter rows whose device names the set
(``mlx5_2 cntn 4 (ib_send_bw pid 9829)``), so snapshots pair per set into rates and the
transport-retry rules (out_of_sequence, packet_seq_err, local_ack_timeout_err...) name the
process whose QPs retransmit.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

# Words of a counter line that describe the counter set, not counters.
COUNTER_SET_WORDS = frozenset({"cntn", "qp-type", "pid", "comm", "lqpn", "ifindex", "pdn"})
# Words of an `rdma resource show qp` line (all of them are QP attributes, none a counter).
RESOURCE_WORDS = frozenset(
    {"lqpn", "rqpn", "type", "subtype", "state", "sq-psn", "rq-psn", "path-mig-state", "pdn",
     "pid", "comm", "srqn", "ctxn", "ifindex"}
)  # fmt: skip
_TEXT_VALUED = frozenset({"comm", "qp-type", "type", "subtype", "state", "path-mig-state"})
_INT = re.compile(r"^-?\d+$")
_LQPN_LIST = re.compile(r"LQPN:?\s*<(?P<list>[\d,\s-]*)>", re.IGNORECASE)
# JSON strings never span lines; removing them leaves the brackets that nest.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
MAX_JSON_CHARS = 16 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class QpCounterSet:
    """One QP-mode counter (``cntn``) and the QPs bound to it."""

    host: str | None
    device: str  # the HCA (mlx5_2)
    port: int | None
    cntn: int
    qp_type: str | None
    pid: int | None
    comm: str | None
    lqpns: tuple[int, ...]
    counter_device: str  # the device name its counter rows carry
    snapshot: int = 0


@dataclasses.dataclass(frozen=True)
class QpInfo:
    """One QP of ``rdma resource show qp``."""

    host: str | None
    device: str
    port: int | None
    lqpn: int
    rqpn: int | None
    qp_type: str | None
    state: str | None
    sq_psn: int | None
    rq_psn: int | None
    path_mig_state: str | None
    pid: int | None
    comm: str | None


def counter_device(device: str, cntn: int, comm: str | None, pid: int | None) -> str:
    """The device name of a counter set's rows: the HCA, the counter number and its owner.

    The pid is part of it so that a restarted job (same cntn, new process) does not pair
    with the counters of the one before it.
    """
    owner = " ".join(p for p in (comm, f"pid {pid}" if pid is not None else None) if p)
    return f"{device} cntn {cntn}" + (f" ({owner})" if owner else "")


def clean_comm(value: str | None) -> str | None:
    """``[ib_core]`` (kernel-owned, as the text form prints it) -> ``ib_core``."""
    if not value:
        return None
    return value[1:-1] if value.startswith("[") and value.endswith("]") else value


def split_words(text: str) -> tuple[dict[str, str], list[tuple[str, int]], list[int]]:
    """(attributes, counters, lqpns) of the words after ``link dev/port``.

    ``name number`` pairs are counters unless ``name`` describes the set or the QP;
    ``comm``/``type``/``state``... take the word after them; ``LQPN: <1,2>`` and
    ``lqpn 7`` list bound QPs.
    """
    attributes: dict[str, str] = {}
    counters: list[tuple[str, int]] = []
    lqpns = [int(n) for n in _lqpn_list(text)]
    words = _LQPN_LIST.sub(" ", text).split()
    i = 0
    while i < len(words):
        word = words[i]
        value = words[i + 1] if i + 1 < len(words) else None
        lowered = word.rstrip(":").lower()
        if value is None:
            break
        if lowered == "lqpn" and _INT.match(value):
            lqpns.append(int(value))
            attributes.setdefault("lqpn", value)
        elif lowered in _TEXT_VALUED or lowered in COUNTER_SET_WORDS | RESOURCE_WORDS:
            attributes[lowered] = value
        elif _INT.match(value) and word[:1].isalpha():
            counters.append((word, int(value)))
        else:
            i += 1  # a lone word (a flag, garbage): step over it alone
            continue
        i += 2
    return attributes, counters, lqpns


def _lqpn_list(text: str) -> list[str]:
    out: list[str] = []
    for m in _LQPN_LIST.finditer(text):
        for item in m["list"].replace(" ", "").split(","):
            if "-" in item:  # a range "258-260"
                lo, _, hi = item.partition("-")
                if lo.isdigit() and hi.isdigit() and int(hi) - int(lo) < 4096:
                    out.extend(str(n) for n in range(int(lo), int(hi) + 1))
            elif item.isdigit():
                out.append(item)
    return out


def lqpn_continuation(line: str) -> list[int] | None:
    """The QPs of a ``LQPN: <258,259>`` line that follows a counter set, else None."""
    stripped = line.strip()
    m = _LQPN_LIST.fullmatch(stripped)
    return [int(n) for n in _lqpn_list(stripped)] if m else None


def is_resource_line(attributes: dict[str, str], counters: list[tuple[str, int]]) -> bool:
    """An ``rdma resource show qp`` line: a QP number with its type/state, no counters
    beyond the PSNs (which are positions in the packet sequence, not counts)."""
    if "lqpn" not in attributes or "cntn" in attributes:
        return False
    return ("type" in attributes or "state" in attributes) and not counters


def qp_info(
    host: str | None, device: str, port: int | None, attributes: dict[str, str]
) -> QpInfo | None:
    def number(key: str) -> int | None:
        value = attributes.get(key)
        return int(value) if value is not None and _INT.match(value) else None

    lqpn = number("lqpn")
    if lqpn is None:
        return None
    return QpInfo(
        host=host,
        device=device,
        port=port,
        lqpn=lqpn,
        rqpn=number("rqpn"),
        qp_type=attributes.get("type"),
        state=attributes.get("state"),
        sq_psn=number("sq-psn"),
        rq_psn=number("rq-psn"),
        path_mig_state=attributes.get("path-mig-state"),
        pid=number("pid"),
        comm=clean_comm(attributes.get("comm")),
    )


# --- JSON (-j / -j -p) ----------------------------------------------------------------------


class JsonBlock:
    """Collects the lines of one JSON document (compact or pretty-printed) until its
    brackets close; bounded, so a file that never closes its brackets cannot grow it."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0
        self.chars = 0
        self.overflow = False

    def add(self, line: str) -> bool:
        """Add a line; True once the document is complete."""
        self.chars += len(line) + 1
        if self.chars > MAX_JSON_CHARS:
            self.overflow = True
        else:
            self.lines.append(line)
        bare = _JSON_STRING.sub("", line)
        self.depth += bare.count("[") + bare.count("{") - bare.count("]") - bare.count("}")
        return self.depth <= 0

    def objects(self) -> list[dict[str, Any]]:
        """The objects of the document (nested one level deep at most), or ValueError."""
        if self.overflow:
            raise ValueError(f"JSON document longer than {MAX_JSON_CHARS} characters")
        document = json.loads("\n".join(self.lines))
        items = document if isinstance(document, list) else [document]
        out: list[dict[str, Any]] = []
        for item in items:
            if isinstance(item, dict):
                out.append(item)
            elif isinstance(item, list):  # an array of arrays (several commands' output)
                out.extend(x for x in item if isinstance(x, dict))
        return out


def json_counters(obj: dict[str, Any], skip: frozenset[str]) -> list[tuple[str, int]]:
    """Integer members of an object (and of a nested counters object) that are counters."""
    out: list[tuple[str, int]] = []
    for key, value in obj.items():
        if key in skip or not isinstance(key, str) or not key[:1].isalpha():
            continue
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            out.append((key, value))
        elif isinstance(value, dict) and key in ("counters", "hwcounters", "stats"):
            out.extend(json_counters(value, skip))
    return out


def json_lqpns(value: Any) -> list[int]:
    """``lqpn`` of a JSON counter set: a list of numbers (or objects with ``lqpn``)."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, dict):
            item = item.get("lqpn")
        if isinstance(item, int) and not isinstance(item, bool):
            out.append(item)
    return out


def json_text(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


def json_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT.match(value):
        return int(value)
    return None
