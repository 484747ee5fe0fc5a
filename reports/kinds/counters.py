"""Report kind "counters": NIC/host counter snapshots, before against after (or rack against
rack): rates side by side per host/device/port, and the findings that appear on one side only.

``artifact_ids`` are counter artifacts (ethtool -S, RDMA counters, ...), each holding two or
more snapshots from which the fabric app derived rates. ``group_by: artifact`` (default)
takes exactly two artifacts; ``group_by: label`` puts them on sides by artifact label (two
labels). The side captured first is A.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from artifacts.models import Artifact, CounterRate, Finding
from charts import figures
from reports import comparisons as cmp
from reports.kinds.base import Built, Chart, Collected, ReportInputError, ReportSpec
from reports.kinds.inputs import artifact_pins, two_sided_ids, two_sided_spec
from reports.tables import Column, freeze, thaw

KIND = "counters"
LABEL = "Counter snapshots side by side (NIC/host counters, findings)"
GROUPINGS = ("artifact", "label")
MAX_PORT_ROWS = 5000  # the per-port table keeps the largest changes


def unavailable_reason() -> str | None:
    return None


def normalise(spec: ReportSpec) -> ReportSpec:
    ids = two_sided_ids(spec, kind=KIND, what="counter", groupings=GROUPINGS)
    artifacts = {a.pk: a for a in Artifact.objects.filter(pk__in=ids)}
    missing = [i for i in ids if i not in artifacts]
    if missing:
        raise ReportInputError(f"no such artifact: {', '.join(map(str, missing))}")
    with_rates = set(
        CounterRate.objects.filter(after__artifact_id__in=ids).values_list(
            "after__artifact_id", flat=True
        )
    )
    without = [i for i in ids if i not in with_rates]
    if without:
        raise ReportInputError(
            f"artifact(s) {', '.join(map(str, without))} have no counter rates (a counters "
            "report needs files with two or more snapshots of the counters)"
        )
    if len(_sides([artifacts[i] for i in ids], spec.group_by)) != 2:
        raise ReportInputError(
            "a counters report compares two sides: give two counter artifacts, or "
            "group_by: label with artifacts of two labels"
        )
    return two_sided_spec(spec, kind=KIND, ids=ids)


def _sides(artifacts: list[Artifact], group_by: str) -> list[tuple[str, list[Artifact]]]:
    groups: dict[str, list[Artifact]] = {}
    for artifact in artifacts:
        key = (
            (artifact.label or "(no label)")
            if group_by == "label"
            else f"#{artifact.pk} {artifact.original_name}"
        )
        groups.setdefault(key[:60], []).append(artifact)
    return sorted(groups.items(), key=lambda kv: min(a.captured_at or a.uploaded_at for a in kv[1]))


def estimate(spec: ReportSpec) -> int:
    return CounterRate.objects.filter(after__artifact_id__in=spec.artifact_ids).count()


def collect(spec: ReportSpec) -> Collected:
    artifacts = list(Artifact.objects.filter(pk__in=spec.artifact_ids))
    sides = _sides(artifacts, spec.group_by)
    if len(sides) != 2:
        raise ReportInputError("the report's artifacts no longer fall on two sides")
    frames: dict[str, pd.DataFrame] = {}
    for name, (_, members) in zip("ab", sides, strict=True):
        ids = [a.pk for a in members]
        rates = CounterRate.objects.filter(after__artifact_id__in=ids, flag="").exclude(value=None)
        frames[f"rates_{name}"] = pd.DataFrame(
            list(rates.values_list(*cmp.RATE_COLUMNS)), columns=list(cmp.RATE_COLUMNS)
        )
        findings = Finding.objects.filter(artifact_id__in=ids)
        frames[f"findings_{name}"] = pd.DataFrame(
            list(findings.values_list(*cmp.FINDING_COLUMNS)), columns=list(cmp.FINDING_COLUMNS)
        )
    frames["sides"] = pd.DataFrame(
        {
            "side": ["A", "B"],
            "title": [title for title, _ in sides],
            "artifacts": [len(members) for _, members in sides],
        }
    )
    side_of = {a.pk: s for s, (_, members) in zip("AB", sides, strict=True) for a in members}
    return Collected(
        frames=frames,
        inputs={
            "artifacts": artifact_pins(
                artifacts, lambda a: {"parser_version": a.parser_version, "side": side_of[a.pk]}
            ),
        },
        artifact_ids={a.pk for a in artifacts},
    )


SIDE_TABLE = (
    Column("side", "side"),
    Column("title", "artifacts"),
    Column("artifacts", "count", "int"),
)
SUMMARY_TABLE = (
    Column("counter", "counter"),
    Column("unit", "unit"),
    Column("ports_a", "ports A", "int"),
    Column("ports_b", "ports B", "int"),
    Column("mean_a", "mean A per port", "number", 3),
    Column("mean_b", "mean B per port", "number", 3),
    Column("delta_pct", "Δ %", "percent", 2),
)
PORT_TABLE = (
    Column("host", "host"),
    Column("device", "device"),
    Column("port", "port", "int"),
    Column("counter", "counter"),
    Column("unit", "unit"),
    Column("rate_a", "A", "number", 3),
    Column("rate_b", "B", "number", 3),
    Column("delta", "Δ (B - A)", "number", 3),
    Column("delta_pct", "Δ %", "percent", 2),
)
FINDING_TABLE = (
    Column("presence", "where"),
    Column("severity", "severity"),
    Column("rule", "rule"),
    Column("title", "finding"),
    Column("host", "host"),
    Column("device", "device"),
    Column("port", "port", "int"),
)


def compute(collected: Collected, spec: ReportSpec) -> Built:
    f = collected.frames
    per_port = cmp.counter_rates_side_by_side(f["rates_a"], f["rates_b"])
    summary = cmp.counter_summary(per_port)
    findings = cmp.findings_diff(f["findings_a"], f["findings_b"])
    tables = [
        freeze(f["sides"], name="sides", title="Sides (A = reference)", columns=SIDE_TABLE),
        freeze(
            findings,
            name="findings",
            title="Findings: on one side only, then on both",
            columns=FINDING_TABLE,
        ),
        freeze(
            summary,
            name="counters",
            title="Counter rates: mean per port on each side",
            columns=SUMMARY_TABLE,
        ),
        freeze(
            per_port.head(MAX_PORT_ROWS),
            name="ports",
            title="Counter rates per host, device and port",
            columns=PORT_TABLE,
            note=f"largest relative change first; at most {MAX_PORT_ROWS} rows; counters "
            "zero on both sides are left out",
        ),
    ]
    lines = []
    for presence in ("B only", "A only"):
        rows = findings[findings["presence"] == presence]
        if len(rows):
            titles = "; ".join(rows["title"].head(3))
            lines.append(f"{len(rows)} finding(s) {presence.replace('only', 'only:')} {titles}")
    for row in summary.dropna(subset=["delta_pct"]).head(3).itertuples():
        lines.append(
            f"{row.counter}: {row.mean_a:,.3g} -> {row.mean_b:,.3g} {row.unit} per port "
            f"({row.delta_pct:+.1f} %)"
        )
    return Built(tables=tables, summary=lines or ["no counter changed and no finding differs"])


def charts(tables: list[dict[str, Any]]) -> list[Chart]:
    by_name = {t["name"]: t for t in tables}
    if "counters" not in by_name:
        return []
    summary = thaw(by_name["counters"]).dropna(subset=["delta_pct"]).head(20)
    if summary.empty:
        return []
    frame = pd.DataFrame(
        {
            "name": summary["counter"] + " (" + summary["unit"].fillna("") + ")",
            "delta_us": summary["delta_pct"],
            "change": ["up" if d > 0 else "down" for d in summary["delta_pct"]],
        }
    )
    figure = figures.kernel_delta_bars(frame, top=20)
    figure.update_xaxes(title="Δ % of the mean rate per port (B against A)")
    figure.update_traces(hovertemplate="%{y}<br>%{x:+,.2f} %<extra></extra>")
    return [Chart("counters", "Counters that changed most (Δ % per port)", figure)]
