"""nccl_topology: NCCL_TOPO_DUMP_FILE XML. Expected values read from the sample files."""
# ruff: noqa: E501

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import nccl_topology
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import sample

NORMAL = "nccl_debug/timez_NCCL_TOPO_DUMP_FILE_normal.xml"
FAULT = "nccl_debug/timez_NCCL_TOPO_DUMP_FILE_fault_nvlink_count1.xml"


def parse_file(relative: str) -> nccl_topology.NcclTopologyResult:
    with sample(relative).open("rb") as f:
        return nccl_topology.parse(f)


def test_normal_dump_gpus_nics_and_nvlinks() -> None:
    result = parse_file(NORMAL)
    assert result.version == "1"
    assert result.host_hash == "0xd3524fac75ffbc89"
    [cpu] = result.cpus
    assert (cpu.numa_id, cpu.arch, cpu.vendor, cpu.family_id, cpu.model_id) == (
        0,
        "x86_64",
        "GenuineIntel",
        6,
        106,
    )
    assert [(g.busid, g.dev, g.rank, g.sm, g.gdr, g.device) for g in result.gpus] == [
        ("0000:17:00.0", 0, 0, 80, True, "0x20b5"),
        ("0000:65:00.0", 1, 1, 80, True, "0x20b5"),
    ]
    assert {(g.link_speed, g.link_width) for g in result.gpus} == {("16.0 GT/s PCIe", 16)}
    # ConnectX-6 Dx (0x101d), two ports of one NIC at 0000:4b:00.0, GDR off.
    assert [(n.name, n.port, n.speed_mbps, n.busid, n.gdr, n.maxconn) for n in result.nets] == [
        ("mlx5_0", 1, 100000, "0000:4b:00.0", False, 131072),
        ("mlx5_1", 2, 100000, "0000:4b:00.0", False, 131072),
    ]
    assert {p.busid: (p.kind, p.device) for p in result.pci} == {
        "0000:17:00.0": ("gpu", "0x20b5"),
        "0000:4b:00.0": ("nic", "0x101d"),
        "0000:65:00.0": ("gpu", "0x20b5"),
    }
    assert [
        (link.gpu_dev, link.target, link.count, link.target_kind) for link in result.nvlinks
    ] == [
        (0, "0000:65:00.0", 12, "gpu"),
        (1, "0000:17:00.0", 12, "gpu"),
    ]
    assert result.summary()["nvlink_asymmetric"] is False
    assert result.warnings == ()
    json.dumps(result.to_json())


def test_fault_dump_shows_the_asymmetric_nvlink() -> None:
    result = parse_file(FAULT)
    assert [link.count for link in result.nvlinks] == [1, 12]  # GPU0 -> GPU1 lost 11 links
    assert nccl_topology.nvlink_asymmetries(result.nvlinks) == [
        ("0000:17:00.0", "0000:65:00.0", 1, 12)
    ]
    summary = result.summary()
    assert (
        summary["nvlink_count_min"],
        summary["nvlink_count_max"],
        summary["nvlink_asymmetric"],
    ) == (1, 12, True)
    assert result.host_hash == "0xd3524fac75ffbc89"  # attribute order differs from the normal dump


def test_nested_pci_switches_and_nvswitch_links() -> None:
    xml = b"""<?xml version="1.0"?>
<system version="1">
  <cpu numaid="1" arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="1">
    <pci busid="0000:40:01.1" class="0x060400" vendor="0x1000" device="0xc030" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:41:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="4" sm="90" rank="12" gdr="1">
          <nvlink target="0000:05:00.0" count="18" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:42:00.0" class="0x020700" vendor="0x15b3" device="0x1021" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic><net name="mlx5_4" dev="4" speed="400000" port="1" latency="0.000000" guid="0x1" maxconn="131072" gdr="1" coll="1"/></nic>
      </pci>
    </pci>
  </cpu>
</system>
"""
    result = nccl_topology.parse(io.BytesIO(xml))
    gpu_pci = {p.busid: p for p in result.pci}["0000:41:00.0"]
    assert (gpu_pci.parent_busid, gpu_pci.numa_id, gpu_pci.kind) == ("0000:40:01.1", 1, "gpu")
    assert {p.busid: p.kind for p in result.pci}["0000:40:01.1"] == "bridge"
    [gpu] = result.gpus
    assert (gpu.rank, gpu.sm, gpu.numa_id) == (12, 90, 1)
    [link] = result.nvlinks
    assert (link.target_kind, link.count, link.gpu_busid) == ("nvswitch", 18, "0000:41:00.0")
    [net] = result.nets
    assert (net.name, net.speed_mbps, net.gdr, net.coll, net.numa_id) == (
        "mlx5_4",
        400000,
        True,
        True,
        1,
    )


