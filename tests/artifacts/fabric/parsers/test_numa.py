"""NUMA layout and statistics: numactl -H, lscpu, numastat, rocm-smi. Values from the samples."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import numa
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import any_sample, sample

NUMACTL = "numa/amd_affinity_part2_2s_epyc_nps4_8x_mi210_numactl_H.txt"
LSCPU = "numa/amd_affinity_part2_2s_epyc_nps4_8x_mi210_lscpu_snippet.txt"
NUMASTAT = "numa/ik_llama_pr278_dual_xeon6980p_numastat_m_p_llama_server_EXCERPT.txt"
ROCM = "numa/amd_affinity_part2_8x_mi210_rocm_smi_showtoponuma.txt"


def parse_file(relative: str) -> numa.NumaResult:
    with sample(relative).open("rb") as f:
        return numa.parse(f)


def test_numactl_nodes_memory_and_distances() -> None:
    result = parse_file(NUMACTL)
    assert len(result.nodes) == 8
    first = result.nodes[0]
    assert (first.cpus, first.cpu_count, first.size_mb, first.free_mb) == (
        "0-15,128-143", 32, 64306, 59767
    )  # fmt: skip
    assert result.nodes[7].free_mb == 55638
    assert result.distances[0] == (10, 12, 12, 12, 32, 32, 32, 32)
    assert len(result.distances) == 8 and result.summary()["max_distance"] == 32
    json.dumps(result.to_json())


def test_lscpu_topology_and_node_cpu_lists() -> None:
    result = parse_file(LSCPU)
    assert result.cpu_topology == {
        "threads_per_core": 2, "cores_per_socket": 64, "sockets": 2, "numa_nodes": 8
    }  # fmt: skip
    assert [(n.node, n.cpus, n.cpu_count) for n in result.nodes[:2]] == [
        (0, "0-15,128-143", 32), (1, "16-31,144-159", 32)
    ]  # fmt: skip


def test_numastat_process_and_system_tables_skip_warnings() -> None:
    result = parse_file(NUMASTAT)
    process, system = result.tables
    assert (process.pid, process.process, process.unit, process.nodes) == (
        3635, "llama-server", "MBs", (0, 1)
    )  # fmt: skip
    assert process.rows["Huge"] == {"0": 385692.0, "1": 0.0, "total": 385692.0}
    assert process.rows["Total"]["total"] == 388832.16
    assert system.title == "system memory usage" and len(system.rows) == 36
    assert system.rows["HugePages_Free"] == {"0": 14498.0, "1": 399810.0, "total": 414308.0}
    units = {s.unit for s in result.samples}
    assert units == {"MiB"} and len(result.samples) == 2 * (5 + 36)


def test_default_numastat_counters_become_page_counter_rows() -> None:
    text = (
        "                           node0           node1\n"
        "numa_hit               123456789        98765432\n"
        "numa_miss                   1000          250000\n"
        "numa_foreign              250000            1000\n"
        "local_node             123000000        98000000\n"
        "other_node                 456789          765432\n"
    )
    result = numa.parse(io.BytesIO(text.encode()))
    rows = {(s.device, s.counter): (s.value, s.unit) for s in result.samples}
    assert rows[("node1", "numa_miss")] == (250000, "pages")


def test_rocm_smi_gpu_numa_nodes() -> None:
    gpus = parse_file(ROCM).gpus
    assert [(g.gpu, g.numa_node) for g in gpus] == [
        (0, 3), (1, 2), (2, 1), (3, 0), (4, 7), (5, 6), (6, 5), (7, 4)
    ]  # fmt: skip


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no numactl"):
        numa.parse(io.BytesIO(b"nothing here\n"))


@pytest.mark.parametrize("relative", [NUMACTL, LSCPU, NUMASTAT, ROCM])
def test_detection(relative: str) -> None:
    path = sample(relative)
    assert detect_kind(path.name, path.read_bytes()) == "numa"


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(numa.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=3216), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = sample(NUMASTAT).read_bytes() + sample(NUMACTL).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(numa.parse(io.BytesIO(blob)).to_json())


# ------------------------------------------------ ../shared/more-samples (other machines)
# Values read off the files: node CPU lists (counted by hand), sizes, distances, lscpu keys.

BREV = "numa/brev_a100_8gpu_vm_lscpu_grep_socket_numa_EXCERPT.txt"
DALANG = "numa/dalang_z9pe_2socket_xeon_3x_rtx3060ti_hw_report_lscpu_topo.md"
XEON_MAX = "numa/lkml_xeon_max_9480_2socket_numactl_H_EXCERPT.txt"


def parse_any(relative: str) -> numa.NumaResult:
    with any_sample(relative).open("rb") as f:
        return numa.parse(f)


def test_lscpu_grep_on_a_vm_with_116_sockets() -> None:
    # `lscpu | grep -E "Socket|NUMA|Core"` behind a bash prompt: a fragment of lscpu.
    result = parse_any(BREV)
    assert result.host == "brev-7hpnmoj9o" and result.parts == ("lscpu",)
    assert [(n.node, n.cpus, n.cpu_count) for n in result.nodes] == [
        (0, "0-27", 28), (1, "28-57", 30), (2, "58-87", 30), (3, "88-115", 28)
    ]  # fmt: skip
    assert result.cpu_topology == {"cores_per_socket": 1, "sockets": 116, "numa_nodes": 4}
    assert detect_kind("x.txt", any_sample(BREV).read_bytes()) == "numa"


def test_lscpu_inside_a_markdown_hardware_report() -> None:
    # A report with several tools' output; asked as numa, its lscpu block is read.
    result = parse_any(DALANG)
    assert [(n.node, n.cpus, n.cpu_count) for n in result.nodes] == [
        (0, "0-7,16-23", 16), (1, "8-15,24-31", 16)
    ]  # fmt: skip
    assert result.cpu_topology == {
        "cpus": 32,
        "model_name": "Intel(R) Xeon(R) CPU E5-2665 0 @ 2.40GHz",
        "threads_per_core": 2,
        "cores_per_socket": 8,
        "sockets": 2,
        "numa_nodes": 2,
    }


def test_numactl_on_xeon_max_with_hbm_in_cache_mode() -> None:
    result = parse_any(XEON_MAX)
    assert [(n.node, n.cpus, n.cpu_count, n.size_mb, n.free_mb) for n in result.nodes] == [
        (0, "0-55,112-167", 112, 257686, 251453),
        (1, "56-111,168-223", 112, 258009, 247905),
    ]
    assert result.distances == ((10, 26), (26, 10))
    assert result.parts == ("numactl cpus", "numactl memory", "numactl distances")


def test_every_tail_of_numactl_output_gives_the_facts_it_holds() -> None:
    # Fragments: the output cut at any line keeps the nodes, sizes and distances after it.
    lines = any_sample(XEON_MAX).read_text().splitlines()[1:]  # without the prompt
    whole = numa.parse(io.BytesIO("\n".join(lines).encode()))
    for start in range(len(lines)):
        kept = lines[start:]
        text = "\n".join(kept) + "\n"
        cpus = [ln for ln in kept if " cpus: " in ln]
        # distance rows are a fact with their column header ("node   0   1") above them
        header = any(ln.startswith("node   0") for ln in kept)
        rows = [ln for ln in kept if header and ln.lstrip()[:2] in ("0:", "1:")]
        if not (cpus or rows or any(" size: " in ln or " free: " in ln for ln in kept)):
            continue
        result = numa.parse(io.BytesIO(text.encode()))
        by_node = {n.node: n for n in result.nodes}
        for ln in cpus:
            node = int(ln.split()[1])
            assert by_node[node].cpus == whole.nodes[node].cpus, (start, ln)
        if rows:
            assert result.distances == whole.distances[-len(rows) :], start
        assert set(result.parts) <= set(whole.parts)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("NUMA node0 CPU(s):   0-27\nNUMA node1 CPU(s):   28-55\n", ("lscpu",)),
        ("node 0 cpus: 0 1 2 3\nnode 0 size: 1000 MB\nnode 0 free: 900 MB\n",
         ("numactl cpus", "numactl memory")),
        ("node   0   1\n  0:  10  21\n  1:  21  10\n", ("numactl distances",)),
    ],
)  # fmt: skip
def test_fragments_are_accepted_and_say_what_they_hold(text: str, parts: tuple[str, ...]) -> None:
    assert numa.accepts("x.txt", text.encode())
    assert numa.parse(io.BytesIO(text.encode())).parts == parts
