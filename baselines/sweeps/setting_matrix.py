"""The setting matrix, beside the version matrix: rows = values of one setting (any NCCL_*
variable the profile's stacks carry) on a profile, columns = benchmark x size bucket, cells =
median Δ% of busbw against the default (the variable unset). Same maths as the version
matrix (``baselines/matrix.py``), same per-stack means (``SeriesStackStats``): stacks that
share a value of the setting are pooled whatever else differs, which the comparison behind a
cell then shows ("what else changed").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from baselines import matrix as matrix_math
from baselines.formatting import delta_style, pct
from baselines.models import (
    HardwareProfile,
    RunContext,
    Series,
    SeriesStackStats,
    SoftwareStack,
)
from baselines.sweeps.winners import DEFAULT


@dataclass(frozen=True)
class SettingMatrix:
    setting: str
    matrix: matrix_math.Matrix
    rows: list[dict[str, Any]]  # value, cells [(cell, url, style, text)] as the version matrix
    figure_json: str | None
    has_default: bool


def profile_settings(profile: HardwareProfile) -> list[str]:
    """The NCCL_* variables any stack of the profile's runs sets."""
    stack_ids = set(
        RunContext.objects.filter(profile=profile).values_list("stack_id", flat=True).distinct()
    )
    names: set[str] = set()
    for env in SoftwareStack.objects.filter(pk__in=stack_ids).values_list("nccl_env", flat=True):
        names.update(env or {})
    return sorted(names)


def _value_key(value: str) -> str:
    return ("0" if value == DEFAULT else "1") + value  # the default first: the reference


def setting_matrix_for(profile: HardwareProfile, setting: str) -> SettingMatrix:
    series = {
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
    values = {
        pk: (env or {}).get(setting, DEFAULT)
        for pk, env in SoftwareStack.objects.filter(pk__in={g[1] for g in grouped}).values_list(
            "pk", "nccl_env"
        )
    }
    pooled: dict[tuple[str, str, int, int], list[float]] = {}
    for series_id, stack_id, mean, runs in grouped:
        total = pooled.setdefault((values[stack_id], *series[series_id]), [0.0, 0])
        total[0] += mean * runs
        total[1] += runs
    points = [
        {"version": k[0], "version_key": _value_key(k[0]), "collective": k[1], "nranks": k[2],
         "size_bytes": k[3], "mean": t / n, "runs": n}
        for k, (t, n) in pooled.items()
        if n
    ]  # fmt: skip
    result = matrix_math.version_matrix(points)
    head = reverse("baselines:setting-compare") + "?"
    rows = []
    for value in result.versions:
        cells: list[tuple[Any, str, str, str]] = []
        for index, column in enumerate(result.columns):
            cell = result.cell(value, index)
            if cell is None:
                cells.append((None, "", "", ""))
                continue
            url = head + urlencode(
                {"profile": profile.slug, "setting": setting, "value": value,
                 "collective": column.collective, "nranks": column.nranks,
                 "low": column.low_bytes, "high": min(column.high_bytes, 2**53)}
            )  # fmt: skip
            text = "ref" if cell.is_reference else pct(cell.delta_pct)
            cells.append((cell, url, delta_style(cell.delta_pct), text))
        rows.append({"version": value, "cells": cells})
    figure = None
    if result.columns:
        from charts.figures import figure_json, version_matrix_heatmap

        figure = figure_json(
            version_matrix_heatmap(
                result.grid(),
                rows=list(result.versions),
                columns=[f"{c.benchmark} {c.bucket}" for c in result.columns],
                links=[[c[1] for c in row["cells"]] for row in rows],
            )
        )
    has_default = DEFAULT in result.versions
    return SettingMatrix(setting, result, rows, figure, has_default)


@dataclass(frozen=True)
class SettingComparison:
    reference_label: str
    reference_run_ids: tuple[int, ...]
    candidate_run_ids: tuple[int, ...]
    result: Any  # curve_adapter.CurveResult | None
    reference_stack_id: int | None
    candidate_stack_id: int | None


def setting_comparison(
    *, profile: HardwareProfile, setting: str, value: str, collective: str, nranks: int
) -> SettingComparison:
    """The newest runs with ``setting`` = ``value`` against the newest with it unset."""
    from baselines.comparing import DEFAULT_TOLERANCE_PCT, VERSION_RUNS, compare_runs  # pandas

    contexts = RunContext.objects.filter(
        profile=profile, run__collective=collective, run__nranks=nranks, run__errors=[]
    ).order_by("-run__measured_at", "-run_id")
    stacks = {
        pk: (env or {}).get(setting, DEFAULT)
        for pk, env in SoftwareStack.objects.filter(
            pk__in=set(contexts.values_list("stack_id", flat=True))
        ).values_list("pk", "nccl_env")
    }

    def newest(wanted: str) -> list[tuple[int, int]]:
        picked = [s for s, v in stacks.items() if v == wanted]
        return list(contexts.filter(stack_id__in=picked).values_list("run_id", "stack_id"))[
            :VERSION_RUNS
        ]

    candidates, references = newest(value), newest(DEFAULT)
    ref_ids = tuple(r for r, _ in references)
    cand_ids = tuple(r for r, _ in candidates)
    result = None
    if ref_ids and cand_ids and set(ref_ids) != set(cand_ids):
        result = compare_runs(ref_ids, cand_ids, tolerance_pct=DEFAULT_TOLERANCE_PCT)
    return SettingComparison(
        reference_label=f"{setting} unset (NCCL's default)",
        reference_run_ids=ref_ids,
        candidate_run_ids=cand_ids,
        result=result,
        reference_stack_id=references[0][1] if references else None,
        candidate_stack_id=candidates[0][1] if candidates else None,
    )
