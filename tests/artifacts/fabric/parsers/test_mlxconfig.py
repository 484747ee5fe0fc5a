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
from tests.samples import sample

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
