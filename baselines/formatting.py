"""Numbers as the baselines pages print them (template filters and precomputed cells)."""

from __future__ import annotations

from typing import Any


def pct(value: Any, digits: int = 1) -> str:
    """+3.2% / -8.0% with a real minus sign (U+2212), as in the summaries; "" for None."""
    if value is None:
        return ""
    number = round(float(value), int(digits))  # -0.04 shows as 0.0%, not as -0.0%
    text = f"{abs(number):.{int(digits)}f}%"
    return ("+" if number > 0 else "\u2212" if number < 0 else "") + text


def delta_style(value: Any, limit: float = 10.0) -> str:
    """Inline background for a Δ% cell: red (slower) - white - green (faster), capped."""
    if value is None:
        return ""
    share = max(-1.0, min(1.0, float(value) / float(limit)))
    # At most 60 % colour, so dark ink keeps 4.5:1 (WCAG AA) on every shade: between about
    # 60 and 75 % neither white nor dark text reads well on this red.
    alpha = round(abs(share) * 0.6, 3)
    colour = "21, 128, 61" if share > 0 else "153, 27, 27"
    return f"background: rgba({colour}, {alpha}); color: #0f172a;"
