"""From counter snapshots to deltas, per-second rates and the derived RoCE metrics. Pure.

Three steps, each a function over pandas frames so they can be tested without a database:

1. ``pair_snapshots``: the snapshots of one series (same host, device, port and tool) in
   time order; each one is paired with the one before it. Readings from one file always
   pair; readings from two uploads pair only when at most ``max_gap_s`` apart, because a
   rate averaged over days says nothing about the incident at hand.
2. ``counter_deltas``: for each pair, every counter both readings hold: delta, Δt, rate.
   A counter that went backwards is *flagged* (``reset``, or ``wrap`` when it was near a
   32/64-bit limit) and gets no delta and no rate: a negative rate would be a lie. Equal
   times (a before/after file without dates) give deltas but no rate (``no_time``).
3. ``derived_metrics``: the numbers engineers reason in (docs/fabric.md, REFERENCE.md
   "NIC counters"): pause-duration % per priority, ECN-marked share of received RoCE
   packets, out-of-sequence packets per million, goodput from ``port_xmit_data`` x 4.
"""

from __future__ import annotations

import re
from collections.abc import Collection

import numpy as np
import pandas as pd

# Cross-upload pairs further apart than this are not turned into rates.
MAX_GAP_S = 24 * 3600.0

SNAPSHOT_COLUMNS = ("snapshot_id", "artifact_id", "source", "host", "device", "port", "taken_at")
SAMPLE_COLUMNS = ("snapshot_id", "counter", "value", "unit")
RATE_COLUMNS = (
    "before_id", "after_id", "source", "host", "device", "port", "counter", "derived",
    "delta", "dt_seconds", "value", "unit", "flag", "at",
)  # fmt: skip

# Units of readings that are levels, not running totals: their "rate" means nothing.
GAUGE_UNITS = frozenset(
    {"C", "W", "MHz", "%", "MiB", "lanes", "ratio", "min", "Gb/s", "GB/s", "bytes/s"}
    | {"dBm", "mV", "mA"}  # mlxlink's module readings
)
# nvidia-smi mixes levels and totals under the unit "count": these are the running totals.
_NVIDIA_SMI_TOTALS = (
    "ecc.errors.",
    "retired_pages.",
    "remapped_rows.",
    "pcie.replay_counter",
    "clocks_event_reasons_counters.",
)
# IB PortCounters saturate (stop) at the top of their width instead of wrapping.
SATURATION_VALUES = frozenset({2**8 - 1, 2**16 - 1, 2**32 - 1, 2**64 - 1})


def is_running_total(source: str, counter: str, unit: str) -> bool:
    """Whether deltas of this counter are meaningful (a total that only grows)."""
    if unit in GAUGE_UNITS:
        return False
    if source == "nvidia_smi":
        return counter.startswith(_NVIDIA_SMI_TOTALS)
    # dcgm dmon prints levels (utilisation, power, temperature); perf stat prints totals
    # over its whole run, or (-I) per-interval counts: neither pairs into rates
    return source not in ("dcgm", "perf_stat")


# --- 1. pairing -------------------------------------------------------------------------------


def pair_snapshots(
    snapshots: pd.DataFrame,
    *,
    max_gap_s: float = MAX_GAP_S,
    only_after: Collection[int] | None = None,
) -> pd.DataFrame:
    """Consecutive snapshots of each series: ``before_id, after_id, dt_seconds, at``.

    ``snapshots`` has SNAPSHOT_COLUMNS (``port`` may be null, ``taken_at`` datetimes);
    ties in time keep the order of ``snapshot_id`` (the order they were read in the file).
    ``only_after``: keep only pairs whose later snapshot is one of these ids.
    """
    columns = ["before_id", "after_id", "dt_seconds", "at"]
    if snapshots.empty:
        return pd.DataFrame(columns=columns)
    frame = snapshots.copy()
    frame["_port"] = frame["port"].fillna(-1).astype("int64")
    frame["taken_at"] = pd.to_datetime(frame["taken_at"], utc=True)
    frame = frame.sort_values(["source", "host", "device", "_port", "taken_at", "snapshot_id"])
    series = frame.groupby(["source", "host", "device", "_port"], sort=False)
    frame["before_id"] = series["snapshot_id"].shift(1)
    frame["_before_at"] = series["taken_at"].shift(1)
    frame["_before_artifact"] = series["artifact_id"].shift(1)
    pairs = frame[frame["before_id"].notna()].copy()
    pairs["dt_seconds"] = (pairs["taken_at"] - pairs["_before_at"]).dt.total_seconds()
    same_file = pairs["_before_artifact"] == pairs["artifact_id"]
    pairs = pairs[same_file | (pairs["dt_seconds"] <= max_gap_s)]
    if only_after is not None:
        pairs = pairs[pairs["snapshot_id"].isin(list(only_after))]
    out = pd.DataFrame(
        {
            "before_id": pairs["before_id"].astype("int64"),
            "after_id": pairs["snapshot_id"].astype("int64"),
            "dt_seconds": pairs["dt_seconds"].astype(float),
            "at": pairs["taken_at"],
        }
    )
    return out.reset_index(drop=True)


