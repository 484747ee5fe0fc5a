"""Golden efficiency of shared nccl-tests samples of known hardware, checked by hand.

Each expected peak is datasheet arithmetic (docs/efficiency.md); each percentage is the
sample's largest-size out-of-place busbw divided by that peak, rounded to one decimal.
"""

from __future__ import annotations

import io

import pytest

from artifacts.models import Artifact
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from baselines.limits.reads import Unavailable, run_efficiency
from baselines.models import HardwareProfile
from baselines.services import artifact_evaluate
from tests.samples import sample

pytestmark = pytest.mark.django_db


def load(relative: str, *, metadata: dict | None = None, host: str = "") -> Artifact:
    path = sample(relative)
    outcome = artifact_ingest(
        stream=io.BytesIO(path.read_bytes()),
        name=path.name,
        label="golden",
        host=host,
        metadata=metadata or {},
        enqueue=False,
    )
    artifact = artifact_parse(artifact_id=outcome.artifact.pk)
    artifact_evaluate(artifact_id=artifact.pk, notify=False)
    return artifact


def efficiency_of(artifact: Artifact, collective: str):  # type: ignore[no-untyped-def]
    run = artifact.runs.get(collective=collective)
    result = run_efficiency(run)
    assert not isinstance(result, Unavailable), result
    return result


def largest(result):  # type: ignore[no-untyped-def]
    return result.sizes[-1]


# --- single node, 8 x H100 SXM (NVLink4 through NVSwitch) ---------------------------------
# H100 datasheet: NVLink 900 GB/s per GPU = both directions; 18 links x 25 GB/s = 450 GB/s
# per direction. One node: every byte crosses NVLink, so peak busbw = 450 GB/s.
SINGLE_H100 = [
    # collective, largest size, oop busbw at that size, % = busbw / 450
    ("all_reduce", 17179869184, 482.27, 107.2),  # 482.27 / 450 = 1.0717 (NVLS: > 100 %)
    ("all_gather", 17179869184, 361.86, 80.4),  # 361.86 / 450 = 0.8041
    ("reduce_scatter", 17179869184, 364.76, 81.1),  # 364.76 / 450 = 0.8106
    ("alltoall", 17179869184, 348.03, 77.3),  # 348.03 / 450 = 0.7734
    ("sendrecv", 17179869184, 367.25, 81.6),  # 367.25 / 450 = 0.8161
]


@pytest.mark.parametrize(("collective", "size", "busbw", "pct"), SINGLE_H100)
def test_single_node_h100_is_bounded_by_nvlink(collective, size, busbw, pct):  # type: ignore[no-untyped-def]
    artifact = load("nccl_tests/xxrjun_singlenode_G8_h100.log")
    result = efficiency_of(artifact, collective)
    assert result.peak.bottleneck == "nvlink"
    assert result.peak.peak_busbw_gbps == 450.0
    assert result.topology.nnodes == 1 and result.topology.ranks_per_node == 8
    big = largest(result)
    assert (big.size_bytes, big.busbw_gbps, big.pct_of_peak) == (size, busbw, pct)
    body = result.to_json()
    assert body["model"]["nvlink_links"]["value"] == 18
    assert "H100 datasheet" in body["model"]["nvlink_link_gbps"]["source"]
    if collective == "all_reduce":
        assert any("NVLS" in note for note in body["notes"])


# --- ten nodes x 8 H100, 8 x 400 Gb/s NICs per node --------------------------------------
# Per node: 8 NICs x 400 Gb/s = 3200 Gb/s = 400 GB/s < NVLink's 450 GB/s: the network bounds.
# Rings and trees cross every node boundary once per channel, carrying what a rank sends,
# so the bound is the node's 400 GB/s. All-to-all: each rank sends (n-g)/n off-node and the
# node's 8 ranks share its network: 400 x (80-1)/(8 x (80-8)) = 400 x 79/576 = 54.861 GB/s.
# sendrecv: one rank per node crosses, over the one rail next to its GPU: 400/8 = 50 GB/s.
MULTI_H100 = [
    ("all_reduce", 400.0, 17179869184, 320.54, 80.1),  # 320.54 / 400 = 0.8014
    ("all_gather", 400.0, 17179868160, 324.29, 81.1),  # 324.29 / 400 = 0.8107
    ("reduce_scatter", 400.0, 17179868160, 323.40, 80.8),  # 323.40 / 400 = 0.8085
    ("alltoall", 54.861, 17179868160, 50.38, 91.8),  # 50.38 / 54.861 = 0.9183
    ("sendrecv", 50.0, 17179869184, 15.22, 30.4),  # 15.22 / 50 = 0.3044
]


def eight_rail_profile() -> HardwareProfile:
    return HardwareProfile.objects.create(
        slug="h100-ib-8x400",
        gpu_model="H100",
        gpus_per_node=8,
        nic_model="ConnectX-7",
        nic_speed_gbps=400,
        nics_per_node=8,
        fabric="infiniband",
    )


