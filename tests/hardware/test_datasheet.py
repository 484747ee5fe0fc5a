"""Datasheet arithmetic per GPU generation (pure; docs/efficiency.md has the sources)."""

from __future__ import annotations

import pytest

from hardware import datasheet as ds
from hardware.model import (
    ProfileSpec,
    Topology,
    Unknown,
    override_errors,
    peak_for,
    resolve_limits,
)

ONE_NODE = Topology(8, 1, 8, ("n1",))


@pytest.mark.parametrize(
    ("gpu", "collective", "peak"),
    [
        ("NVIDIA A100-SXM4-80GB", "all_reduce", 300.0),  # 12 x 25 GB/s (600 GB/s both ways)
        ("NVIDIA H100 80GB HBM3", "all_gather", 450.0),  # 18 x 25
        ("NVIDIA H200", "alltoall", 450.0),  # 18 x 25
        ("NVIDIA B200", "all_reduce", 900.0),  # 18 x 50 (1.8 TB/s both ways)
        ("NVIDIA GB200", "reduce_scatter", 900.0),  # 18 x 50
        ("AMD Instinct MI300X", "all_gather", 448.0),  # 7 x 64 (896 GB/s both ways)
        ("AMD Instinct MI300X", "sendrecv", 64.0),  # mesh: one link to the peer
        ("AMD Instinct MI250X", "all_reduce", 200.0),  # per GCD: 4 x 50
    ],
)
def test_single_node_peaks_by_generation(gpu, collective, peak):  # type: ignore[no-untyped-def]
    result = peak_for(collective, ONE_NODE, resolve_limits(None, gpu_name=gpu))
    assert not isinstance(result, Unknown), result
    assert (result.bottleneck, result.peak_busbw_gbps) == ("nvlink", peak)


def test_pcie_and_nic_tables():
    assert ds.pcie_gbps(5, 16) == 63.008  # 16 x 3.938
    assert ds.pcie_gbps(4, 16) == 31.504  # 16 x 1.969
    assert ds.pcie_gbps(None, 16) is None
    assert ds.nic_for("MT4129").model == "ConnectX-7"  # type: ignore[union-attr]
    assert ds.nic_for("ConnectX-6 Dx").max_gbit == 200  # type: ignore[union-attr]
    assert ds.nic_for("4123").model == "ConnectX-6"  # type: ignore[union-attr]
    assert ds.nic_for("something else") is None


def test_unknown_gpu_and_overrides():
    assert isinstance(peak_for("all_reduce", ONE_NODE, resolve_limits(None, gpu_name="X")), Unknown)
    fixed = resolve_limits(
        ProfileSpec(slug="p", limits={"peak_busbw_gbps": {"all_reduce": 480}}), gpu_name="H100"
    )
    result = peak_for("all_reduce", ONE_NODE, fixed)
    assert not isinstance(result, Unknown)
    assert (result.bottleneck, result.peak_busbw_gbps) == ("override", 480.0)
    assert override_errors({"nvlink_busbw_gbps": 450}) == []
    assert override_errors({"nvlink": 1})[0].startswith("unknown limit 'nvlink'")
    assert override_errors({"nics_per_node": "eight"}) == [
        "nics_per_node: 'eight' is not a positive number"
    ]
    assert override_errors([]) != []


def test_beyond_one_nvlink_domain_the_domains_network_counts():
    gb200 = resolve_limits(
        ProfileSpec(slug="g", gpu_model="GB200", gpus_per_node=4, nics_per_node=4,
                    nic_speed_gbit=400),
        gpu_name="NVIDIA GB200",
    )  # fmt: skip
    racks = Topology(1440, 360, 4)  # 20 NVL72 racks of 18 trays x 4 GPUs
    ring = peak_for("all_reduce", racks, gb200)
    # per tray 4 x 400 / 8 = 200 GB/s; per domain 18 trays: 3600 GB/s > NVLink's 900
    assert not isinstance(ring, Unknown)
    assert (ring.bottleneck, ring.peak_busbw_gbps, ring.bounds["network"]) == (
        "nvlink",
        900.0,
        3600.0,
    )
    a2a = peak_for("alltoall", racks, gb200)
    # 3600 x (1440-1) / (72 x (1440-72)) = 3600 x 1439 / 98496 = 52.595 GB/s
    assert not isinstance(a2a, Unknown)
    assert (a2a.bottleneck, a2a.peak_busbw_gbps) == ("network", 52.595)
