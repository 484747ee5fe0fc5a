"""ib_status: ibstat, ibstatus, ibv_devinfo. Expected values read from the sample files."""
# ruff: noqa: E501

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import ib_status
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import more_sample, sample

ALL_ACTIVE = "counters/gpud_ibstat_h100_all_active.txt"
SOME_DOWN = "counters/gpud_ibstat_h100_some_ports_down.txt"
PANIC = "counters/gpud_ibstat_a100_ibpanic_partial_exit255.txt"
IBSTATUS = "counters/gpud_ibstatus_a100_all_active.txt"
DEVINFO = "counters/ibv_devinfo_cx6_ib_single_hca.txt"


def parse_file(relative: str) -> ib_status.IbStatusResult:
    with sample(relative).open("rb") as f:
        return ib_status.parse(f)


def ports(result: ib_status.IbStatusResult) -> dict[str, object]:
    return {p.device: p for p in result.ports}


def test_ibstat_h100_some_ports_down() -> None:
    result = parse_file(SOME_DOWN)
    assert result.tools == ("ibstat",)
    assert [h.device for h in result.hcas][:4] == [
        "mlx5_0",
        "mlx5_1",
        "mlx5_2",
        "mlx5_3",
    ]  # natural order
    assert len(result.hcas) == len(result.ports) == 12
    by_device = ports(result)
    down = sorted(d for d, p in by_device.items() if p.state != "ACTIVE")
    assert down == ["mlx5_2", "mlx5_7", "mlx5_8"]
    mlx5_2 = by_device["mlx5_2"]
    assert (mlx5_2.state, mlx5_2.phys_state, mlx5_2.rate_gbps, mlx5_2.link_layer) == (
        "DOWN",
        "Disabled",
        40.0,
        "Ethernet",
    )
    mlx5_0 = by_device["mlx5_0"]
    assert (mlx5_0.rate_gbps, mlx5_0.base_lid, mlx5_0.sm_lid, mlx5_0.port_guid) == (
        400.0,
        "75",
        "334",
        "0x946dae0300cde72c",
    )
    hca = {h.device: h for h in result.hcas}
    assert (hca["mlx5_0"].hca_type, hca["mlx5_0"].firmware, hca["mlx5_0"].ports) == (
        "MT4129",
        "28.39.1002",
        1,
    )
    assert (hca["mlx5_1"].hca_type, hca["mlx5_1"].firmware) == ("MT4125", "22.38.1002")
    assert result.summary()["ports_not_active"] == 3
    json.dumps(result.to_json())


def test_ibstat_all_active_is_all_ethernet_here() -> None:
    result = parse_file(ALL_ACTIVE)
    assert {p.state for p in result.ports} == {"ACTIVE"}
    assert {p.link_layer for p in result.ports} == {"Ethernet"}
    assert ports(result)["mlx5_1"].port_guid == "0x0000000000000000"
    assert {h.firmware for h in result.hcas} == {"28.39.1002", "22.39.1002"}


def test_ibpanic_keeps_the_partial_output_and_reports_the_error() -> None:
    result = parse_file(PANIC)
    assert len(result.ports) == 8  # mlx5_0 .. mlx5_7; the tool died on mlx5_8
    assert {h.firmware for h in result.hcas} == {"20.41.1000"}
    assert {h.hca_type for h in result.hcas} == {"MT4124"}
    [error] = result.errors
    assert "stat of IB device 'mlx5_8' failed" in error
    assert any("partial" in w for w in result.warnings)


def test_ibstatus_gids_lids_and_rates() -> None:
    result = parse_file(IBSTATUS)
    assert result.tools == ("ibstatus",)
    by_device = ports(result)
    assert len(by_device) == 9
    mlx5_0 = by_device["mlx5_0"]
    assert mlx5_0.default_gid == "fe80:0000:0000:0000:0015:5dff:fd34:11eb"
    assert (mlx5_0.base_lid, mlx5_0.sm_lid, mlx5_0.rate, mlx5_0.rate_gbps) == (
        "0x33bf",
        "0x1",
        "200 Gb/sec (4X HDR)",
        200.0,
    )
    mlx5_8 = by_device["mlx5_8"]
    assert (mlx5_8.state, mlx5_8.link_layer, mlx5_8.rate_gbps, mlx5_8.default_gid) == (
        "ACTIVE",
        "Ethernet",
        40.0,
        "unknown",
    )


def test_ibv_devinfo_with_prompt_host() -> None:
    result = parse_file(DEVINFO)
    [hca] = result.hcas
    assert (hca.host, hca.device, hca.firmware, hca.hca_type, hca.board_id) == (
        "bernie",
        "mlx5_0",
        "20.41.1000",
        "4123",
        "MT_0000000222",
    )
    assert hca.node_guid == "0xa088c203009605fc"  # "a088:c203:0096:05fc" in ibstat's spelling
    [port] = result.ports
    assert (port.state, port.active_mtu, port.max_mtu, port.sm_lid, port.base_lid, port.link_layer) == (
        "ACTIVE", 4096, 4096, "35", "35", "InfiniBand",
    )  # fmt: skip


