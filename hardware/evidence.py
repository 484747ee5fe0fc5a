"""What the rules look at and what they produce: plain rows, no Django.

The findings service (findings.py) builds these from the database; tests build them by hand
or from rates.py output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

INFO, WARNING, CRITICAL = "info", "warning", "critical"
SEVERITY_RANK = {INFO: 1, WARNING: 2, CRITICAL: 3}


# --- evidence (plain rows, built by the findings service from the database) ------------------


@dataclasses.dataclass(frozen=True)
class RateRow:
    """A CounterRate row; ``derived`` rows carry the metric in ``value``."""

    artifact_id: int
    host: str
    device: str
    port: int | None
    counter: str
    derived: bool
    delta: float | None
    dt_seconds: float
    value: float | None
    unit: str
    flag: str
    at: Any
    before_artifact_id: int | None = None


@dataclasses.dataclass(frozen=True)
class SampleRow:
    """A counter of a file's latest reading of a device (for ``total`` rules)."""

    artifact_id: int
    host: str
    device: str
    port: int | None
    counter: str
    value: float
    unit: str
    at: Any


@dataclasses.dataclass(frozen=True)
class FactRow:
    artifact_id: int
    host: str
    device: str
    port: int | None
    name: str
    value: str
    number: float | None
    extra: Mapping[str, Any]
    at: Any


@dataclasses.dataclass(frozen=True)
class EventRow:
    artifact_id: int
    kind: str
    host: str
    rank: int | None
    text: str
    extra: Mapping[str, Any]
    at: Any
    line: int | None = None


@dataclasses.dataclass(frozen=True)
class Evidence:
    """Everything one evaluation looks at. ``peer_facts``: facts of other uploads that rules
    comparing hosts may use (same label, same hosts); ``context``: upload metadata such as
    ``roce_priority``, ``expected_rate_gbps``, ``expected_transport``."""

    rates: tuple[RateRow, ...] = ()
    samples: tuple[SampleRow, ...] = ()
    facts: tuple[FactRow, ...] = ()
    events: tuple[EventRow, ...] = ()
    peer_facts: tuple[FactRow, ...] = ()
    context: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    default_at: Any = None


@dataclasses.dataclass(frozen=True)
class Hit:
    rule: str
    severity: str
    title: str
    explanation: str
    kb_slug: str
    host: str
    device: str
    port: int | None
    fingerprint: str
    evidence: dict[str, Any]
    artifact_ids: tuple[int, ...]
    at: Any
