"""Versions sort as versions; facts (GPU model, generation, stack) are read from artifacts."""

import pytest

from baselines.facts import change_text, diff_stacks, stack_facts
from baselines.versions import sorted_versions, version_key
from hardware.gpus import gpu_generation, gpu_model


def test_nccl_versions_sort_numerically_not_alphabetically():
    assert version_key("2.21.5") < version_key("2.23.4") < version_key("2.23.10")
    assert sorted_versions(["2.23.10", "2.21.5", "2.23.4", "2.9.9"]) == [
        "2.9.9", "2.21.5", "2.23.4", "2.23.10",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("2.23", "2.23.1"),  # a shorter release comes first
        ("2.23.4rc1", "2.23.4"),  # a pre-release precedes its release
        ("2.23.4", "2.23.4+cuda12.4"),  # NCCL's "+cuda" local part sorts right after it
        ("2.23.4+cuda12.4", "2.23.5"),
        ("535.129.03", "550.54.15"),  # drivers
        ("5.15.0-91-generic", "5.15.0-105-generic"),  # kernels: 105 > 91
        ("9.9", "10.0"),
        ("", "0.1"),  # unknown first
    ],
)
def test_version_key_orders_pairs(lower, higher):
    assert version_key(lower) < version_key(higher)


def test_equal_versions_have_equal_keys_whatever_the_spacing_and_leading_zeros():
    assert version_key(" 24.01 ") == version_key("24.1")


@pytest.mark.parametrize(
    ("name", "model", "generation"),
    [
        ("NVIDIA H100 80GB HBM3", "H100", "Hopper"),
        ("NVIDIA H200", "H200", "Hopper"),
        ("A100-SXM4-40GB", "A100", "Ampere"),
        ("Tesla V100-SXM2-16GB", "V100", "Volta"),
        ("NVIDIA GB200", "GB200", "Blackwell"),
        ("NVIDIA B200", "B200", "Blackwell"),
        ("AMD Instinct MI300X", "MI300X", "CDNA 3"),
    ],
)
def test_gpu_model_and_generation_from_driver_names(name, model, generation):
    assert gpu_model(name) == model
    assert gpu_generation(model) == generation


def test_stack_prefers_the_benchmark_output_over_upload_metadata():
    facts = stack_facts(
        {"nccl_version": "2.23.4", "nccl_tests_version": "2.17.8"},
        {
            "nccl": "2.21.5",  # what the uploader thought; the library loaded says otherwise
            "CUDA": "12.6",
            "driver_version": "560.35.03",
            "kernel": "5.15.0-105-generic",
            "doca": "2.9.1",
            "firmware": "28.41.1000",
            "torch": "2.5.1",
            "nccl_tests": "ignored: the output has it",
            "NCCL_IB_HCA": "mlx5_0,mlx5_1",
            "env": {"NCCL_ALGO": "Ring", "OMP_NUM_THREADS": "8"},
            "cluster": "rack-07",
        },
    )
    assert facts.versions == {
        "nccl": "2.23.4", "nccl_tests": "2.17.8", "cuda": "12.6", "driver": "560.35.03",
        "kernel": "5.15.0-105-generic", "pytorch": "2.5.1", "ofed": "2.9.1",
        "nic_firmware": "28.41.1000",
    }  # fmt: skip
    assert facts.nccl_env == {"NCCL_ALGO": "Ring", "NCCL_IB_HCA": "mlx5_0,mlx5_1"}
    assert facts.sources["nccl"] == "benchmark output"
    assert facts.sources["cuda"] == "metadata cuda"


def test_stack_diff_names_versions_first_then_nccl_variables():
    changes = diff_stacks(
        {"nccl": "2.21.5", "cuda": "12.4", "nccl_tests": "2.17.6"},
        {"NCCL_ALGO": "Ring", "NCCL_IB_QPS_PER_CONNECTION": "4"},
        {"nccl": "2.23.4", "cuda": "12.6", "nccl_tests": "2.17.8"},
        {"NCCL_ALGO": "Tree", "NCCL_MIN_NCHANNELS": "16"},
    )
    assert [c.name for c in changes] == [
        "nccl", "cuda", "nccl_tests", "NCCL_ALGO", "NCCL_IB_QPS_PER_CONNECTION",
        "NCCL_MIN_NCHANNELS",
    ]  # fmt: skip
    assert changes[3].text == "NCCL_ALGO Ring → Tree"
    assert changes[4].after == "" and changes[5].before == ""
    assert change_text(changes) == "NCCL 2.21.5 → 2.23.4, CUDA 12.4 → 12.6, 3 NCCL_* changes"
    assert change_text([]) == "no software change"
