"""Constructed counter readings for the rates and rules tests (pure, no database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd

from artifacts.fabric import rates, rules

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def frames(
    readings: list[dict[str, Any]],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``readings``: dicts with id, counters {name: value}, and optionally at (seconds after
    T0), artifact, source, host, device, port, units {name: unit}."""
    snapshots, samples = [], []
    for r in readings:
        snapshots.append(
            {
                "snapshot_id": r["id"],
                "artifact_id": r.get("artifact", 1),
                "source": r.get("source", "ethtool_stats"),
                "host": r.get("host", "node1"),
                "device": r.get("device", "mlx5_3"),
                "port": r.get("port"),
                "taken_at": T0 + timedelta(seconds=r.get("at", 0)),
            }
        )
        units = r.get("units", {})
        for name, value in r["counters"].items():
            samples.append(
                {
                    "snapshot_id": r["id"],
                    "counter": name,
                    "value": float(value),
                    "unit": units.get(name, "count"),
                }
            )
    snap = pd.DataFrame(snapshots)
    snap["port"] = snap["port"].astype("object")
    return snap, pd.DataFrame(samples, columns=list(rates.SAMPLE_COLUMNS))


def pair_rates(
    before: dict[str, float], after: dict[str, float], *, dt: float = 10.0, **where: Any
) -> pd.DataFrame:
    snap, samples = frames(
        [{"id": 1, "counters": before, **where}, {"id": 2, "counters": after, "at": dt, **where}]
    )
    return rates.compute_rates(snap, samples)


def rate_rows(frame: pd.DataFrame, artifact_id: int = 1) -> tuple[rules.RateRow, ...]:
    return tuple(
        rules.RateRow(
            artifact_id=artifact_id,
            host=r.host,
            device=r.device,
            port=None if pd.isna(r.port) else int(r.port),
            counter=r.counter,
            derived=bool(r.derived),
            delta=None if pd.isna(r.delta) else float(r.delta),
            dt_seconds=float(r.dt_seconds),
            value=None if pd.isna(r.value) else float(r.value),
            unit=r.unit,
            flag=r.flag,
            at=r.at,
        )
        for r in frame.itertuples(index=False)
    )


def fact(name: str, value: Any, *, host: str = "node1", device: str = "mlx5_0",
         port: int | None = None, extra: dict[str, Any] | None = None,
         artifact_id: int = 1) -> rules.FactRow:  # fmt: skip
    number = (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    )
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return rules.FactRow(
        artifact_id=artifact_id, host=host, device=device, port=port, name=name, value=text,
        number=number, extra=extra or {}, at=T0,
    )  # fmt: skip
