"""What every report kind shares: the build request, the errors, the kind protocol."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import pandas as pd
import plotly.graph_objects as go


class ReportInputError(Exception):
    """The request cannot make a report (unknown ids, nothing to compare); nothing is saved."""


class ReportKindUnavailable(ReportInputError):
    """The kind is known but its evidence has no models yet."""


@dataclass(frozen=True)
class ReportSpec:
    """A build request, normalised by the kind (what a saved report stores as ``request``).

    ``run_refs`` are (artifact_id, index) pairs: run ids change when an artifact is re-parsed,
    its position in the file does not, so a re-build finds the same runs again.
    """

    kind: str
    title: str
    run_ids: tuple[int, ...] = ()
    artifact_ids: tuple[int, ...] = ()
    profile_ids: tuple[int, ...] = ()
    with_baseline: bool = False
    group_by: str = "artifact"
    run_refs: tuple[tuple[int, int], ...] = ()

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["run_refs"] = [list(ref) for ref in self.run_refs]
        for key in ("run_ids", "artifact_ids", "profile_ids"):
            data[key] = list(data[key])
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReportSpec:
        return cls(
            kind=str(data["kind"]),
            title=str(data.get("title", "")),
            run_ids=tuple(int(i) for i in data.get("run_ids", ())),
            artifact_ids=tuple(int(i) for i in data.get("artifact_ids", ())),
            profile_ids=tuple(int(i) for i in data.get("profile_ids", ())),
            with_baseline=bool(data.get("with_baseline", False)),
            group_by=str(data.get("group_by") or "artifact"),
            run_refs=tuple((int(a), int(i)) for a, i in data.get("run_refs", ())),
        )


@dataclass
class Collected:
    """What ``collect`` read: pandas frames for ``compute`` and the pins to store."""

    frames: dict[str, pd.DataFrame]
    inputs: dict[str, Any]
    artifact_ids: set[int] = field(default_factory=set)


@dataclass
class Built:
    tables: list[dict[str, Any]]
    summary: list[str]


@dataclass(frozen=True)
class Chart:
    name: str
    title: str
    figure: go.Figure


class ReportKind(Protocol):
    KIND: str
    LABEL: str

    def unavailable_reason(self) -> str | None: ...
    def normalise(self, spec: ReportSpec) -> ReportSpec: ...
    def estimate(self, spec: ReportSpec) -> int: ...
    def collect(self, spec: ReportSpec) -> Collected: ...
    def compute(self, collected: Collected, spec: ReportSpec) -> Built: ...
    def charts(self, tables: list[dict[str, Any]]) -> list[Chart]: ...
