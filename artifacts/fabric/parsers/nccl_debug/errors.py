"""WARN lines and failed IB completions (a wrapped one's tail included), NCCL lines whose
header was removed, and lines without an NCCL header: the settings of a command line, the
banner of NCCL_DEBUG=VERSION, and the PyTorch NCCL errors around an NCCL log.
"""

from __future__ import annotations

import re
from typing import Any

from artifacts.fabric.parsers.nccl_debug import ibverbs, limits
from artifacts.fabric.parsers.nccl_debug.info import InfoReader
from artifacts.fabric.parsers.nccl_debug.patterns import (
    SOURCE,
    clean_env_value,
    line_time,
)
from artifacts.fabric.parsers.nccl_debug.store import Segment
from artifacts.fabric.parsers.nccl_debug.versions import read_version
from artifacts.fabric.parsers.torch_nccl_errors import TorchError, recognise

_ENV_COMMAND = re.compile(r"(?<![\w$\"'])(?P<name>NCCL_[A-Z0-9_]+)=(?P<value>[^\s'\"\\;,]*)")


class ErrorReader(InfoReader):
    """WARN lines, IB completions, header-less NCCL lines, foreign lines, PyTorch errors."""

    def _warn(
        self,
        seg: Segment,
        line_no: int,
        time: str | None,
        text: str,
        details: dict[str, Any],
        launcher: int | None,
    ) -> None:
        completion = ibverbs.read_completion(text) if ibverbs.MARKER in text else None
        if completion is not None:
            details["ib_completion"] = completion
            self._completion(seg.host, seg, completion, line_no)
        elif ibverbs.ASYNC_MARKER in text and (event := ibverbs.read_async_event(text)):
            details["ib_async_event"] = event
            self.parts.setdefault("ib_errors", None)
        self._event("nccl_warn", time, seg, line_no, text, details, launcher)
        if completion is not None and ibverbs.incomplete(completion):
            self.pending_completion = (self.events[-1], line_no) if self.events else None

    def _completion(
        self, host: str | None, seg: Segment | None, fields: dict[str, Any], line_no: int
    ) -> bool:
        """Count a failed completion by (host, peer, status, vendor err, hca); False if it
        repeats one already counted from a line without a host (PyTorch's "Last error:")."""
        self.parts.setdefault("ib_errors", None)
        key = (host, *ibverbs.identity(fields))
        if host is None and any(k[0] is not None and k[1:] == key[1:] for k in self.completions):
            return False
        entry = self.completions.get(key)
        if entry is None:
            if len(self.completions) >= limits.MAX_ITEMS:
                self.dropped += 1
                return False
            entry = self.completions[key] = {
                "fields": fields,
                "count": 0,
                "line": line_no,
                "_thread": (seg.host, seg.pid, seg.tid) if seg else None,
                "_dev": seg.dev if seg else None,
            }
        entry["count"] += 1
        return True

    def _bare(
        self, level: str, msg: str, line_no: int, time: str | None, launcher: int | None
    ) -> None:
        """An NCCL line whose ``host:pid:tid`` header was already removed: the facts that need
        no host (versions, settings, warnings, tuning choices) are still read."""
        self.nccl_lines += 1
        msg = msg.strip()
        if level != "INFO":
            details: dict[str, Any] = {"level": level, "source": SOURCE.search(msg[:120])}
            details["source"] = details["source"].group(0) if details["source"] else None
            completion = ibverbs.read_completion(msg) if ibverbs.MARKER in msg else None
            if completion is not None:
                details["ib_completion"] = completion
                self._completion(None, None, completion, line_no)
            self._hostless_event("nccl_warn", time, line_no, msg, details, launcher)
            return
        if " version" in msg[:16] and self._version(None, msg, line_no, at_start=True):
            return
        if msg.startswith("NCCL_"):
            self._nccl_env(None, msg)
        elif " Bytes -> Algo " in msg:
            self._algo_choice(msg)
        elif " opCount " in msg:
            self._collective_call(msg)

    def _hostless_event(
        self,
        kind: str,
        time: str | None,
        line_no: int,
        text: str,
        details: dict[str, Any],
        launcher: int | None,
    ) -> None:
        self._record(
            (kind, None, None, launcher, text),
            {
                "kind": kind,
                "time": time,
                "host": None,
                "rank": None,
                "text": text,
                "pid": None,
                "line": line_no,
                "details": {**details, "repeats": 1},
                "_thread": None,
                "_dev": None,
                "_launcher": launcher,
            },
        )

    def _continue_completion(self, line: str) -> bool:
        """The wrapped tail of a WARN completion line (``len\n0, vendor err 129 (Recv)``)."""
        if self.pending_completion is None:
            return False
        event, line_no = self.pending_completion
        self.pending_completion = None
        stripped = line.strip()
        if not stripped or not any(
            word in stripped
            for word in ("vendor", "localGid", "remoteGid", "hca ", "len", "(Recv)", "(Send)")
        ):
            return False
        text = f"{event['text']} {stripped}"
        fields = ibverbs.read_completion(text)
        if fields is None:
            return False
        old = event["details"].get("ib_completion")
        event["text"] = text
        event["details"]["ib_completion"] = fields
        if old is not None:  # re-key the counted completion with its now complete fields
            host = event["host"]
            entry = self.completions.pop((host, *ibverbs.identity(old)), None)
            if entry is not None:
                entry["fields"] = fields
                self.completions.setdefault((host, *ibverbs.identity(fields)), entry)
        if ibverbs.incomplete(fields):
            self.pending_completion = (event, line_no)
        return True

    def _foreign_line(
        self, line: str, line_no: int, time: str | None, *, lazy: bool = False
    ) -> None:
        """A line without an NCCL header; ``lazy``: its time is not read yet."""
        if self.pending_completion is not None and self._continue_completion(line):
            return
        if "NCCL_" in line and "=" in line and "for details" not in line:
            for m in _ENV_COMMAND.finditer(line):
                self._add_env(m["name"], clean_env_value(m["value"]), None, "command")
        if "CCL" in line and " version" in line and "error" not in line.lower():
            bare = read_version(line)
            if bare and bare[4] < 40:
                self._add_version(None, bare, line_no)
                return  # NCCL_DEBUG=VERSION prints the line without a header
        if " : " in line and self._version_detail(line, line_no):
            return
        if ibverbs.MARKER in line:
            completion = ibverbs.read_completion(line)
            # PyTorch quotes NCCL's last WARN after "Last error:"; a new one is kept
            if completion is not None and self._completion(None, None, completion, line_no):
                details = {"level": "WARN", "source": None, "ib_completion": completion}
                time = line_time(line) if lazy else time
                self._hostless_event("nccl_warn", time, line_no, line.strip(), details, None)
                return
        error = recognise(line)
        if error is not None:
            self._torch_error(error, line_no, line_time(line) if lazy else time)

    def _torch_error(self, error: TorchError, line_no: int, time: str | None) -> None:
        if error.kind == "watchdog_timeout":
            self._group_timeout(error)
        key = (error.kind, error.rank, *error.identity)
        if key in self.event_index:
            return  # PyTorch repeats the same error in the exception text and its "what():"
        self._record(
            key,
            {
                "kind": error.kind,
                "time": time,
                "host": None,
                "rank": error.rank,
                "text": error.text,
                "pid": None,
                "line": line_no,
                "details": error.details,
                "_thread": None,
                "_dev": None,
                "_launcher": error.rank,
            },
        )

    def _group_timeout(self, error: TorchError) -> None:
        # Only some of PyTorch's lines name the process group, so group by collective and
        # sequence number and collect the PG names that were seen.
        details = error.details
        key = (details["collective"], details["seq"], details["timeout_ms"])
        group = self.timeouts.get(key)
        if group is None:
            if len(self.timeouts) >= limits.MAX_ITEMS:
                self.dropped += 1
                return
            group = self.timeouts[key] = {**details, "ranks": set(), "pgs": set(), "max_ran_ms": 0}
        if error.rank is not None:
            group["ranks"].add(error.rank)
        if error.pg is not None:
            group["pgs"].add(error.pg)
        group["max_ran_ms"] = max(group["max_ran_ms"], details["ran_ms"])
