"""rdma_counters: per-QP output of iproute2 `rdma` (statistic qp show, resource show qp, -j).

There is no shared sample of these commands; the texts below follow the layout the iproute2
maintainers show in their patch mails (linux-rdma / netdev, 2019-2023): the counter set's
`cntn`/`qp-type`/`pid`/`comm` then the counters, wrapped, then `LQPN: <...>`; resource
lines `link DEV/PORT lqpn N type T state S sq-psn N ... comm [ib_core]`.
"""
# ruff: noqa: E501

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import rdma_counters
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import sample

STAT_QP = """\
$ rdma statistic qp show
link mlx5_2/1 cntn 4 qp-type RC pid 9829 comm ib_send_bw rx_write_requests 0
rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 0 out_of_sequence
17 duplicate_request 0 rnr_nak_retry_err 0 packet_seq_err 3
implied_nak_seq_err 0 local_ack_timeout_err 2 resp_local_length_error 0
resp_cqe_error 0 req_cqe_error 0 req_remote_invalid_request 0
    LQPN: <258,259>
link mlx5_0/1 cntn 5 qp-type RC pid 1234 comm ib_write_bw LQPN 1234 rx_write_requests 5 out_of_sequence 1 packet_seq_err 0
"""

RES_QP = """\
[root@gpu-node-07 ~]# rdma resource show qp
link mlx5_0/1 lqpn 1 type GSI state RTS sq-psn 0 comm [ib_core]
link mlx5_0/- lqpn 7 type UD state RTS sq-psn 0 comm [mlx5_ib]
link mlx5_0/1 lqpn 261 type RC state RTS rqpn 262 rq-psn 7 sq-psn 9 path-mig-state MIGRATED pdn 3 pid 419 comm ib_write_bw
"""

SET4 = "mlx5_2 cntn 4 (ib_send_bw pid 9829)"
SET5 = "mlx5_0 cntn 5 (ib_write_bw pid 1234)"


def parse_text(text: str) -> rdma_counters.RdmaCountersResult:
    return rdma_counters.parse(io.BytesIO(text.encode()))


def rows(result: rdma_counters.RdmaCountersResult) -> dict[tuple[object, ...], object]:
    return {(s.device, s.port, s.counter): s.value for s in result.samples}


def test_qp_counter_sets_keep_their_counters_per_set() -> None:
    result = parse_text(STAT_QP)
    v = rows(result)
    # the value of "out_of_sequence" wrapped to the next line; it is still its value
    assert v[(SET4, 1, "out_of_sequence")] == 17
    assert v[(SET4, 1, "packet_seq_err")] == 3
    assert v[(SET4, 1, "local_ack_timeout_err")] == 2
    assert v[(SET4, 1, "req_remote_invalid_request")] == 0
    assert v[(SET5, 1, "rx_write_requests")] == 5 and v[(SET5, 1, "out_of_sequence")] == 1
    assert len([s for s in result.samples if s.device == SET4]) == 14
    assert len(result.samples) == 17
    # the set's attributes are never counters, and no row lands on the bare HCA
    assert not {s.counter for s in result.samples} & {"cntn", "pid", "LQPN", "lqpn", "comm"}
    assert {s.device for s in result.samples} == {SET4, SET5}
    first, second = result.qp_counters
    assert (first.device, first.port, first.cntn, first.qp_type) == ("mlx5_2", 1, 4, "RC")
    assert (first.pid, first.comm, first.lqpns) == (9829, "ib_send_bw", (258, 259))
    assert (second.cntn, second.lqpns, second.counter_device) == (5, (1234,), SET5)
    assert result.summary()["qp_counters"] == 2
    assert [s.label for s in result.snapshots] == [None]  # "LQPN: <...>" is no label


def test_before_and_after_readings_of_a_set_become_two_snapshots() -> None:
    after = STAT_QP.replace("out_of_sequence\n17", "out_of_sequence\n40")
    result = parse_text(STAT_QP + "$ sleep 10\n" + after)
    values = [s.value for s in result.samples if (s.device, s.counter) == (SET4, "out_of_sequence")]
    assert values == [17, 40]
    assert [s.snapshot for s in result.qp_counters] == [0, 0, 1, 1]


