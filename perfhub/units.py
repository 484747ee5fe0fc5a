"""Human-readable units shared by tables, charts and exports."""

from __future__ import annotations

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_bytes(n: float | int | None) -> str:
    """1024-based sizes the way nccl-tests users say them: 8 B, 256 KiB, 1 GiB."""
    if n is None:
        return ""
    value = float(n)
    for unit in _UNITS:
        if abs(value) < 1024 or unit == _UNITS[-1]:
            text = f"{value:.0f}" if value == int(value) else f"{value:.1f}"
            return f"{text} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
