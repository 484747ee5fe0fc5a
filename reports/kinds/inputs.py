"""Reading and pinning a report's inputs: what several report kinds do alike.

A report stores pins of the files it was built from (hash, name, label, parser version), so
a reader can tell later whether the evidence behind the numbers has changed since.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from artifacts.models import Artifact, Measurement
from reports import comparisons as cmp
from reports.kinds.base import ReportInputError, ReportSpec


def measurement_points(run_ids: set[int]) -> pd.DataFrame:
    """The out-of-place points of these runs, as the comparisons expect them."""
    values = Measurement.objects.filter(run_id__in=run_ids).values_list(
        "run_id", "size_bytes", "oop_busbw_gbps", "oop_algbw_gbps", "oop_time_us"
    )
    return pd.DataFrame(list(values), columns=list(cmp.POINT_COLUMNS))


def artifact_pins(
    artifacts: Iterable[Artifact], extra: Callable[[Artifact], dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """One pin per distinct artifact, in id order; ``extra`` adds a kind's own fields."""
    return [
        {
            "artifact_id": a.pk,
            "sha256": a.sha256,
            "name": a.original_name,
            "label": a.label,
            **(extra(a) if extra else {}),
        }
        for a in sorted(set(artifacts), key=lambda a: a.pk)
    ]


def two_sided_ids(
    spec: ReportSpec, *, kind: str, what: str, groupings: tuple[str, ...]
) -> tuple[int, ...]:
    """The distinct artifact ids of a two-sided kind (A against B), after the checks all make.

    ``what`` names the files the kind takes ("counter", "trace") in the error messages.
    """
    if spec.run_ids:
        raise ReportInputError(
            f"a {kind} report takes artifact_ids ({what} artifacts), not run_ids"
        )
    if spec.group_by not in groupings:
        raise ReportInputError(
            f"{kind} are grouped by {' or '.join(groupings)}, not {spec.group_by!r}"
        )
    return tuple(dict.fromkeys(spec.artifact_ids))


def two_sided_spec(spec: ReportSpec, *, kind: str, ids: Iterable[int]) -> ReportSpec:
    """The normalised request of a two-sided kind: its artifacts, sorted, and the grouping."""
    return ReportSpec(
        kind=kind, title=spec.title, artifact_ids=tuple(sorted(ids)), group_by=spec.group_by
    )
