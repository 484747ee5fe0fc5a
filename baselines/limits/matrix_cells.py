"""The version matrix's optional cell value "efficiency": each version's best mean busbw in
the cell's size bucket as % of the profile's peak for that benchmark (docs/efficiency.md).

Reads what the matrix reads (the per-stack means filing keeps in ``SeriesStackStats``), so
it costs three queries however many runs there are; the cells keep the matrix's links.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from baselines.formatting import delta_style
from baselines.limits.reads import profile_spec, threshold_pct
from baselines.models import HardwareProfile, Series, SeriesStackStats, SoftwareStack
from hardware.model import Topology, Unknown, peak_for, resolve_limits


def efficiency_view(profile: HardwareProfile, view: Any) -> Any:
    """``view`` (a ``charts.MatrixView``) with each cell's text and colour replaced by the
    efficiency; cells the model cannot bound read "?" (hover says why)."""
    series = {
        s.pk: s
        for s in Series.objects.filter(profile=profile, metric="busbw").only(
            "pk", "collective", "nranks", "nnodes", "size_bytes"
        )
    }
    stats = list(SeriesStackStats.objects.filter(series_id__in=list(series)))
    stacks = {
        s.pk: getattr(s, view.component)
        for s in SoftwareStack.objects.filter(pk__in={r.stack_id for r in stats})
    }
    pooled: dict[tuple[str, str, int, int, int], list[float]] = {}
    for r in stats:
        version, one = stacks.get(r.stack_id), series[r.series_id]
        if not version:
            continue
        key = (version, one.collective, one.nranks, one.nnodes, one.size_bytes)
        total = pooled.setdefault(key, [0.0, 0])
        total[0] += r.mean * r.points
        total[1] += r.points
    # per (version, collective, nranks): (size, mean, nnodes) of every series
    by_bench: dict[tuple[str, str, int], list[tuple[int, float, int]]] = {}
    for (version, collective, nranks, nnodes, size), (total, n) in pooled.items():
        if n:
            by_bench.setdefault((version, collective, nranks), []).append((size, total / n, nnodes))
    limits = resolve_limits(profile_spec(profile), gpu_name=profile.gpu_model)
    threshold = threshold_pct(limits)
    peaks: dict[tuple[str, int, int], float | str] = {}
    rows = []
    for row in view.rows:
        cells = []
        for column, shown in zip(view.matrix.columns, row["cells"], strict=True):
            cell, url = shown[0], shown[1]
            if cell is None:
                cells.append((None, "", "", ""))
                continue
            found = [
                (mean, nnodes)
                for size, mean, nnodes in by_bench.get(
                    (row["version"], column.collective, column.nranks), []
                )
                if column.low_bytes <= size <= column.high_bytes
            ]
            if not found:
                cells.append((cell, url, "", "·"))
                continue
            value, nnodes = max(found)
            peak = _peak(peaks, limits, column.collective, column.nranks, nnodes)
            if isinstance(peak, str):
                cells.append((cell, url, "", "?"))
                continue
            share = 100 * value / peak
            # coloured by the distance to the threshold: red under it, green above
            cells.append((cell, url, delta_style(share - threshold, limit=30.0), f"{share:.1f}%"))
        rows.append({**row, "cells": cells})
    return dataclasses.replace(view, rows=rows, figure_json=None)


def _peak(
    cache: dict[tuple[str, int, int], float | str],
    limits: Any,
    collective: str,
    nranks: int,
    nnodes: int,
) -> float | str:
    key = (collective, nranks, nnodes)
    if key not in cache:
        nodes = nnodes or 1
        peak = peak_for(collective, Topology(nranks, nodes, max(1, nranks // nodes)), limits)
        cache[key] = peak.reason if isinstance(peak, Unknown) else peak.peak_busbw_gbps
    return cache[key]