# --- 2. deltas and rates ----------------------------------------------------------------------


def counter_deltas(
    pairs: pd.DataFrame, snapshots: pd.DataFrame, samples: pd.DataFrame
) -> pd.DataFrame:
    """One row per pair and counter both readings hold (RATE_COLUMNS, ``derived`` False)."""
    if pairs.empty or samples.empty:
        return pd.DataFrame(columns=list(RATE_COLUMNS))
    meta = snapshots.set_index("snapshot_id")[["source", "host", "device", "port"]]
    values = samples[["snapshot_id", "counter", "value", "unit"]]
    merged = pairs.merge(
        values.rename(columns={"snapshot_id": "before_id", "value": "before"}),
        on="before_id",
    ).merge(
        values.rename(columns={"snapshot_id": "after_id", "value": "after", "unit": "_unit"}),
        on=["after_id", "counter"],
    )
    if merged.empty:
        return pd.DataFrame(columns=list(RATE_COLUMNS))
    merged = merged.join(meta, on="after_id")
    keep = [
        is_running_total(source, counter, unit)
        for source, counter, unit in zip(
            merged["source"], merged["counter"], merged["_unit"], strict=True
        )
    ]
    merged = merged[keep]
    before = merged["before"].to_numpy(dtype=float)
    after = merged["after"].to_numpy(dtype=float)
    dt = merged["dt_seconds"].to_numpy(dtype=float)
    backwards = after < before
    flags = np.where(backwards, _backwards_flags(before), "")
    saturated = ~backwards & np.isin(after, list(SATURATION_VALUES)) & (after > 0)
    flags = np.where(saturated, "saturated", flags)
    no_time = (flags == "") & (dt <= 0)
    flags = np.where(no_time, "no_time", flags)
    delta = np.where(backwards, np.nan, after - before)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where((dt > 0) & ~backwards, delta / dt, np.nan)
    out = pd.DataFrame(
        {
            "before_id": merged["before_id"].to_numpy(),
            "after_id": merged["after_id"].to_numpy(),
            "source": merged["source"].to_numpy(),
            "host": merged["host"].to_numpy(),
            "device": merged["device"].to_numpy(),
            "port": merged["port"].to_numpy(),
            "counter": merged["counter"].to_numpy(),
            "derived": False,
            "delta": delta,
            "dt_seconds": dt,
            "value": rate,
            "unit": [f"{u}/s" for u in merged["_unit"]],
            "flag": flags,
            "at": merged["at"].to_numpy(),
        }
    )
    return out.reset_index(drop=True)


def _backwards_flags(before: np.ndarray) -> np.ndarray:
    """'wrap' when the earlier value sat in the top half of a 32- or 64-bit range."""
    near_32 = (before >= 2.0**31) & (before < 2.0**32)
    near_64 = before >= 2.0**63
    return np.where(near_32 | near_64, "wrap", "reset")


# --- 3. derived metrics -----------------------------------------------------------------------

_PAUSE_DURATION = re.compile(r"^(?P<dir>rx|tx)_(?P<prio>prio\d|global)_pause_duration$")
# Received RoCE packets, in the order we trust them as the ECN/out-of-sequence denominator.
_RX_PACKETS = ("port_rcv_packets", "rx_vport_rdma_unicast_packets")
_GOODPUT = {
    "port_xmit_data": ("tx_goodput_gbps", 4),  # IB data counters count 4-byte words
    "port_rcv_data": ("rx_goodput_gbps", 4),
    "tx_vport_rdma_unicast_bytes": ("tx_rdma_gbps", 1),
    "rx_vport_rdma_unicast_bytes": ("rx_rdma_gbps", 1),
}


