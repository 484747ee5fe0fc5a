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
from tests.samples import sample

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
