"""Kind detection by score over a bounded, cleaned sample of a file.

``sample`` reads the head of a file and, for a long one, a few later windows (a real log
often starts with thousands of another library's lines). ``detect`` cleans the sample the
way the parse will (normalize.py), asks every parser whether it accepts it and how sure it
is, and ranks them. A parser that knows its format's exact banner says so with a
``score(name, head) -> (score, reason) | None`` function; one with only ``accepts`` gets
``DEFAULT_SCORE`` (or its module's ``SNIFF_SCORE`` for generic sniffers). Equal scores keep
the registry's order, which puts specific sniffers before generic ones. A near tie or a low
best score is reported as ambiguous, with the ranked candidates and their reasons, so a
person can choose; the file is never refused for it.

Pure Python, no Django.
"""

from __future__ import annotations

import codecs
import dataclasses
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from artifacts.parsers import cleaning, normalize
from artifacts.parsers.normalize import View
from artifacts.parsers.registry import (
    MAY_BE,
    OTHER,
    PARSERS,
    SNIFF_NEEDS,
    get_parser,
    kind_label,
)

HEAD_BYTES = 64 * 1024
WINDOW_BYTES = 64 * 1024
WINDOWS = 3  # later windows of a long file, the last one ending at its end
# Files up to this size are read whole for detection, so transcript parts can be cut.
WHOLE_BYTES = 1024 * 1024
DEFAULT_SCORE = 0.7
NEAR_TIE = 0.1
CERTAIN = 0.9
CERTAIN_SCORE = 0.95  # a parser's BANNERS: byte strings only its tool prints
LOW_SCORE = 0.4
NAME_HINT_BONUS = 0.05
# Kinds whose lines carry no time of their own, so a collector's timestamp is kept for them.
KEEPS_LINE_TIMES = frozenset({"nccl_debug"})
# Kinds whose own lines start with their time (the kernel's uptime, Fabric Manager's date):
# a stamp found by its shape as the innermost layer is theirs, and stays.
OWN_LINE_TIMES = frozenset({"dmesg", "fabric_manager"})

# Where each kind's content may start: byte strings its tool prints on its own lines.
# ``sample`` looks for them in the whole file (past the head, streamed, up to SCAN_BYTES)
# and hands the sniffers a window around the first hits, so any amount of another
# program's output before, between or after ours is passed over. A needle only says where
# to look; the kind's own sniffer decides.
SIGNATURES: dict[str, tuple[bytes, ...]] = {
    "nccl_tests": (b"# nThread ", b"#  Rank ", b"# Avg bus bandwidth", b"out-of-place"),
    "nccl_debug": (b" NCCL INFO ", b" NCCL WARN "),
    "nsys_stats": (b"Executing '",),
    "ncu_text": (b"==PROF==",),
    "ncu_csv": (b'"ID","Process ID"',),
    "nvidia_smi": (
        b"NVSMI LOG",
        b"| NVIDIA-SMI ",
        b"<nvidia_smi_log",
        b"GPU0\tGPU1",  # topo -m
        b"GPU0    GPU1",  # topo -p2p
        b"CPU Affinity",  # topo -m header
        b"(UUID: GPU-",  # -L
    ),
    "ib_status": (b"CA '", b"hca_id:", b"Infiniband device", b"Port GUID:", b"port_lid:"),
    "ibnetdiscover": (b"switchguid=", b"caguid="),
    "rdma_counters": (b"out_of_buffer", b"link mlx5_", b"/hw_counters/", b"np_cnp_sent"),
    "superbench_monitor": (b'"gpu_usage:',),
    "mlxlink": (b"Operational Info", b"Physical Counters"),
    "dcgm": (
        b"Successfully ran diagnostic",
        b"#Entity",
        b"| Diagnostic ",
        b"| Info   ",
        b"| Warning   ",
        b"| Pass",
        b"| Fail",
    ),
    "perftest": (b"#bytes ", b" BW average"),
    "perf_stat": (b"Performance counter stats for",),
    "mlxconfig": (b"Configurations:",),
    "mlnx_qos": (b"DCBX mode", b"Priority trust state", b"PFC configuration", b"dscp2prio"),
    "show_gids": (b"n_gids_found",),
    "nccl_topology": (b"<system version",),
    "numa": (b"node distances", b"NUMA node"),
    "proc_interrupts": (b"PCI-MSI",),
    "prometheus_text": (b"# TYPE ",),
    "fabric_manager": (b"Fabric Manager version",),
    "dmesg": (b"NVRM: ",),
    "ethtool_stats": (b"NIC statistics:", b"Settings for "),
}
# The scan past the head is bounded: needles are searched in this many bytes (beyond them
# the fixed windows still look at the middle and the end), so a 1 GB file costs well under
# a second and memory is one chunk.
SCAN_BYTES = 32 * 1024 * 1024
SCAN_CHUNK = 1024 * 1024
# At most this many windows come from the scan (the first hits, merged when they overlap).
SCAN_WINDOWS = 4
# A window starts this far before its hit, so the title lines above it are read too.
LEAD_BYTES = 4096

