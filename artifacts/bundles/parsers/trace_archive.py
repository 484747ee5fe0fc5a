"""An archive of PyTorch Profiler traces (.tar.gz / .tgz / .tar): one trace per rank of a job,
packed together (``tar czf dlrm_kineto.tar.gz dlrm_kineto/``), as people share a profiled
step of a whole job.

A bundle like sysinfo-snapshot: the walk (``archive.py``: streamed, never extracted, links
and climbing paths not stored, limits) lists each member, and the unpack stores each one as
its own artifact, so every trace is parsed by ``torch_trace`` (and grouped into its job)
exactly as if it had been uploaded alone. Members are tried as ``torch_trace`` first; any
other file in the archive (a README, a launcher's log) is detected like any upload.

Detected by a tar header whose first bytes hold a ``.json`` member and Kineto's markers
(the first trace starts in the first 64 KiB); a sysinfo-snapshot archive is not one.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

from artifacts.bundles.parsers.archive import ArchiveWalker, is_tar
from artifacts.bundles.parsers.common import BundlePart, Limits
from artifacts.parsers.base import ParseError, ParseResult

KIND = "trace_archive"
VERSION = 1

TRACE_KIND = "torch_trace"
# A member name ending in .json (a tar header's name field is NUL-padded)
_JSON_MEMBER = re.compile(rb"[\w.+@=-]\.json(?:\.gz)?\x00")
# Kineto's own top-level keys and categories: a trace, not any JSON
_KINETO = (b'"traceEvents"', b'"schemaVersion"', b'"deviceProperties"', b'"distributedInfo"')
# "worker3_step_12...", "rank_3.pt.trace.json", "trace_rank3.json": the rank a name states
_RANK = re.compile(r"(?:rank|worker)[_-]?(?P<rank>\d+)", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class TraceArchiveResult(ParseResult):
    kind = KIND
    members: int = 0  # regular files seen
    traces: int = 0  # members read as torch_trace
    ranks: tuple[int, ...] = ()  # the ranks the traces' names state, sorted
    parts: tuple[BundlePart, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "members": self.members,
            "traces": self.traces,
            "ranks": len(self.ranks),
            "other_members": sum(1 for p in self.parts if p.kind != TRACE_KIND),
            "warnings": len(self.warnings),
        }


def accepts(name: str, head: bytes) -> bool:
    if not is_tar(head) or b"sysinfo-snapshot" in head[:100]:
        return False
    return bool(_JSON_MEMBER.search(head)) and sum(m in head for m in _KINETO) >= 2


def parse(stream: BinaryIO) -> TraceArchiveResult:
    walker = _walker(Limits(), keep=False)
    for _ in walker.walk(stream):
        pass
    return _result(walker)


def iter_parts(
    stream: BinaryIO, limits: Limits | None = None, known: Sequence[BundlePart] = ()
) -> Iterator[tuple[BundlePart, BinaryIO | None]]:
    """Each member with its bytes (None when not stored), as ``sysinfo_snapshot.iter_parts``."""
    yield from _walker(limits or Limits(), keep=True, known=known).walk(stream)


def _walker(limits: Limits, *, keep: bool, known: Sequence[BundlePart] = ()) -> ArchiveWalker:
    return ArchiveWalker(limits, keep=keep, known=known, hints=(TRACE_KIND,))


def _result(walker: ArchiveWalker) -> TraceArchiveResult:
    traces = [p for p in walker.parts if p.stored and p.kind == TRACE_KIND]
    if not traces:
        raise ParseError(
            "the archive holds no PyTorch Profiler trace (members: "
            + ", ".join(p.name for p in walker.parts[:5])
            + ")"
        )
    ranks = sorted({int(m["rank"]) for p in traces if (m := _RANK.search(p.name))})
    warnings = list(walker.warnings)
    if ranks and len(ranks) != len(traces):
        warnings.append(
            f"{len(traces)} traces but {len(ranks)} distinct ranks in their names: "
            "two traces may be of one rank (several steps) or a name states none"
        )
    return TraceArchiveResult(
        members=walker.members,
        traces=len(traces),
        ranks=tuple(ranks),
        parts=tuple(walker.parts),
        warnings=tuple(warnings),
    )
