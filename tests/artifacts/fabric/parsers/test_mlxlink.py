"""mlxlink: link state, FEC, module and BER counters. Expected values read from the samples."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import mlxlink
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import more_sample, sample

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


DR4_JSON = "mlxlink/yuuki_exporter_testdata_mft4.34.1_cx7_400g_dr4_osfp_mlxlink_m_c_json.json"
EYE_JSON = (
    "mlxlink/yuuki_exporter_testdata_mft4.34.1_cx7_400g_dr4_eye_fec_histogram_serdes_json.json"
)
BREV = "mlxlink/brev_a100_8x_cx6_hdr_mlxlink_ber_monitor_and_counters_grep_EXCERPT.txt"


def parse_more(relative: str) -> mlxlink.MlxlinkResult:
    path = more_sample(relative)
    assert mlxlink.accepts(path.name, path.read_bytes())
    with path.open("rb") as f:
        return mlxlink.parse(f)


def test_json_output_is_one_run_read_like_the_text() -> None:
    [port] = parse_more(DR4_JSON).ports
    assert port.source == "json"
    assert (port.state, port.phys_state, port.speed, port.speed_gbps, port.width) == (
        "ACTIVE", "ETH_AN_FSM_ENABLE", "400G", 400.0, 4,
    )  # fmt: skip
    assert port.fec == "Standard_RS-FEC - (544,514)"
    assert port.supported_cable_speed == "0x00012800 (400G_4X,200G_2X,100G_1X)"
    assert (port.firmware, port.mft_version, port.amber_version) == (
        "28.47.1088",
        "4.34.1-10",
        "5.75",
    )
    assert (port.status_opcode, port.recommendation) == (0, "No issue was observed")
    c = port.counters
    assert c["raw_physical_errors_per_lane"] == [3017647, 15132549, 7368641, 9233545]
    assert c["raw_physical_ber_per_lane"] == [1e-10, 1e-9, 4e-10, 5e-10]
    assert c["time_since_last_clear_min"] == 2718.1 and c["effective_physical_ber"] == 15e-255
    assert set(port.parts) == {
        "module_info", "operational_info", "physical_counters_and_ber_info", "supported_info",
        "tool_information", "troubleshooting_info",
    }  # fmt: skip


def test_module_information_typed() -> None:
    [port] = parse_more(DR4_JSON).ports
    cable = port.cable
    assert (cable["identifier"], cable["vendor_name"], cable["part_number"]) == (
        "OSFP", "EXAMPLE", "OSFP-400G-DR4",
    )  # fmt: skip
    assert (cable["serial_number"], cable["revision"], cable["fw_version"]) == (
        "S00XXX000000", "1A", "40.242.17",
    )  # fmt: skip
    assert (cable["wavelength_nm"], cable["length_m"]) == (1311, 100.0)  # "SMF Length: 100m"
    assert (cable["temperature_c"], cable["temperature_c_range"]) == (61, [-10, 80])
    assert (cable["voltage_mv"], cable["voltage_mv_range"]) == (3235.5, [2970, 3630])
    assert cable["rx_power_dbm"] == [3.583, 3.253, 3.233, 2.658]
    assert cable["tx_power_dbm"] == [2.193, 1.202, 1.708, 1.274]
    assert cable["bias_current_ma"] == [265.504, 265.504, 248.416, 248.416]
    rows = {s.counter: (s.value, s.unit) for s in parse_more(DR4_JSON).samples}
    assert rows["module_temperature_c"] == (61, "C")
    assert rows["module_rx_power_dbm_lane3"] == (2.658, "dBm")
    assert rows["raw_physical_errors_per_lane_lane1"] == (15132549, "count")
    # the text form: a passive DAC has no DDM readings, its length is "Transfer Distance"
    first = parse_file(BF3).ports[0]
    assert first.cable["length_m"] == 3.0 and "temperature_c" not in first.cable
    assert (first.cable["vendor_name"], first.cable["part_number"]) == ("FS", "Q28-PC03")


def test_json_fec_histogram_eye_and_serdes() -> None:
    [port] = parse_more(EYE_JSON).ports
    bins = {b["bin"]: b["count"] for b in port.fec_histogram}
    assert len(bins) == 16 and bins[0] == 26766318661536 and bins[1] == 76439959
    assert (bins[3], bins[8], bins[15]) == (204, 3, 0)
    assert port.eye["last_fom"] == [107, 112, 88, 101]
    assert port.eye["mid_grades"] == [124, 121, 111, 114]
    assert port.serdes_tx["lane2"] == {
        "fir_pre3": 0, "fir_pre2": 5, "fir_pre1": -15, "fir_main": 43, "fir_post1": 0, "drv_amp": 0,
    }  # fmt: skip
    assert port.cable["vendor_name"] == "SAKURA" and port.cable["temperature_c"] == 62


def test_text_fec_histogram_with_ranges() -> None:
    # the text form of --show_histogram: range, mlxlink's field separator, occurrences
    text = (
        "Histogram of FEC Errors\n-----------------------\n"
        "Header                          : Range       Occurrences\n"
        "Bin 0                           : [0]         1923012\n"
        "Bin 1                           : [1]         57\n"
        "Bin 2                           : [2:15]      3\n"
        "\nOperational Info\n----------------\nState                           : Active\n"
    )
    [port] = mlxlink.parse(io.BytesIO(text.encode())).ports
    assert port.fec_histogram == (
        {"bin": 0, "range": "0", "count": 1923012},
        {"bin": 1, "range": "1", "count": 57},
        {"bin": 2, "range": "2:15", "count": 3},
    )
    assert port.parts == ("histogram_of_fec_errors", "operational_info")


def test_shell_loop_headings_and_grep_fragments() -> None:
    result = parse_more(BREV)
    # first loop: 8 full runs under "=== mt4123_pciconfN ===", the --show_ber_monitor error
    # kept; second loop: "| grep" lines without their section underline, one per mlx5_N
    assert [p.device for p in result.ports[:8]] == [f"mt4123_pciconf{i}" for i in range(8)]
    assert all(p.speed == "IB-HDR" and p.width == 2 for p in result.ports[:8])
    assert sum("--show_ber_monitor" in w for w in result.warnings) == 8
    grep = {p.device: p for p in result.ports[8:]}
    assert sorted(grep) == [f"mlx5_{i}" for i in range(8)]
    assert grep["mlx5_3"].counters["raw_physical_errors_per_lane"] == [32379149, 224947]
    assert grep["mlx5_3"].counters["raw_physical_ber"] == 1e-7
    assert grep["mlx5_6"].counters["raw_physical_ber"] == 4e-9
    assert grep["mlx5_0"].counters["symbol_ber"] == 15e-255
    assert grep["mlx5_0"].fec == "RS-FEC - (544,514) + PLR" and grep["mlx5_0"].state is None
    assert "physical_counters_and_ber_info" in grep["mlx5_0"].parts


def test_a_json_document_cut_before_its_end_is_warned() -> None:
    text = more_sample(DR4_JSON).read_bytes()[:2000]
    with pytest.raises(ParseError):
        mlxlink.parse(io.BytesIO(text))
    both = io.BytesIO(text + b"\n" + sample(BF3).read_bytes())
    result = mlxlink.parse(both)
    assert len(result.ports) == 2 and any("cut before its end" in w for w in result.warnings)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_cut_keeps_the_facts_whose_lines_it_holds(data: st.DataObject) -> None:
    # a paste that starts or ends anywhere: a serial number or a counter whose line is kept
    # (with one more known line beside it) is still read, section title or not
    lines = sample(BF3).read_text().splitlines()
    start = data.draw(st.integers(0, len(lines) - 1))
    end = data.draw(st.integers(start + 1, len(lines)))
    kept = lines[start:end]
    keys = [re.sub(r"[^a-z0-9]+", "_", line.split(" : ")[0].lower()).strip("_") for line in kept]
    known = [key for key in keys if key in mlxlink._SECTION_OF_KEY]
    try:
        ports = mlxlink.parse(io.BytesIO("\n".join(kept).encode())).ports
    except ParseError:
        assert len(known) < 2
        return
    serials = {p.cable.get("serial_number") for p in ports}
    clears = {p.counters.get("time_since_last_clear_min") for p in ports}
    for line in kept:
        key, _, value = line.partition(" : ")
        if key.strip() == "Vendor Serial Number":
            assert value.strip() in serials
        if key.strip() == "Time Since Last Clear [Min]":
            assert float(value) in clears


def test_another_programs_rule_under_a_line_is_not_a_section_title() -> None:
    # found by the generated variation: a prompt, then a log's 74-dash rule, then a fragment
    lines = sample(BF3).read_text().splitlines()
    text = "svc-perf@bluefield-1 ~> cat evidence.txt\n" + "-" * 74 + "\n" + "\n".join(lines[4:30])
    [port] = mlxlink.parse(io.BytesIO(text.encode())).ports
    assert (port.phys_state, port.speed, port.width) == ("LinkUp", "100G", 4)
    assert "svc_perf_bluefield_1_cat_evidence_txt" not in port.parts


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
