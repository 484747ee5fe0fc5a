"""Generated variation over the whole real corpus: Hypothesis composes, on every text
sample of ../shared/samples and ../shared/more-samples, random prefix shapes and separators
(stamps, tags with repeating hosts, known launchers), prompts of several shells, other
programs' lines before, between and after ours (tests/fixtures/noise/), cut lines
(fragments), CRLF, UTF-8 BOM / UTF-16, colour codes and trailing spaces. The property: the
same kind, and every fact of the original (of the kept fragment, when lines are cut) still
read (tests/transforms.py ``check_variation``).

The default profile is small (a couple of variants per sample, derandomized, so the suite
stays green and quick); ``HYPOTHESIS_PROFILE=variation-large`` or
``benchmarks/real_inputs.py --generated N`` draws many more. Each failure found and fixed
is kept below as an explicit ``@example``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings

from artifacts.parsers import OTHER
from tests.transforms import (
    Layer,
    Variation,
    check_variation,
    original_reading,
    sample_id,
    text_samples,
    variations,
)

# Files this large (torch traces) get one variant: a reading takes a second or more.
LARGE_BYTES = 256 * 1024
_COMMON = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}
settings.register_profile("variation-small", max_examples=2, derandomize=True, **_COMMON)
settings.register_profile("variation-large", max_examples=60, **_COMMON)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "variation-small")
if not PROFILE.startswith("variation-"):
    PROFILE = "variation-small"


@pytest.mark.parametrize("path", text_samples(), ids=sample_id)
def test_generated_variants_keep_kind_and_facts(path: Path) -> None:
    kind, want = original_reading(path)
    if kind in ("?", OTHER) or isinstance(want, str):
        pytest.skip(f"{path.name}: not evidence of a known kind ({want})")
    data = path.read_bytes()
    profile = settings.get_profile(PROFILE)
    examples = 1 if len(data) > LARGE_BYTES and PROFILE == "variation-small" else None

    @settings(profile, max_examples=examples or profile.max_examples)
    @given(variation=variations(sample_id(path)))
    def check(variation: Variation) -> None:
        why = check_variation(path.name, data, kind, want, variation, sample=sample_id(path))
        assert why is None, f"{sample_id(path)} {variation.labels()}: {why}\n{variation}"

    check()


# Failures the generated variation found, fixed since, kept as explicit examples (each runs
# on its own sample only): what broke, then the variation.
FOUND: dict[str, list[Variation]] = {
    # the bracket tag also ate bpftrace's "[000] latency=" lines, and the transcript's part
    # was cleaned twice (layers are now chosen before a transcript is cut)
    "more-samples/ebpf/bpftrace_usertools_pagefaultlatency_readme_output_EXCERPT.txt": [
        Variation(
            cut_tail=3, noise_before=400, layers=(Layer("tag", "bracket", 2),), prompt="bracketed"
        )
    ],
    # a tag named only the host the sample saw: the second host's lines kept their prefix
    "samples/nccl_debug/ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log": [
        Variation(
            cut_tail=1,
            noise_before=40,
            noise_between=2,
            layers=(Layer("tag", "pipe", 2),),
            prompt="bash",
        )
    ],
    # 400 foreign lines left the dcgm sniffer of the head too little: signature windows
    "samples/dcgm/godcgm_issue52_dcgmi_diag_gpu0_busy_fail_FRAGMENT.txt": [
        Variation(
            noise_before=400,
            noise_between=20,
            layers=(Layer("tag", "colon", 2),),
            trailing_spaces=True,
            crlf=True,
        )
    ],
    # a stamp before "| " table rows and before other lines: the stamp's separator was
    # taken from the table rows (or the lines disagreed and no stamp was found)
    "samples/dcgm/awsome_p4de_dcgmi_diag_r2_nvlinks_expected_up_EXCERPT.txt": [
        Variation(
            cut_head=1,
            layers=(Layer("stamp", "syslog"), Layer("tag", "colon")),
            prompt="root",
            trailing_spaces=True,
        )
    ],
    "samples/dcgm/mlengineering_dcgmi_diag_r2_gpu_memory_thermal_fail_FRAGMENT.txt": [
        Variation(
            cut_tail=3,
            noise_between=2,
            noise_after=5,
            layers=(Layer("stamp", "syslog", 3),),
            trailing_spaces=True,
            crlf=True,
            encoding="utf-8-sig",
        ),
        # its rows ("| Warning", "| Pass") had no signature needle: 400 foreign lines hid it
        Variation(noise_before=400, layers=(Layer("tag", "pipe"),), trailing_spaces=True),
    ],
    # UTF-16 past the first MiB was not scanned: the NCCL lines start at 500 KB (1 MB in UTF-16)
    "more-samples/nccl_debug/alcf_polaris_resnet50_libfabric_nccl_info.log": [
        Variation(
            cut_head=1,
            noise_before=3,
            noise_after=5,
            layers=(Layer("stamp", "clock-pipe"),),
            prompt="bracketed",
            encoding="utf-16",
        )
    ],
    # a topology matrix without its command line had no signature needle
    "more-samples/counters/mlengineering_nvidia-smi_topo_p2p_r_8xH100.txt": [
        Variation(
            cut_head=1,
            cut_tail=3,
            noise_before=400,
            noise_after=5,
            layers=(Layer("stamp", "syslog"),),
        )
    ],
    # two collector stamps kept on an NCCL log: its bare "NCCL version" line was not read
    "more-samples/nccl_debug/alcf_polaris_vae_nccl_info_trace_aws_ofi_cxi.log": [
        Variation(layers=(Layer("stamp", "iso"), Layer("stamp", "iso-bracket", 3)))
    ],
    # an outer epoch stamp was kept as if it were the tool's own time
    "samples/ebpf/bpftrace_ssllatency_example.txt": [
        Variation(
            layers=(Layer("stamp", "epoch"),), prompt="fish", colour=True, encoding="utf-8-sig"
        )
    ],
    # a coloured prompt line before an XML document was not seen as a prompt
    "samples/counters/telegraf_nvidia-smi_q_x_a10g.xml": [
        Variation(prompt="powershell", colour=True)
    ],
    # other programs' lines inside -q output: "+ export X=1" ended the -q block (read as the
    # default table's border), so the GPU after it was not found; indented ones became
    # sections the next keys nested in (issue 22, NOISE_KNOWN emptied of nvidia_smi)
    "samples/counters/gpud_nvidia-smi_q_560.35.03.txt": [Variation(noise_between=20)],
    "samples/counters/gpud_nvidia-smi_q_535.154.05_multi_gpu.txt": [
        Variation(noise_between=20, layers=(Layer("tag", "pipe", 2),), crlf=True)
    ],
    # ... and inside an ncu kernel's block: a column-0 line ended the report, a two-space one
    # ("  Local device: hfi1_0") became a kernel that took the next sections
    "samples/ncu/yktian_ncu_text_details_torch_gcn.txt": [
        Variation(noise_between=2),
        Variation(noise_between=20, layers=(Layer("stamp", "iso"),), trailing_spaces=True),
    ],
    # found while bare "# " prompts were added: "# ./biolatency" (a root prompt running a
    # path) was not yet one, so the transcript's first run was cut off behind other lines
    "samples/ebpf/bcc_biolatency_example.txt": [Variation(noise_before=400)],
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_failures_found_once_stay_fixed(name: str) -> None:
    path = next((p for p in text_samples() if sample_id(p) == name), None)
    if path is None:
        pytest.skip(f"{name}: ../shared absent")
    kind, want = original_reading(path)
    data = path.read_bytes()

    def body(variation: Variation) -> None:
        why = check_variation(path.name, data, kind, want, variation, sample=name)
        assert why is None, f"{name} {variation.labels()}: {why}"

    check = given(variation=variations(name))(body)
    for variation in FOUND[name]:
        check = example(variation=variation)(check)
    settings(phases=[Phase.explicit], database=None, deadline=None)(check)()
