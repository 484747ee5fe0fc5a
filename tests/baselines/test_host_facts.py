"""The pure mapping from facts other artifacts state to stack components and profile fields."""

from __future__ import annotations

from baselines.facts import (
    Fact,
    StackFacts,
    merge_stacks,
    profile_from_facts,
    stack_facts,
    stack_from_facts,
)


def nic(device: str, rate: float, kind: str, fw: str, layer: str = "Ethernet") -> list[Fact]:
    src = "ib_status artifact #3"
    return [
        Fact("hca.type", kind, host="n1", device=device, source=src),
        Fact("hca.firmware", fw, host="n1", device=device, source=src),
        Fact("port.rate_gbps", str(rate), rate, host="n1", device=device, source=src),
        Fact("port.link_layer", layer, host="n1", device=device, source=src),
    ]


def test_the_fabric_nics_outvote_a_management_nic_and_define_the_profile() -> None:
    facts = nic("mlx5_9", 100, "MT4125", "22.39.1002")  # listed first
    for k in range(8):
        facts += nic(f"mlx5_{k}", 400, "MT4129", "28.39.1002")
    facts += [Fact("gpu.name", "NVIDIA H100 80GB HBM3", host="n1", device=f"0000:{k:02x}:00.0")
              for k in range(8)]  # fmt: skip
    stack = stack_from_facts(facts)
    assert stack.versions == {"nic_firmware": "28.39.1002"}
    assert stack.sources == {"nic_firmware": "ib_status artifact #3"}
    profile = profile_from_facts(facts)
    assert profile == {
        "gpu_name": "NVIDIA H100 80GB HBM3",
        "gpus_per_node": 8,
        "nic_speed_gbps": 400,
        "nic_model": "MT4129",
        "nics_per_node": 8,
        "fabric": "roce_v2",
    }


def test_versions_take_the_first_word_and_the_preferred_source_per_component() -> None:
    facts = [
        Fact("gpu.cuda_version", "12.6", source="nvidia_smi artifact #1"),
        Fact("cuda.runtime_version", "12.4", source="torch_trace artifact #2"),
        Fact("nic.firmware", "28.39.1002 (MT_0000000838)", source="ethtool_stats artifact #4"),
        Fact("nccl.env.NCCL_IB_HCA", "mlx5_0,mlx5_1", source="nccl_debug artifact #5"),
        Fact("nccl.env.NCCL_IB_HCA", "=mlx5_9", source="nccl_debug artifact #6"),  # farther
        Fact("nccl.env.not_nccl", "x"),
    ]
    stack = stack_from_facts(facts)
    assert stack.versions == {"cuda": "12.4", "nic_firmware": "28.39.1002"}
    assert stack.nccl_env == {"NCCL_IB_HCA": "mlx5_0,mlx5_1"}  # the nearest wins


def test_the_runs_own_output_and_metadata_win_over_other_artifacts() -> None:
    own = stack_facts({"nccl_version": "2.21.5"}, {"driver": "550.54.15", "NCCL_ALGO": "Ring"})
    other = StackFacts(
        versions={"nccl": "2.23.4", "driver": "560.35.03", "cuda": "12.6"},
        nccl_env={"NCCL_ALGO": "Tree", "NCCL_IB_HCA": "mlx5"},
        sources={"nccl": "nccl_debug #1", "driver": "nvidia_smi #2", "cuda": "nvidia_smi #2"},
    )
    merged = merge_stacks(own, other)
    assert merged.versions == {"nccl": "2.21.5", "cuda": "12.6", "driver": "550.54.15"}
    assert merged.nccl_env == {"NCCL_ALGO": "Ring", "NCCL_IB_HCA": "mlx5"}
    assert merged.sources["nccl"] == "benchmark output"
    assert merged.sources["cuda"] == "nvidia_smi #2"
    assert merged.sources["driver"] == "metadata driver"


def test_nccl_net_lines_give_the_fabric_when_no_port_says_it() -> None:
    facts = [Fact("nccl.ib_devices", "mlx5_0:1/IB, mlx5_1:1/IB", host="n1")]
    assert profile_from_facts(facts) == {"fabric": "infiniband"}
    assert profile_from_facts([]) == {}
