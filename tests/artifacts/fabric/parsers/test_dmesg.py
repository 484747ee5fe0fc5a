"""dmesg / kernel logs: NVRM Xid events with their GPU, time and process. Values read from
the sample (gpud's dmesg-with-xid-119 fixture)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import dmesg
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import sample

XID = "counters/gpud_dmesg_with_NVRM_Xid_119.log"


def parse_file(relative: str) -> dmesg.DmesgResult:
    with sample(relative).open("rb") as f:
        return dmesg.parse(f)


def test_xid_119_events_with_gpu_process_and_time() -> None:
    result = parse_file(XID)
    xids = [e for e in result.events if e.kind == "xid"]
    assert len(xids) == 5 and {e.details["xid"] for e in xids} == {119}
    first = xids[0]
    assert (first.time, first.line) == ("2025-02-23T16:24:18", 3)
    assert first.details["device"] == "0000:9b:00"
    assert (first.details["pid"], first.details["process"]) == (2024380, "nvidia-smi")
    assert first.details["uuid"] == "GPU-509665ad-b600-ac93-3616-d754b23d636d"
    assert first.details["message"].startswith("Timeout after 6s of waiting for RPC response")
    assert [e.details["process"] for e in xids[3:]] == ["cache_mgr_main", "gpud"]
    assert xids[-1].time == "2025-02-23T16:30:13"
    assert result.kernel_version == "5.15.0-112-generic"
    assert result.hardware == "Dell Inc. PowerEdge XE9680/0KK0RG, BIOS 2.3.5 09/10/2024"
    assert result.summary()["xid_codes"] == [119]
    json.dumps(result.to_json())


def test_uptime_and_syslog_prefixes_and_other_events() -> None:
    text = (
        "[ 1234.567890] mlx5_core 0000:3b:00.0 ens1f0np0: Link down\n"
        "[ 1240.000001] mlx5_core 0000:3b:00.0 ens1f0np0: Link up\n"
        "[ 1300.5] pcieport 0000:00:01.0: AER: Corrected error received: 0000:3b:00.0\n"
        "Mar  3 10:00:01 gpu-node-2 kernel: [ 1400.1] NVRM: Xid (PCI:0000:18:00): 79, "
        "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
        "Mar  3 10:00:02 gpu-node-2 kernel: Out of memory: Killed process 4242 (python3)\n"
    )
    result = dmesg.parse(io.BytesIO(text.encode()))
    kinds = [e.kind for e in result.events]
    assert kinds == ["nic_link", "nic_link", "pcie_aer", "xid", "oom_kill"]
    link = result.events[0]
    assert link.details == {"device": "ens1f0np0", "pci": "0000:3b:00.0", "state": "down",
                            "uptime_s": 1234.56789}  # fmt: skip
    xid = result.events[3]
    assert (xid.host, xid.time, xid.details["xid"]) == ("gpu-node-2", None, 79)
    assert "pid" not in xid.details and xid.details["uptime_s"] == 1400.1
    assert result.hosts == ("gpu-node-2",)


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no kernel log lines"):
        dmesg.parse(io.BytesIO(b"just a note\nnothing else\n"))


def test_detection() -> None:
    path = sample(XID)
    assert detect_kind(path.name, path.read_bytes()) == "dmesg"


@pytest.mark.parametrize(
    "relative",
    [
        "counters/gpud_nvidia_fabricmanager.log",
        "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log",
        "counters/gpud_ibstat_h100_all_active.txt",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not dmesg.accepts(path.name, path.read_bytes()[: 64 * 1024])


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(dmesg.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=5403), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = sample(XID).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(dmesg.parse(io.BytesIO(blob)).to_json())
