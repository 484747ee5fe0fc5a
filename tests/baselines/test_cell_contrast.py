"""Δ% cells keep readable text on every shade (WCAG AA 4.5:1), red and green alike."""

from __future__ import annotations

import re

import pytest

from baselines.formatting import delta_style


def _luminance(rgb: tuple[float, ...]) -> float:
    def channel(value: float) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@pytest.mark.parametrize("delta", [x / 2 for x in range(-24, 25)])
def test_every_delta_cell_has_at_least_4_5_to_1_contrast(delta: float) -> None:
    style = delta_style(delta)
    match = re.search(r"rgba\((\d+), (\d+), (\d+), ([\d.]+)\); color: (#\w+)", style)
    assert match, style
    *rgb, alpha = (float(v) for v in match.groups()[:4])
    background = _luminance(tuple(255 * (1 - alpha) + c * alpha for c in rgb))
    ink = _luminance((255, 255, 255) if match[5] == "#fff" else (15, 23, 42))
    light, dark = max(background, ink), min(background, ink)
    assert (light + 0.05) / (dark + 0.05) >= 4.5, style
