"""Report kinds, pluggable: ``KINDS = {kind: "dotted.module"}``, imported lazily.

A kind module exposes ``KIND``, ``LABEL`` and the functions of ``reports.kinds.base.ReportKind``:
``unavailable_reason()``, ``normalise(spec)``, ``estimate(spec)``, ``collect(spec)`` (database
reads: frames and pins), ``compute(collected, spec)`` (pure: pandas tables and verdict lines)
and ``charts(tables)`` (plotly figures drawn from the *stored* tables). Adding a kind = one
module here plus a line in ``KINDS``; the service, pages, API and exports need no change.
"""

from __future__ import annotations

import importlib
from typing import cast

from reports.kinds.base import ReportInputError, ReportKind, ReportKindUnavailable, ReportSpec

KINDS: dict[str, str] = {
    "runs": "reports.kinds.runs",
    "profiles": "reports.kinds.profiles",
    "npi": "reports.kinds.npi",
    "traces": "reports.kinds.traces",
    "counters": "reports.kinds.counters",
}

__all__ = ["KINDS", "ReportInputError", "ReportKindUnavailable", "ReportSpec", "get_kind"]


def get_kind(kind: str, *, require_available: bool = True) -> ReportKind:
    """The kind's module; unknown kinds and kinds that cannot be built yet raise clearly."""
    if kind not in KINDS:
        raise ReportInputError(f"unknown report kind {kind!r}; known kinds: {', '.join(KINDS)}")
    module = cast(ReportKind, importlib.import_module(KINDS[kind]))
    if require_available and (reason := module.unavailable_reason()):
        raise ReportKindUnavailable(f"report kind {kind!r} is not available yet: {reason}")
    return module


def kind_choices() -> list[tuple[str, str]]:
    return [(k, kind_label(k)) for k in KINDS]


def kind_label(kind: str) -> str:
    if kind not in KINDS:
        return kind
    return cast(ReportKind, importlib.import_module(KINDS[kind])).LABEL