# Words in a file name that back a kind up (never enough on their own).
NAME_HINTS: dict[str, tuple[str, ...]] = {
    "nccl_tests": ("_perf", "nccl-tests", "nccl_tests", "allreduce", "all_reduce", "alltoall"),
    "nccl_debug": ("nccl",),
    "torch_trace": ("trace", "kineto", "profiler"),
    "ncu_csv": ("ncu",),
    "ncu_text": ("ncu",),
    "nsys_stats": ("nsys",),
    "nvidia_smi": ("nvidia-smi", "nvidia_smi", "smi"),
    "ib_status": ("ibstat", "ibv_devinfo", "ibstatus"),
    "rdma_counters": ("hw_counters", "rdma"),
    "mlxlink": ("mlxlink",),
    "mlxconfig": ("mlxconfig",),
    "mlnx_qos": ("mlnx_qos", "qos"),
    "show_gids": ("gids",),
    "ethtool_stats": ("ethtool",),
    "dmesg": ("dmesg", "kern"),
    "perf_stat": ("perf",),
    "perftest": ("ib_write", "ib_read", "ib_send", "perftest"),
    "dcgm": ("dcgm",),
    "numa": ("numa", "lscpu"),
    "proc_interrupts": ("interrupts",),
    "sysctl": ("sysctl",),
    "fabric_manager": ("fabricmanager", "fabric_manager"),
}


@dataclass(frozen=True)
class Candidate:
    kind: str
    score: float
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "score": round(self.score, 3), "reasons": list(self.reasons)}


@dataclass(frozen=True)
class Detection:
    kind: str  # the best candidate, or "other"
    candidates: tuple[Candidate, ...]  # ranked, best first
    ambiguous: bool
    view: View
    parts: tuple[dict[str, Any], ...] = ()  # a transcript's commands and their kinds

    @property
    def score(self) -> float:
        return self.candidates[0].score if self.candidates else 0.0

    def why(self) -> str:
        if not self.candidates:
            return "no parser recognises this content"
        if self.ambiguous:
            ranked = ", ".join(f"{c.kind} ({c.score:.2f})" for c in self.candidates[:4])
            return f"ambiguous: {ranked}"
        return "; ".join(self.candidates[0].reasons)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "score": round(self.score, 3),
            "ambiguous": self.ambiguous,
            "candidates": [c.to_json() for c in self.candidates[:8]],
            "cleaning": self.view.describe(),
            "view": self.view.to_json(),
            "parts": list(self.parts),
        }


# The windows around a file's signature lines, found when first asked for.
Scan = Callable[[], tuple[bytes, ...]]


