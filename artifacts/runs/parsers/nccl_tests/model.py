"""What the nccl-tests parser returns: frozen dataclasses, documented in docs/formats.md.

Package-private to ``artifacts.runs.parsers.nccl_tests``, which re-exports every name here.
Pure Python, no Django.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from artifacts.parsers.base import ParseResult

KIND = "nccl_tests"


@dataclasses.dataclass(frozen=True, slots=True)  # millions of rows: keep them small
class NcclMeasurement:
    """One half of a table row: the out-of-place or the in-place numbers."""

    time_us: float | None
    algbw_gbps: float | None
    busbw_gbps: float | None
    # Count of wrong elements (int); with the old ``error`` column, the max error (float).
    wrong: int | float | None


@dataclasses.dataclass(frozen=True, slots=True)
class NcclRow:
    size_bytes: int
    count: int | None
    dtype: str | None
    redop: str | None
    root: int | None
    out_of_place: NcclMeasurement | None
    in_place: NcclMeasurement | None


@dataclasses.dataclass(frozen=True, slots=True)
class NcclRank:
    rank: int
    host: str | None
    device: int | None
    busid: str | None
    gpu: str | None


@dataclasses.dataclass(frozen=True)
class NcclRun:
    collective: str | None
    nccl_tests_version: str | None
    nccl_version: str | None
    params: dict[str, Any]
    ranks: tuple[NcclRank, ...]
    nranks: int | None
    hosts: tuple[str, ...]
    rows: tuple[NcclRow, ...]
    avg_busbw_gbps: float | None
    out_of_bounds: int | None
    complete: bool
    errors: tuple[str, ...]
    # Extras beyond the core contract (documented too).
    format: str
    command: str | None
    error_column: bool
    started_at: str | None
    ended_at: str | None
    # Where ``collective`` came from: "header", "json", "command line", "file name", the
    # table evidence ("busbw/algbw ratio (1.75 = 2(n-1)/n with n=8)"), "ambiguous"; None
    # when nothing says. Candidates: what the table fits when it alone cannot decide.
    collective_source: str | None = None
    collective_candidates: tuple[str, ...] = ()
    # Rank count the table implies (busbw/algbw ratio, per-rank counts) when the device
    # list does not give it (absent, elided or incomplete); ``nranks`` keeps its meaning.
    nranks_inferred: int | None = None
    # NCCL_* settings the output states (export lines, the launch command, NCCL's
    # "X set by environment to Y" echoes, which win); logging switches left out.
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    # The parts of nccl-tests output this run was read from, in print order ("version",
    # "parameters", "devices", "column header", "rows", "footer"; a JSON run starts with its
    # format): a fragment gives its facts and says which parts it saw.
    parts: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class NcclTestsResult(ParseResult):
    kind: ClassVar[str] = KIND
    runs: tuple[NcclRun, ...] = ()

    def summary(self) -> dict[str, Any]:
        collectives: list[str] = []
        hosts: set[str] = set()
        busbw: list[float] = []
        for run in self.runs:
            if run.collective and run.collective not in collectives:
                collectives.append(run.collective)
            hosts.update(run.hosts)
            for row in run.rows:
                for half in (row.out_of_place, row.in_place):
                    if half is not None and half.busbw_gbps is not None:
                        busbw.append(half.busbw_gbps)
        nranks = [r.nranks for r in self.runs if r.nranks is not None]
        return {
            "runs": len(self.runs),
            "collectives": collectives,
            "max_busbw_gbps": max(busbw) if busbw else None,
            "nranks": max(nranks) if nranks else None,
            "hosts": len(hosts),
            "complete": all(r.complete for r in self.runs),
            "errors": sum(len(r.errors) for r in self.runs),
            "warnings": len(self.warnings),
        }
