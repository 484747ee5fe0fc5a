"""The collective calls and algorithm choices NCCL logs at INFO (``AllReduce: opCount ...``,
``... Bytes -> Algo 1 proto 2``) and its tuning model table.

Calls and choices are most of the INFO lines of a big log, so each has a bulk reading
(``_bulk_calls``, ``_bulk_algos``) that the block reading uses, equal to reading the
messages one by one.
"""

from __future__ import annotations

import re
from collections import Counter

from artifacts.fabric.parsers.nccl_debug.model import TuningEntry
from artifacts.fabric.parsers.nccl_debug.store import Segment, Store

_ALGO = re.compile(
    r"^(?:(?P<coll>\w+): )?(?P<bytes>\d+) Bytes -> Algo (?P<algo>\w+) proto (?P<proto>\w+)"
    r"(?: channel\{Lo\.\.Hi\}=\{(?P<lo>\d+)\.\.(?P<hi>\d+)\})?"
)
# Possessive (``++``): what follows each run (":", a space, the end) is what the run cannot
# take, so giving characters back never leads to a match; not trying spares the bulk
# reading of the collective calls a tenth of its time (issue 27).
_COLL = re.compile(
    r"^(?P<coll>\w++): opCount \w++ sendbuff \S++ recvbuff \S++ count (?P<count>\d++) "
    r"datatype (?P<dt>\d++)"
)
# The same pattern run over many messages joined by newlines (none of its parts can match a
# newline, so each match is one message's ``_COLL.match``).
# The rest of each line is taken too, so that the search does not step through it.
_COLL_LINES = re.compile(_COLL.pattern + r"[^\n]*+", re.MULTILINE)

_ALGO_NAMES = {
    "0": "TREE",
    "1": "RING",
    "2": "COLLNET_DIRECT",
    "3": "COLLNET_CHAIN",
    "4": "NVLS",
    "5": "NVLS_TREE",
    "6": "PAT",
}
_PROTO_NAMES = {"0": "LL", "1": "LL128", "2": "SIMPLE"}
_DATATYPES = {
    "0": "int8",
    "1": "uint8",
    "2": "int32",
    "3": "uint32",
    "4": "int64",
    "5": "uint64",
    "6": "float16",
    "7": "float32",
    "8": "float64",
    "9": "bfloat16",
    "10": "float8e4m3",
    "11": "float8e5m2",
}
_TABLE_ALGOS = {
    "Tree": "TREE",
    "Ring": "RING",
    "CollNetDirect": "COLLNET_DIRECT",
    "CollNetChain": "COLLNET_CHAIN",
    "NVLS": "NVLS",
    "NVLSTree": "NVLS_TREE",
    "PAT": "PAT",
}
_TUNING_COLLECTIVES = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"}


class CollectiveReader(Store):
    """Collective calls, algorithm choices and the tuning table, by count and size range."""

    def _algo_choice(self, msg: str) -> None:
        m = _ALGO.match(msg)
        if m:
            self._add_algo(m["coll"], m["algo"], m["proto"], m["bytes"], m["lo"], m["hi"], 1)

    def _add_algo(
        self,
        coll: str | None,
        algo_code: str,
        proto_code: str,
        size: str,
        lo: str | None,
        hi: str | None,
        times: int,
    ) -> None:
        """``times`` lines choosing ``algo_code``/``proto_code`` for ``size`` bytes."""
        algo = _ALGO_NAMES.get(algo_code, algo_code.upper())
        proto = _PROTO_NAMES.get(proto_code, proto_code.upper())
        nbytes = int(size)
        channels = int(hi) - int(lo) + 1 if lo is not None and hi is not None else None
        entry = self.algos.setdefault((coll, algo, proto), [0, nbytes, nbytes, -1])
        entry[0] += times
        entry[1] = min(entry[1], nbytes)
        entry[2] = max(entry[2], nbytes)
        if channels is not None:
            entry[3] = max(entry[3], channels)

    def _collective_call(self, msg: str) -> None:
        m = _COLL.match(msg)
        if m:
            self._add_calls(m["coll"], m["dt"], m["count"], 1)

    def _add_calls(self, coll: str, datatype: str, count_text: str, times: int) -> None:
        """``times`` calls of ``coll`` on ``count_text`` elements of ``datatype``."""
        count = int(count_text)
        entry = self.colls.setdefault((coll, _DATATYPES.get(datatype, datatype)), [0, count, count])
        entry[0] += times
        entry[1] = min(entry[1], count)
        entry[2] = max(entry[2], count)

    def _bulk_calls(self, msgs: list[str]) -> None:
        """``_collective_call`` for each message (stripped, one line each) at once: the
        pattern runs over them joined, and equal matches are added together."""
        if msgs:
            found = _COLL_LINES.findall("\n".join(msgs))
            for (coll, count, datatype), times in Counter(found).items():
                self._add_calls(coll, datatype, count, times)

    def _bulk_algos(self, msgs: list[str]) -> None:
        """``_algo_choice`` for each message at once: a log repeats the same few choices
        (one per size and collective), so each distinct message is matched once and its
        choice added as many times as it was printed."""
        for msg, times in Counter(msgs).items():
            if m := _ALGO.match(msg):
                self._add_algo(
                    m["coll"], m["algo"], m["proto"], m["bytes"], m["lo"], m["hi"], times
                )

    def _tuning_row(self, seg: Segment, raw: str) -> None:
        cells = [c.strip() for c in raw.split("|")]
        if len(cells) < 2:
            return
        thread = (seg.host, seg.pid, seg.tid)
        label = cells[0]
        if label == "Algorithm":
            if self.tuning_source is None:
                self.tuning_source = thread
            algos = [_TABLE_ALGOS.get(c, c.upper()) for c in cells[1:] if c]
            self.tuning_columns[thread] = (algos, [])
        elif label == "Protocol" and thread in self.tuning_columns:
            self.tuning_columns[thread][1][:] = [c.upper() for c in cells[1:] if c]
        elif label in _TUNING_COLLECTIVES and thread == self.tuning_source:
            algos, protos = self.tuning_columns.get(thread, ([], []))
            values = [c for c in cells[1:] if c]
            for i, value in enumerate(values[: len(algos) * 3]):
                if i >= len(protos) or "/" not in value:
                    break
                lat, _, bw = value.partition("/")
                try:
                    entry = TuningEntry(
                        seg.host, label, algos[i // 3], protos[i], float(lat), float(bw)
                    )
                except ValueError:
                    continue
                self.tuning.setdefault((label, entry.algorithm, entry.protocol), entry)
