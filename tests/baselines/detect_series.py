"""Seeded synthetic series shared by the detection tests (level 100, 1 % Gaussian noise)."""

from __future__ import annotations

import numpy as np

LEVEL = 100.0


def noise(seed: int, n: int = 300, pct: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return LEVEL * (1.0 + pct / 100.0 * rng.normal(size=n))


def step(seed: int, at: int, pct: float, n: int = 300) -> np.ndarray:
    y = noise(seed, n)
    y[at:] *= 1.0 + pct / 100.0
    return y


def dip(seed: int, at: int, length: int, pct: float, n: int = 300) -> np.ndarray:
    y = noise(seed, n)
    y[at : at + length] *= 1.0 - pct / 100.0
    return y


def bimodal(seed: int, at: int, gap_pct: float, p: float, n: int = 400) -> tuple[np.ndarray, int]:
    """From ``at`` on, each point is on the lower level with probability p; also returns the
    first point actually on the lower level (where the change becomes visible)."""
    rng = np.random.default_rng(seed + 1000)
    y = noise(seed, n)
    flips = rng.random(n - at) < p
    y[at:][flips] *= 1.0 - gap_pct / 100.0
    return y, at + int(np.argmax(flips))
