"""Colours and partitions the interactive (figures) and static (svg) charts share."""

from __future__ import annotations

# (column, legend name, colour): a partition of a trace's GPU span, so a stack adds up to it.
TRACE_PARTS = (
    ("compute_us", "compute", "#2563eb"),
    ("exposed_comm_us", "exposed communication", "#f59e0b"),
    ("memory_other_us", "memory / other", "#8b5cf6"),
    ("idle_us", "idle", "#cbd5e1"),
)
