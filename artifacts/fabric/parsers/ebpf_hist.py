"""Histograms printed by eBPF tools: bpftrace ``hist()``/``lhist()`` maps and BCC's
``log2`` tables (runqlat, biolatency, funclatency, hardirqs -d, xfsdist, bitesize...).

bpftrace::

    @usecs:                      @us[xfs_file_read_iter]:
    [0]          1 |@     |      [0, 200)     1401 |@@@@@@|
    [2, 4)      16 |@@@   |      [1000, ...)    32 |@     |
    [4K, 8K)     5 |@     |

BCC::

    Bucket disk = 'xvdb'          (or ``pid = 123``, ``flags = Read``, ``hardirq = eth0``)
         usecs               : count     distribution
             0 -> 1          : 0        |                    |
           128 -> 255        : 12       |********            |
    avg = 13746 nsecs, total: 6543360 nsecs, count: 476

Also BCC's ``-j`` output, which is a Python dict literal per line (``{'ts': ..., 'val_type':
'usecs', 'data': [{'interval-start': 0, 'interval-end': 1, 'count': 0}, ...]}``), and
bpftrace ``@stat[...]: count N, average A, total T`` lines. Interval timestamps (``06:20:16``
alone on a line, BCC ``-T``) label the histograms that follow. Prose around the output (the
tools' example files) is skipped. A file without any histogram is refused.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import LineReader, head_text

KIND = "ebpf_hist"
VERSION = 1

MAX_HISTOGRAMS = 10_000
MAX_BUCKETS = 1_000

_MAP = re.compile(r"^@(?P<name>\w*)(?:\[(?P<key>.*)\])?:\s*$")
_BPF_BUCKET = re.compile(
    r"^\[(?P<lo>-?\d+(?:\.\d+)?[KMGTP]?)(?:,\s*(?P<hi>-?\d+(?:\.\d+)?[KMGTP]?|\.\.\.))?[)\]]"
    r"\s+(?P<count>\d+)\s+\|[@ ]*\|?\s*$"
)
_BCC_HEADER = re.compile(r"^\s*(?P<unit>[\w/\-]+)\s*:\s*count\s+distribution\s*$")
_BCC_BUCKET = re.compile(
    # the bar ends in "+" when the count is cut to the bar's width
    r"^\s*(?P<lo>\d+)\s*->\s*(?P<hi>\d+)\s*:\s*(?P<count>\d+)\s*\|[* ]*\+?\|?\s*$"
)
_BCC_LABEL = re.compile(r"^\s*(?:Bucket\s+)?(?P<key>[\w\-]+) = (?P<value>.+?)\s*$")
_BCC_SUMMARY = re.compile(
    r"^\s*avg = (?P<avg>\d+(?:\.\d+)?) (?P<unit>\w+), total: (?P<total>\d+) \w+, "
    r"count: (?P<count>\d+)\s*$"
)
_BPF_STAT = re.compile(
    r"^@(?P<name>\w*)(?:\[(?P<key>.*)\])?: count (?P<count>\d+), average (?P<avg>-?\d+),"
    r" total (?P<total>-?\d+)\s*$"
)
# "06:20:16" (BCC -T), also "00:40:20:" as the bpfcc-tools builds of Ubuntu print it
_CLOCK = re.compile(r"^\s*(?P<t>\d{2}:\d{2}:\d{2}):?\s*$")
# A bpftrace map holding one number ("@avg_lat: 396", "@bytes[comm]: 4096")
_BPF_SCALAR = re.compile(r"^@(?P<name>\w*)(?:\[(?P<key>.*)\])?:\s*(?P<value>-?\d+(?:\.\d+)?)\s*$")
_PART_OF_TOOL = {"bpftrace": "bpftrace histograms", "bcc": "bcc tables", "bcc-json": "bcc json"}
_SUFFIX = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}
# bpftrace map names that say their unit
_NAME_UNITS = {"usecs": "usecs", "us": "usecs", "ns": "nsecs", "nsecs": "nsecs",
               "ms": "msecs", "msecs": "msecs", "bytes": "bytes", "usec": "usecs",
               "nsec": "nsecs", "msec": "msecs"}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Bucket:
    lo: float
    hi: float | None  # None: the open-ended overflow bucket ("[1000, ...)")
    count: int


@dataclasses.dataclass(frozen=True)
class Histogram:
    tool: str  # bpftrace | bcc | bcc-json
    name: str  # map name (bpftrace) or unit label (bcc)
    key: str | None  # map key, or the BCC section label ("disk=xvdb")
    unit: str | None
    interval: str | None  # the time label printed before it (HH:MM:SS or a date)
    line: int
    buckets: tuple[Bucket, ...]
    total: int
    p50: float | None  # upper bound of the bucket holding the percentile
    p90: float | None
    p99: float | None
    max_bucket_hi: float | None
    summary: dict[str, float]  # avg/total/count lines that follow (BCC -e, funclatency)


@dataclasses.dataclass(frozen=True)
class Stat:
    name: str
    key: str | None
    count: int
    average: int
    total: int


@dataclasses.dataclass(frozen=True)
class MapValue:
    """A bpftrace map holding a single number (``@avg_lat: 396``)."""

    name: str
    key: str | None
    value: float


@dataclasses.dataclass(frozen=True)
class EbpfHistResult(ParseResult):
    kind: ClassVar[str] = "ebpf_hist"

    histograms: tuple[Histogram, ...] = ()
    stats: tuple[Stat, ...] = ()
    values: tuple[MapValue, ...] = ()
    # The kinds of output that were read, in the order first seen: "bpftrace histograms",
    # "bcc tables", "bcc json", "bpftrace stats", "bpftrace values", "intervals".
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "histograms": len(self.histograms),
            "names": sorted({h.name for h in self.histograms}),
            "stats": len(self.stats),
            "events": sum(h.total for h in self.histograms),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    # Necessary conditions, checked on the whole head before counting lines: both kinds of
    # bucket line end in a "|...|" bar, bpftrace maps start "@", BCC has "distribution"
    # headers and "lo -> hi" buckets.
    if "|" not in text or ("@" not in text and ("distribution" not in text or "->" not in text)):
        return False
    lines = text.splitlines()[:5000]
    bpf = sum(1 for line in lines if _BPF_BUCKET.match(line.strip()))
    bcc = sum(1 for line in lines if _BCC_BUCKET.match(line))
    maps = sum(1 for line in lines if _MAP.match(line.strip()))
    headers = sum(1 for line in lines if _BCC_HEADER.match(line))
    return (bpf >= 2 and maps >= 1) or (bcc >= 2 and headers >= 1)


def parse(stream: BinaryIO) -> EbpfHistResult:
    reader = LineReader(stream)
    state = _State()
    for line in reader:
        state.feed(line, reader.line_no)
    state.flush()
    if not state.histograms:
        raise ParseError(
            "no bpftrace/BCC histogram found (bpftrace '@name:' maps with '[lo, hi) count |@@|'"
            " buckets, or BCC 'usecs : count distribution' tables)"
        )
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.histograms: list[Histogram] = []
        self.stats: list[Stat] = []
        self.open: dict[str, Any] | None = None
        self.pending_map: tuple[str, str | None, int] | None = None
        self.label: str | None = None  # BCC section label for the next table
        self.interval: str | None = None
        self.dropped = 0
        self.values: list[MapValue] = []
        self.parts: dict[str, None] = {}
        self.foreign = 0  # other programs' lines passed over inside a table
        self.pending_foreign = 0  # ... after the last bucket: inside only if buckets follow

    def feed(self, raw: str, line_no: int) -> None:
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            if self.open and self.open["tool"] == "bcc":
                self.flush()
            return
        if m := _BPF_BUCKET.match(stripped):
            self._bucket("bpftrace", m, line_no)
            return
        if m := _BCC_BUCKET.match(line):
            self._bcc_bucket(m, line_no)
            return
        if m := _BCC_SUMMARY.match(line):
            self._summary(m)
            return
        if self.open is not None and not self._ours(stripped, line):
            # Another program's line inside a table (an interleaved log): passed over, the
            # table goes on when its buckets do (a bucket below the last one starts anew).
            self.pending_foreign += 1
            return
        self.flush()
        if m := _BPF_STAT.match(stripped):
            self.stats.append(Stat(m["name"], m["key"], int(m["count"]), int(m["avg"]),
                                   int(m["total"])))  # fmt: skip
            self.parts["bpftrace stats"] = None
            return
        if m := _BPF_SCALAR.match(stripped):
            if len(self.values) < MAX_HISTOGRAMS:
                self.values.append(MapValue(m["name"] or "@", m["key"], float(m["value"])))
            self.parts["bpftrace values"] = None
            return
        if m := _MAP.match(stripped):
            self.pending_map = (m["name"] or "@", m["key"], line_no)
            return
        if m := _BCC_HEADER.match(line):
            self.open = self._new("bcc", m["unit"], self.label, m["unit"], line_no)
            return
        if m := _CLOCK.match(line):
            self.interval = m["t"]
            self.parts["intervals"] = None
            return
        if stripped.startswith("{'") and "'data'" in stripped:
            self._bcc_json(stripped, line_no)
            return
        if m := _BCC_LABEL.match(line):
            value = m["value"].strip().strip("'\"")
            if value.startswith("b'"):
                value = value[2:].strip("'")
            self.label = f"{m['key']}={value}"
            return
        self.pending_map = None  # prose between a map name and its buckets

    @staticmethod
    def _ours(stripped: str, line: str) -> bool:
        """A line of the tools' own output that ends an open table."""
        return bool(
            _BPF_STAT.match(stripped)
            or _BPF_SCALAR.match(stripped)
            or _MAP.match(stripped)
            or _BCC_HEADER.match(line)
            or _CLOCK.match(line)
            or (stripped.startswith("{'") and "'data'" in stripped)
            or _BCC_LABEL.match(line)
        )

    def _new(self, tool: str, name: str, key: str | None, unit: str | None, line: int) -> dict:
        return {"tool": tool, "name": name, "key": key, "unit": unit, "line": line,
                "buckets": [], "summary": {}, "interval": self.interval}  # fmt: skip

    def _bucket(self, tool: str, m: re.Match[str], line_no: int) -> None:
        if self.open is None or self.open["tool"] != tool:
            self.flush()
            name, key, at = self.pending_map or ("@", None, line_no)
            unit = _unit_of(name)
            self.open = self._new(tool, name, key, unit, at)
        lo = _number(m["lo"])
        hi_text = m["hi"]
        if hi_text is None:
            hi: float | None = lo + 1  # "[4]": the single value 4
        elif hi_text == "...":
            hi = None
        else:
            hi = _number(hi_text)
        self._add(Bucket(lo, hi, int(m["count"])))

    def _bcc_bucket(self, m: re.Match[str], line_no: int) -> None:
        if self.open is None or self.open["tool"] != "bcc":
            self.flush()
            self.open = self._new("bcc", "hist", self.label, None, line_no)
        self._add(Bucket(float(m["lo"]), float(m["hi"]) + 1, int(m["count"])))

    def _add(self, bucket: Bucket) -> None:
        assert self.open is not None
        self.foreign += self.pending_foreign
        self.pending_foreign = 0
        buckets = self.open["buckets"]
        if buckets and bucket.lo < buckets[-1].lo:
            # buckets only go up: a lower one is the next table, whose header was lost
            opened = self.open
            self.flush()
            self.open = self._new(
                opened["tool"], opened["name"], None, opened["unit"], opened["line"]
            )
        if len(self.open["buckets"]) < MAX_BUCKETS:
            self.open["buckets"].append(bucket)

    def _summary(self, m: re.Match[str]) -> None:
        """``avg = ..., total: ..., count: ...`` belongs to the table just printed."""
        values = {"avg": float(m["avg"]), "total": float(m["total"]), "count": float(m["count"])}
        if self.open is not None:
            self.open["summary"] = values
        elif self.histograms:
            self.histograms[-1] = dataclasses.replace(self.histograms[-1], summary=values)

    def _bcc_json(self, text: str, line_no: int) -> None:
        try:
            record = ast.literal_eval(text)  # BCC -j prints a Python dict, not JSON
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return
        if not isinstance(record, dict) or not isinstance(record.get("data"), list):
            return
        label = next(
            (f"{k}={_text(v)}" for k, v in record.items() if k not in ("ts", "val_type", "data")),
            None,
        )
        unit = _text(record.get("val_type")) or None
        hist = self._new("bcc-json", unit or "hist", label, unit, line_no)
        hist["interval"] = _text(record.get("ts")) or self.interval
        for item in record["data"][:MAX_BUCKETS]:
            if not isinstance(item, dict):
                continue
            try:
                lo = float(item["interval-start"])
                hi = float(item["interval-end"]) + 1
                count = int(item["count"])
            except (KeyError, TypeError, ValueError):
                continue
            hist["buckets"].append(Bucket(lo, hi, count))
        self.open = hist
        self.flush()

    def flush(self) -> None:
        hist, self.open = self.open, None
        self.pending_foreign = 0
        if hist is None:
            return
        self.pending_map = None
        if hist["tool"] == "bcc":
            self.label = None  # a section label names one table
        if not hist["buckets"]:
            return
        if len(self.histograms) >= MAX_HISTOGRAMS:
            self.dropped += 1
            return
        buckets = tuple(hist["buckets"])
        total = sum(b.count for b in buckets)
        self.parts[_PART_OF_TOOL[hist["tool"]]] = None
        self.histograms.append(
            Histogram(
                tool=hist["tool"],
                name=hist["name"],
                key=hist["key"],
                unit=hist["unit"],
                interval=hist["interval"],
                line=hist["line"],
                buckets=buckets,
                total=total,
                p50=_percentile(buckets, total, 0.50),
                p90=_percentile(buckets, total, 0.90),
                p99=_percentile(buckets, total, 0.99),
                max_bucket_hi=next((b.hi for b in reversed(buckets) if b.count), None),
                summary=hist["summary"],
            )
        )

    def result(self, warnings: list[str]) -> EbpfHistResult:
        if self.dropped:
            warnings.append(f"{self.dropped} histogram(s) beyond {MAX_HISTOGRAMS} were not kept")
        if self.foreign:
            warnings.append(f"{self.foreign} lines of other output inside tables were passed over")
        return EbpfHistResult(
            histograms=tuple(self.histograms),
            stats=tuple(self.stats),
            values=tuple(self.values),
            parts=tuple(self.parts),
            warnings=tuple(warnings),
        )


def _unit_of(name: str) -> str | None:
    """The unit a map's name says: "usecs", "us", or a word of it ("usec_hist", "lat_ns")."""
    lowered = name.lower()
    if lowered in _NAME_UNITS:
        return _NAME_UNITS[lowered]
    return next((_NAME_UNITS[w] for w in lowered.split("_") if w in _NAME_UNITS), None)


def _number(text: str) -> float:
    suffix = text[-1]
    if suffix in _SUFFIX:
        return float(text[:-1]) * _SUFFIX[suffix]
    return float(text)


def _percentile(buckets: tuple[Bucket, ...], total: int, q: float) -> float | None:
    """Upper bound of the bucket where the q-th event falls (the histogram's resolution)."""
    if total <= 0:
        return None
    need = q * total
    seen = 0
    for b in buckets:
        seen += b.count
        if seen >= need and b.count:
            return b.hi if b.hi is not None else b.lo
    return None


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return "" if value is None else str(value)