@pytest.mark.parametrize(("collective", "peak", "size", "busbw", "pct"), MULTI_H100)
def test_multi_node_h100_is_bounded_by_the_nodes_eight_nics(  # type: ignore[no-untyped-def]
    collective, peak, size, busbw, pct
):
    eight_rail_profile()
    artifact = load(
        "nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log",
        metadata={"profile": "h100-ib-8x400"},
    )
    result = efficiency_of(artifact, collective)
    assert result.peak.bottleneck == "network"
    assert result.peak.peak_busbw_gbps == peak
    assert (result.topology.nranks, result.topology.nnodes) == (80, 10)
    assert result.peak.bounds["nvlink"] == 450.0
    big = largest(result)
    assert (big.size_bytes, big.busbw_gbps, big.pct_of_peak) == (size, busbw, pct)
    inputs = result.to_json()["model"]
    assert inputs["network_busbw_gbps"]["value"] == 400.0
    assert "h100-ib-8x400" in inputs["nics_per_node"]["source"]


# --- DGX A100: 8 x A100-SXM4-40GB, NVLink3 ------------------------------------------------
# A100 datasheet: NVLink 600 GB/s = 12 links x 25 GB/s x 2 directions: 300 GB/s per direction.
A100 = [
    ("superbench_old_format_allreduce_8xA100_dgx.log", 8589934592, 235.26, 78.4),  # /300=.7842
    ("superbench_old_format_allgather_8xA100_dgx.log", 8589934592, 223.39, 74.5),  # /300=.7446
]


@pytest.mark.parametrize(("name", "size", "busbw", "pct"), A100)
def test_dgx_a100_is_bounded_by_nvlink3(name, size, busbw, pct):  # type: ignore[no-untyped-def]
    artifact = load(f"nccl_tests/{name}")
    run = artifact.runs.get()
    result = run_efficiency(run)
    assert not isinstance(result, Unavailable), result
    assert (result.peak.bottleneck, result.peak.peak_busbw_gbps) == ("nvlink", 300.0)
    big = largest(result)
    assert (big.size_bytes, big.busbw_gbps, big.pct_of_peak) == (size, busbw, pct)


def test_a_profile_limit_overrides_the_datasheet():
    HardwareProfile.objects.create(
        slug="h100-derated", gpu_model="H100", limits={"nvlink_busbw_gbps": 400}
    )
    artifact = load(
        "nccl_tests/xxrjun_singlenode_G8_h100.log", metadata={"profile": "h100-derated"}
    )
    result = efficiency_of(artifact, "all_gather")
    # 361.86 / 400 = 0.9047
    assert result.peak.peak_busbw_gbps == 400.0 and largest(result).pct_of_peak == 90.5
    source = result.to_json()["model"]["nvlink_busbw_gbps"]["source"]
    assert source == "hardware profile h100-derated limits override"


def test_unknown_hardware_says_why():
    artifact = load(
        "nccl_tests/coreweave_readme_gb200_nvl72_single_rack_fragment.txt",
        metadata={"profile": "mystery"},
    )
    run = artifact.runs.first()
    result = run_efficiency(run)
    assert isinstance(result, Unavailable)
    assert "NVIDIA Graphics Device" in result.reason and "limits" in result.reason


# --- GB200 NVL72: one NVLink domain of 72 GPUs over 18 trays of 4 ----------------------------
# GB200 NVL72 datasheet: NVLink 1.8 TB/s per GPU = 18 links x 50 GB/s x 2: 900 GB/s per
# direction, to all 72 GPUs of the rack. The fragment lists rank 71 only; the profile's 4
# GPUs per tray spread the 72 ranks over 18 hosts, all inside the domain: NVLink bounds.
def test_gb200_nvl72_rack_is_one_nvlink_domain():
    HardwareProfile.objects.create(
        slug="gb200-nvl72", gpu_model="GB200", gpus_per_node=4, nics_per_node=4,
        nic_speed_gbps=400,
    )  # fmt: skip
    artifact = load(
        "nccl_tests/coreweave_readme_gb200_nvl72_single_rack_fragment.txt",
        metadata={"profile": "gb200-nvl72"},
    )
    result = efficiency_of(artifact, "all_reduce")
    assert (result.topology.nranks, result.topology.nnodes) == (72, 18)
    assert (result.peak.bottleneck, result.peak.peak_busbw_gbps) == ("nvlink", 900.0)
    assert "network" not in result.peak.bounds
    big = largest(result)
    # 8 GiB: 834.57 / 900 = 0.9273; the plateau (4 GiB) 839.16 / 900 = 0.9324
    assert (big.size_bytes, big.busbw_gbps, big.pct_of_peak) == (8589934592, 834.57, 92.7)
    assert result.large.pct_of_peak == 93.2
