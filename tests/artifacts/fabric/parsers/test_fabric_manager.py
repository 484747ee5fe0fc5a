"""Fabric Manager logs: entries, SXid and NVLink events, multicast teams. Golden values were
counted in the gpud sample (54 entries, 8 team setups, 7 releases, one non-fatal SXid)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import fabric_manager
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import sample

FM_LOG = "counters/gpud_nvidia_fabricmanager.log"

# entries as Fabric Manager prints them on start-up and on NVLink trouble (constructed)
TROUBLE = (
    "[Jul 23 2024 07:50:01] [INFO] [tid 812] Fabric Manager version 535.161.08 is running "
    "with the following configuration options\n"
    "[Jul 23 2024 07:50:09] [INFO] [tid 841] Successfully configured all the available "
    "NVSwitches to route GPU NVLink traffic.\n"
    "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on "
    "NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33\n"
    "[Jul 23 2024 07:54:02] [ERROR] [tid 192] Fabric Manager detected GPU NVL Fatal error on :\n"
    "moduleId : 1\n"
    "gpuGuid : 0xb0cf0e0300e42e00\n"
    "portNum : 61\n"
    "errorCode : 0x02\n"
    "\n"
    "[Sep 17 2024 06:01:46] [ERROR] [tid 1230079] failed to find the GPU handle "
    "5410063385821516767 in the multicast team request setup 6130285411925746235.\n"
    "[Sep 17 2024 06:02:00] [WARNING] [tid 134] Trunk port failure detected for switch GUID "
    "0xb0cf0e0300e42e00 port number 61.\n"
    "[Sep 17 2024 06:03:00] [INFO] [tid 134] Partition id 3 is activated.\n"
    "[Sep 17 2024 06:04:00] [ERROR] [tid 134] request to query NVSwitch device information "
    "failed\n"
)


def parse_text(text: str) -> fabric_manager.FabricManagerResult:
    return fabric_manager.parse(io.BytesIO(text.encode()))


def test_gpud_sample_golden_values() -> None:
    with sample(FM_LOG).open("rb") as f:
        result = fabric_manager.parse(f)
    assert result.entries == 54 and result.levels == {"ERROR": 1, "INFO": 53}
    assert (result.first_time, result.last_time) == ("2025-02-25T13:59:45", "2025-02-27T15:10:02")
    mc = result.multicast
    assert (mc.setup_requests, mc.setups_ok, mc.release_requests, mc.releases_ok) == (8, 8, 7, 7)
    assert (mc.groups_allocated, mc.groups_freed, mc.max_gpus_per_team) == (8, 7, 8)
    [event] = result.events
    assert (event.kind, event.time, event.level, event.tid, event.line) == (
        "nvswitch_non_fatal", "2025-02-27T15:10:02", "ERROR", 12727, 100
    )  # fmt: skip
    assert event.details == {
        "sxid": 12028, "severity": "non-fatal", "device": "00000000:86:00.0", "fid": 0,
        "physical_id": 3, "port": 61,
    }  # fmt: skip
    assert result.version is None and result.warnings == ()
    assert result.summary()["sxid_codes"] == [12028]
    json.dumps(result.to_json())


def test_startup_version_and_nvlink_trouble() -> None:
    result = parse_text(TROUBLE)
    assert result.version == "535.161.08"
    kinds = [e.kind for e in result.events]
    assert kinds == [
        "nvswitch_fatal", "nvlink_failure", "nvlink_failure", "nvlink_failure", "fm_error"
    ]  # fmt: skip
    fatal, gpu_nvl, mcast = result.events[:3]
    assert fatal.details["sxid"] == 20034 and fatal.details["port"] == 33
    # the key : value lines after "GPU NVL Fatal error on :" belong to that entry
    assert gpu_nvl.details["gpuguid"] == "0xb0cf0e0300e42e00" and gpu_nvl.details["portnum"] == "61"
    assert gpu_nvl.details["device"] == "0xb0cf0e0300e42e00" and "errorCode : 0x02" in gpu_nvl.text
    assert mcast.time == "2024-09-17T06:01:46"
    assert [(p.partition, p.state) for p in result.partitions] == [(3, "activated")]


def test_version_from_the_version_command() -> None:
    text = "[Jan 02 2025 10:00:00] [INFO] [tid 1] Fabric Manager version is : 550.54.15\n"
    assert parse_text(text).version == "550.54.15"


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no Fabric Manager log entries"):
        parse_text("[Fri Aug 30 11:11:22 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid=1\n")


def test_detection() -> None:
    path = sample(FM_LOG)
    assert detect_kind(path.name, path.read_bytes()) == "fabric_manager"


@pytest.mark.parametrize(
    "relative",
    [
        "counters/gpud_dmesg_with_NVRM_Xid_119.log",
        "counters/gpud_nvidia-smi_q_560.35.03.txt",
        "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log",
        "dcgm/awsome_p4de_dcgmi_diag_r2_nvlinks_expected_up_EXCERPT.txt",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not fabric_manager.accepts(path.name, path.read_bytes())
    with path.open("rb") as f, pytest.raises(ParseError):
        fabric_manager.parse(f)


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(fabric_manager.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=10238), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = sample(FM_LOG).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(fabric_manager.parse(io.BytesIO(blob)).to_json())
