"""Measured bus bandwidth as a share of the peak, per message size. Pure.

"Large messages" are where bandwidth, not latency, decides: sizes from ``LARGE_BYTES`` up
(and, for runs that never get there, the run's largest size). The run's efficiency is the
best share among them - the plateau the run reached - so one noisy size does not decide it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

LARGE_BYTES = 64 * 1024**2


@dataclass(frozen=True)
class SizeEfficiency:
    size_bytes: int
    busbw_gbps: float | None
    pct_of_peak: float | None

    def to_json(self) -> dict[str, object]:
        return {
            "size_bytes": self.size_bytes,
            "busbw_gbps": self.busbw_gbps,
            "pct_of_peak": self.pct_of_peak,
        }


def per_size(points: Iterable[tuple[int, float | None]], peak: float) -> list[SizeEfficiency]:
    """(size, busbw GB/s) -> the same with % of ``peak`` (one decimal)."""
    out = []
    for size, busbw in sorted(points, key=lambda p: p[0]):
        pct = round(100.0 * busbw / peak, 1) if busbw is not None and peak > 0 else None
        out.append(SizeEfficiency(int(size), busbw, pct))
    return out


def large_message(sizes: list[SizeEfficiency]) -> SizeEfficiency | None:
    """The best share among the large sizes (or the largest size of a short run)."""
    measured = [s for s in sizes if s.pct_of_peak is not None]
    if not measured:
        return None
    large = [s for s in measured if s.size_bytes >= LARGE_BYTES] or [measured[-1]]
    return max(large, key=lambda s: (s.pct_of_peak or 0.0, s.size_bytes))
