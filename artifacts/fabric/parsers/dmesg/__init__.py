"""Kernel logs (``dmesg`` in all its stamp shapes, ``journalctl -k`` in all its outputs,
``/var/log/kern.log``): the GPU, NIC and PCIe events a performance engineer looks for, as
timeline-ready events.

Kept: NVRM ``Xid`` lines (code, PCI address, process, message), NVSwitch ``SXid`` lines,
GPUs that fell off the bus, other NVRM messages (``API mismatch``, ``RmInitAdapter failed``,
``os_schedule`` ...) as ``nvrm`` events, PCIe AER errors, mlx5 link up/down, OOM kills; plus
the GPU PCI address -> UUID (and board serial) lines NVRM prints, the driver version NVRM
loads, and the kernel version/hardware name. Everything else is counted, not kept. The NVRM
lines that follow an event (the GSP RPC history of an Xid 119) are joined to it; a line with
no stamp after a kernel line is its continuation (a wrapped message). Stamps: see
``stamps.py``; a syslog date has no year, so no time.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, BinaryIO, ClassVar

from artifacts.fabric.parsers.dmesg import blocks, events
from artifacts.fabric.parsers.dmesg.stamps import Stamp, split_stamp
from artifacts.fabric.parsers.line_blocks import BLOCK_BYTES, NumberedBlocks, feed_numbered
from artifacts.parsers.base import ParseError, ParseResult
from artifacts.parsers.textutil import MAX_LINE_BYTES, head_text

KIND = "dmesg"
VERSION = 1

MAX_EVENTS = 20_000
MAX_JOINED = 40  # NVRM lines joined to one event (an Xid 119's RPC history is ~20)
# details an event gathers beyond its own line: kept when a wrapped line is read again
_KEPT_DETAILS = frozenset({"uptime_s", "delta_s", "uuid", "more", "repeats"})
_GPU_AT = re.compile(r"NVRM: GPU at PCI:(?P<pci>[0-9a-fA-F:.]+): (?P<uuid>GPU-[0-9a-fA-F\-]+)")
_SERIAL = re.compile(r"NVRM: GPU Board Serial Number: (?P<serial>\S+)")
# "NVIDIA UNIX x86_64 Kernel Module  535.104.05" (proprietary) or "NVIDIA UNIX Open Kernel
# Module for x86_64  580.159.04" (the open modules, default since 560)
_DRIVER = re.compile(
    r"NVRM: loading NVIDIA UNIX (?:Open Kernel Module for [\w\-]+|[\w\-]+ Kernel Module)"
    r"\s+(?P<v>\d+\.\d+(?:\.\d+)?)"
)
_KERNEL = re.compile(r"Linux version (?P<v>\S+)|Tainted: [A-Z ]+\s+(?P<t>\d+\.\d+\.\d+\S*)")
_HARDWARE = re.compile(r"Hardware name: (?P<hw>.+?)\s*$")
# Stamp shapes whose text, ending in the space after it, gives the same stamp to any line
# that starts with it: split_stamp's pattern for them stops at that space, and only a
# " kernel: " (a journal line) would make the line another shape (stamps.py)
_REUSABLE_STAMPS = frozenset({"uptime", "relative", "date", "human_date", "iso"})
_MARKERS = ("NVRM:", "mlx5_core", "nvidia-nvswitch", "AER:", "kernel:", "pcieport", "Xid",
            "Hardware Error", "EDAC", "soft lockup", "blocked for more than", "NETDEV WATCHDOG",
            "PCIe bandwidth")  # fmt: skip


@dataclasses.dataclass(frozen=True)
class KernelEvent:
    kind: str  # xid | sxid | gpu_off_bus | nvrm | pcie_aer | nic_link | oom_kill
    time: str | None
    host: str | None
    line: int
    text: str
    details: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class GpuIdentity:
    pci: str
    uuid: str
    serial: str | None = None  # "NVRM: GPU Board Serial Number: ..." after the UUID line


@dataclasses.dataclass(frozen=True)
class DmesgResult(ParseResult):
    kind: ClassVar[str] = "dmesg"

    hosts: tuple[str, ...] = ()
    kernel_version: str | None = None
    hardware: str | None = None
    gpus: tuple[GpuIdentity, ...] = ()
    events: tuple[KernelEvent, ...] = ()
    stats: dict[str, int] = dataclasses.field(default_factory=dict)
    driver_version: str | None = None  # "NVRM: loading NVIDIA UNIX x86_64 Kernel Module X"
    # each device's PCIe link as trained at boot: {device, driver, available_gbps, speed,
    # width, limited_at, capable_gbps, capable_speed, capable_width}
    pcie_links: tuple[dict[str, Any], ...] = ()
    # the stamp shapes seen (uptime, date, syslog, journal_iso, relative, no_stamp...) and
    # "continuation" when stampless lines were joined to the line before them
    parts: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        kinds: dict[str, int] = {}
        for e in self.events:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        return {
            "events": kinds,
            "xid_codes": sorted({e.details["xid"] for e in self.events if e.kind == "xid"}),
            "kernel_version": self.kernel_version,
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    text = head_text(head)
    if "NVRM: Xid" in text or "SXid (PCI:" in text:
        return True
    kernel_lines = marked = 0
    for line in text.splitlines()[:3000]:
        if split_stamp(line) is not None:
            kernel_lines += 1
            marked += any(m in line for m in _MARKERS)
    return kernel_lines >= 5 and marked >= 1 and kernel_lines >= 0.5 * len(text.splitlines()[:3000])


def parse(stream: BinaryIO) -> DmesgResult:
    # 1 MiB blocks of whole lines (issue 27): only the lines holding a word some check needs
    # are read one by one; the rest are counted in runs (blocks.py)
    reader = NumberedBlocks(stream, block_bytes=BLOCK_BYTES, max_line_bytes=MAX_LINE_BYTES)
    state = _State()
    feed_numbered(reader, state.feed_block, state.feed)
    if not state.kernel_lines:
        raise ParseError(
            "no kernel log lines found (dmesg '[uptime]' or '[date]' prefixes, syslog or "
            "journal 'host kernel:' lines, or NVRM/Xid messages)"
        )
    return state.result(reader.repair_warnings())


class _State:
    def __init__(self) -> None:
        self.kernel_lines = 0
        self.lines = 0
        self.events: list[dict[str, Any]] = []
        self.dropped = 0
        self.hosts: dict[str, None] = {}
        self.gpus: dict[str, str] = {}
        self.serials: dict[str, str] = {}
        self.last_gpu: str | None = None
        self.kernel_version: str | None = None
        self.hardware: str | None = None
        self.driver_version: str | None = None
        self.parts: dict[str, None] = {}
        self.pcie_links: dict[str, dict[str, Any]] = {}
        # the previous kernel line: (stamp, its message, the event it made or None)
        self.previous: tuple[Stamp, str, dict[str, Any] | None, int] | None = None
        self.nvrm_seen: dict[str, dict[str, Any]] = {}
        # _stamp's last stamp text and its Stamp ("" when none may be reused)
        self.last_stamp: tuple[str, Stamp | None] = ("", None)
        # what _stamp_run reads in a line's text after its stamp (blocks.read_text), per text
        self.bodies: dict[str, tuple[str | None, ...]] = {}
        self.bodies_known = False  # whether self.bodies was read with SLOW_KNOWN
        self.stamps: dict[str, Stamp] = {}  # by stamp text (_stamp)
        self.event_of: dict[str, Any] = {}  # events.event per text (_event)

    def feed_block(self, text: str, line_no: int) -> int:
        """Whole lines (each ends in "\\n"), numbered after ``line_no``: a line with a SLOW
        word is fed, one with "NVRM" and no SLOW word read by ``_nvrm_line``, the lines after
        either under its stamp text by ``_stamp_run``, and the runs of lines between them
        counted. SLOW is searched only up to the next NVRM line's end: the lines a stamp run
        reads are not searched (it looks at each distinct text itself, once). Returns the
        last line's number."""
        known = self.kernel_version is not None and self.hardware is not None
        slow = blocks.SLOW_KNOWN if known else blocks.SLOW
        size = len(text)
        start = 0
        nvrm_at = nvrm_end = -1  # the next "NVRM" from start and the end of its line
        while start < size:
            if nvrm_at < start:
                nvrm_at = text.find("NVRM", start)
                nvrm_end = size if nvrm_at < 0 else text.index("\n", nvrm_at) + 1
                nvrm_at = size if nvrm_at < 0 else nvrm_at
            found = slow.search(text, start, nvrm_end)
            hit = found.start() if found is not None else nvrm_at
            if hit >= size:
                break
            begin = max(start, text.rfind("\n", start, hit) + 1)
            end = text.index("\n", hit)
            if begin > start:
                line_no = self._run(text[start:begin], line_no)
            line_no += 1
            start = end + 1
            if found is not None:
                self.feed(text[begin:end], line_no)
            else:
                self._nvrm_line(text[begin:end], line_no)
            prefix = self.last_stamp[0]
            if prefix and text.startswith(prefix, start):  # the lines under its stamp
                start, line_no = self._stamp_run(text, start, line_no)
        if start < size:
            line_no = self._run(text[start:], line_no)
        return line_no

    def _run(self, run: str, line_no: int) -> int:
        """Lines without a SLOW word nor "NVRM" (whole lines): each stretch of lines with the
        stamp shape (and host) of its first is counted at once; a line that starts none
        (blank, unstamped, wrapped) is fed. Returns the last line's number."""
        start = 0
        while start < len(run):
            newline = run.index("\n", start)
            stamp = self._stamp(run[start:newline])
            pattern = blocks.run_pattern(stamp.shape, stamp.host) if stamp is not None else None
            # the longest stretch of whole lines from start that have that stamp shape
            end = m.end() if pattern is not None and (m := pattern.match(run, start)) else start
            if stamp is None or end == start:
                line_no += 1
                self.feed(run[start:newline], line_no)
                start = newline + 1
                continue
            line_no = self._counted(stamp, run, start, end, line_no)
            start = end
        return line_no

    def _counted(self, stamp: Stamp, run: str, start: int, end: int, line_no: int) -> int:
        """What ``feed`` does for ``run[start:end]``, lines of ``stamp``'s shape and host
        that hold no checked word: counts, and the last line as the one before the next."""
        count = run.count("\n", start, end)
        self.lines += count
        self.kernel_lines += count
        self.parts.setdefault(stamp.shape, None)
        if stamp.host:
            self.hosts.setdefault(stamp.host, None)
        line_no += count
        last = self._stamp(run[max(start, run.rfind("\n", start, end - 1) + 1) : end - 1])
        assert last is not None
        self.previous = (last, last.message, None, line_no)
        return line_no

    def _nvrm_line(self, raw: str, line_no: int) -> None:
        """``feed`` for a stamped line with "NVRM:" and no other word a check needs: no fact
        to read, no "GPU at", no Xid, no GPU off the bus, so either a line joined to the
        event before it or an NVRM message of its own."""
        stamp = self._stamp(raw)
        if stamp is None or "NVRM:" not in stamp.message:
            self.feed(raw, line_no)  # unstamped (dmesg -t), or the word was in the stamp
            return
        self.lines += 1
        self.kernel_lines += 1
        self.parts.setdefault(stamp.shape, None)
        if stamp.host:
            self.hosts.setdefault(stamp.host, None)
        body = stamp.message
        found = events.NVRM.search(body)
        if self._nvrm_joined(stamp, body, found):
            return
        if found is None:  # "NVRM:" then spaces: no message, no event
            self.previous = (stamp, body, None, line_no)
            return
        made = self._nvrm_event(stamp, line_no, body, found["msg"])
        self.previous = (stamp, body, made, line_no)

    def _nvrm_event(self, stamp: Stamp, line_no: int, body: str, msg: str) -> dict[str, Any] | None:
        """What ``_add`` does for an NVRM message of its own, without reading its details
        where they are not kept (a message seen before, or no room for events): the event
        it counts on or makes, or None."""
        seen = self.nvrm_seen.get(msg[:500])
        if seen is not None:
            seen["details"]["repeats"] = seen["details"].get("repeats", 1) + 1
            return seen
        if len(self.events) >= MAX_EVENTS:
            self.dropped += 1
            return None
        return self._add(stamp, line_no, body, ("nvrm", events.nvrm_details(msg)))

    def _stamp_run(self, text: str, start: int, line_no: int) -> tuple[int, int]:
        """The lines from ``start`` that start with the last line's stamp text (an Xid's RPC
        history), read as ``_nvrm_line`` and ``_run`` read them, in one loop over their
        texts: ``findall`` over a window that doubles while the run goes on, so a run cut
        short wastes at most twice its length plus 4 KiB. Stops before a line with a SLOW
        word in its text or that might be a journal line (``blocks.read_text``), which feed_block
        reads; every check reads the text only, so a word in the stamp text (a -T date's
        free text) changes nothing. Returns where it stopped and the last line's number."""
        prefix = self.last_stamp[0]
        known = self.kernel_version is not None and self.hardware is not None
        if known != self.bodies_known:  # "Tainted"... no longer stop a run (once only: an
            # entry read before is stricter, never wrong, so this is for speed)
            self.bodies.clear()
            self.bodies_known = known
        if self._info(text[start + len(prefix) : text.index("\n", start)]) is blocks.ODD:
            return start, line_no  # the next line is feed_block's: no window searched
        span, each = blocks.prefix_run(len(prefix))
        window = _RUN_WINDOW
        while True:
            limit = min(len(text), start + window)
            match = span.match(text, start, limit)  # the first line is cut by the window
            end = match.end() if match is not None else start
            bodies = each.findall(text, start, end)
            done, line_no = self._bodies(bodies, line_no)
            if done < len(bodies):  # stopped before a line: where it starts
                for _ in range(done):
                    start = text.index("\n", start) + 1
                return start, line_no
            start = end
            if not text.startswith(prefix, end):
                return start, line_no  # the run ended before the window did
            window *= 2

    def _info(self, body: str) -> tuple[str | None, ...]:
        """``blocks.read_text(body)``, kept per text."""
        info = self.bodies.get(body)
        if info is None:
            if len(self.bodies) >= _MEMO_BODIES:  # memory stays flat on a log of new texts
                self.bodies.clear()
            info = self.bodies[body] = blocks.read_text(body, self.bodies_known)
        return info

    def _bodies(self, bodies: list[str], line_no: int) -> tuple[int, int]:
        """``_stamp_run``'s lines, by their texts after the stamp text: how many were read
        (up to the first ``blocks.ODD``) and the last one's number. What a text says is kept
        per text (``blocks.read_text``)."""
        stamp = self.last_stamp[1]
        assert stamp is not None
        memo = self.bodies
        previous = self.previous
        made = previous[2] if previous is not None else None
        joinable = made is not None and self._joinable(stamp)
        odd, plain = blocks.ODD, blocks.PLAIN  # local names: this loop is per line
        done = 0
        for body in bodies:
            info = memo.get(body)
            if info is None:
                info = self._info(body)
            if info is odd:
                break
            done += 1
            line_no += 1
            if info is plain:  # no "NVRM:": only counted (what _run does)
                previous, made, joinable = (stamp, body, None, line_no), None, False
                continue
            msg, msg500, joined_text = info
            if joinable:  # _nvrm_joined
                assert made is not None
                self._join_nvrm(made, body, msg500, joined_text)
                continue
            made = None if msg is None else self._nvrm_event(stamp, line_no, body, msg)
            previous = (stamp, body, made, line_no)
            self.previous = previous
            joinable = made is not None and self._joinable(stamp)
        if done:
            self.lines += done
            self.kernel_lines += done
            self.parts.setdefault(stamp.shape, None)
            self.previous = previous
        return done, line_no

    def _joinable(self, stamp: Stamp) -> bool:
        """Whether an NVRM line with ``stamp`` joins the event before it (``_nvrm_joined``)."""
        if self.previous is None or (made := self.previous[2]) is None:
            return False
        return _same_moment(self.previous[0], stamp) and "NVRM:" in made["text"]

    def _stamp(self, raw: str) -> Stamp | None:
        """``split_stamp(raw)``, reusing the stamp of an earlier line when ``raw`` starts
        with the same stamp text: the last one's (an Xid's RPC history: 30 lines of one
        stamp), or one kept by its text up to the first "] " (the few seconds of a dmesg -T
        storm, the uptime of a run's first and last lines)."""
        prefix, stamp = self.last_stamp
        if prefix and raw.startswith(prefix) and " kernel: " not in raw[:120]:
            time, host, uptime_s, delta_s, shape, _ = stamp
            return Stamp(time, host, uptime_s, delta_s, shape, raw[len(prefix) :])
        close = raw.find("] ", 0, _STAMP_KEY_SPAN) + 2
        stamp = self.stamps.get(raw[:close]) if close > 1 else None
        if stamp is not None and " kernel: " not in raw[:120]:
            self.last_stamp = (raw[:close], stamp)
            time, host, uptime_s, delta_s, shape, _ = stamp
            return Stamp(time, host, uptime_s, delta_s, shape, raw[close:])
        stamp = split_stamp(raw)
        self.last_stamp = ("", None)
        if stamp is not None and stamp.shape in _REUSABLE_STAMPS:
            prefix = raw[: len(raw) - len(stamp.message)]
            if prefix[-1:].isspace() and " kernel: " not in raw[:120]:
                self.last_stamp = (prefix, stamp)
                if len(prefix) == close:  # its text ends at the first "] "
                    if len(self.stamps) >= _MEMO_BODIES:  # memory stays flat
                        self.stamps.clear()
                    self.stamps[prefix] = stamp
        return stamp

    def _nvrm_joined(self, stamp: Stamp, body: str, found: re.Match[str] | None) -> bool:
        """``_joined`` for an ``_nvrm_line`` line (its own event can only be an "nvrm" one)."""
        if self.previous is None or self.previous[2] is None:
            return False
        before, _, made, _ = self.previous
        if not _same_moment(before, stamp) or "NVRM:" not in made["text"]:
            return False
        msg500 = found["msg"][:500] if found is not None else None
        self._join_nvrm(made, body, msg500, body.split("NVRM:", 1)[1].strip()[:500])
        return True

    def _join_nvrm(self, made: dict[str, Any], body: str, msg500: str | None, joined: str) -> None:
        """An NVRM line (``body``; its message as kept, ``msg500``; what it adds,
        ``joined``) joined to the event ``made`` before it: the same message counts a
        repeat, another is kept in "more"."""
        details = made["details"]
        if msg500 is not None and msg500 == details.get("message"):
            details["repeats"] = details.get("repeats", 1) + 1
            return
        more = details.setdefault("more", [])
        if len(more) < MAX_JOINED:
            more.append(joined)
        # the line holds no "mismatch": the pattern can only match when the event's does
        mismatch = made["kind"] == "nvrm" and "mismatch" in made["text"]
        if mismatch and (m := events.API_MISMATCH.search(made["text"] + " " + body)):
            details.update(client_version=m["client"], kernel_version=m["kernel"])

    def feed(self, raw: str, line_no: int) -> None:
        self.lines += 1
        stamp = self._stamp(raw)
        if stamp is None:
            if not raw.strip():
                self.previous = None
                return
            own = any(m in raw for m in _MARKERS)  # dmesg -t: NVRM, mlx5, AER... unstamped
            previous = self.previous
            if not own and previous is not None and previous[0].shape != "no_stamp":
                self._continue(raw.strip())  # a wrapped message (only among stamped lines)
                return
            if not own:
                self.previous = None
                return
            stamp = Stamp(None, None, None, None, "no_stamp", raw)
        self.kernel_lines += 1
        self.parts.setdefault(stamp.shape, None)
        if stamp.host:
            self.hosts.setdefault(stamp.host, None)
        body = stamp.message
        if self._facts(body):
            self.previous = (stamp, body, None, line_no)
            return
        if "GPU at" in body and (m := _GPU_AT.search(body)):
            self.gpus.setdefault(events.pci(m["pci"]), m["uuid"])
            self.last_gpu = events.pci(m["pci"])
            self.previous = (stamp, body, None, line_no)
            return
        event = self._event(body)
        if self._joined(stamp, body, event):
            return
        made = self._add(stamp, line_no, body, event) if event else None
        self.previous = (stamp, body, made, line_no)

    def _facts(self, body: str) -> bool:
        """Read the facts a line states; True when the line is only that (no event)."""
        if "PCIe bandwidth" in body and (m := events.PCIE_LINK.search(body)):
            self._pcie_link(m)
        # each search only where its words are: most kernel lines hold none of these facts
        kernel = "version" in body or "Tainted" in body
        if self.kernel_version is None and kernel and (m := _KERNEL.search(body)):
            self.kernel_version = m["v"] or m["t"]
        if self.hardware is None and "Hardware name" in body and (m := _HARDWARE.search(body)):
            self.hardware = m["hw"]
        if "NVRM" not in body:
            return False
        if "loading NVIDIA" in body and (m := _DRIVER.search(body)):
            self.driver_version = self.driver_version or m["v"]
            return True
        if "Serial Number" in body and (m := _SERIAL.search(body)):
            if self.last_gpu is not None:
                self.serials.setdefault(self.last_gpu, m["serial"])
            return True
        return False

    def _pcie_link(self, m: re.Match[str]) -> None:
        """The link a device trained at boot (pcie_print_link_status), limited or not."""
        link: dict[str, Any] = {"device": m["dev"], "driver": m["driver"],
                                "available_gbps": float(m["gbps"])}  # fmt: skip
        if m["lspeed"]:
            link.update(speed=m["lspeed"], width=int(m["lwidth"]), limited_at=m["at"],
                        capable_gbps=float(m["cgbps"]), capable_speed=m["cspeed"],
                        capable_width=int(m["cwidth"]))  # fmt: skip
        else:
            link.update(speed=m["speed"], width=int(m["width"]), limited_at=None,
                        capable_gbps=float(m["gbps"]), capable_speed=m["speed"],
                        capable_width=int(m["width"]))  # fmt: skip
        self.pcie_links[m["dev"]] = link

    def _event(self, body: str) -> tuple[str, dict[str, Any]] | None:
        """``events.event(body)``, kept per text (an Xid storm repeats its lines): a copy of the
        details, which the event they go to gathers into."""
        known = self.event_of.get(body, _UNSEEN)
        if known is _UNSEEN:
            if len(self.event_of) >= _MEMO_BODIES:  # memory stays flat on new texts
                self.event_of.clear()
            known = self.event_of[body] = events.event(body)
        return None if known is None else (known[0], dict(known[1]))

    def _joined(self, stamp: Stamp, body: str, own: tuple[str, dict[str, Any]] | None) -> bool:
        """An NVRM line right after an NVRM event, at the same time, belongs to it (the GSP
        RPC history under an Xid 119, the second line of an API mismatch). ``own``: the
        line's own event (``events.event(body)``)."""
        if self.previous is None or "NVRM:" not in body:
            return False
        before, _, made, _ = self.previous
        if made is None or not _same_moment(before, stamp) or "NVRM:" not in made["text"]:
            return False
        if own is not None and own[0] != "nvrm":
            return False  # an Xid, a GPU off the bus: an event of its own, whenever it comes
        if own is not None and own[1]["message"] == made["details"].get("message"):
            made["details"]["repeats"] = made["details"].get("repeats", 1) + 1
            return True
        more = made["details"].setdefault("more", [])
        if len(more) < MAX_JOINED:
            more.append(body.split("NVRM:", 1)[1].strip()[:500])
        if made["kind"] == "nvrm" and (m := events.API_MISMATCH.search(made["text"] + " " + body)):
            made["details"].update(client_version=m["client"], kernel_version=m["kernel"])
        return True

    def _continue(self, text: str) -> None:
        """A line without a stamp after a kernel line: the rest of a wrapped message."""
        assert self.previous is not None
        stamp, body, made, line_no = self.previous
        joined = f"{body.rstrip()} {text}"
        self.parts.setdefault("continuation", None)
        if made is not None:
            made["text"] = (made["text"] + " " + text)[:2000]
            # read again as a whole: a cut "pid=..., name=..." or "fallen off / the bus"
            if again := events.event(made["text"]):
                kept = {k: v for k, v in made["details"].items() if k in _KEPT_DETAILS}
                made["kind"], made["details"] = again[0], {**again[1], **kept}
            self.previous = (stamp, joined, made, line_no)
            return
        event = events.event(joined)  # the message's words were cut: "fallen off" / "the bus."
        if event is not None:
            made = self._add(stamp, line_no, joined, event)
        self.previous = (stamp, joined, made, line_no)

    def _add(
        self, stamp: Stamp, line_no: int, body: str, event: tuple[str, dict[str, Any]]
    ) -> dict[str, Any] | None:
        kind, details = event
        if kind == "nvrm":  # the same message again: counted on the first
            seen = self.nvrm_seen.get(details["message"])
            if seen is not None:
                seen["details"]["repeats"] = seen["details"].get("repeats", 1) + 1
                return seen
        if stamp.uptime_s is not None:
            details["uptime_s"] = stamp.uptime_s
        if stamp.delta_s is not None:
            details["delta_s"] = stamp.delta_s
        if kind == "xid" and details.get("device") in self.gpus:
            details["uuid"] = self.gpus[details["device"]]
        if len(self.events) >= MAX_EVENTS:
            self.dropped += 1
            return None
        made = {"kind": kind, "time": stamp.time, "host": stamp.host, "line": line_no,
                "text": body.strip()[:2000], "details": details}  # fmt: skip
        self.events.append(made)
        if kind == "nvrm":
            self.nvrm_seen[details["message"]] = made
        return made

    def result(self, warnings: list[str]) -> DmesgResult:
        if self.dropped:
            warnings.append(f"{self.dropped} event(s) beyond {MAX_EVENTS} were not kept")
        kept = []
        for e in self.events:
            details = e["details"]
            # a UUID printed after the Xid line still names the GPU
            if e["kind"] == "xid" and "uuid" not in details and details["device"] in self.gpus:
                details = {**details, "uuid": self.gpus[details["device"]]}
            kept.append(KernelEvent(e["kind"], e["time"], e["host"], e["line"], e["text"], details))
        return DmesgResult(
            hosts=tuple(self.hosts),
            kernel_version=self.kernel_version,
            hardware=self.hardware,
            gpus=tuple(
                GpuIdentity(pci, uuid, self.serials.get(pci)) for pci, uuid in self.gpus.items()
            ),
            events=tuple(kept),
            stats={"lines": self.lines, "kernel_lines": self.kernel_lines},
            driver_version=self.driver_version,
            pcie_links=tuple(self.pcie_links.values()),
            parts=tuple(self.parts),
            warnings=tuple(warnings),
        )


_MEMO_BODIES = 4096
_STAMP_KEY_SPAN = 80  # characters in which _stamp looks for the "] " ending a stamp text
_RUN_WINDOW = 4096  # bytes: _stamp_run's first window
_UNSEEN = object()


def _same_moment(a: Stamp, b: Stamp) -> bool:
    """Printed together: within a second of uptime, or the same wall-clock second."""
    if a.uptime_s is not None and b.uptime_s is not None:
        return abs(a.uptime_s - b.uptime_s) < 1.0
    if a.time is not None and b.time is not None:
        return a.time[:19] == b.time[:19]
    return b.delta_s is None or b.delta_s < 1.0