def derived_metrics(deltas: pd.DataFrame) -> pd.DataFrame:
    """Metrics over one pair's deltas (RATE_COLUMNS, ``derived`` True, ``delta`` null).

    Only clean rows count (no flag, Δt > 0): a reset counter must not produce a share.
    """
    if deltas.empty:
        return pd.DataFrame(columns=list(RATE_COLUMNS))
    clean = deltas[(deltas["flag"] == "") & (deltas["dt_seconds"] > 0)]
    if clean.empty:
        return pd.DataFrame(columns=list(RATE_COLUMNS))
    rows: list[dict[str, object]] = []
    for (_, _), pair in clean.groupby(["before_id", "after_id"], sort=False):
        by_counter = dict(zip(pair["counter"], pair["delta"], strict=True))
        first = pair.iloc[0]
        dt = float(first["dt_seconds"])

        def add(name: str, value: float, unit: str, first: pd.Series = first, dt: float = dt):
            rows.append(
                {
                    **{k: first[k] for k in ("before_id", "after_id", "source", "host")},
                    **{k: first[k] for k in ("device", "port", "at")},
                    "counter": name,
                    "derived": True,
                    "delta": np.nan,
                    "dt_seconds": dt,
                    "value": float(value),
                    "unit": unit,
                    "flag": "",
                }
            )

        for counter, delta in by_counter.items():
            if m := _PAUSE_DURATION.match(counter):
                # durations are microseconds: share of the interval the link was paused.
                # Over 100% cannot happen: the readings' times are wrong, so say nothing.
                share = delta / (dt * 1e6) * 100
                if share <= 100:
                    add(f"{m['dir']}_{m['prio']}_pause_duration_pct", share, "%")
            if counter in _GOODPUT:
                name, scale = _GOODPUT[counter]
                add(name, delta * scale * 8 / dt / 1e9, "Gb/s")
        received = next((by_counter[c] for c in _RX_PACKETS if by_counter.get(c)), None)
        if received:
            if (marked := by_counter.get("np_ecn_marked_roce_packets")) is not None:
                add("ecn_marked_share_pct", marked / received * 100, "%")
            if (oos := by_counter.get("out_of_sequence")) is not None:
                add("out_of_sequence_ppm", oos / received * 1e6, "ppm")
    if not rows:
        return pd.DataFrame(columns=list(RATE_COLUMNS))
    return pd.DataFrame(rows, columns=list(RATE_COLUMNS))


def compute_rates(
    snapshots: pd.DataFrame,
    samples: pd.DataFrame,
    *,
    max_gap_s: float = MAX_GAP_S,
    only_after: Collection[int] | None = None,
) -> pd.DataFrame:
    """All three steps: raw rows then derived rows, RATE_COLUMNS."""
    pairs = pair_snapshots(snapshots, max_gap_s=max_gap_s, only_after=only_after)
    deltas = counter_deltas(pairs, snapshots, samples)
    derived = derived_metrics(deltas)
    parts = [frame for frame in (deltas, derived) if not frame.empty]
    if not parts:
        return pd.DataFrame(columns=list(RATE_COLUMNS))
    return pd.concat(parts, ignore_index=True)


def cnp_ratio(deltas: pd.DataFrame) -> float | None:
    """Σ Δrp_cnp_handled / Σ Δnp_cnp_sent over the rows given (several hosts, one window).

    CNPs are sent by the receiver's NIC (notification point) and handled by the sender's
    (reaction point), so the ratio only means something across the hosts of a flow: well
    below 1 says CNPs are lost or ignored on the way back.
    """
    clean = deltas[(deltas["flag"] == "") & ~deltas["derived"].astype(bool)]
    sent = clean.loc[clean["counter"] == "np_cnp_sent", "delta"].sum()
    handled = clean.loc[clean["counter"] == "rp_cnp_handled", "delta"].sum()
    return float(handled / sent) if sent > 0 else None