def test_ibv_devinfo_verbose_width_times_speed_gives_the_rate() -> None:
    text = "hca_id:\tmlx5_3\n\tport:\t1\n\t\tstate:\t\t\tPORT_DOWN (1)\n\t\tactive_width:\t\t4X (2)\n\t\tactive_speed:\t\t100.0 Gbps (128)\n\t\tphys_state:\t\tPOLLING (2)\n"
    [port] = ib_status.parse(io.BytesIO(text.encode())).ports
    assert (port.state, port.phys_state, port.rate_gbps) == ("DOWN", "POLLING (2)", 400.0)


def test_ibv_devinfo_every_field_of_two_adapters() -> None:
    path = more_sample("counters/ibv_devinfo_azure_vm_ib_vf_plus_eth_accelnet.txt")
    result = ib_status.parse(path.open("rb"))
    ib, eth = result.hcas
    assert (ib.host, ib.device, ib.transport, ib.firmware, ib.hca_type) == (
        "flux-sample-0", "mlx5_0", "InfiniBand (0)", "20.31.1014", "4124",
    )  # fmt: skip
    assert (ib.node_guid, ib.system_image_guid) == ("0x00155dfffe33ff18", "0x1070fd03006b341c")
    assert (ib.hardware_version, ib.board_id, ib.ports) == ("0x0", "MT_0000000223", 1)
    assert ib.details == {"vendor_id": "0x02c9"}  # the one field without its own key
    assert (eth.hca_type, eth.hardware_version, eth.board_id) == ("4118", "0x80", "MSF0010110035")
    p_ib, p_eth = result.ports
    assert (p_ib.state, p_ib.max_mtu, p_ib.active_mtu, p_ib.sm_lid, p_ib.base_lid, p_ib.lmc) == (
        "ACTIVE", 4096, 4096, "228", "383", "0x00",
    )  # fmt: skip
    assert (p_eth.link_layer, p_eth.active_mtu, p_eth.base_lid) == ("Ethernet", 1024, "0")
    assert p_ib.details == {} and result.summary()["link_layers"] == ["Ethernet", "InfiniBand"]


VERBOSE = """\
hca_id:\tmlx5_0
\ttransport:\t\t\tInfiniBand (0)
\tfw_ver:\t\t\t\t28.39.1002
\tvendor_id:\t\t\t0x02c9
\tmax_mr_size:\t\t\t0xffffffffffffffff
\tmax_qp:\t\t\t\t131072
\tdevice_cap_flags:\t\t0x25e1b836
\t\t\t\t\tBAD_PKEY_CNTR
\tphys_port_cnt:\t\t\t1
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tmax_msg_sz:\t\t0x40000000
\t\t\tgid_tbl_len:\t\t255
\t\t\tactive_width:\t\t4X (2)
\t\t\tactive_speed:\t\t100.0 Gbps (128)
\t\t\tlink_layer:\t\tEthernet
\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0ac0:ebff:fe3d:ca54, RoCE v1
\t\t\tGID[  3]:\t\t::ffff:10.110.0.33, RoCE v2
"""


def test_ibv_devinfo_verbose_keeps_every_other_field_as_printed() -> None:
    result = ib_status.parse(io.BytesIO(VERBOSE.encode()))
    [hca], [port] = result.hcas, result.ports
    assert hca.details == {
        "vendor_id": "0x02c9", "max_mr_size": "0xffffffffffffffff", "max_qp": "131072",
        "device_cap_flags": "0x25e1b836",
    }  # fmt: skip
    assert port.rate_gbps == 400.0 and port.details["gid_tbl_len"] == "255"
    assert port.details["gid_0"] == "fe80:0000:0000:0000:0ac0:ebff:fe3d:ca54, RoCE v1"
    assert port.details["gid_3"] == "::ffff:10.110.0.33, RoCE v2"
    assert port.details["max_msg_sz"] == "0x40000000"


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_cut_of_ibstat_keeps_the_ports_whose_block_it_holds(data: st.DataObject) -> None:
    # "ibstat | grep -A8 'Port 1'", a paste that starts mid-adapter: every port whose
    # "Port N:" .. "Rate:" lines lie in the kept part is still read, CA line or not
    lines = sample(SOME_DOWN).read_text().splitlines()
    start = data.draw(st.integers(0, len(lines) - 1))
    end = data.draw(st.integers(start + 1, len(lines)))
    blocks = [i for i, line in enumerate(lines) if re.fullmatch(r"Port \d+:", line.strip())]
    kept = [i for i in blocks if start <= i and i + 3 < end]
    expected = sorted(
        (lines[i + 1].split(":")[1].strip().upper(), int(lines[i + 3].split(":")[1])) for i in kept
    )
    fragment = "\n".join(lines[start:end]).encode()
    try:
        ports = ib_status.parse(io.BytesIO(fragment)).ports
    except ParseError:
        ports = ()
    got = sorted((p.state, int(p.rate_gbps)) for p in ports if p.rate_gbps is not None)
    assert all(e in got for e in expected), (expected, got)