@dataclass(frozen=True)
class Sample:
    head: bytes  # the first 64 KiB
    windows: tuple[bytes, ...]  # later windows of a long file, cut at line ends
    whole: bytes | None  # the entire content of a file up to WHOLE_BYTES, for transcripts
    encoding: str = "utf-8"  # of the file; the sample itself is UTF-8 (or binary)
    # A long file's windows with those around its signature lines (see SIGNATURES) among
    # them, read from the still open stream when first asked for: only a head that is
    # unsure needs them, and the scan reads up to SCAN_BYTES (a file read whole is scanned
    # by ``detect``).
    scan: Scan | None = None


def sample(raw: BinaryIO, size: int | None = None) -> Sample:
    """The detection sample of a decompressed stream (positioned at its start).

    A file in UTF-16 is transcoded first, so windows never cut a character in half. The
    windows of a file beyond WHOLE_BYTES come from a stream that can seek (a plain upload);
    a gzip member gives what its first WHOLE_BYTES hold.
    """
    data = raw.read(WHOLE_BYTES + 1)
    encoding = normalize.sniff_encoding(data[:4096])
    rest: BinaryIO | _Transcoded = raw
    whole = data if len(data) <= WHOLE_BYTES else None
    if encoding.startswith("utf-16"):
        decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        data = decoder.decode(data, final=whole is not None).lstrip("\ufeff").encode("utf-8")
        whole = data if whole is not None else None
        rest = _Transcoded(raw, decoder)  # the needles are UTF-8: the rest is read as such
    seekable = getattr(raw, "seekable", lambda: False)()
    if encoding == "binary":
        return Sample(data[:HEAD_BYTES], (), whole, encoding)
    # where the scan reads on from (the fixed windows below move a seekable stream)
    at = raw.tell() if seekable else None
    if whole is None and encoding == "utf-8" and seekable and size and size > len(data):
        fixed = _windows(raw, size)
        scan = _rest_scan(data, raw, raw, at, (), fixed)
        return Sample(data[:HEAD_BYTES], fixed, None, encoding, scan)
    lead: tuple[bytes, ...] = ()
    after = _after_preamble(data)
    if after is not None:  # the file's own lines start after another program's preamble
        lead = (data[after : after + WINDOW_BYTES],)
    fixed = _windows(io.BytesIO(data), len(data))
    scan = None if whole is not None else _rest_scan(data, raw, rest, at, lead, fixed)
    return Sample(data[:HEAD_BYTES], (*lead, *fixed), whole, encoding, scan)


def _rest_scan(
    first: bytes,
    raw: BinaryIO,
    rest: BinaryIO | _Transcoded,
    at: int | None,
    lead: tuple[bytes, ...],
    fixed: tuple[bytes, ...],
) -> Scan:
    """The windows of a long file with its signature windows among them (after ``lead``,
    before ``fixed``), scanning ``first`` and ``rest`` (the stream after it, transcoded or
    not) when first asked for: a seekable ``raw`` goes back to ``at``, where ``first``
    ended (``_windows`` has moved it since)."""

    def scan() -> tuple[bytes, ...]:
        if at is not None:
            raw.seek(at)
        return (*lead, *_scanned(first, rest), *fixed)

    return _once(scan)


class _Transcoded:
    """The rest of a UTF-16 stream as UTF-8, read forward (for the signature scan)."""

    def __init__(self, raw: BinaryIO, decoder: codecs.IncrementalDecoder) -> None:
        self._raw, self._decoder = raw, decoder

    def read(self, size: int) -> bytes:
        chunk = self._raw.read(size)
        return self._decoder.decode(chunk, final=not chunk).encode("utf-8")