def test_resource_show_qp_lines_are_qps_not_counters() -> None:
    result = parse_text(RES_QP)
    assert result.samples == ()  # sq-psn / rq-psn are sequence positions, not counts
    gsi, ud, rc = result.qps
    assert (gsi.device, gsi.port, gsi.lqpn, gsi.qp_type, gsi.state, gsi.comm) == (
        "mlx5_0", 1, 1, "GSI", "RTS", "ib_core",
    )  # fmt: skip
    assert (ud.port, ud.lqpn, ud.comm) == (None, 7, "mlx5_ib")  # "mlx5_0/-": no port yet
    assert (rc.rqpn, rc.sq_psn, rc.rq_psn, rc.path_mig_state, rc.pid, rc.comm) == (
        262, 9, 7, "MIGRATED", 419, "ib_write_bw",
    )  # fmt: skip
    assert result.summary()["qps"] == 3


def test_json_forms() -> None:
    stat = [
        {"ifindex": 2, "ifname": "mlx5_2", "port": 1, "cntn": 4, "qp-type": "RC", "pid": 9829,
         "comm": "ib_send_bw", "rx_write_requests": 0, "out_of_sequence": 12, "lqpn": [258, 259]},
    ]  # fmt: skip
    result = parse_text(json.dumps(stat))
    assert rows(result) == {(SET4, 1, "rx_write_requests"): 0, (SET4, 1, "out_of_sequence"): 12}
    assert result.qp_counters[0].lqpns == (258, 259)
    res = [{"ifindex": 0, "ifname": "mlx5_0", "port": 1, "lqpn": 1, "type": "GSI",
            "state": "RTS", "sq-psn": 0, "comm": "[ib_core]"}]  # fmt: skip
    pretty = parse_text(json.dumps(res, indent=2))  # rdma -j -p: one member per line
    assert [(q.lqpn, q.qp_type, q.state, q.comm) for q in pretty.qps] == [
        (1, "GSI", "RTS", "ib_core")
    ]
    port = [{"ifname": "mlx5_0", "port": 1, "out_of_sequence": 3, "np_cnp_sent": 9}]
    assert rows(parse_text(json.dumps(port))) == {
        ("mlx5_0", 1, "out_of_sequence"): 3, ("mlx5_0", 1, "np_cnp_sent"): 9,
    }  # fmt: skip


def test_broken_json_is_warned_about_and_a_lone_bracket_swallows_nothing() -> None:
    result = parse_text('[{"ifname": "mlx5_0", "port": 1, "out_of_sequence": 3}\n' + STAT_QP)
    assert "JSON block(s) could not be read" in " ".join(result.warnings)
    text = parse_text("[\nout_of_sequence: 1\npacket_seq_err: 2\nlocal_ack_timeout_err: 3\n")
    assert [s.counter for s in text.samples] == [
        "out_of_sequence", "packet_seq_err", "local_ack_timeout_err",
    ]  # fmt: skip


def test_the_port_counter_sample_reads_as_before() -> None:
    with sample("counters/rdma_statistic_show_roce_mlx5_optional_counters.txt").open("rb") as f:
        result = rdma_counters.parse(f)
    assert (result.qp_counters, result.qps) == ((), ())
    assert {s.device for s in result.samples} == {"rocep8s0f0"}
    assert len(result.samples) == 30


@pytest.mark.parametrize("text", [STAT_QP, RES_QP, STAT_QP.split("\n", 1)[1]])
def test_the_registry_detects_qp_output(text: str) -> None:
    assert detect_kind("out.txt", text.encode()) == "rdma_counters"


def test_the_registry_detects_rdma_json() -> None:
    doc = [{"ifindex": 0, "ifname": "mlx5_0", "port": 1, "cntn": 4, "out_of_sequence": 1}]
    assert detect_kind("stat.json", json.dumps(doc).encode()) == "rdma_counters"
    assert detect_kind("stat.json", json.dumps(doc, indent=2).encode()) == "rdma_counters"


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WORDS = st.sampled_from(
    ["link", "mlx5_0/1", "mlx5_0/-", "cntn", "4", "qp-type", "RC", "pid", "comm", "[ib_core]",
     "LQPN:", "<258,259>", "<1-3>", "lqpn", "type", "state", "RTS", "sq-psn", "out_of_sequence",
     "0", "-1", "[", "{", "]", "}", '"ifname"', ":", ",", "\n", "Optional-set:", "99999999999999999999"]
)  # fmt: skip


@ROBUST
@given(st.lists(WORDS, max_size=80))
def test_qp_like_token_soup_raises_only_parse_error(words: list[str]) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(parse_text(" ".join(words)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=len(STAT_QP + RES_QP)), st.binary(max_size=8))
def test_cut_and_corrupted_qp_output(cut: int, junk: bytes) -> None:
    data = (STAT_QP + RES_QP).encode()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            rdma_counters.parse(io.BytesIO(blob))
