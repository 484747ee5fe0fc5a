"""Pairing snapshots into deltas and rates (pure): resets and wraps are flagged, never negative."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from artifacts.fabric import rates
from tests.artifacts.fabric.helpers import frames, pair_rates


def by_counter(frame: pd.DataFrame) -> dict[str, dict]:
    return {r["counter"]: r for r in frame.to_dict("records")}


def test_before_after_pair_gives_delta_and_per_second_rate() -> None:
    out = by_counter(pair_rates({"rx_prio3_pause": 1000}, {"rx_prio3_pause": 51000}, dt=10))
    row = out["rx_prio3_pause"]
    assert (row["delta"], row["dt_seconds"], row["value"], row["flag"]) == (50000, 10, 5000, "")
    assert row["unit"] == "count/s" and row["before_id"] == 1 and row["after_id"] == 2


def test_counter_reset_is_flagged_not_negative() -> None:
    row = by_counter(pair_rates({"symbol_error": 500}, {"symbol_error": 3}))["symbol_error"]
    assert row["flag"] == "reset"
    assert math.isnan(row["delta"]) and math.isnan(row["value"])


def test_32bit_wrap_is_told_apart_from_a_reset() -> None:
    row = by_counter(pair_rates({"port_xmit_data": 2**32 - 100}, {"port_xmit_data": 50}))
    assert row["port_xmit_data"]["flag"] == "wrap"
    assert math.isnan(row["port_xmit_data"]["value"])


def test_saturated_ib_counter_is_flagged() -> None:
    row = by_counter(pair_rates({"symbol_error": 65535}, {"symbol_error": 65535}))
    assert row["symbol_error"]["flag"] == "saturated"


def test_readings_without_time_give_deltas_but_no_rate() -> None:
    row = by_counter(pair_rates({"link_downed": 1}, {"link_downed": 4}, dt=0))["link_downed"]
    assert row["delta"] == 3 and row["flag"] == "no_time" and math.isnan(row["value"])


def test_gauges_are_not_turned_into_rates() -> None:
    snap, samples = frames(
        [
            {"id": 1, "counters": {"temperature.gpu": 40, "pcie.replay_counter": 1},
             "source": "nvidia_smi", "units": {"temperature.gpu": "C"}},
            {"id": 2, "counters": {"temperature.gpu": 70, "pcie.replay_counter": 9},
             "source": "nvidia_smi", "at": 5, "units": {"temperature.gpu": "C"}},
        ]
    )  # fmt: skip
    out = by_counter(rates.compute_rates(snap, samples))
    assert set(out) == {"pcie.replay_counter"} and out["pcie.replay_counter"]["delta"] == 8


def test_series_are_kept_apart_by_device_and_ordered_in_time() -> None:
    snap, samples = frames(
        [
            {"id": 1, "device": "mlx5_0", "counters": {"c": 10}, "at": 0},
            {"id": 2, "device": "mlx5_1", "counters": {"c": 1000}, "at": 0},
            {"id": 3, "device": "mlx5_0", "counters": {"c": 30}, "at": 20},
            {"id": 4, "device": "mlx5_0", "counters": {"c": 20}, "at": 10},
            {"id": 5, "device": "mlx5_1", "counters": {"c": 1100}, "at": 10},
        ]
    )
    pairs = rates.pair_snapshots(snap)
    assert sorted(zip(pairs["before_id"], pairs["after_id"], strict=True)) == [
        (1, 4), (2, 5), (4, 3)
    ]  # fmt: skip
    out = rates.compute_rates(snap, samples)
    assert sorted(out["value"]) == [1.0, 1.0, 10.0]


def test_uploads_too_far_apart_are_not_paired_but_readings_of_one_file_are() -> None:
    day = 24 * 3600
    snap, _ = frames(
        [
            {"id": 1, "artifact": 1, "counters": {"c": 1}, "at": 0},
            {"id": 2, "artifact": 2, "counters": {"c": 2}, "at": 2 * day},
            {"id": 3, "artifact": 2, "counters": {"c": 3}, "at": 5 * day},
            {"id": 4, "artifact": 3, "counters": {"c": 4}, "at": 5 * day + 60},
        ]
    )
    pairs = rates.pair_snapshots(snap)
    assert list(zip(pairs["before_id"], pairs["after_id"], strict=True)) == [(2, 3), (3, 4)]
    only = rates.pair_snapshots(snap, only_after={4})
    assert list(only["after_id"]) == [4]


def test_derived_pause_duration_share_and_goodput() -> None:
    out = by_counter(
        pair_rates(
            {"rx_prio3_pause_duration": 0, "port_xmit_data": 0, "port_rcv_data": 0},
            # 2.5 s of pause in 10 s; 12.5e9 words x 4 bytes x 8 bits / 10 s = 40 Gb/s
            {"rx_prio3_pause_duration": 2_500_000, "port_xmit_data": 12.5e9,
             "port_rcv_data": 25e9},
            dt=10,
        )
    )  # fmt: skip
    assert out["rx_prio3_pause_duration_pct"]["value"] == pytest.approx(25.0)
    assert out["rx_prio3_pause_duration_pct"]["unit"] == "%"
    assert out["tx_goodput_gbps"]["value"] == pytest.approx(40.0)
    assert out["rx_goodput_gbps"]["value"] == pytest.approx(80.0)
    assert out["rx_goodput_gbps"]["derived"] is True


def test_ecn_share_and_out_of_sequence_per_million() -> None:
    out = by_counter(
        pair_rates(
            {"np_ecn_marked_roce_packets": 0, "out_of_sequence": 0, "port_rcv_packets": 0},
            {"np_ecn_marked_roce_packets": 300, "out_of_sequence": 20,
             "port_rcv_packets": 1_000_000},
        )
    )  # fmt: skip
    assert out["ecn_marked_share_pct"]["value"] == pytest.approx(0.03)
    assert out["out_of_sequence_ppm"]["value"] == pytest.approx(20.0)


def test_a_reset_counter_yields_no_derived_metric() -> None:
    out = by_counter(pair_rates({"rx_prio3_pause_duration": 9e9}, {"rx_prio3_pause_duration": 10}))
    assert "rx_prio3_pause_duration_pct" not in out


def test_an_impossible_pause_share_is_dropped() -> None:
    # more pause than wall time: the readings' times are wrong, say nothing
    out = by_counter(pair_rates({"tx_global_pause_duration": 0},
                                {"tx_global_pause_duration": 50e6}, dt=10))  # fmt: skip
    assert "tx_global_pause_duration_pct" not in out


def test_cnp_ratio_across_hosts() -> None:
    a = pair_rates({"np_cnp_sent": 0}, {"np_cnp_sent": 1000}, host="receiver")
    b = pair_rates({"rp_cnp_handled": 0}, {"rp_cnp_handled": 400}, host="sender")
    assert rates.cnp_ratio(pd.concat([a, b])) == pytest.approx(0.4)
    assert rates.cnp_ratio(b) is None


def test_empty_inputs_give_empty_frames() -> None:
    empty = pd.DataFrame(columns=list(rates.SNAPSHOT_COLUMNS))
    out = rates.compute_rates(empty, pd.DataFrame(columns=list(rates.SAMPLE_COLUMNS)))
    assert out.empty and list(out.columns) == list(rates.RATE_COLUMNS)
