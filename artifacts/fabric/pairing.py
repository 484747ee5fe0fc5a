"""Rebuild the CounterRate rows an artifact's snapshots take part in (reads rows, calls rates.py).

A series is every snapshot of one (tool, host, device, port), across uploads. When an
artifact is (re)parsed its snapshots may land between two older ones, so for each series
it touches we take the window from the snapshot just before it to the snapshot just after
it, drop the rates ending inside that window and pair it again. The returned artifact ids
are those whose rates changed (the successor upload's first pair, too), so their findings
can be re-evaluated.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from django.db.models import Q

from artifacts.fabric import rates
from artifacts.models import Artifact, CounterRate, CounterSample, CounterSnapshot

_SERIES = ("source", "host", "device", "port")


def refresh_rates(artifact: Artifact, *, max_gap_s: float = rates.MAX_GAP_S) -> set[int]:
    """Re-pair every series the artifact touches; returns the artifact ids whose rates changed."""
    own = list(artifact.counter_snapshots.order_by().values("id", "taken_at", *_SERIES))
    touched: set[int] = {artifact.pk}
    if not own:
        CounterRate.objects.filter(after__artifact=artifact).delete()
        return touched
    window_ids: set[int] = set()
    recompute_after: set[int] = set()
    series: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in own:
        series.setdefault(tuple(row[k] for k in _SERIES), []).append(row)
    for key, rows in series.items():
        first = min(r["taken_at"] for r in rows)
        last = max(r["taken_at"] for r in rows)
        same = _series_filter(key)
        others = CounterSnapshot.objects.filter(same).exclude(artifact=artifact).order_by()
        before = others.filter(taken_at__lt=first).order_by("-taken_at", "-id").first()
        after = others.filter(taken_at__gt=last).order_by("taken_at", "id").first()
        low = before.taken_at if before else first
        high = after.taken_at if after else last
        inside = CounterSnapshot.objects.filter(same, taken_at__gte=low, taken_at__lte=high)
        for snapshot_id, artifact_id, taken_at in inside.values_list(
            "id", "artifact_id", "taken_at"
        ):
            window_ids.add(snapshot_id)
            if before is None or taken_at > before.taken_at or artifact_id == artifact.pk:
                recompute_after.add(snapshot_id)
                touched.add(artifact_id)
    CounterRate.objects.filter(
        Q(after_id__in=recompute_after) | Q(after__artifact=artifact)
    ).delete()
    snapshots = pd.DataFrame(
        CounterSnapshot.objects.filter(id__in=window_ids).values(
            "id", "artifact_id", "taken_at", *_SERIES
        )
    ).rename(columns={"id": "snapshot_id"})
    samples = pd.DataFrame(
        CounterSample.objects.filter(snapshot_id__in=window_ids).values(
            "snapshot_id", "counter", "value", "unit"
        ),
        columns=list(rates.SAMPLE_COLUMNS),
    )
    snapshots["port"] = snapshots["port"].astype("object")
    frame = rates.compute_rates(snapshots, samples, max_gap_s=max_gap_s, only_after=recompute_after)
    CounterRate.objects.bulk_create(_rate_rows(frame), batch_size=5000)
    return touched


def _series_filter(key: tuple[Any, ...]) -> Q:
    source, host, device, port = key
    q = Q(source=source, host=host, device=device)
    return q & (Q(port__isnull=True) if port is None else Q(port=port))


def _rate_rows(frame: pd.DataFrame) -> list[CounterRate]:
    out = []
    for r in frame.itertuples(index=False):
        out.append(
            CounterRate(
                before_id=int(r.before_id),
                after_id=int(r.after_id),
                host=r.host or "",
                device=r.device or "",
                port=_int_or_none(r.port),
                counter=str(r.counter)[:200],
                derived=bool(r.derived),
                delta=_float_or_none(r.delta),
                dt_seconds=float(r.dt_seconds),
                value=_float_or_none(r.value),
                unit=str(r.unit)[:20],
                flag=str(r.flag),
                at=pd.Timestamp(r.at).to_pydatetime(),
            )
        )
    return out


def _float_or_none(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) or math.isinf(number) else number


def _int_or_none(value: Any) -> int | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else int(number)
