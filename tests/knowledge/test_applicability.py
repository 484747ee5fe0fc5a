"""Applicability: which pages apply to which facts (pure functions, no database)."""

import pytest

from knowledge.applicability import (
    ApplicabilityError,
    applies,
    badges,
    canonical_nic,
    explain,
    gpu_index_terms,
    gpu_matches,
    gpu_model,
    normalize_applicability,
    relevance,
)

ROCE_H100 = {
    "gpu": ["H100", "H200"],
    "fabric": ["roce"],
    "nic": ["ConnectX-7"],
    "nic_firmware": ">=28.39",
    "nccl": ">=2.19, <2.24",
}


@pytest.mark.parametrize(
    ("printed", "model"),
    [
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA H100 NVL", "H100"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA GH200 480GB", "GH200"),  # not H200
        ("NVIDIA H20", "H20"),  # not H200
        ("NVIDIA A100-SXM4-80GB", "A100"),
        ("NVIDIA B200", "B200"),
        ("NVIDIA GB200", "GB200"),  # not B200
        ("NVIDIA L40S", "L40S"),  # not L40
        ("AMD Instinct MI300X", "MI300X"),
        ("Tesla V100-SXM2-32GB", "V100"),
        ("Some Future GPU", None),
    ],
)
def test_gpu_model_is_found_in_the_name_tools_print(printed, model):
    assert gpu_model(printed) == model


def test_gpu_entries_match_models_architectures_and_families():
    assert gpu_matches("H100", "NVIDIA H100 80GB HBM3")
    assert gpu_matches("hopper", "NVIDIA H200")
    assert gpu_matches("Hopper", "NVIDIA GH200 480GB")
    assert not gpu_matches("Hopper", "NVIDIA B200")
    assert gpu_matches("MI300", "AMD Instinct MI300X")
    assert not gpu_matches("H20", "NVIDIA H200")
    assert not gpu_matches("H200", "NVIDIA GH200 480GB")
    assert gpu_matches("VR200", "NVIDIA VR200")  # unknown models still match by name


def test_the_roce_page_applies_to_an_h100_roce_host_on_new_enough_firmware():
    facts = {
        "gpu": "NVIDIA H100 80GB HBM3",
        "fabric": "RoCEv2",
        "nic": "MT2910 Family [ConnectX-7]",
        "nic_firmware": "28.39.2048",
        "nccl": "2.23.4",
    }
    assert applies(ROCE_H100, facts)
    assert applies(ROCE_H100, facts, strict=True)
    assert relevance(ROCE_H100, facts) == 5


@pytest.mark.parametrize(
    ("change", "dimension"),
    [
        ({"gpu": "NVIDIA A100-SXM4-80GB"}, "gpu"),
        ({"fabric": "ib"}, "fabric"),
        ({"nic": "ConnectX-6 Dx"}, "nic"),
        ({"nic_firmware": "28.36.1010"}, "nic_firmware"),
        ({"nccl": "2.24.3"}, "nccl"),
        ({"nccl": "2.18.6"}, "nccl"),
    ],
)
def test_one_contradicting_fact_excludes_the_page(change, dimension):
    facts = {
        "gpu": "H100",
        "fabric": "roce",
        "nic": "ConnectX-7",
        "nic_firmware": "28.39.1002",
        "nccl": "2.21.5",
        **change,
    }
    assert not applies(ROCE_H100, facts)
    assert relevance(ROCE_H100, facts) is None
    states = {v.dimension: v.state for v in explain(ROCE_H100, facts)}
    assert states[dimension] == "mismatch"
    assert [d for d, s in states.items() if s == "mismatch"] == [dimension]


def test_nccl_range_compares_versions_not_strings():
    spec = {"nccl": ">=2.23.4"}
    assert applies(spec, {"nccl": "2.23.10"})  # "2.23.10" < "2.23.4" as strings
    assert not applies(spec, {"nccl": "2.23.3"})


def test_unknown_facts_do_not_exclude_unless_strict():
    facts = {"gpu": "NVIDIA H200", "nccl": "2.21.5"}  # a run: nothing about the NIC or fabric
    assert applies(ROCE_H100, facts)
    assert not applies(ROCE_H100, facts, strict=True)
    verdicts = {v.dimension: v.state for v in explain(ROCE_H100, facts)}
    assert verdicts == {
        "gpu": "match",
        "nic": "unknown",
        "fabric": "unknown",
        "nccl": "match",
        "nic_firmware": "unknown",
    }
    assert relevance(ROCE_H100, facts) == 2


def test_a_page_that_constrains_nothing_applies_everywhere_but_is_not_specific():
    assert applies({}, {"gpu": "H100"})
    assert relevance({}, {"gpu": "H100"}) == 0


def test_normalize_makes_names_canonical_and_drops_empty_dimensions():
    spec = normalize_applicability(
        {
            "gpu": "h100, Hopper, H100",
            "nic": ["cx7", "ConnectX-6Dx"],
            "fabric": ["IB", "RoCE v2"],
            "nccl": " >=2.19 ,<2.24",
            "cuda": "",
            "kernel": None,
        }
    )
    assert spec == {
        "gpu": ["H100", "Hopper"],
        "nic": ["ConnectX-7", "ConnectX-6 Dx"],
        "fabric": ["infiniband", "roce"],
        "nccl": ">=2.19, <2.24",
    }


def test_normalize_reports_every_problem_at_once():
    with pytest.raises(ApplicabilityError) as excinfo:
        normalize_applicability(
            {"gpu": ["<script>"], "fabric": ["token-ring"], "nccl": ">=two", "switch_os": "x"}
        )
    problems = " | ".join(excinfo.value.problems)
    assert "unknown applicability key" in problems and "switch_os" in problems
    assert "gpu" in problems and "token-ring" in problems and "nccl" in problems


def test_nic_names_are_canonical():
    assert canonical_nic("Mellanox Technologies MT2910 Family [ConnectX-7]") == "ConnectX-7"
    assert canonical_nic("cx-6 dx") == "ConnectX-6 Dx"
    assert canonical_nic("BlueField3") == "BlueField-3"
    assert canonical_nic("Broadcom Thor2") == "Broadcom Thor2"


def test_generation_index_expands_architectures_and_families():
    assert gpu_index_terms(["H100"]) == ["H100", "Hopper"]
    assert "H200" in gpu_index_terms(["Hopper"]) and "H100" in gpu_index_terms(["Hopper"])
    assert set(gpu_index_terms(["MI300"])) >= {"MI300", "MI300X", "MI300A", "CDNA3"}


def test_badges_show_each_dimension():
    texts = [(b.label, b.text) for b in badges(normalize_applicability(ROCE_H100))]
    assert ("GPU", "H100") in texts and ("GPU", "H200") in texts
    assert ("Fabric", "RoCE v2") in texts and ("NIC", "ConnectX-7") in texts
    assert ("NCCL", "≥2.19, <2.24") in texts and ("NIC firmware", "≥28.39") in texts
