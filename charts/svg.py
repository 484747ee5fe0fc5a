"""Static (no-JavaScript) charts for exports: a small inline SVG of busbw against size.

Evidence bundles must open on an air-gapped laptop with nothing but a browser, and must be
byte-identical for the same inputs, so this draws plain SVG with rounded coordinates.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from django.utils.html import escape

from charts.palette import TRACE_PARTS
from perfhub.units import human_bytes

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 12, 40
SERIES = (
    ("oop_busbw_gbps", "busbw out-of-place", "#2563eb", ""),
    ("ip_busbw_gbps", "busbw in-place", "#d97706", "4 3"),
)


def busbw_svg(rows: pd.DataFrame) -> str:
    """An SVG line chart (log2 message size vs GB/s); empty string when there is nothing."""
    if rows.empty or "size_bytes" not in rows:
        return ""
    sizes = [float(s) for s in rows["size_bytes"] if s and s > 0]
    present = [s for s in SERIES if s[0] in rows and rows[s[0]].notna().any()]
    if not sizes or not present:
        return ""
    lo, hi = math.log2(min(sizes)), math.log2(max(sizes))
    top = max(float(rows[col].max()) for col, *_ in present) or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(size: float) -> float:
        return LEFT + (0.5 if hi == lo else (math.log2(size) - lo) / (hi - lo)) * plot_w

    def y(value: float) -> float:
        return TOP + plot_h - value / top * plot_h

    parts = [
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="bus bandwidth by size">',
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fff" '
        'stroke="#cbd5e1"/>',
    ]
    for frac in (0, 0.25, 0.5, 0.75, 1):
        value = top * frac
        parts.append(
            f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" font-size="10" text-anchor="end">'
            f"{value:.0f}</text>"
        )
    step = 1 if hi - lo <= 12 else 2
    for exponent in range(math.ceil(lo), math.floor(hi) + 1, step):
        parts.append(
            f'<text x="{x(2**exponent):.1f}" y="{HEIGHT - BOTTOM + 14}" font-size="10" '
            f'text-anchor="middle">{escape(human_bytes(2**exponent))}</text>'
        )
    parts.append(
        f'<text x="12" y="{TOP + plot_h / 2:.0f}" font-size="10" '
        f'transform="rotate(-90 12 {TOP + plot_h / 2:.0f})" text-anchor="middle">GB/s</text>'
    )
    for index, (column, label, color, dash) in enumerate(present):
        points = " ".join(
            f"{x(float(s)):.1f},{y(float(v)):.1f}"
            for s, v in zip(rows["size_bytes"], rows[column], strict=True)
            if s and s > 0 and pd.notna(v)
        )
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="2"{dash_attr} '
            f'points="{points}"/>'
        )
        legend_x = LEFT + 8 + index * 170
        parts.append(
            f'<line x1="{legend_x}" y1="{HEIGHT - 10}" x2="{legend_x + 18}" y2="{HEIGHT - 10}" '
            f'stroke="{color}" stroke-width="2"{dash_attr}/>'
            f'<text x="{legend_x + 22}" y="{HEIGHT - 6}" font-size="10">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def breakdown_svg(snap: dict[str, Any], width: int = 640) -> str:
    """A static stacked bar of the breakdown with a legend (exports load no JavaScript)."""
    span = float(snap.get("span_us") or 0)
    x, bar_w, parts = 10.0, width - 20, []
    for index, (column, label, colour) in enumerate(TRACE_PARTS):
        share = max(0.0, float(snap.get(column) or 0)) / span if span else 0.0
        w = share * bar_w
        parts.append(
            f'<rect x="{x:.1f}" y="10" width="{w:.1f}" height="28" fill="{colour}">'
            f"<title>{escape(label)}: {100 * share:.1f}%</title></rect>"
        )
        x += w
        legend_x = 10 + index * 155
        parts.append(
            f'<rect x="{legend_x}" y="50" width="10" height="10" fill="{colour}"/>'
            f'<text x="{legend_x + 14}" y="59" font-size="11">{escape(label)} '
            f"{100 * share:.1f}%</text>"
        )
    return (
        f'<svg viewBox="0 0 {width} 70" width="{width}" height="70" role="img" '
        f'aria-label="GPU time breakdown">{"".join(parts)}</svg>'
    )
