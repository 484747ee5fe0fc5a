"""The version matrix, pure Python: rows = versions of one component on a profile, columns =
benchmark x message-size bucket, cells = delta % of busbw against the reference.

Input, one row per version and series (aggregated in the database):
    version, version_key, collective, nranks, size_bytes, mean, runs
Reference per series: the pinned baseline's mean where a benchmark has a baseline, else the
lowest version that has data for that benchmark (its row then reads "ref").
A cell is the median over the bucket's sizes of each size's delta % - a heat map is an
overview; clicking a cell opens the full comparison with its uncertainty band. Plain lists
and dicts rather than pandas: a matrix is a few hundred numbers, and the page must be fast.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

KiB = 1024
MiB = 1024 * KiB

# Where nccl-tests curves change regime on current hardware: latency bound, protocol bound,
# pipelining, and the wire-bound plateau (split in two: NCCL tuner changes often hit >=256 MiB).
BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("< 64 KiB", 0, 64 * KiB - 1),
    ("64 KiB-1 MiB", 64 * KiB, MiB - 1),
    ("1-16 MiB", MiB, 16 * MiB - 1),
    ("16-256 MiB", 16 * MiB, 256 * MiB - 1),
    ("≥ 256 MiB", 256 * MiB, 2**62),
)


@dataclass(frozen=True)
class Column:
    collective: str
    nranks: int
    bucket: str
    low_bytes: int
    high_bytes: int

    @property
    def benchmark(self) -> str:
        return f"{self.collective} {self.nranks}r" if self.nranks else self.collective


@dataclass(frozen=True)
class Cell:
    delta_pct: float
    sizes: int
    runs: int
    is_reference: bool


@dataclass(frozen=True)
class Matrix:
    versions: tuple[str, ...]
    columns: tuple[Column, ...]
    cells: dict[tuple[str, int], Cell]  # (version, column index) -> cell
    references: dict[tuple[str, int], str]  # (collective, nranks) -> what delta is against

    def cell(self, version: str, index: int) -> Cell | None:
        return self.cells.get((version, index))

    def grid(self) -> list[list[float | None]]:
        return [
            [
                c.delta_pct if (c := self.cell(v, i)) is not None else None
                for i in range(len(self.columns))
            ]
            for v in self.versions
        ]


def bucket_of(size_bytes: int) -> tuple[str, int, int]:
    for bucket in BUCKETS:
        if bucket[1] <= size_bytes <= bucket[2]:
            return bucket
    return BUCKETS[-1]


def version_matrix(
    points: Iterable[Mapping[str, Any]],
    baseline_means: Iterable[Mapping[str, Any]] = (),
    baseline_names: Mapping[tuple[str, int], str] | None = None,
) -> Matrix:
    """``baseline_means``: collective, nranks, size_bytes, mean (pinned baselines' levels)."""
    rows = [dict(r) for r in points]
    if not rows:
        return Matrix((), (), {}, {})
    keys = {r["version"]: r["version_key"] for r in rows}
    versions = sorted(keys, key=lambda v: keys[v])
    rank = {v: i for i, v in enumerate(versions)}
    reference: dict[tuple[str, int, int], float] = {}
    references: dict[tuple[str, int], str] = {}
    for r in baseline_means:
        bench = (r["collective"], int(r["nranks"]))
        reference[(*bench, int(r["size_bytes"]))] = float(r["mean"])
        references[bench] = f"baseline {(baseline_names or {}).get(bench, '')}".strip()
    # Benchmarks without a baseline: the lowest version with data is the reference.
    first: dict[tuple[str, int], str] = {}
    for r in rows:
        bench = (r["collective"], int(r["nranks"]))
        if bench not in references and (
            bench not in first or rank[r["version"]] < rank[first[bench]]
        ):
            first[bench] = r["version"]
    for bench, version in first.items():
        references[bench] = f"first version ({version})"
    for r in rows:
        bench = (r["collective"], int(r["nranks"]))
        if first.get(bench) == r["version"]:
            reference[(*bench, int(r["size_bytes"]))] = float(r["mean"])
    deltas: dict[tuple[str, int, int], dict[str, list[tuple[float, int]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in rows:
        size = int(r["size_bytes"])
        ref = reference.get((r["collective"], int(r["nranks"]), size))
        if not ref or ref <= 0:
            continue
        column_key = (r["collective"], int(r["nranks"]), bucket_of(size)[1])
        deltas[column_key][r["version"]].append(((r["mean"] / ref - 1.0) * 100.0, int(r["runs"])))
    columns: list[Column] = []
    cells: dict[tuple[str, int], Cell] = {}
    for collective, nranks, low in sorted(deltas):
        label, low_bytes, high_bytes = bucket_of(low)
        columns.append(Column(collective, nranks, label, low_bytes, high_bytes))
        index = len(columns) - 1
        for version, values in deltas[(collective, nranks, low)].items():
            cells[(version, index)] = Cell(
                delta_pct=statistics.median(d for d, _ in values),
                sizes=len(values),
                runs=max(n for _, n in values),
                is_reference=first.get((collective, nranks)) == version,
            )
    return Matrix(tuple(versions), tuple(columns), cells, references)
