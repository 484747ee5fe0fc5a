"""Bounded-memory record tables for the trace analyses.

A :class:`SpillTable` is an append-only table of numpy records that stays in memory while it
is small and spills to an anonymous temporary file (``tempfile``, so ``TMPDIR``) once it
holds more than :data:`CHUNK_ROWS` rows. :func:`co_sorted` hands the rows of one or more
tables back in key order, one bounded bucket at a time (a distribution sort: bucket bounds
come from a systematic sample of the key taken while appending), so an analysis that needs
the events sorted by time, or two tables joined on a key, never holds more than a few
buckets of rows, whatever the size of the trace. Small traces never touch the disk and are
sorted in one piece, exactly as an in-memory sort would.

Pure numpy and the standard library: no Django.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator, Sequence
from typing import IO, Any

import numpy as np

# Rows held in memory per table (and per sorted bucket) before going to disk. A module
# attribute, read at call time, so tests can make it tiny and exercise the spilled paths.
CHUNK_ROWS = 1 << 16
_SAMPLE_TARGET = 1 << 15


class _Sampler:
    """Every ``stride``-th value of a column, the stride doubling to keep the sample small."""

    def __init__(self) -> None:
        self.stride = 1
        self.seen = 0
        self.parts: list[np.ndarray] = []
        self.size = 0

    def add(self, values: np.ndarray) -> None:
        first = (-self.seen) % self.stride
        taken = values[first :: self.stride].copy()
        self.seen += values.size
        self.parts.append(taken)
        self.size += taken.size
        if self.size > 2 * _SAMPLE_TARGET:
            # Positions kept are multiples of stride starting at 0, so every other one of
            # them are the multiples of 2 * stride: the sample stays systematic.
            merged = np.concatenate(self.parts)[::2]
            self.parts, self.size, self.stride = [merged], merged.size, self.stride * 2

    def values(self) -> np.ndarray:
        return np.concatenate(self.parts) if self.parts else np.empty(0)


class SpillTable:
    """Append-only records of one dtype; rows beyond :data:`CHUNK_ROWS` live on disk."""

    def __init__(self, dtype: Any, *, sample: Sequence[str] = ()) -> None:
        self.dtype = np.dtype(dtype)
        self.rows = 0
        self._parts: list[np.ndarray] = []
        self._buffered = 0
        self._file: IO[bytes] | None = None
        self._on_disk = 0
        self._samplers = {name: _Sampler() for name in sample}

    @property
    def spilled(self) -> bool:
        return self._file is not None

    def append(self, records: np.ndarray) -> None:
        if records.size == 0:
            return
        for name, sampler in self._samplers.items():
            sampler.add(records[name])
        self._parts.append(records)
        self._buffered += records.size
        self.rows += records.size
        if self._buffered >= CHUNK_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self._file is None:
            # closed by close(); anonymous, so it vanishes even if the worker is killed
            self._file = tempfile.TemporaryFile(prefix="perfhub-spill-")  # noqa: SIM115
        self._file.seek(0, 2)
        for part in self._parts:
            self._file.write(memoryview(np.ascontiguousarray(part).view(np.uint8)))
        self._on_disk += self._buffered
        self._parts, self._buffered = [], 0

    def sample(self, name: str) -> np.ndarray:
        return self._samplers[name].values()

    def chunks(self) -> Iterator[np.ndarray]:
        """Every row in append order, at most CHUNK_ROWS at a time."""
        if self._file is not None:
            self._file.flush()
            done = 0
            while done < self._on_disk:
                n = min(CHUNK_ROWS, self._on_disk - done)
                self._file.seek(done * self.dtype.itemsize)
                yield _read(self._file, self.dtype, n)
                done += n
        if self._parts:
            yield np.concatenate(self._parts) if len(self._parts) > 1 else self._parts[0]

    def array(self) -> np.ndarray:
        """All rows at once: only for tables known to be small (and for tests)."""
        parts = list(self.chunks())
        return np.concatenate(parts) if parts else np.empty(0, self.dtype)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._parts, self._buffered, self._on_disk, self.rows = [], 0, 0, 0


def _read(fh: IO[bytes], dtype: np.dtype, n: int) -> np.ndarray:
    out = np.empty(n, dtype)
    view = memoryview(out.view(np.uint8))
    got = 0
    while got < view.nbytes:
        read = fh.readinto(view[got:])  # type: ignore[attr-defined]
        if not read:
            raise OSError("spill file shorter than written")
        got += read
    return out


def co_sorted(tables: Sequence[SpillTable], key: str) -> Iterator[list[np.ndarray]]:
    """Buckets of the tables' rows in ascending ``key`` order: one list (one array per
    table) per bucket, each array stably sorted by ``key``. Equal keys share a bucket, and
    bucket ``i`` of every table covers the same key range, so the tables can be joined on
    ``key`` bucket by bucket. Every table must have ``key`` among its sampled fields.
    """
    if not any(t.spilled for t in tables):
        arrays = [t.array() for t in tables]
        if any(a.size for a in arrays):
            yield [a[np.argsort(a[key], kind="stable")] for a in arrays]
        return
    bounds = _bounds(np.concatenate([t.sample(key) for t in tables]), sum(t.rows for t in tables))
    buckets = [[SpillTable(t.dtype) for _ in range(bounds.size + 1)] for t in tables]
    try:
        for table, parts in zip(tables, buckets, strict=True):
            for chunk in table.chunks():
                which = np.searchsorted(bounds, chunk[key], side="right")
                order = np.argsort(which, kind="stable")  # keeps append order within a bucket
                counts = np.bincount(which, minlength=bounds.size + 1)
                start = 0
                for b, n in enumerate(counts):
                    if n:
                        parts[b].append(chunk[order[start : start + n]])
                        parts[b]._flush()  # straight to disk: buckets never pile up in memory
                        start += n
                del chunk, order, which
        for b in range(bounds.size + 1):
            arrays = [parts[b].array() for parts in buckets]
            for parts in buckets:
                parts[b].close()
            if any(a.size for a in arrays):
                yield [a[np.argsort(a[key], kind="stable")] for a in arrays]
    finally:
        for parts in buckets:
            for part in parts:
                part.close()


def _bounds(sample: np.ndarray, rows: int) -> np.ndarray:
    """Bucket boundaries: sample quantiles splitting ``rows`` into buckets of about
    CHUNK_ROWS / 2 (so sampling error leaves them under CHUNK_ROWS)."""
    buckets = max(1, math.ceil(2 * rows / CHUNK_ROWS))
    if buckets == 1 or sample.size == 0:
        return np.empty(0, sample.dtype)
    sample = np.sort(sample)
    picks = (np.arange(1, buckets) * sample.size) // buckets
    return np.unique(sample[picks])
