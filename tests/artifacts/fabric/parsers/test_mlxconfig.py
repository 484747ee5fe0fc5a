"""mlxconfig -q: device header and the Configurations table. Values read from the sample."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import mlxconfig
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import any_sample, sample

CX5 = "mlxconfig/mailinglist_cx5ex_mcx516a_cda_mlxconfig_q_DEQUOTED.txt"


def test_cx5_device_and_every_parameter() -> None:
    with sample(CX5).open("rb") as f:
        result = mlxconfig.parse(f)
    [device] = result.devices
    assert (device.host, device.device, device.device_type, device.part) == (
        "daytona3", "/dev/mst/mt4121_pciconf0", "ConnectX5", "MCX516A-CDA_Ax"
    )  # fmt: skip
    assert device.description.startswith("ConnectX-5 Ex EN network interface card; 100GbE")
    assert len(device.params) == 140
    sriov = device.get("SRIOV_EN")
    assert sriov is not None and (sriov.value, sriov.number) == ("True(1)", 1.0)
    assert device.get("NUM_OF_VFS").number == 6
    assert device.get("ROCE_CC_ALGORITHM_P1").value == "ECN(0)"
    assert device.get("CNP_DSCP_P1").number == 48 and device.get("CNP_802P_PRIO_P1").number == 6
    assert device.get("EXP_ROM_UEFI_x86_ENABLE") is not None  # lower case in a name
    assert device.get("HOST_CHAINING_DESCRIPTORS").value == "Array[0..7]"
    assert result.summary() == {
        "devices": 1, "types": ["ConnectX5"], "params": 140, "modified": 0, "warnings": 0
    }  # fmt: skip
    json.dumps(result.to_json())


def test_extended_query_columns_and_modified_marks() -> None:
    text = (
        "Device #1:\n----------\n\nDevice type:    ConnectX7\nDevice:         0000:3b:00.0\n\n"
        "Configurations:                          Default         Current         Next Boot\n"
        "*        LINK_TYPE_P1                    IB(1)           ETH(2)          ETH(2)\n"
        "         ROCE_CC_PRIO_MASK_P1            255             255             255\n"
    )
    [device] = mlxconfig.parse(io.BytesIO(text.encode())).devices
    link = device.get("LINK_TYPE_P1")
    assert link is not None and link.modified and link.value == "ETH(2)"
    assert link.columns == {"default": "IB(1)", "current": "ETH(2)", "next_boot": "ETH(2)"}
    assert device.device == "0000:3b:00.0" and not device.get("ROCE_CC_PRIO_MASK_P1").modified


# ------------------------------------------------ ../shared/more-samples (vendor docs, blogs)
SLINGSHOT = "mlxconfig/hpe_slingshot_docs_cx5_mcx515a_mlxconfig_e_q_after_tlv_ELIDED_EXCERPT.txt"
OPENSHIFT = "mlxconfig/openshift_blog_cx7_mcx715105as_mlxconfig_query_ELIDED_EXCERPT.txt"


def parse_any(relative: str) -> mlxconfig.MlxconfigResult:
    with any_sample(relative).open("rb") as f:
        return mlxconfig.parse(f)


def test_extended_query_elided_by_its_author_with_the_legend_line() -> None:
    result = parse_any(SLINGSHOT)
    [device] = result.devices
    assert (device.device_type, device.part, device.device) == (
        "ConnectX5", "MCX515A-CCA_Ax_Bx", "/dev/mst/mt4119_pciconf0"
    )  # fmt: skip
    # five rows shown; the "..." lines and the '*' legend are not parameters
    assert [p.name for p in device.params] == [
        "MEMIC_BAR_SIZE", "MEMIC_SIZE_LIMIT", "ADVANCED_PCI_SETTINGS", "SAFE_MODE_THRESHOLD",
        "SAFE_MODE_ENABLE",
    ]  # fmt: skip
    advanced = device.get("ADVANCED_PCI_SETTINGS")
    assert advanced is not None and advanced.modified and advanced.number == 1
    assert advanced.columns == {"default": "False(0)", "current": "True(1)", "next_boot": "True(1)"}
    assert device.get("MEMIC_SIZE_LIMIT").columns["default"] == "_256KB(1)"
    assert result.parts == ("device header", "configurations", "rows", "elided", "legend")
    assert any("elided (2 '...' lines)" in w for w in result.warnings)


def test_newer_mft_wide_columns_with_padding_and_the_echoed_command() -> None:
    result = parse_any(OPENSHIFT)
    [device] = result.devices
    assert (device.device_type, device.part) == ("ConnectX7", "MCX715105AS-WEAT_Ax")
    assert device.description is not None and device.description.endswith("Secure Boot Enabled")
    assert device.get("MODULE_SPLIT_M0").value == "Array[0..15]"
    assert device.get("SAFE_MODE_THRESHOLD").columns == {"next_boot": "10"}
    assert len(device.params) == 6 and result.parts[0] == "command"
    assert "elided" in result.parts


@pytest.mark.parametrize("relative", [SLINGSHOT, OPENSHIFT])
def test_more_samples_are_detected(relative: str) -> None:
    path = any_sample(relative)
    assert detect_kind(path.name, path.read_bytes()) == "mlxconfig"


def test_rows_without_their_table_header() -> None:
    # `mlxconfig -d ... q | grep -E "ROCE|LINK|SRIOV"`: the facts of the rows, nothing more
    text = (
        "         ROCE_CC_PRIO_MASK_P1                        255\n"
        "*        LINK_TYPE_P1                                ETH(2)\n"
        "         SRIOV_EN                                    True(1)\n"
    )
    assert mlxconfig.accepts("x.txt", text.encode())
    result = mlxconfig.parse(io.BytesIO(text.encode()))
    [device] = result.devices
    assert [(p.name, p.value, p.modified) for p in device.params] == [
        ("ROCE_CC_PRIO_MASK_P1", "255", False), ("LINK_TYPE_P1", "ETH(2)", True),
        ("SRIOV_EN", "True(1)", False),
    ]  # fmt: skip
    assert result.parts == ("rows",)
    assert not mlxconfig.accepts("env.txt", b"NCCL_DEBUG   1\nNCCL_IB_HCA  2\nFOO_BAR 3\n")


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no mlxconfig"):
        mlxconfig.parse(io.BytesIO(b"Device type: x\n"))


def test_detection_and_refusal() -> None:
    path = sample(CX5)
    assert detect_kind(path.name, path.read_bytes()) == "mlxconfig"
    other = sample("mlxlink/sigcomm26_bf3_100g_dac_mlxlink_m_c_two_ports_EXCERPT.txt")
    assert not mlxconfig.accepts(other.name, other.read_bytes())


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(mlxconfig.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=7750), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = sample(CX5).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(mlxconfig.parse(io.BytesIO(blob)).to_json())
