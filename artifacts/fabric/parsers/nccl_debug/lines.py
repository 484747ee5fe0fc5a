"""The line-by-line reading: ``LineState.feed`` reads one physical line, finds its
``host:pid:tid [dev] ... NCCL LEVEL`` headers (several where writes of ranks were garbled
into one line), and hands each piece to the INFO or WARN readers, or the line to the readers
of lines without a header. It is the reference the block reading (``blocks``) must equal.
"""

from __future__ import annotations

import re

from artifacts.fabric.parsers.nccl_debug.errors import ErrorReader
from artifacts.fabric.parsers.nccl_debug.hosts import has_partial_header, host_of_pid, looks_glued
from artifacts.fabric.parsers.nccl_debug.patterns import HEADER, SOURCE, line_time
from artifacts.fabric.parsers.nccl_debug.store import Segment
from artifacts.fabric.parsers.torch_nccl_errors import launcher_rank as launcher_rank_of
from artifacts.parsers.textutil import find_timestamp

# A line whose "host:pid:tid [dev]" was already removed (a cleaning step, a paste): the
# level word still says it is NCCL's, after at most a few words of prefix.
_BARE = re.compile(
    r"^\s*(?P<prefix>(?:\S+\s+){0,6}?)NCCL (?P<level>INFO|WARN|ERROR|ABORT) (?P<msg>.*)$"
)
_PREFIX_RANK = re.compile(r"\[rank ?(\d+)\]", re.IGNORECASE)


class LineState(ErrorReader):
    """Everything collected so far; ``feed`` one physical line at a time."""

    def feed(self, line: str, line_no: int) -> None:
        first = HEADER.search(line) if "NCCL " in line else None
        if first is None:
            if "NCCL INFO " in line and self._headless(line):
                return
            bare = _BARE.match(line) if "NCCL " in line else None
            if bare is not None:
                time = line_time(line)
                said = _PREFIX_RANK.search(bare["prefix"])
                rank = int(said.group(1)) if said else launcher_rank_of(line)
                self._bare(bare["level"], bare["msg"], line_no, time, rank)
                return
            # the line's time is read only if the line turns out to hold something
            self._foreign_line(line, line_no, None, lazy=True)
            return
        self.pending_completion = None
        time: str | None = None
        start = 0
        # Most lines start with their header: no prefix to read a time or a launcher from.
        stamp = find_timestamp(line[: first.end()]) if first.start() else None
        if stamp and stamp[1] < first.start():
            time = stamp[0]
            if stamp[2] > first.start():  # "...-07:00ip-10-1-2-3:79:79": the time ran into the host
                start = stamp[2]
        launcher_rank = launcher_rank_of(line) if first.start() else None
        # Slice rather than offset: the look-behind must not see the timestamp's last digit.
        segments = self._segments(line[start:], 0) if start else self._segments(line, 0, first)
        if not segments:
            self._foreign_line(line, line_no, time)
            return
        if len(segments) > 1:
            self.garbled += 1
        for segment in segments:
            self.nccl_lines += 1
            self._segment(segment, line_no, time, launcher_rank)

    def _headless(self, line: str) -> bool:
        """A piece whose header was cut off by another write: keep the host-free facts."""
        msg = line.rsplit("NCCL INFO ", 1)[1].strip()
        if " Bytes -> Algo " in msg:
            self._algo_choice(msg)
        elif " opCount " in msg:
            self._collective_call(msg)
        else:
            return False
        self.garbled += 1
        return True

    def _segments(self, line: str, start: int, first: re.Match[str] | None = None) -> list[Segment]:
        # ``first``: the line's first header, already found. Another header holds "NCCL "
        # after it; most lines have none, and scanning their message with the header's
        # pattern is most of the parse (issue 27).
        if first is not None and line.find("NCCL ", first.end()) < 0:
            if not first.start() and (host := first["host"]) in self.known_hosts:
                # the usual line: one header, at the start, of a host already seen
                pid, tid, dev, level, mid = first.group("pid", "tid", "dev", "level", "mid")
                self.pid_hosts.setdefault(int(pid), set()).add(host)
                dev_no = int(dev) if dev is not None else None
                msg = line[first.end() :]
                return [Segment(host, int(pid), int(tid), dev_no, level, mid.strip(), msg)]
            matches = [first]
        else:
            matches = list(HEADER.finditer(line, start))
        out: list[Segment] = []
        bounds: list[tuple[int, str]] = []
        # A cut-off header before the first full one means another write was cut into.
        broken = (
            bool(matches)
            and matches[0].start() > start
            and has_partial_header(line[start : matches[0].start()])
        )
        if broken:
            self.garbled += len(matches) == 1
        for i, m in enumerate(matches):
            host, begin = m["host"], m.start()
            if host not in self.known_hosts:
                same_process = host_of_pid(
                    self.pid_hosts.get(int(m["pid"]), ()), host, self.host_lines
                )
                if same_process is not None:
                    if host.endswith(same_process):  # debris glued before it: not this piece's
                        begin += len(host) - len(same_process)
                    bounds.append((begin, same_process))
                    continue
                # Interleaved writes glue the tail of one rank's text to the next header
                # ("cudaDev 0ljm:80356..."): prefer a host we already know as a suffix.
                for known in self.known_hosts:
                    glued = host[: len(host) - len(known)]
                    if (
                        glued
                        and host.endswith(known)
                        and looks_glued(line, begin, glued, i, broken)
                    ):
                        begin += len(glued)
                        host = known
                        break
            bounds.append((begin, host))
        for i, m in enumerate(matches):
            end = bounds[i + 1][0] if i + 1 < len(matches) else len(line)
            host = bounds[i][1]
            if i == 0:
                self.known_hosts.add(host)
                self.pid_hosts.setdefault(int(m["pid"]), set()).add(host)
            dev = int(m["dev"]) if m["dev"] is not None else None
            msg = line[m.end() : end]
            out.append(
                Segment(host, int(m["pid"]), int(m["tid"]), dev, m["level"], m["mid"].strip(), msg)
            )
        return out

    def _segment(
        self, seg: Segment, line_no: int, time: str | None, launcher_rank: int | None
    ) -> None:
        host = self._host(seg.host)
        host.pids.add(seg.pid)
        self.host_lines[seg.host] = self.host_lines.get(seg.host, 0) + 1
        if seg.level in ("WARN", "ERROR", "ABORT"):
            source = SOURCE.search(seg.mid)
            details = {"level": seg.level, "source": source.group(0) if source else None}
            self._warn(seg, line_no, time, seg.msg.strip(), details, launcher_rank)
            return
        if seg.level in ("CALL", "TRACE"):
            return  # API call traces: volume without facts
        self._info(seg, seg.msg, line_no, time, launcher_rank)
