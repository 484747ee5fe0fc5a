"""nvidia_smi: -q text, -q -x XML, table, topo -m, nvlink --status.

Expected values read from the sample files (grep/awk), not from the parser.
"""
# ruff: noqa: E501

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import nvidia_smi
from artifacts.fabric.parsers.nvidia_smi_views import (
    DeviceAffinity,
    TopoLink,
    Topology,
    nic_placements,
)
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import more_sample, sample

Q_MULTI = "counters/gpud_nvidia-smi_q_535.154.05_multi_gpu.txt"
Q_560 = "counters/gpud_nvidia-smi_q_560.35.03.txt"
Q_INVALID = "counters/gpud_nvidia-smi_q_535.183.01_INVALID_truncated.txt"
TABLE = "counters/gpud_nvidia-smi_default_table_550.90.07.txt"
NVLINK = "counters/gpud_nvidia-smi_nvlink_status_a100.txt"
TOPO = "counters/nvidia-smi_topo_m_8gpu_NV18_8nic_sglang_env.txt"
XML_A100 = "counters/telegraf_nvidia-smi_q_x_a100-sxm4.xml"
XML_A10G = "counters/telegraf_nvidia-smi_q_x_a10g.xml"
XML_V13 = "counters/telegraf_nvidia-smi_q_x_rtx4000ada_v13.xml"


def parse_file(relative: str) -> nvidia_smi.NvidiaSmiResult:
    with sample(relative).open("rb") as f:
        return nvidia_smi.parse(f)


def counters(result: nvidia_smi.NvidiaSmiResult, device: str) -> dict[str, object]:
    return {s.counter: s.value for s in result.samples if s.device == device}


def test_q_text_multi_gpu_with_downtrained_pcie_links() -> None:
    result = parse_file(Q_MULTI)
    assert (result.formats, result.driver_version, result.attached_gpus) == (
        ("q_text",),
        "535.154.05",
        8,
    )
    assert result.timestamp == "2024-07-06T15:09:26"
    assert [g.bus_id for g in result.gpus] == [
        "00000000:01:00.0", "00000000:23:00.0", "00000000:41:00.0", "00000000:61:00.0",
        "00000000:81:00.0", "00000000:A1:00.0", "00000000:C1:00.0", "00000000:E1:00.0",
    ]  # fmt: skip
    assert {g.name for g in result.gpus} == {"NVIDIA GeForce RTX 4090"}
    # awk over "PCIe Generation": three GPUs run at gen 1 of a max of 4.
    downtrained = [g.bus_id for g in result.gpus if g.pcie_gen_current < g.pcie_gen_max]
    assert downtrained == ["00000000:81:00.0", "00000000:A1:00.0", "00000000:E1:00.0"]
    assert result.summary()["pcie_downtrained"] == 3
    first = result.gpus[0]
    assert (first.temperature_c, first.power_draw_w, first.memory_used_mib) == (41, 67.76, 20328)
    assert (first.pcie_width_current, first.pcie_width_max) == (16, 16)
    assert counters(result, "00000000:81:00.0")["pcie.link.gen.current"] == 1
    assert {s.captured_at for s in result.samples} == {"2024-07-06T15:09:26"}
    assert result.warnings == ()


def test_q_text_560_clocks_thermal_power() -> None:
    result = parse_file(Q_560)
    [gpu] = result.gpus
    assert (gpu.name, gpu.uuid, gpu.vbios) == (
        "NVIDIA TITAN V",
        "GPU-f4c353ff-b56c-c1de-bcb9-7dad861b589a",
        "88.00.36.00.01",
    )
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max) == (1, 3)  # idle at P8: gen 1 is expected there
    assert gpu.pstate == "P8"
    assert gpu.clock_event_reasons == ("idle",)  # "Idle : Active", all others "Not Active"
    assert (gpu.temperature_c, gpu.slowdown_temp_c, gpu.shutdown_temp_c, gpu.memory_temp_c) == (
        44,
        97,
        100,
        41,
    )
    assert (gpu.power_draw_w, gpu.power_limit_w) == (29.02, 250.0)
    assert (gpu.clocks_sm_mhz, gpu.max_clocks_sm_mhz, gpu.clocks_memory_mhz) == (135, 1912, 850)
    assert (gpu.fan_percent, gpu.memory_total_mib, gpu.memory_used_mib) == (30, 12288, 290)
    assert gpu.ecc_mode is None and gpu.ecc_uncorrected_volatile is None  # N/A on TITAN V
    c = counters(result, "00000000:01:00.0")
    assert (c["temperature.gpu"], c["power.draw"], c["clocks.max.sm"]) == (44, 29.02, 1912)
    assert result.cuda_version == "12.6"


