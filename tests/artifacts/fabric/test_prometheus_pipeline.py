"""Prometheus data through loaders, pairing and rules, like any counter snapshot."""

from __future__ import annotations

import json

import pytest

from artifacts.models import CounterRate, CounterSnapshot, Finding, HostFact
from tests.artifacts.fabric.conftest import evaluated, upload_text

pytestmark = pytest.mark.django_db

T0 = 1740327900


def scrape(pauses: int, stamp_ms: int) -> str:
    return (
        "# HELP node_ethtool_rx_prio3_pause Network interface rx_prio3_pause\n"
        "# TYPE node_ethtool_rx_prio3_pause untyped\n"
        f'node_ethtool_rx_prio3_pause{{device="eth3",instance="gpu-node-07:9100"}} {pauses} '
        f"{stamp_ms}\n"
        f'node_ethtool_rx_discards_phy{{device="eth3",instance="gpu-node-07:9100"}} 5 {stamp_ms}\n'
    )


def test_two_scrapes_in_one_file_give_rates_and_a_pause_finding() -> None:
    text = scrape(1_000, T0 * 1000) + scrape(1_201_000, (T0 + 60) * 1000)
    artifact = evaluated(upload_text("metrics.prom", text))
    assert artifact.kind == "prometheus_text"
    snapshots = CounterSnapshot.objects.filter(artifact=artifact).order_by("taken_at")
    assert [(s.host, s.device, s.time_source) for s in snapshots] == [
        ("gpu-node-07", "eth3", "file"), ("gpu-node-07", "eth3", "file"),
    ]  # fmt: skip
    rate = CounterRate.objects.get(after__artifact=artifact, counter="rx_prio3_pause")
    assert (rate.delta, rate.dt_seconds) == (1_200_000, 60)
    assert rate.value == pytest.approx(20_000)
    assert Finding.objects.filter(artifact=artifact, rule="pfc_pause_storm").exists()


def test_query_range_series_become_rates_with_resets_flagged() -> None:
    doc = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {
                    "metric": {"__name__": "node_ethtool_rx_discards_phy", "device": "eth3",
                               "instance": "gpu-node-08:9100"},
                    "values": [[T0, "100"], [T0 + 30, "400"], [T0 + 60, "10"]],
                },
                {
                    "metric": {"__name__": "DCGM_FI_DEV_XID_ERRORS", "gpu": "0",
                               "Hostname": "gpu-node-08", "UUID": "GPU-1234"},
                    "values": [[T0, "0"], [T0 + 60, "79"]],
                },
            ],
        },
    }  # fmt: skip
    artifact = evaluated(upload_text("range.json", json.dumps(doc)))
    assert artifact.kind == "prometheus_range"
    rates = CounterRate.objects.filter(after__artifact=artifact, counter="rx_discards_phy")
    got = [(r.dt_seconds, r.delta, r.flag) for r in rates.order_by("at")]
    assert got == [(30.0, 300.0, ""), (30.0, None, "reset")]
    assert HostFact.objects.get(artifact=artifact, name="gpu.uuid").value == "GPU-1234"


def test_sample_labels_are_stored_as_host_facts() -> None:
    # dcgm-exporter with --kubernetes: the pod a GPU served and its model/UUID per gpu index
    labels = (
        'gpu="3",UUID="GPU-abc",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-09",'
        'pod="train-3",namespace="ml",job="dcgm",instance="10.1.0.9:9400"'
    )
    text = "".join(
        f"# TYPE {name} gauge\n{name}{{{labels}}} {value}\n"
        for name, value in (("DCGM_FI_DEV_GPU_UTIL", 97), ("DCGM_FI_DEV_GPU_TEMP", 41))
    )
    artifact = evaluated(upload_text("dcgm.prom", text))
    assert artifact.kind == "prometheus_text"
    rows = {(f.host, f.device, f.name): f.value for f in HostFact.objects.filter(artifact=artifact)}
    assert rows[("gpu-node-09", "GPU 3", "gpu.uuid")] == "GPU-abc"
    assert rows[("gpu-node-09", "GPU 3", "gpu.name")] == "NVIDIA H100 80GB HBM3"
    assert rows[("gpu-node-09", "GPU 3", "k8s.pod")] == "train-3"
    assert rows[("gpu-node-09", "", "prometheus.job")] == "dcgm"
