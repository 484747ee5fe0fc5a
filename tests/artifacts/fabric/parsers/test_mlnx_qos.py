"""mlnx_qos -i: trust state, dscp2prio, PFC, buffers and ETS traffic classes.

No public sample file exists; the fixtures follow the documented output of MLNX_OFED/DOCA
(a newer one with receive buffers and PFC buffer mapping, an older one without).
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import mlnx_qos
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import more_sample, sample

DSCP_MAP = "".join(
    f"\tprio:{p} dscp:{','.join(f'{d:02d}' for d in range(8 * p + 7, 8 * p - 1, -1))},\n"
    for p in range(8)
)
LOSSLESS = (
    "[root@gpu-node-07 ~]# mlnx_qos -i ens1f0np0\n"
    "DCBX mode: OS controlled\n"
    "Priority trust state: dscp\n"
    "dscp2prio mapping:\n" + DSCP_MAP + "default priority:\n"
    "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=1027728\n"
    "Cable len: 7\n"
    "PFC configuration:\n"
    "\tpriority    0   1   2   3   4   5   6   7\n"
    "\tenabled     0   0   0   1   0   0   0   0   \n"
    "\tbuffer      0   0   0   1   0   0   0   0   \n"
    "tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%\n"
    "\t priority:  0\n\t priority:  1\n\t priority:  2\n"
    "tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%\n"
    "\t priority:  3\n"
    "tc: 6 ratelimit: unlimited, tsa: strict\n"
    "\t priority:  6\n"
)
# older MLNX_OFED (4.x), trusting PCP with PFC off, second port pasted without a prompt
LEGACY = (
    "$ mlnx_qos -i eth2\n"
    "Priority trust mode: pcp\n"
    "Cable len: 10\n"
    "PFC configuration:\n"
    "priority 0 1 2 3 4 5 6 7\n"
    "enabled 0 0 0 0 0 0 0 0\n"
    "tc: 0 ratelimit: unlimited, tsa: vendor\n"
    "\t priority:  1\n"
    "Priority trust mode: pcp\n"
    "PFC configuration:\n"
    "priority 0 1 2 3 4 5 6 7\n"
    "enabled 0 0 0 1 0 0 0 0\n"
)


def parse(text: str) -> mlnx_qos.MlnxQosResult:
    return mlnx_qos.parse(io.BytesIO(text.encode()))


def test_lossless_port() -> None:
    [port] = parse(LOSSLESS).ports
    assert (port.host, port.interface, port.dcbx_mode, port.trust) == (
        "gpu-node-07", "ens1f0np0", "OS controlled", "dscp"
    )  # fmt: skip
    assert port.pfc_enabled == (3,) and port.prio2buffer == (0, 0, 0, 1, 0, 0, 0, 0)
    assert port.buffer_sizes == (130944, 130944, 0, 0, 0, 0, 0, 0)
    assert (port.buffer_total, port.cable_len_m, port.default_priority) == (1027728, 7, None)
    assert len(port.dscp2prio) == 64
    assert port.priority_of_dscp(26) == 3 and port.priority_of_dscp(48) == 6
    assert port.priority_of_dscp(0) == 0
    tc3 = port.tc_of_priority(3)
    assert tc3 is not None and (tc3.tc, tc3.tsa, tc3.bw_percent) == (3, "ets", 50)
    assert port.tcs[0].priorities == (0, 1, 2)
    assert port.tc_of_priority(6).tsa == "strict" and port.tc_of_priority(6).bw_percent is None
    json.dumps(parse(LOSSLESS).to_json())


def test_legacy_output_and_two_blocks() -> None:
    result = parse(LEGACY)
    first, second = result.ports
    assert (first.interface, first.trust, first.pfc_enabled, first.cable_len_m) == (
        "eth2", "pcp", (), 10
    )  # fmt: skip
    assert first.tcs[0].tsa == "vendor" and first.prio2buffer == ()
    assert (second.interface, second.pfc_enabled) == (None, (3,))
    assert result.summary() == {
        "ports": 2, "trust": ["pcp"], "pfc_priorities": [3], "ports_without_pfc": 1,
        "warnings": 0,
    }  # fmt: skip


def test_fragment_with_only_trust_and_dscp2prio() -> None:
    # the head of "mlnx_qos -i rdma0", cut by its author with "... # many other outputs"
    path = more_sample("counters/mlnx_qos_i_rdma0_dscp_trust_FRAGMENT.txt")
    assert detect_kind(path.name, path.read_bytes()) == "mlnx_qos"
    result = mlnx_qos.parse(path.open("rb"))
    [port] = result.ports
    assert (port.interface, port.dcbx_mode, port.trust) == ("rdma0", "OS controlled", "dscp")
    assert port.parts == ("dcbx", "trust", "dscp2prio")
    # the default map: DSCP 8p..8p+7 -> priority p (read from the file's eight rows)
    assert len(port.dscp2prio) == 64
    assert all(port.priority_of_dscp(d) == d // 8 for d in range(64))
    # PFC was not shown: unknown, so not counted as a port without PFC
    assert not port.pfc_known and result.summary()["ports_without_pfc"] == 0


def test_fragment_of_the_pfc_table_and_tcs_only() -> None:
    text = (
        "PFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n"
        "\tenabled     0   0   0   1   0   0   0   0\n"
        "tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%\n\t priority:  3\n"
    )
    assert mlnx_qos.accepts("x", text.encode())
    [port] = parse(text).ports
    assert port.pfc_enabled == (3,) and port.trust is None and port.parts == ("pfc", "tc")
    assert port.tc_of_priority(3).bw_percent == 50


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no mlnx_qos output"):
        parse("Cable len: 7\nsomething else\n")


def test_detection() -> None:
    assert detect_kind("qos.txt", LOSSLESS.encode()) == "mlnx_qos"
    assert detect_kind("qos.txt", LEGACY.encode()) == "mlnx_qos"


@pytest.mark.parametrize(
    "relative",
    [
        "mlxconfig/mailinglist_cx5ex_mcx516a_cda_mlxconfig_q_DEQUOTED.txt",
        "ethtool_rdma/byteps_issue179_mlx5_ethtool_S_grep_prio_before_after_EXCERPT.txt",
        "counters/gpud_ibstat_h100_all_active.txt",
        "mlxlink/sigcomm26_bf3_100g_dac_mlxlink_m_c_two_ports_EXCERPT.txt",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not mlnx_qos.accepts(path.name, path.read_bytes())
    with path.open("rb") as f, pytest.raises(ParseError):
        mlnx_qos.parse(f)


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(mlnx_qos.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=len(LOSSLESS)), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = LOSSLESS.encode()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(mlnx_qos.parse(io.BytesIO(blob)).to_json())