def test_invalid_truncated_q_gives_a_partial_result_and_a_warning() -> None:
    result = parse_file(Q_INVALID)
    [gpu] = result.gpus
    assert (gpu.bus_id, gpu.name, gpu.serial) == (
        "00000000:53:00.0",
        "NVIDIA H100 80GB HBM3",
        "1655022005478",
    )
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_replays) == (5, 5, 120)
    assert gpu.temperature_c is None  # the file ends before the Temperature section
    assert any("announces 8 attached GPUs but holds 1" in w for w in result.warnings)


def test_default_table_eight_h100() -> None:
    result = parse_file(TABLE)
    assert result.formats == ("table",)
    assert (result.driver_version, result.cuda_version, result.timestamp) == (
        "550.90.07",
        "12.4",
        "2025-01-20T10:18:26",
    )
    assert len(result.table_gpus) == 8
    first = result.table_gpus[0]
    assert (first.index, first.name, first.bus_id) == (
        0,
        "NVIDIA H100 80GB HBM3",
        "00000000:19:00.0",
    )
    assert (first.temperature_c, first.power_draw_w, first.power_limit_w) == (27.0, 72.0, 700.0)
    assert (first.memory_used_mib, first.memory_total_mib, first.ecc_uncorrected_volatile) == (
        1,
        81559,
        0,
    )
    assert (first.pstate, first.compute_mode, first.mig_mode, first.fan_percent) == (
        "P0",
        "Default",
        "Disabled",
        None,
    )
    assert [g.bus_id for g in result.table_gpus][-1] == "00000000:DB:00.0"
    assert counters(result, "00000000:DB:00.0")["power.draw"] == 72.0
    assert result.summary()["gpus"] == 8


def test_nvlink_status_a100() -> None:
    result = parse_file(NVLINK)
    assert result.formats == ("nvlink",)
    assert len(result.nvlinks) == 96  # 8 GPUs x 12 links
    assert {link.speed_gbps for link in result.nvlinks} == {25.0}
    assert all(link.active for link in result.nvlinks)
    assert result.nvlinks[0].uuid == "GPU-5269b708-678a-b1a8-60f0-c90406537486"
    assert result.nvlinks[-1].gpu_index == 7 and result.nvlinks[-1].link == 11


def test_nvlink_inactive_links_are_flagged() -> None:
    text = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n"
    result = nvidia_smi.parse(io.BytesIO(text.encode()))
    assert [(link.link, link.speed_gbps, link.active) for link in result.nvlinks] == [
        (0, 26.562, True),
        (1, None, False),
    ]
    assert result.summary()["nvlinks_inactive"] == 1


def test_topo_matrix_affinities_and_nic_legend() -> None:
    topo = parse_file(TOPO).topology
    assert topo is not None
    assert topo.devices[:2] == ("GPU0", "GPU1") and len(topo.devices) == 16
    links = {(link.a, link.b): link.link for link in topo.links}
    assert len(links) == 16 * 15 // 2
    assert links[("GPU0", "GPU7")] == "NV18"
    assert links[("GPU0", "NIC0")] == "PIX" and links[("GPU3", "NIC3")] == "PIX"
    assert links[("GPU0", "NIC4")] == "SYS" and links[("NIC0", "NIC1")] == "NODE"
    affinity = {a.device: a for a in topo.affinities}
    assert (
        affinity["GPU0"].cpu_affinity,
        affinity["GPU0"].numa_affinity,
        affinity["GPU0"].gpu_numa_id,
    ) == ("0-47,96-143", "0", "N/A")
    assert (
        affinity["GPU7"].cpu_affinity == "48-95,144-191" and affinity["GPU7"].numa_affinity == "1"
    )
    assert "NIC0" not in affinity
    assert topo.nic_legend["NIC0"] == "mlx5_0" and topo.nic_legend["NIC7"] == "mlx5_7"


