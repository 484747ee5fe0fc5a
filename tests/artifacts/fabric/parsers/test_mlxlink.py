"""mlxlink: link state, FEC, module and BER counters. Expected values read from the samples."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import mlxlink
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import sample

B200 = "mlxlink/gcp_cluster_toolkit_b200_nvlink_xdr_gpu_mlxlink_EXCERPT.txt"
BF3 = "mlxlink/sigcomm26_bf3_100g_dac_mlxlink_m_c_two_ports_EXCERPT.txt"
SONIC = "mlxlink/sonic_spectrum_switch_mlxlink_port2_25g_firecode_EXCERPT.txt"


def parse_file(relative: str) -> mlxlink.MlxlinkResult:
    with sample(relative).open("rb") as f:
        return mlxlink.parse(f)


def test_bluefield3_two_runs_module_and_ber() -> None:
    result = parse_file(BF3)
    first, second = result.ports
    assert (first.host, first.device, first.port) == ("bluefield-1", "/dev/mst/mt41692_pciconf0", 1)
    assert second.device == "/dev/mst/mt41692_pciconf0.1"
    assert (first.state, first.phys_state, first.speed, first.speed_gbps, first.width) == (
        "ACTIVE",
        "LinkUp",
        "100G",
        100.0,
        4,
    )
    assert first.fec == "Standard RS-FEC - RS(528,514)"
    assert (first.firmware, first.mft_version, first.amber_version) == (
        "32.43.2402",
        "mft 4.30.1-8",
        "3.6",
    )
    assert (first.status_opcode, first.recommendation) == (0, "No issue was observed")
    assert first.module["identifier"] == "QSFP28" and first.module["vendor_name"] == "FS"
    assert first.module["vendor_serial_number"] == "S2202655321-1"
    assert second.module["vendor_serial_number"] == "S2202655321-2"
    assert "temperature_c" not in first.module  # N/A on a passive DAC
    c = first.counters
    assert (
        c["time_since_last_clear_min"] == 25074.8
        and second.counters["time_since_last_clear_min"] == 25075.2
    )
    assert c["effective_physical_ber"] == 15e-255 and c["raw_physical_ber"] == 15e-255
    assert c["raw_physical_errors_per_lane"] == [0, 0, 0, 0]
    assert (
        c["effective_physical_errors"],
        c["link_down_counter"],
        c["link_error_recovery_counter"],
    ) == (0, 0, 0)
    rows = {(s.device, s.counter): (s.value, s.unit) for s in result.samples}
    assert rows[("/dev/mst/mt41692_pciconf0", "effective_physical_ber")] == (15e-255, "ratio")
    assert rows[("/dev/mst/mt41692_pciconf0", "raw_physical_errors_per_lane_lane3")] == (0, "count")
    assert rows[("/dev/mst/mt41692_pciconf0.1", "time_since_last_clear_min")] == (25075.2, "min")
    json.dumps(result.to_json())


def test_b200_nvlink_port_from_a_bug_report_excerpt() -> None:
    [port] = parse_file(B200).ports
    assert port.device == "/dev/mst/netir10497_00.cc.00_gpu7"
    assert (port.state, port.phys_state, port.speed, port.width) == (
        "ACTIVE",
        None,
        "NVLink-XDR",
        2,
    )
    assert port.fec == "Interleaved_Standard_RS_FEC_PLR - (544,514)"
    assert port.enabled_link_speed == "0x00000100 (XDR)"
    assert (port.firmware, port.mft_version) == ("36.2014.1676", "mft 4.32.0-120")
    assert port.counters == {}


def test_spectrum_switch_older_format() -> None:
    [port] = parse_file(SONIC).ports
    assert (port.host, port.device, port.port) == ("sonic", "/dev/mst/mt52100_pci_cr0", 2)  # -p 0x2
    assert (port.speed, port.speed_gbps, port.width, port.fec) == ("25GbE", 25.0, 1, "Firecode FEC")
    assert port.supported_cable_speed == "0x3c007011 (25G,10G,1G)"
    assert port.recommendation == "No issue was observed."
    assert port.firmware is None  # no Tool Information section in this version


def test_a_port_down_with_errors_and_the_same_port_read_twice() -> None:
    text = """\
root@gpu3:~# mlxlink -d /dev/mst/mt4129_pciconf0 -c
Operational Info
----------------
State                              : Polling
Physical state                     : ETH_AN_FSM_ENABLE
Speed                              : N/A
Width                              : N/A

Troubleshooting Info
--------------------
Status Opcode                      : 1024
Recommendation                     : Cable is unplugged

Physical Counters and BER Info
------------------------------
Link Down Counter                  : 17
Effective Physical Errors          : 5
root@gpu3:~# mlxlink -d /dev/mst/mt4129_pciconf0 -c
Operational Info
----------------
State                              : Polling
Physical Counters and BER Info
------------------------------
Link Down Counter                  : 19
"""
    result = mlxlink.parse(io.BytesIO(text.encode()))
    first, second = result.ports
    assert second.state == "POLLING"
    assert (first.state, first.speed, first.width, first.status_opcode) == (
        "POLLING",
        None,
        None,
        1024,
    )
    assert first.recommendation == "Cable is unplugged"
    assert [(s.snapshot, s.value) for s in result.samples if s.counter == "link_down_counter"] == [
        (0, 17),
        (1, 19),
    ]
    summary = result.summary()
    assert (summary["not_active"], summary["issues"]) == (2, 1)


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no mlxlink output"):
        mlxlink.parse(io.BytesIO(b"State : Active\n"))


@pytest.mark.parametrize("relative", [B200, BF3, SONIC])
def test_detection(relative: str) -> None:
    path = sample(relative)
    assert mlxlink.accepts(path.name, path.read_bytes())
    assert detect_kind(path.name, path.read_bytes()) == "mlxlink"


@pytest.mark.parametrize(
    "relative",
    [
        "counters/gpud_ibstat_h100_all_active.txt",
        "counters/gpud_nvidia-smi_q_560.35.03.txt",
        "mlxconfig/mailinglist_cx5ex_mcx516a_cda_mlxconfig_q_DEQUOTED.txt",
        "ethtool_rdma/ethq_mlx5_core_cx4lx_ubuntu1804_ethtool_S.txt",
        "nccl_tests/xxrjun_pair_N2_G1_ok.log",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not mlxlink.accepts(path.name, path.read_bytes()[: 64 * 1024])


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(mlxlink.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=7641), st.binary(max_size=8))
def test_truncated_and_corrupted_prefixes(cut: int, junk: bytes) -> None:
    data = sample(BF3).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(mlxlink.parse(io.BytesIO(blob)).to_json())