# Another program's lines landed inside a CA block (issue 22: generated variation): flush
# left while the block's keys are indented, they are passed over, not read as port details,
# and the keys after them still belong to the port.
FOREIGN_INSIDE = (
    "CA 'mlx5_0'\n"
    "\tCA type: MT4129\n"
    "\tPort 1:\n"
    "\t\tState: Active\n"
    "\t\tRate: 400\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "libfabric:48213:1717236012::efa:core:efa_device_init():114<warn> Failed to open EFA device\n"
    "wandb: Tracking run with wandb version 0.16.6\n"
    "\t\tPort GUID: 0xa288c2fffee3142a\n"
    "\t\tLink layer: Ethernet\n"
)


def test_foreign_lines_inside_a_ca_block_are_passed_over() -> None:
    result = ib_status.parse(io.BytesIO(FOREIGN_INSIDE.encode()))
    (port,) = result.ports
    assert (port.device, port.state, port.rate_gbps) == ("mlx5_0", "ACTIVE", 400)
    assert port.link_layer == "Ethernet" and port.port_guid is not None
    assert port.details == {} and result.errors == ()
    assert result.hcas[0].hca_type == "MT4129" and result.hcas[0].details == {}


def test_a_block_printed_flush_left_still_reads_its_keys() -> None:
    # a paste that lost its indentation: heading and keys at one column, nothing to tell
    text = FOREIGN_INSIDE.replace("\t", "").replace("RuntimeError", "x").encode()
    (port,) = ib_status.parse(io.BytesIO(text)).ports
    assert port.link_layer == "Ethernet" and port.rate_gbps == 400


def test_ibdev2netdev_names_each_ports_netdev_and_link_state() -> None:
    text = (
        "root@gpu-3:~# ibdev2netdev\n"
        "mlx5_0 port 1 ==> ibp12s0 (Up)\n"
        "mlx5_1 port 1 ==> ibp75s0 (Down)\n"
        "mlx5_bond_0 port 1 ==> bond0 (Up)\n"
    )
    assert ib_status.accepts("x", text.encode())
    result = ib_status.parse(io.BytesIO(text.encode()))
    assert result.tools == ("ibdev2netdev",)
    assert [(p.host, p.device, p.port, p.state, p.details["netdev"]) for p in result.ports] == [
        ("gpu-3", "mlx5_0", 1, "ACTIVE", "ibp12s0"),
        ("gpu-3", "mlx5_1", 1, "DOWN", "ibp75s0"),
        ("gpu-3", "mlx5_bond_0", 1, "ACTIVE", "bond0"),
    ]
    assert result.summary()["ports_not_active"] == 1


def test_no_devices_is_refused_with_the_tools_message() -> None:
    with pytest.raises(ParseError, match="No IB devices found"):
        ib_status.parse(io.BytesIO(b"No IB devices found\n"))


@pytest.mark.parametrize("relative", [ALL_ACTIVE, SOME_DOWN, PANIC, IBSTATUS, DEVINFO])
def test_accepts_its_samples(relative: str) -> None:
    path = sample(relative)
    assert ib_status.accepts(path.name, path.read_bytes())


@pytest.mark.parametrize(
    "relative",
    [
        "counters/gpud_sysfs_infiniband_h100_9hca_grep_dump.txt",
        "ethtool_rdma/ethq_mlx5_core_cx4lx_ubuntu1804_ethtool_S.txt",
        "counters/gpud_nvidia-smi_q_560.35.03.txt",
        "nccl_tests/xxrjun_pair_N2_G1_ok.log",
        "mlxlink/sigcomm26_bf3_100g_dac_mlxlink_m_c_two_ports_EXCERPT.txt",
        "torch_profiler/hta_backward_thread_tiny.json",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not ib_status.accepts(path.name, path.read_bytes()[: 64 * 1024])


@pytest.mark.parametrize("relative", [ALL_ACTIVE, SOME_DOWN, PANIC, IBSTATUS, DEVINFO])
def test_the_registry_detects_it(relative: str) -> None:
    path = sample(relative)
    assert detect_kind(path.name, path.read_bytes()[: 64 * 1024]) == "ib_status"


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(ib_status.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=4351), st.binary(max_size=8))
def test_truncated_and_corrupted_prefixes(cut: int, junk: bytes) -> None:
    data = sample(PANIC).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            ib_status.parse(io.BytesIO(blob))