def test_every_other_q_field_is_kept_as_printed() -> None:
    [gpu] = parse_file(Q_560).gpus
    d = gpu.details
    assert d["product_brand"] == "Titan"
    assert d["fb_memory_usage.reserved"] == "239 MiB"
    assert d["temperature.gpu_target_temperature"] == "84 C"
    assert (d["clocks.video"], d["max_clocks.video"]) == ("555 MHz", "1717 MHz")
    # typed fields are not repeated, N/A is left out
    assert "fb_memory_usage.total" not in d and "product_name" not in d
    assert "N/A" not in d.values()
    xml = parse_file(XML_A100).gpus[0].details
    assert (xml["product_brand"], xml["pci.tx_util"]) == ("NVIDIA", "4000 KB/s")
    assert xml["gpu_power_readings.max_power_limit"] == "500.00 W"


# Another program's lines landed inside -q output (issue 22: generated variation): a shell
# trace ("+ export"), a traceback's indented lines, a "name: value" log line. None has the
# shape of a -q line, so each GPU's block keeps every fact around them.
FOREIGN = [
    "+ export CUDA_DEVICE_MAX_CONNECTIONS=1",
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 798',
    "    main()",
    "Done",
    "wandb: Tracking run with wandb version 0.16.6",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "",
]


@pytest.mark.parametrize("after", ["Driver Version", "    Product Name", "        Current"])
def test_foreign_lines_inside_q_output_are_passed_over(after: str) -> None:
    original = sample(Q_MULTI).read_text()
    lines = original.split("\n")
    # inside the third GPU's block (or the header, for "Driver Version")
    start = lines.index("GPU 00000000:41:00.0") if after.startswith(" ") else 0
    at = next(i for i in range(start, len(lines)) if lines[i].startswith(after)) + 1
    noisy = "\n".join(lines[:at] + FOREIGN + lines[at:])
    got = nvidia_smi.parse(io.BytesIO(noisy.encode()))
    want = parse_file(Q_MULTI)
    assert got.gpus == want.gpus and got.driver_version == want.driver_version
    assert got.samples == want.samples


def test_xml_a100_ecc_totals_and_partial_fixture() -> None:
    result = parse_file(XML_A100)
    assert (result.formats, result.driver_version, result.cuda_version) == (
        ("q_xml",),
        "535.54.03",
        "12.2",
    )
    [gpu] = result.gpus
    assert (gpu.bus_id, gpu.name, gpu.mig_mode, gpu.ecc_mode) == (
        "00000000:01:00.0",
        "NVIDIA A100-SXM4-80GB",
        "Enabled",
        "Enabled",
    )
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max) == (4, 4)
    assert (
        gpu.ecc_corrected_volatile,
        gpu.ecc_uncorrected_volatile,
        gpu.ecc_uncorrected_aggregate,
    ) == (0, 0, 0)
    assert (gpu.temperature_c, gpu.power_draw_w, gpu.memory_total_mib, gpu.memory_used_mib) == (
        27,
        67.03,
        81920,
        50,
    )
    assert any("announces 4 attached GPUs but holds 1" in w for w in result.warnings)
    json.dumps(result.to_json())


def test_xml_old_dtd_throttle_reasons_and_pcie() -> None:
    [gpu] = parse_file(XML_A10G).gpus
    assert (gpu.name, gpu.bus_id) == ("NVIDIA A10G", "00000000:00:1E.0")
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max, gpu.pcie_width_current, gpu.pcie_width_max) == (
        1,
        4,
        8,
        16,
    )
    assert gpu.clock_event_reasons == ("idle",)  # <clocks_throttle_reason_gpu_idle>Active
    assert (gpu.remapped_rows_uncorrectable, gpu.remapped_rows_pending) == (0, "No")
    assert (gpu.power_draw_w, gpu.power_limit_w) == (25.58, 300.0)


def test_xml_v13_clock_event_counters_become_samples() -> None:
    result = parse_file(XML_V13)
    [gpu] = result.gpus
    assert gpu.name == "NVIDIA RTX 4000 SFF Ada Generation"
    c = counters(result, gpu.bus_id)
    assert c["clocks_event_reasons_counters.sw_power_cap"] == 4251825415
    assert c["clocks_event_reasons_counters.hw_power_brake"] == 0
    assert {s.unit for s in result.samples if s.counter.startswith("clocks_event")} == {"us"}


