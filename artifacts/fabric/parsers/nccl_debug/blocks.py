"""The block reading (issue 27): ``BlockState.feed_lines`` reads the whole lines of a block
as ``LineState.feed`` would one by one, reading the lines most of a big log is made of in
bulk, and ``Blocks`` gives the blocks (a repaired block line by line, numbered alike).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any, Literal

from artifacts.fabric.parsers.line_blocks import BlockReader
from artifacts.fabric.parsers.nccl_debug import ibverbs, limits
from artifacts.fabric.parsers.nccl_debug.info_kinds import info_kind
from artifacts.fabric.parsers.nccl_debug.lines import LineState
from artifacts.fabric.parsers.nccl_debug.patterns import HEADER
from artifacts.fabric.parsers.nccl_debug.store import Segment
from artifacts.fabric.parsers.torch_nccl_errors import MARKERS as TORCH_MARKERS

# A memo's answer for a key it does not hold (None is an answer: "no kind").
_UNSEEN = object()


class SameLine(str):
    """A piece of the physical line before it: LineReader splits a line at a lone ``\\r``
    and numbers both pieces alike."""

    __slots__ = ()


class Blocks(BlockReader):
    """``BlockReader`` whose repaired lines say when they continue the line before them, so
    that events keep the line numbers ``LineReader`` gives."""

    def _repaired(self, raw: bytes) -> Iterator[str]:
        for advanced, text in self._numbered(raw):
            yield text if advanced else SameLine(text)


class BlockState(LineState):
    """``LineState`` that also reads whole blocks of lines (``feed_lines``)."""

    def feed_lines(self, lines: list[str], line_no: int) -> None:
        """Whole lines of a block, the first being line ``line_no``: exactly what ``feed``
        would make of them, one by one.

        Most lines of a big log are a plain header (``host:pid:tid [dev] mid NCCL LEVEL`` at
        the start, of a host already seen, no second header on the line) and TRACE/CALL
        chatter (counted only) or an INFO message. Such a header is read once per distinct
        text up to the level word (``_plain_header``) instead of being searched for on every
        line; what each such line adds to the counts is added in bulk (``_count_plain``)
        before the next line that goes through ``feed``, and the two commonest messages
        (collective calls, algorithm choices) are read together at the end. Any other INFO
        message's kind is remembered by its text (``info_kinds``): one of no kind costs a
        dict lookup, one of a kind is read by the line's header as ``_info`` reads it. Lines
        without a header that change nothing (``_inert``: "... NCCL RDMA server accept")
        are remembered and skipped. Every other line goes through ``feed``.
        """
        headers = self.plain_headers
        inert = self.inert_lines
        kinds = self.info_kinds
        plain: list[str] = []  # hosts of the plain lines not yet counted
        calls: list[str] = []  # INFO messages of collective calls
        algos: list[str] = []  # INFO messages of algorithm choices
        for number, line in enumerate(lines, line_no):
            at = line.find("NCCL ")
            if at > 0:
                key = line[: at + 11]  # up to "NCCL TRACE ", or one character after INFO/CALL
                head = headers.get(key)
                # A second "NCCL " may start another header: a line with two goes through
                # feed. Its search for the second starts where the first header ends: at + 10
                # after INFO or CALL, at + 11 after TRACE (at + 10 is then a space, where no
                # header starts).
                if head is not False and (
                    line.find("NCCL ", at + 5) < 0 or HEADER.search(line, at + 10) is None
                ):
                    if head is None:
                        head = self._plain_header(key)
                    if head:
                        plain.append(head.host)
                        if head.level != "INFO":
                            continue  # TRACE and CALL: counted only
                        # The INFO message, read as ``_info`` reads it. The two commonest of
                        # a big log are collected, to be read in bulk; any other's kind is a
                        # function of its text, remembered (``info_kind``).
                        raw = line[at + 10 :]
                        if " opCount " in raw:
                            if " opCount " in (msg := raw.strip()):
                                calls.append(msg)
                                continue
                        elif " Bytes -> Algo " in raw and " Bytes -> Algo " in (msg := raw.strip()):
                            algos.append(msg)
                            continue
                        kind = kinds.get(raw, _UNSEEN)
                        if kind is _UNSEEN:
                            kind = info_kind(raw.strip())
                            _remember(kinds, raw, kind)
                        if kind is not None:
                            seg = Segment(
                                head.host, head.pid, head.tid, head.dev, "INFO", head.mid, raw
                            )
                            self._read_info(kind, seg, raw, raw.strip(), number, None, None)  # type: ignore[arg-type]
                        continue
            # no completion is pending after a plain line: the line cannot continue one
            if plain or self.pending_completion is None:
                if line in inert:
                    continue
                if _inert(line):
                    _remember(inert, line)
                    continue
            if plain:
                self._count_plain(plain)
                plain = []
            self.feed(line, number)
        self._count_plain(plain)
        self._bulk_calls(calls)
        self._bulk_algos(algos)

    def _plain_header(self, key: str) -> Segment | Literal[False] | None:
        """The header of lines that start with ``key`` (up to "NCCL TRACE ", or one character
        after "NCCL INFO " or "NCCL CALL "), where it is their only header (checked by the
        caller) and of a known host; None (not remembered) where the host is new:
        ``_segments`` may yet read it as a damaged form of another. The header pattern
        stops at the level word, so the text before "NCCL " alone decides its match."""
        if key.endswith("NCCL TRACE "):
            prefix, level = key[:-11], "TRACE"
        elif key[:-1].endswith(("NCCL INFO ", "NCCL CALL ")):
            prefix, level = key[:-11], key[-6:-2]
        else:  # a short line, or a level word this way does not take
            _remember(self.plain_headers, key, False)
            return False
        m = HEADER.match(prefix + "NCCL INFO ")
        if m is None or m.end() != len(prefix) + 10:
            _remember(self.plain_headers, key, False)
            return False
        host = m["host"]
        if host not in self.known_hosts:
            return None
        pid, dev = int(m["pid"]), m["dev"]
        dev_no = int(dev) if dev is not None else None
        head = Segment(host, pid, int(m["tid"]), dev_no, level, m["mid"].strip(), "")
        # what every such line adds once: its process under its host
        self.pid_hosts.setdefault(pid, set()).add(host)
        self._host(host).pids.add(pid)
        _remember(self.plain_headers, key, head)
        return head

    def _count_plain(self, hosts: list[str]) -> None:
        """What ``feed`` counts for each plain line (``hosts``: the host of each): the line,
        its host's lines, and that it ends a wrapped completion."""
        if hosts:
            self.pending_completion = None
            self.nccl_lines += len(hosts)
            lines = self.host_lines
            distinct = set(hosts)
            if len(distinct) > 8:  # many hosts' lines between two fed lines
                for host, count in Counter(hosts).items():
                    lines[host] = lines.get(host, 0) + count
                return
            # a few hosts (most often one or two): a count per host costs less than a Counter
            for host in distinct:
                lines[host] = lines.get(host, 0) + hosts.count(host)


# A header (``HEADER``) or a header-less NCCL line (``_BARE``) holds one of these.
_LEVEL_WORDS = tuple(
    f"NCCL {level}" for level in ("INFO", "WARN", "TRACE", "CALL", "ABORT", "ERROR")
)


def _inert(line: str) -> bool:
    """Whether ``LineState.feed`` leaves everything as it was for this line, while no wrapped
    completion is pending: no NCCL header nor level word, and none of the words the
    foreign-line readers (settings, versions, completions, PyTorch errors) start from."""
    if "NCCL " in line and any(word in line for word in _LEVEL_WORDS):
        return False
    if ("NCCL_" in line and "=" in line) or ("CCL" in line and " version" in line):
        return False
    if " : " in line or ibverbs.MARKER in line:
        return False
    return not any(marker in line for marker in TORCH_MARKERS)


def _remember(memo: dict[str, Any] | set[str], key: str, value: Any = None) -> None:
    """Add to a block-reading memo, emptied when full so that memory stays flat on files
    whose lines never repeat (a time before every header)."""
    if len(memo) >= limits.MAX_MEMO:
        memo.clear()
    if isinstance(memo, set):
        memo.add(key)
    else:
        memo[key] = value