def _scanned(first: bytes, rest: BinaryIO | _Transcoded | None) -> tuple[bytes, ...]:
    """Windows around the first signature lines of each kind (see SIGNATURES) in ``first``
    and then, read forward from ``rest`` (any stream, a gzip member too), up to SCAN_BYTES
    in all: one chunk and the windows being filled in memory. Hits in the head count too:
    a few hundred lines of another program's output before ours leave the sniffers of the
    head too little of ours to be sure."""
    needles = [n for kind_needles in SIGNATURES.values() for n in kind_needles]
    keep = LEAD_BYTES + max(len(n) for n in needles)
    windows: list[bytearray] = []
    missing: list[int] = []  # bytes each window still lacks
    previous, offset, chunk, last = b"", 0, first, -WINDOW_BYTES
    while chunk:
        for index, lacking in enumerate(missing):
            if lacking > 0:
                windows[index] += chunk[:lacking]
                missing[index] = WINDOW_BYTES - len(windows[index])
        buffer, base = previous + chunk, offset - len(previous)
        hits = sorted((at, n) for n in needles if (at := buffer.find(n)) >= 0)
        for at, needle in hits:
            needles.remove(needle)  # only the first hit of each needle matters
            start = max(base + at - LEAD_BYTES, base)
            if base + at < LEAD_BYTES or start < last + WINDOW_BYTES // 2:
                continue  # the head shows it as it is, or the previous window holds it
            if len(windows) < SCAN_WINDOWS:
                windows.append(bytearray(buffer[start - base : start - base + WINDOW_BYTES]))
                missing.append(WINDOW_BYTES - len(windows[-1]))
                last = start
        offset += len(chunk)
        previous = buffer[-keep:]
        done = not needles or len(windows) >= SCAN_WINDOWS
        if rest is None or (done and not any(missing)) or offset >= SCAN_BYTES:
            break
        chunk = rest.read(SCAN_CHUNK)
    out = []
    for window, lacking in zip(windows, missing, strict=True):
        # whole lines only: the first one was cut (a window starts past LEAD_BYTES), and so
        # was the last unless the file ended in the window
        body = bytes(window[window.find(b"\n") + 1 :])
        if lacking <= 0:
            body = body[: body.rfind(b"\n") + 1]
        if body.strip():
            out.append(body)
    return tuple(out)


_KEY = re.compile(rb"[^\d\n]{3,40}")


def _after_preamble(data: bytes) -> int | None:
    """Where a long leading run of one program's lines ends (libfabric, UCX and MPI print
    thousands of lines before the first line of ours), when the head is all such lines."""
    if len(data) <= HEAD_BYTES:
        return None
    lines = data[:HEAD_BYTES].split(b"\n")[:-1]
    first = _KEY.match(lines[0]) if lines else None
    if first is None or len(lines) < 100:
        return None
    key = first.group(0)
    if sum(line.startswith(key) for line in lines) < 0.9 * len(lines):
        return None
    other = re.compile(b"\n(?!" + re.escape(key) + b")").search(data, HEAD_BYTES)
    return other.end() if other else None