def test_truncated_dump_keeps_what_was_read() -> None:
    data = sample(NORMAL).read_bytes()[:700]  # cut inside the NIC's <pci> element
    result = nccl_topology.parse(io.BytesIO(data))
    assert [g.busid for g in result.gpus] == ["0000:17:00.0"]
    assert any("ends early" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "not a readable NCCL topology"),
        (b"<other/>", "no <system> element"),
        (b'<!DOCTYPE s [<!ENTITY a "aaaaaaaaaa">]><system version="1">&a;</system>', "entity"),
        (b"<system", "not a readable NCCL topology"),
        # Found by fuzzing: expat looks the declared encoding up and raised LookupError.
        (b'<?xml version="1.0" encoding="UTF28"?><system version="1"/>', "unknown encoding"),
    ],
)
def test_bad_documents_are_refused_clearly(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        nccl_topology.parse(io.BytesIO(data))


def test_documents_beyond_the_size_limit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nccl_topology, "MAX_BYTES", 1000)
    data = b'<system version="1">' + b"<cpu/>" * 1000 + b"</system>"
    with pytest.raises(ParseError, match="larger than"):
        nccl_topology.parse(io.BytesIO(data))


def test_a_fragment_without_system_after_prose() -> None:
    lines = sample(NORMAL).read_text().splitlines()
    # the first GPU's <pci> block and the NIC's, pasted after a sentence, cut inside </pci>
    fragment = "Here is the part of the dump that matters:\n" + "\n".join(lines[2:12])
    assert nccl_topology.accepts("x", fragment.encode())
    result = nccl_topology.parse(io.BytesIO(fragment.encode()))
    assert result.parts == ("fragment", "pci", "gpus", "nets", "nvlinks")
    assert [(g.busid, g.dev, g.rank) for g in result.gpus] == [("0000:17:00.0", 0, 0)]
    assert [(n.name, n.speed_mbps) for n in result.nets] == [("mlx5_0", 100000), ("mlx5_1", 100000)]
    [link] = result.nvlinks
    assert (link.gpu_busid, link.target, link.count) == ("0000:17:00.0", "0000:65:00.0", 12)
    assert any("fragment" in w for w in result.warnings)
    assert nccl_topology.parse(sample(NORMAL).open("rb")).parts[:1] == ("cpus",)


def test_detection() -> None:
    for relative in (NORMAL, FAULT):
        path = sample(relative)
        assert nccl_topology.accepts(path.name, path.read_bytes())
    for relative in (
        "counters/telegraf_nvidia-smi_q_x_a100-sxm4.xml",
        "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log",
        "torch_profiler/hta_backward_thread_tiny.json",
    ):
        path = sample(relative)
        assert not nccl_topology.accepts(path.name, path.read_bytes()[: 64 * 1024])
    assert not nccl_topology.accepts("x.txt", b"random words <system> later")


@pytest.mark.parametrize("relative", [NORMAL, FAULT])
def test_the_registry_detects_it(relative: str) -> None:
    path = sample(relative)
    assert detect_kind(path.name, path.read_bytes()[: 64 * 1024]) == "nccl_topology"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=1270), st.binary(max_size=6))
def test_truncated_and_corrupted_prefixes(cut: int, junk: bytes) -> None:
    data = sample(NORMAL).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(nccl_topology.parse(io.BytesIO(blob)).to_json())


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2048))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        nccl_topology.parse(io.BytesIO(data))
