"""rdma_counters read in blocks (issue 27) gives what the line-by-line reading gives."""

# ruff: noqa: E501

from __future__ import annotations

import io
import random

import pytest

from artifacts.fabric.parsers import rdma_counters
from artifacts.parsers.base import ParseError
from artifacts.parsers.textutil import LineReader
from tests.artifacts.fabric.parsers.blocks import (
    assert_reads_as,
    jittered_copies,
    small_blocks,
)

STATISTIC = b"""\
$ rdma statistic show link rocep8s0f0/1
link rocep8s0f0/1 rx_write_requests 0 rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 0
out_of_sequence 0 duplicate_request 0 rnr_nak_retry_err 0 packet_seq_err 0 implied_nak_seq_err 0
local_ack_timeout_err 0 resp_local_length_error 0 resp_cqe_error 0 req_cqe_error 0
    Optional-set: cc_rx_ce_pkts 0 cc_tx_cnp_pkts 0
"""
PIECES = [
    STATISTIC,
    STATISTIC.replace(b"$ rdma", b"root@gpu-7:~# rdma"),
    b"link mlx5_1/1 out_of_sequence 3 packet_seq_err 4 local_ack_timeout_err\n5 duplicate_request 6\n",
    b"link mlx5_2/1 cntn 4 qp-type RC pid 9829 comm ib_send_bw rx_write_requests 0\nrx_read_requests 0 out_of_sequence\n17 packet_seq_err 3\n    LQPN: <258,259>\n",
    b"link mlx5_0/1 lqpn 261 type RC state RTS rqpn 262 rq-psn 7 sq-psn 9 pdn 3 pid 419 comm ib_write_bw\n",
    b"link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1\n",
    b"/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data:12345\n/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_buffer:7\n",
    b"/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE\n",
    b"out_of_buffer: 3\nout_of_sequence: 4\nlocal_ack_timeout_err: 0\n",
    b"==> /sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error <==\n0\n",
    b'[{"ifname":"mlx5_0","port":1,"out_of_sequence":5}]\n',
    b"Thu Jan  4 10:00:01 UTC 2024\n",
    b"after the run:\n",
    b"\n",
    b"Port 1 hw counters:\n",
    b"",
]
# the pieces that change nothing but rows and snapshots: runs of them are taken in bulk
PLAIN = [PIECES[i] for i in (0, 1, 2, 6, 8, 11, 12, 13, 14)]


def _line_by_line(data: bytes) -> object:
    reader = LineReader(io.BytesIO(data))
    state = rdma_counters._State(None)
    for line in reader:
        state.feed(line)
    state.finish()
    if not state.buffer.rows and not state.ports and not state.hcas and not state.qps:
        raise ParseError("none")
    return state.result(reader.repair_warnings())


@pytest.mark.parametrize("pool", [PIECES, PLAIN], ids=["all", "plain"])
@pytest.mark.parametrize("seed", range(40))
def test_blocks_read_as_lines(
    seed: int, pool: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(rdma_counters, "MAX_ROWS", rng.choice([40, 400, 250_000]))
    monkeypatch.setattr(rdma_counters, "MAX_SNAPSHOTS", rng.choice([3, 30, 20_000]))
    monkeypatch.setattr(
        rdma_counters, "BlockReader", small_blocks(rng.choice([100, 2000, 1 << 20]))
    )
    data = jittered_copies(rng, pool, PIECES)
    assert_reads_as(rdma_counters.parse, data, lambda: _line_by_line(data))


def test_a_long_polling_file_keeps_the_caps_and_counts_the_rest() -> None:
    data = STATISTIC * 30_000  # 450,000 counters in 30,000 readings
    result = rdma_counters.parse(io.BytesIO(data))
    assert result == _line_by_line(data)
    assert len(result.samples) == rdma_counters.MAX_ROWS
    assert len(result.snapshots) == rdma_counters.MAX_SNAPSHOTS
    assert result.warnings[:2] == (
        "200000 counter value(s) beyond 250000 were not kept",
        "10000 snapshot(s) beyond 20000 were not listed",
    )


def test_readings_whose_values_change_read_the_same() -> None:
    rng = random.Random(5)
    unit = PLAIN[2] + PLAIN[0] + PLAIN[4]
    words = [
        [str(rng.randrange(10**6)).encode() if w.isdigit() else w for w in line.split(b" ")]
        for _ in range(300)
        for line in unit.splitlines()
    ]
    data = b"".join(b" ".join(line) + b"\n" for line in words)
    assert rdma_counters.parse(io.BytesIO(data)) == _line_by_line(data)
