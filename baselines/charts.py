"""Database rows -> the DataFrames that ``charts.figures`` and ``baselines.matrix`` take.

Adapters only: the figures are pure plotly functions, the matrix is pure pandas; this module
does the reads (a fixed number of queries each) and the reshaping.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import pandas as pd
from django.db.models import Avg, F
from django.urls import reverse

from baselines import matrix as matrix_math
from baselines.comparing import baseline_for_identity
from baselines.facts import COMPONENT_LABELS, change_text, diff_stacks
from baselines.formatting import delta_style, pct
from baselines.models import (
    VERSION_FIELDS,
    Alert,
    Baseline,
    HardwareProfile,
    Series,
    SeriesPoint,
    SeriesStackStats,
    SoftwareStack,
)
from baselines.querysets import series_alerts, series_points
from charts.figures import (
    Spec,
    delta_band_spec,
    figure_json,
    series_history,
    version_matrix_heatmap,
)

ORDERS = ("time", "version")


def _stack_label(row: dict[str, Any]) -> str:
    parts = [f"NCCL {row['stack__nccl']}" if row.get("stack__nccl") else ""]
    if row.get("stack__cuda"):
        parts.append(f"CUDA {row['stack__cuda']}")
    if row.get("stack__driver"):
        parts.append(f"driver {row['stack__driver']}")
    return ", ".join(p for p in parts if p) or f"stack #{row['stack_id']}"


@dataclass(frozen=True)
class SeriesChart:
    figure: Spec  # plain dicts; the alert pages add their change point before encoding
    points: list[dict[str, Any]]
    baseline: Baseline | None
    band: tuple[float, float, str] | None

    @functools.cached_property
    def figure_json(self) -> str:
        return figure_json(self.figure)


def series_chart(series: Series, *, order: str = "time", component: str = "nccl") -> SeriesChart:
    """busbw (or the series' metric) in time or version order, with the baseline band, the
    alerts and the stack changes marked."""
    points = series_points(series)
    if component not in VERSION_FIELDS:
        component = "nccl"
    if order == "version":
        points.sort(key=lambda p: (_key(p, component), p["measured_at"], p["run_id"]))
    labels: dict[int, str] = {}  # per stack: a series has a few stacks, thousands of points
    for position, p in enumerate(points):
        p["x"] = position if order == "version" else p["measured_at"]
        label = labels.get(p["stack_id"])
        if label is None:
            label = labels[p["stack_id"]] = _stack_label(p)
        p["stack"] = label
    x_of_run = {p["run_id"]: p["x"] for p in points}
    baseline = baseline_for_identity(
        series.profile_id, series.benchmark, series.collective, series.nranks, series.dtype
    )
    band = _band(series, baseline)
    series_alert_rows = list(series_alerts(series))  # the markers and the drift bands
    alerts = [
        {
            "x": x_of_run[a.run_id],
            "value": a.value_after,
            "kind": a.kind,
            "text": f"{a.get_kind_display()} {a.magnitude_pct:+.1f}% ({a.get_status_display()})",
        }
        for a in series_alert_rows
        if a.run_id in x_of_run and a.value_after is not None
    ]
    figure = series_history(
        # object columns: the figure takes the values back out as they are; a datetime64
        # column would hand back a pandas Timestamp per point, twice as slow to encode
        pd.DataFrame(points, columns=["x", "value", "stack", "run_id"], dtype=object)
        if points
        else _empty(),
        unit=series.unit,
        band=band,
        alerts=pd.DataFrame(alerts, columns=["x", "value", "kind", "text"]),
        stack_changes=pd.DataFrame(
            _stack_changes(points, order, component), columns=["x", "label"]
        ),
        ticks=_version_ticks(points, component) if order == "version" else None,
    )
    figure["data"] += _drift_segments(series_alert_rows, x_of_run)
    return SeriesChart(figure, points, baseline, band)


def _drift_segments(alerts: list[Alert], x_of_run: dict[int, Any]) -> list[Spec]:
    """Each drift alert as a shaded sloped band from its fitted start level to its fitted
    end level: a drift is a stretch, not a point, and a band shows both where it went and
    how fast."""
    traces = []
    for alert in alerts:
        if alert.kind != "drift":
            continue
        details = alert.details or {}
        x0 = x_of_run.get(details.get("start_run_id"))  # type: ignore[arg-type]
        x1 = x_of_run.get(details.get("end_run_id"))  # type: ignore[arg-type]
        v0, v1 = alert.value_before, alert.value_after
        if x0 is None or x1 is None or v0 is None or v1 is None:
            continue
        # Thick enough to see, thin enough not to hide the points: 15 % of the move, at
        # least half a percent of the level.
        half = max(abs(v1 - v0) * 0.15, abs(v0) * 0.005)
        rate = details.get("rate_pct")
        unit = details.get("rate_unit", "run")
        label = f"drift {alert.magnitude_pct:+.1f}%" + (
            f" ({rate:+.2g}%/{unit})" if isinstance(rate, int | float) else ""
        )
        traces.append(
            {"type": "scatter", "x": [x0, x1, x1, x0, x0],
             "y": [v0 - half, v1 - half, v1 + half, v0 + half, v0 - half], "fill": "toself",
             "fillcolor": "rgba(230, 126, 34, 0.22)",
             "line": {"width": 1, "color": "rgba(230, 126, 34, 0.6)", "dash": "dot"},
             "mode": "lines", "name": label, "text": f"{label} ({alert.get_status_display()})",
             "hoverinfo": "text", "showlegend": False}
        )  # fmt: skip
    return traces


def _key(point: dict[str, Any], component: str) -> str:
    return str(point.get(f"stack__{component}_key") or "")


def _empty() -> pd.DataFrame:
    return pd.DataFrame(columns=["x", "value", "stack", "run_id"])


def _band(series: Series, baseline: Baseline | None) -> tuple[float, float, str] | None:
    if baseline is None:
        return None
    values = list(
        SeriesPoint.objects.filter(series=series, run__in=baseline.runs.all()).values_list(
            "value", flat=True
        )
    )
    if not values:
        return None
    mean = sum(values) / len(values)
    tol = baseline.tolerance_pct / 100.0
    low, high = min(min(values), mean * (1 - tol)), max(max(values), mean * (1 + tol))
    return low, high, f"baseline {baseline.name} ±{baseline.tolerance_pct:g}%"


def _stack_changes(
    points: list[dict[str, Any]], order: str, component: str
) -> list[dict[str, Any]]:
    """Where consecutive points (in the chart's order) ran on different stacks."""
    ids = {p["stack_id"] for p in points}
    stacks = {s.pk: s for s in SoftwareStack.objects.filter(pk__in=ids)} if len(ids) > 1 else {}
    changes = []
    for before, after in itertools.pairwise(points):
        if before["stack_id"] == after["stack_id"]:
            continue
        a, b = stacks.get(before["stack_id"]), stacks.get(after["stack_id"])
        if a is None or b is None:
            continue
        diff = diff_stacks(a.versions(), a.nccl_env, b.versions(), b.nccl_env)
        if order == "version":
            diff = [c for c in diff if c.name == component] or diff
        changes.append({"x": after["x"], "label": change_text(diff, limit=2)})
    return changes


def _version_ticks(points: list[dict[str, Any]], component: str) -> list[tuple[float, str]]:
    ticks: list[tuple[float, str]] = []
    seen: set[str] = set()
    for p in points:
        version = str(p.get(f"stack__{component}") or "?")
        if version not in seen:
            seen.add(version)
            ticks.append((p["x"], version))
    return ticks


# ----------------------------------------------------------------------------- comparisons


def comparison_figure(result_json: dict[str, Any], *, label: str = "this run") -> str | None:
    """Δ% per size with its uncertainty band (``curve_compare``'s sizes), as plotly JSON."""
    sizes = result_json.get("sizes") or []
    if not sizes:
        return None
    frame = pd.DataFrame(sizes)
    frame["candidate"] = label
    return figure_json(
        delta_band_spec(
            frame[["candidate", "size_bytes", "delta_pct", "low_pct", "high_pct", "change"]]
        )
    )


# ---------------------------------------------------------------------------- version matrix


@dataclass(frozen=True)
class MatrixView:
    matrix: matrix_math.Matrix
    component: str
    figure_json: str | None
    rows: list[dict[str, Any]]  # the HTML table: version, cells [(cell, url, style, text)]


def version_matrix_for(profile: HardwareProfile, component: str = "nccl") -> MatrixView:
    """Four queries: the profile's busbw series, their per-stack means (``SeriesStackStats``,
    kept up to date by filing: a few hundred rows however many points), those stacks, and the
    pinned baselines' levels."""
    if component not in VERSION_FIELDS:
        component = "nccl"
    # Tuples, not model instances: a profile has hundreds of series and thousands of
    # per-stack rows, and building a model per row cost more than the query.
    series: dict[int, tuple[str, int, int]] = {
        pk: (collective, nranks, size)
        for pk, collective, nranks, size in Series.objects.filter(
            profile=profile, metric="busbw"
        ).values_list("pk", "collective", "nranks", "size_bytes")
    }
    grouped = list(
        SeriesStackStats.objects.filter(series_id__in=list(series)).values_list(
            "series_id", "stack_id", "mean", "points"
        )
    )
    versions = {
        pk: (version, key)
        for pk, version, key in SoftwareStack.objects.filter(
            pk__in={row[1] for row in grouped}
        ).values_list("pk", component, f"{component}_key")
    }
    # Several stacks can share a version of this component: pool their points.
    pooled: dict[tuple[str, str, str, int, int], list[float]] = {}
    for series_id, stack_id, mean, runs in grouped:
        version, version_key = versions[stack_id]
        if not version:
            continue
        total = pooled.setdefault((version, version_key, *series[series_id]), [0.0, 0])
        total[0] += mean * runs
        total[1] += runs
    points = [
        {"version": k[0], "version_key": k[1], "collective": k[2], "nranks": k[3],
         "size_bytes": k[4], "mean": t / n, "runs": n}
        for k, (t, n) in pooled.items()
        if n
    ]  # fmt: skip
    baselines = list(Baseline.objects.filter(profile=profile, active=True).order_by("created_at"))
    newest = {(b.collective, b.nranks): b for b in baselines}  # the newest wins
    names = {bench: b.name for bench, b in newest.items()}
    base_rows: list[dict[str, Any]] = []
    if newest:
        wanted = {b.pk for b in newest.values()}
        means = (
            SeriesPoint.objects.filter(series_id__in=list(series), run__baselines__in=wanted)
            .values("series_id", baseline=F("run__baselines"))
            .annotate(mean=Avg("value"))
            .order_by()
        )
        for r in means:
            collective, nranks, size = series[r["series_id"]]
            if (
                newest.get((collective, nranks))
                and r["baseline"] == newest[(collective, nranks)].pk
            ):
                base_rows.append(
                    {"collective": collective, "nranks": nranks, "size_bytes": size,
                     "mean": r["mean"]}
                )  # fmt: skip
    result = matrix_math.version_matrix(points, base_rows, names)
    urls = _CompareUrls(profile, component, result.columns)
    rows = []
    for version in result.versions:
        cells = []
        for index in range(len(result.columns)):
            cell = result.cell(version, index)
            if cell is None:
                cells.append((None, "", "", ""))
                continue
            text = "ref" if cell.is_reference else pct(cell.delta_pct)
            cells.append((cell, urls.url(version, index), delta_style(cell.delta_pct), text))
        rows.append({"version": version, "cells": cells})
    figure = None
    if result.columns:
        labels = [f"{c.benchmark} {c.bucket}" for c in result.columns]
        links = [[cell[1] for cell in row["cells"]] for row in rows]
        figure = figure_json(
            version_matrix_heatmap(
                result.grid(), rows=list(result.versions), columns=labels, links=links
            )
        )
    return MatrixView(result, component, figure, rows)


class _CompareUrls:
    """The comparison link of each matrix cell. The query string is encoded in parts (the
    profile's, each version's, each column's) and joined per cell: one ``urlencode`` of
    seven parameters per cell was a tenth of the page."""

    def __init__(
        self, profile: HardwareProfile, component: str, columns: tuple[matrix_math.Column, ...]
    ) -> None:
        self.head = f"{_compare_path()}?" + urlencode(
            {"profile": profile.slug, "component": component}
        )
        self.columns = [
            urlencode(
                {
                    "collective": c.collective,
                    "nranks": c.nranks,
                    "low": c.low_bytes,
                    "high": min(c.high_bytes, 2**53),
                }
            )
            for c in columns
        ]
        self.versions: dict[str, str] = {}

    def url(self, version: str, index: int) -> str:
        if version not in self.versions:
            self.versions[version] = urlencode({"version": version})
        return f"{self.head}&{self.versions[version]}&{self.columns[index]}"


@functools.cache
def _compare_path() -> str:
    return reverse("baselines:version-compare")  # once, not once per matrix cell


def component_label(component: str) -> str:
    return COMPONENT_LABELS.get(component, component)