def _windows(source: BinaryIO, size: int) -> tuple[bytes, ...]:
    """Windows ending at 1/3, 2/3 and the end of the file, cut at line ends: a log that
    starts with another program's noise still shows its own lines to the sniffers."""
    windows = []
    for index in range(1, WINDOWS + 1):
        start = max(HEAD_BYTES, size * index // WINDOWS - WINDOW_BYTES)
        if start >= size or (windows and start <= windows[-1][0]):
            continue
        source.seek(start)
        chunk = source.read(WINDOW_BYTES)
        first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
        if index == WINDOWS and not chunk.endswith(b"\n"):
            last = len(chunk) - 1  # the file's last line has no newline
        if 0 <= first < last:
            windows.append((start, chunk[first + 1 : last + 1]))
    return tuple(chunk for _, chunk in windows)


def detect(
    name: str,
    head: bytes,
    *,
    windows: tuple[bytes, ...] = (),
    whole: bytes | None = None,
    encoding: str | None = None,
    scan: Scan | None = None,
) -> Detection:
    """Rank the kinds for a file from its sample (see ``sample``): the head and later
    windows are sniffed one by one and each kind keeps its best; ``whole`` lets a terminal
    transcript be cut into its commands; ``encoding``: the file's, when the sample was
    transcoded; ``scan``: a long file's windows with its signature windows (``Sample.scan``)."""
    view = normalize.plan(b"\n".join((head, *windows)) if windows else head)
    # a file is scanned for its signature lines only when its head is unsure (once: each
    # cleaning _best_view tries would search the same bytes again)
    if view.binary:
        scan = None
    elif whole is not None:
        scan = _once(_scanned, whole, None)
    elif scan is not None:
        if not _head_ranking(name, head, view)[1]:
            # what the scan found plans the cleaning too (an NCCL log's hosts behind noise)
            windows = scan()
            view = normalize.plan(b"\n".join((head, *windows)))
        scan = None
    view, ranked = _best_view(name, head, windows, view, scan=scan)
    parts: tuple[dict[str, Any], ...] = ()
    if whole is not None and not view.binary and view.part is None:
        main = _main_part(name, whole, view)
        if main is not None:
            view, parts, head = main
            # the part's head is cut from the cleaned text: no layer is stripped twice
            clean = dataclasses.replace(view, layers=(), part=None)
            ranked = _ranked_sample(name, head, (), clean)
    candidates = tuple(c for _, _, c in ranked)
    bases = [-base for base, _, _ in ranked]
    ambiguous = bool(bases) and (
        bases[0] < LOW_SCORE or (len(bases) > 1 and bases[0] - bases[1] < NEAR_TIE)
    )
    kind = candidates[0].kind if candidates else OTHER
    if kind in KEEPS_LINE_TIMES and set(view.layers) & set(normalize.TIME_LAYERS):
        # NCCL prints no time of its own: a collector's stamp is the only time its events
        # have, and the parser reads it from the start of the line (the layers inside it
        # are still stripped). One stamp is kept, the innermost: the one nearest the line.
        kept = [layer for layer in view.layers if layer in normalize.TIME_LAYERS][-1]
        layers = tuple(normalize.kept(layer) if layer == kept else layer for layer in view.layers)
        view = dataclasses.replace(view, layers=layers)
    if kind != "nccl_debug" and view.hosts:
        # Only an NCCL log is cut where another process's header starts mid-line: the
        # nccl-tests reader puts a result row broken by such a line back together itself.
        view = dataclasses.replace(view, hosts=())
    if encoding and encoding != view.encoding and not view.binary:
        view = dataclasses.replace(view, encoding=encoding, needed=True)
    return Detection(kind=kind, candidates=candidates, ambiguous=ambiguous, view=view, parts=parts)


def detect_sample(name: str, taken: Sample) -> Detection:
    """``detect`` of what ``sample`` took (its stream still open: a long file's signature
    scan reads on from it when the head is unsure)."""
    return detect(
        name,
        taken.head,
        windows=taken.windows,
        whole=taken.whole,
        encoding=taken.encoding,
        scan=taken.scan,
    )


def _once(function: Callable[..., tuple[bytes, ...]], *args: Any) -> Scan:
    found: list[tuple[bytes, ...]] = []

    def scan() -> tuple[bytes, ...]:
        if not found:
            found.append(function(*args))
        return found[0]

    return scan


def _best_view(
    name: str, head: bytes, windows: tuple[bytes, ...], view: View, *, scan: Scan | None = None
) -> tuple[View, list[tuple[float, int, Candidate]]]:
    """The cleaning whose reading a parser is surest of, with its ranking. A layer found by
    its shape may be the content's own line start (dmesg's uptime, a format's first
    column): the readings without the shaped layers compete with the full one. On a tie
    the full cleaning wins, except that a kind whose lines start with their own time keeps
    its innermost stamp."""
    ranked = _ranked_sample(name, head, windows, view, scan=scan)
    shaped = [layer for layer in view.layers if layer.startswith(("time:", "tag:"))]
    if not shaped:
        return view, ranked
    options = [(view, ranked)]
    inner = list(view.layers)
    while inner and inner[-1].startswith("time:"):
        inner.pop()
    layer_sets = [tuple(inner), tuple(layer for layer in view.layers if layer not in shaped)]
    for layers in dict.fromkeys(layer_sets):
        if layers != view.layers:
            other = dataclasses.replace(view, layers=layers)
            options.append((other, _ranked_sample(name, head, windows, other, scan=scan)))
    top = min((r[0][0] for _, r in options if r), default=None)
    if top is None:
        return view, ranked
    best = [(v, r) for v, r in options if r and r[0][0] == top]
    kind = best[0][1][0][2].kind
    if kind in OWN_LINE_TIMES:
        # its own stamp stays, the collector's layers around it go
        own = next((o for o in best if o[0].layers == tuple(inner)), None)
        return own or best[-1]
    return best[0]


def _ranked_sample(
    name: str, head: bytes, windows: tuple[bytes, ...], view: View, *, scan: Scan | None = None
) -> list[tuple[float, int, Candidate]]:
    """The ranking of a sample cleaned by ``view``: the head, and when nothing in it is
    sure (another program's lines before ours), the later windows too, each kind keeping
    its best score over all of them."""
    # a transcript's part is cut out already: its lines are numbered from 1 again
    sniffing = dataclasses.replace(view, part=None)
    ranked, sure = _head_ranking(name, head, sniffing)
    if sure:
        return ranked
    best = {c.kind: (base, order, c) for base, order, c in ranked}
    if scan is not None:  # a file read whole: the windows around its signature lines
        windows = (*scan(), *windows)
    for window in windows:
        for base, order, c in _ranked(name, cleaning.clean_bytes(window, sniffing), later=True):
            if c.kind not in best or base < best[c.kind][0]:
                best[c.kind] = (base, order, c)
    return sorted(best.values(), key=lambda item: (item[0], item[1]))


def _head_ranking(
    name: str, head: bytes, view: View
) -> tuple[list[tuple[float, int, Candidate]], bool]:
    """The ranking of the head cleaned by ``view``, and whether it is sure (the later
    windows are not needed)."""
    ranked = _ranked(name, cleaning.clean_bytes(head, view), later=False)
    return ranked, bool(ranked) and -ranked[0][0] >= DEFAULT_SCORE


def _ranked(name: str, clean: bytes, *, later: bool) -> list[tuple[float, int, Candidate]]:
    """(-score, registry order, candidate) of every kind that accepts ``clean``, best first."""
    ranked = []
    for order, kind in enumerate(PARSERS):
        if kind in MAY_BE and not MAY_BE[kind](clean):
            continue
        if kind in SNIFF_NEEDS and not SNIFF_NEEDS[kind](clean):
            continue  # its sniffer would say no
        scored = _score(get_parser(kind), kind, name, clean, later=later)
        if scored is not None:
            ranked.append((-scored[0], order, scored[1]))
            if scored[0] >= CERTAIN:
                # Nothing later in the registry can outrank an exact banner, and not asking
                # keeps the later parsers unimported (``manage.py parse`` starts in a blink).
                break
    return sorted(ranked, key=lambda item: (item[0], item[1]))


def _score(
    module: Any, kind: str, name: str, clean: bytes, *, later: bool = False
) -> tuple[float, Candidate] | None:
    """(score from the content, candidate): the content alone ranks; a name hint is only
    shown, since a file's name is the least reliable thing about it."""
    scorer = getattr(module, "score", None)
    reasons: list[str] = []
    if scorer is not None:
        found = scorer(name, clean)
        if found is None:
            return None
        value, reason = found
        reasons.append(reason)
    else:
        if not module.accepts(name, clean):
            return None
        banner = next((b for b in getattr(module, "BANNERS", ()) if b in clean), None)
        if banner is not None:
            value = CERTAIN_SCORE
            reasons.append(f"the {kind_label(kind)} banner {banner.decode(errors='replace')!r}")
        else:
            value = float(getattr(module, "SNIFF_SCORE", DEFAULT_SCORE))
            reasons.append(f"the {kind_label(kind)} sniffer found its markers in the sample")
    if later:
        reasons.append("found past the start of the file (after other programs' lines)")
    shown = value
    lowered = name.lower()
    hint = next((w for w in NAME_HINTS.get(kind, ()) if w in lowered), None)
    if hint:
        shown += NAME_HINT_BONUS
        reasons.append(f"the file name mentions {hint!r}")
    return value, Candidate(kind=kind, score=min(shown, 1.0), reasons=tuple(reasons))


def _main_part(
    name: str, whole: bytes, view: View
) -> tuple[View, tuple[dict[str, Any], ...], bytes] | None:
    """For a terminal transcript (prompt lines between commands' outputs): the span of the
    commands whose output this artifact is, the list of parts, and the span's own sample.

    The best-scored part decides the kind (the first on a tie); the span runs from the first
    to the last part of that kind, so several runs of one tool pasted together stay one
    artifact, while another tool's output (or ``$ hostname``) stays out of it. None when
    there is only one part, or nothing else beside the main kind.
    """
    if _one_part_at_most(whole, view):
        return None  # no command, or one and its output: nothing to cut
    if view.needed and not _may_hold_prompt(whole, view):
        return None  # no need to clean the whole file to see that
    clean = cleaning.clean_bytes(whole, view) if view.needed else whole
    if not normalize.has_prompt(clean):
        return None
    text = clean.decode("utf-8", errors="replace")
    parts = normalize.transcript_parts(text)
    if len(parts) < 2:
        return None
    lines = text.split("\n")
    scored = []
    for part in parts:
        # parts are numbered in the cleaned text: cut them from it, no second cleaning
        found = detect(name, _head_of(lines, part.start, part.end))
        scored.append((part, found.kind, -1.0 if found.kind == OTHER else found.score))
    kinds = [kind for _, kind, _ in scored]
    best = max(range(len(scored)), key=lambda i: scored[i][2])  # the first of equals
    main_kind = kinds[best]
    same = [i for i, kind in enumerate(kinds) if kind == main_kind]
    first, last = parts[same[0]], parts[same[-1]]
    if first.start == parts[0].start and last.end == parts[-1].end:
        return None  # every part belongs to the main output: nothing to cut
    span = normalize.Part(title=first.title, start=first.start, end=last.end)
    main = dataclasses.replace(view, part=span, needed=True)
    described = tuple(
        {
            "title": part.title,
            "start": part.start,
            "end": part.end,
            "kind": kind,
            "main": span.start <= part.start and part.end <= span.end,
        }
        for (part, kind, _) in scored
    )
    return main, described, _head_of(lines, span.start, span.end)


# Bytes without which no cleaned line is a prompt (normalize.has_prompt, or another shell's
# prompt that cleaning rewrites to the bash style): a marker and its space, the starship and
# oh-my-zsh arrows, lambda and guillemet prompts, and colour codes (cleaning removes them,
# which may join "$" and its space).
_MARKS = (
    b"$ ",
    b"# ",
    b"% ",
    b"> ",
    b"\x1b",
    b"\xe2\x9e\x9c",
    b"\xe2\x9d\xaf",
    b"\xce\xbb",
    b"\xc2\xbb",
)


def _marked_lines(whole: bytes) -> list[tuple[int, int]]:
    """(start, end) of each line holding a mark, in order, the newline not included: a
    substring search per mark, from one marked line to the next line (most marks are in
    few lines or none)."""
    ends: dict[int, int] = {}
    size = len(whole)
    for mark in _MARKS:
        at = whole.find(mark)
        while at >= 0:
            end = whole.find(b"\n", at)
            if end < 0:
                end = size
            ends[whole.rfind(b"\n", 0, at) + 1] = end
            at = whole.find(mark, end + 1) if end < size else -1
    return sorted(ends.items())


def _may_hold_prompt(whole: bytes, view: View) -> bool:
    """``has_prompt`` of the cleaned file, from the few lines that can hold a prompt: each
    line with a prompt mark, cleaned with the line before it (a virtualenv's "(name)" may
    stand there), runs of lines kept apart by a NUL line no pattern crosses. Cleaning is
    line by line, so this says what cleaning the whole file would, at a fraction of the
    cost.

    The lines are taken as a scan from the top would take them: at each line, the line and
    the next when the next holds a mark, else the line alone when it holds one, and on
    after what was taken (the marks are found with one search each, not a match per line).
    """
    marked = _marked_lines(whole)
    if not marked:
        return False
    starts = {start: end for start, end in marked}
    runs: list[list[int]] = []
    scan = 0  # where the scan from the top stands: the start of a line not yet taken
    for start, end in marked:
        if start < scan:
            continue  # taken with the line before it
        before = whole.rfind(b"\n", 0, start - 1) + 1 if start > 0 else start
        if before >= scan and before < start:
            taken = (before, end)  # the line before it, which holds no mark, and it
        elif end + 1 in starts:
            taken = (start, starts[end + 1])  # it and the next, which holds a mark
        else:
            taken = (start, end)
        scan = taken[1] + 1
        if runs and taken[0] <= runs[-1][1] + 1:
            runs[-1][1] = taken[1]  # the next line: one run
        else:
            runs.append(list(taken))
    subset = b"\n\x00\n".join(whole[a:b] for a, b in runs) + b"\n"
    return normalize.has_prompt(cleaning.clean_bytes(subset, view))


# Bytes without which no line cleans into a prompt row (normalize.prompt_row): "$" or "#"
# (bash, whatever space follows), another shell's "%", ">", arrow, lambda or guillemet
# (cleaning rewrites those), or a colour code (its removal may join a mark and its space).
_PROMPT_CHARS = (b"$", b"#", b"%", b">", b"\x1b", *_MARKS[5:])
# Past this many such lines the shortcut below is no cheaper than cleaning the file.
_MAX_PROMPT_CANDIDATES = 2000


def _one_part_at_most(whole: bytes, view: View) -> bool:
    """Whether the cleaned file has no prompt row, or one that is its first line that is
    not blank (a command and its output): then it is one part at most, and there is
    nothing to cut. Cleaning is line by line, blank lines stay blank and only a line holding
    a prompt character can clean into a prompt row, so those lines alone are cleaned and
    tested (an nccl-tests "# nThread" line looks like a prompt to ``has_prompt`` and would
    have the whole file cleaned)."""
    if view.hosts:
        return False  # a glued NCCL line may split into a line before the prompt
    starts: set[int] = set()
    for mark in _PROMPT_CHARS:
        at = whole.find(mark)
        while at >= 0:
            starts.add(whole.rfind(b"\n", 0, at) + 1)
            if len(starts) > _MAX_PROMPT_CANDIDATES:
                return False
            end = whole.find(b"\n", at)
            at = whole.find(mark, end + 1) if end >= 0 else -1
    lines = []
    for start in sorted(starts):
        end = whole.find(b"\n", start)
        lines.append(whole[start : end if end >= 0 else len(whole)])
    rows = cleaning.clean_bytes(b"\n".join(lines) + b"\n", view).decode("utf-8", "replace")
    prompts = sum(normalize.prompt_row(row) is not None for row in rows.split("\n"))
    if prompts != 1:
        return prompts == 0
    blank = len(whole) - len(whole.lstrip())  # the lines before the first that is not
    if whole.rfind(b"\n", 0, blank) + 1 != min(starts):
        return False  # the first line that is not blank holds no prompt character
    own = cleaning.clean_bytes(lines[0] + b"\n", view).decode("utf-8", "replace")
    top = next((row for row in own.split("\n") if row.strip()), None)
    return top is not None and normalize.prompt_row(top) is not None


def _head_of(lines: list[str], start: int, end: int) -> bytes:
    out, size = [], 0
    for line in lines[start - 1 : end]:
        out.append(line)
        size += len(line) + 1
        if size >= HEAD_BYTES:
            break
    return "\n".join(out).encode("utf-8")[:HEAD_BYTES]