def test_concatenated_outputs_in_one_transcript() -> None:
    text = (
        sample(TABLE).read_text()
        + "\n"
        + sample(TOPO).read_text()
        + "\n"
        + sample(NVLINK).read_text()
    )
    result = nvidia_smi.parse(io.BytesIO(text.encode()))
    assert result.formats == ("table", "topo", "nvlink")
    assert len(result.table_gpus) == 8 and result.topology is not None and len(result.nvlinks) == 96


P2P = "counters/mlengineering_nvidia-smi_topo_p2p_r_8xH100.txt"
HW_REPORT = "numa/dalang_z9pe_2socket_xeon_3x_rtx3060ti_hw_report_lscpu_topo.md"


def test_topo_p2p_read_matrix_is_not_a_topology() -> None:
    path = more_sample(P2P)
    assert nvidia_smi.accepts(path.name, path.read_bytes())
    result = nvidia_smi.parse(path.open("rb"))
    assert result.formats == ("p2p",) and result.topology is None
    [matrix] = result.p2p
    assert matrix.mode == "read"  # from "$ nvidia-smi topo -p2p r"
    assert matrix.devices == tuple(f"GPU{i}" for i in range(8))
    assert len(matrix.links) == 8 * 7 and {link.link for link in matrix.links} == {"OK"}


def test_p2p_matrices_of_two_modes_and_a_topo_matrix_without_legend() -> None:
    text = (
        "$ nvidia-smi topo -p2p w\n\tGPU0\tGPU1\n GPU0\tX\tNS\n GPU1\tCNS\tX\n\n"
        "$ nvidia-smi topo -p2p n\n\tGPU0\tGPU1\n GPU0\tX\tOK\n GPU1\tOK\tX\n\n"
        + "\n".join(sample(TOPO).read_text().splitlines()[:9])  # the matrix, no legend
    )
    result = nvidia_smi.parse(io.BytesIO(text.encode()))
    assert result.formats == ("topo", "p2p")
    write, nvlink = result.p2p
    assert (write.mode, nvlink.mode) == ("write", "nvlink")
    # directions differ: GPU0 -> GPU1 is NS, GPU1 -> GPU0 is CNS
    assert {(link.a, link.b): link.link for link in write.links} == {
        ("GPU0", "GPU1"): "NS",
        ("GPU1", "GPU0"): "CNS",
    }
    links = {(link.a, link.b): link.link for link in result.topology.links}
    assert links[("GPU0", "GPU1")] == "NV18" and links[("GPU0", "NIC0")] == "PIX"
    assert result.topology.nic_legend == {}  # the legend was not pasted


def test_query_gpu_csv_and_topo_in_a_markdown_report() -> None:
    result = nvidia_smi.parse(more_sample(HW_REPORT).open("rb"))
    assert result.formats == ("query", "topo")
    assert [row["pcie.link.gen.current"] for row in result.query_gpus] == ["2", "1", "1"]
    assert result.query_gpus[0]["power.limit"] == "200.00 W"
    rows = {(s.device, s.counter): (s.value, s.unit) for s in result.samples}
    assert rows[("GPU 2", "memory.total")] == (8192, "MiB")
    assert rows[("GPU 0", "clocks.max.memory")] == (7001, "MHz")  # unit from the header
    assert rows[("GPU 1", "pcie.link.gen.max")] == (3, "count")
    assert result.summary()["pcie_downtrained"] == 3  # gen 2/1/1 of 3
    links = {(link.a, link.b): link.link for link in result.topology.links}
    assert links == {("GPU0", "GPU1"): "SYS", ("GPU0", "GPU2"): "SYS", ("GPU1", "GPU2"): "PHB"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "no nvidia-smi output"),
        (b"hello\n", "no nvidia-smi output"),
        (b"<nvidia_smi_log>", "not a readable nvidia-smi"),
        (
            b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><nvidia_smi_log>&a;</nvidia_smi_log>',
            "entity",
        ),
        # Found by fuzzing: expat looks the declared encoding up and raised LookupError.
        (b'<?xml version="1.0" encoding="UTF28"?><nvidia_smi_log/>', "unknown encoding"),
    ],
)
def test_refusals(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        nvidia_smi.parse(io.BytesIO(data))


def test_truncated_xml_keeps_the_gpu_read_so_far() -> None:
    data = sample(XML_A10G).read_bytes()[:9000]
    result = nvidia_smi.parse(io.BytesIO(data))
    assert result.gpus[0].name == "NVIDIA A10G"
    assert any("ends early" in w for w in result.warnings)


@pytest.mark.parametrize(
    "relative", [Q_MULTI, Q_560, Q_INVALID, TABLE, NVLINK, TOPO, XML_A100, XML_A10G, XML_V13]
)
def test_accepts_its_samples(relative: str) -> None:
    path = sample(relative)
    assert nvidia_smi.accepts(path.name, path.read_bytes()[: 64 * 1024])


@pytest.mark.parametrize(
    "relative",
    [
        "nccl_debug/timez_NCCL_TOPO_DUMP_FILE_normal.xml",
        "counters/gpud_ibstat_h100_all_active.txt",
        "counters/gpud_sysfs_infiniband_h100_9hca_grep_dump.txt",
        "ethtool_rdma/ethq_mlx5_core_cx4lx_ubuntu1804_ethtool_S.txt",
        "nccl_tests/xxrjun_pair_N2_G1_ok.log",
        "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log",
        "counters/gpud_nvidia_fabricmanager.log",
        "counters/gpud_dmesg_with_NVRM_Xid_119.log",
        "torch_profiler/hta_backward_thread_tiny.json",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not nvidia_smi.accepts(path.name, path.read_bytes()[: 64 * 1024])


@pytest.mark.parametrize(
    "relative", [Q_MULTI, Q_560, Q_INVALID, TABLE, NVLINK, TOPO, XML_A100, XML_A10G, XML_V13]
)
def test_the_registry_detects_it(relative: str) -> None:
    path = sample(relative)
    assert detect_kind(path.name, path.read_bytes()[: 64 * 1024]) == "nvidia_smi"


ROBUST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(nvidia_smi.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(
    st.sampled_from([Q_560, TABLE, XML_A10G, TOPO]),
    st.integers(min_value=0, max_value=20000),
    st.binary(max_size=8),
)
def test_truncated_and_corrupted_prefixes(relative: str, cut: int, junk: bytes) -> None:
    data = sample(relative).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(nvidia_smi.parse(io.BytesIO(blob)).to_json())


def test_every_gpu_of_an_hgx_board_has_its_own_nic_behind_its_switch() -> None:
    placements = nic_placements(parse_file(TOPO).topology)
    assert [(p.gpu, p.nic, p.link) for p in placements] == [
        (f"GPU{i}", f"mlx5_{i}", "PIX") for i in range(8)
    ]
    assert placements[5].numa_affinity == "1" and placements[5].cpu_affinity == "48-95,144-191"


def _topology(links: dict[tuple[str, str], str], legend: dict[str, str]) -> Topology:
    devices = tuple(dict.fromkeys(d for pair in links for d in pair))
    return Topology(
        devices=devices,
        links=tuple(TopoLink(a, b, link) for (a, b), link in links.items()),
        affinities=(DeviceAffinity("GPU1", "8-15", "1", None),),
        nic_legend=legend,
    )


def test_the_nearest_nic_is_the_fewest_pcie_hops_whichever_side_of_the_pair() -> None:
    topo = _topology(
        {("GPU0", "GPU1"): "NV18", ("GPU0", "NIC0"): "PXB", ("GPU0", "NIC1"): "SYS",
         ("NIC1", "GPU1"): "NODE", ("GPU1", "NIC0"): "SYS", ("NIC0", "NIC1"): "SYS"},
        {"NIC0": "mlx5_0"},
    )  # fmt: skip
    placements = {p.gpu: p for p in nic_placements(topo)}
    assert (placements["GPU0"].nic, placements["GPU0"].link) == ("mlx5_0", "PXB")
    assert (placements["GPU1"].nic, placements["GPU1"].link) == ("NIC1", "NODE")  # no legend
    assert placements["GPU1"].numa_affinity == "1" and placements["GPU0"].cpu_affinity is None


def test_a_matrix_without_nics_places_nothing() -> None:
    assert nic_placements(_topology({("GPU0", "GPU1"): "NV12"}, {})) == []
