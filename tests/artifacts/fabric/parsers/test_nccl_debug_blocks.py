"""NCCL_DEBUG logs read in blocks (issue 27) give what the line-by-line reading gives.

Random files are stitched from lines of the real samples and from lines the samples lack
(RCCL banners, IB completion errors, launcher prefixes, PyTorch errors, noise), with digits
jittered, CRLF or lone ``\\r`` endings and bad bytes, read with small blocks and small caps so
that lines fall across block boundaries and the memos and limits fill up.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest

from artifacts.fabric.parsers import nccl_debug
from artifacts.fabric.parsers.nccl_debug import limits
from artifacts.fabric.parsers.nccl_debug.model import NcclDebugResult
from artifacts.parsers.base import ParseError
from tests.artifacts.fabric.parsers.blocks import jitter

SHARED = Path(__file__).resolve().parents[4].parent / "shared"
SAMPLES = [
    "samples/nccl_debug/ssbandjl_2node_4gpu_NCCL_DEBUG_TRACE_roce.log",
    "samples/nccl_debug/ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log",
    "samples/nccl_debug/raddet_nccl_info_socket_garbled_interleave.log",
    "samples/nccl_debug/timez_nccl_tests_2.17_allreduce_NCCL_INFO_2xA100_roce.log",
    "more-samples/nccl_debug/alcf_polaris_vae_nccl_info_trace_aws_ofi_cxi.log",
    "more-samples/nccl_debug/alcf_polaris_resnet50_WATCHDOG_TIMEOUT_allgather_aws_ofi.log",
]

# What the samples lack, each a run of lines kept together.
EXTRAS = [
    b"gpu1:100:100 [0] NCCL INFO RCCL version : 2.22.3-HEAD:7d8d67c\n"
    b"HIP version  : 6.4.43484-123eb5128\nROCm version : 6.4.2.0-120-e7d83f5\n",
    b"RCCL version : 2.22.3-HEAD:7d8d67c\nHIP version  : 6.4.43484-123eb5128\n"
    b"Hostname     : gpu-53\nLibrccl path : /opt/rocm-6.4.2/lib/librccl.so.1\n",
    b"gpu1:100:120 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB: Got completion from peer "
    b"10.46.70.22<39226> with status=12 opcode=32224 len=0 vendor err 129 (Recv) localGid "
    b"fe80::9e63:c0ff:feab:938a remoteGidsfe80::9e63:c0ff:feab:b6b2 hca mlx5_10\n",
    b"gpu2:200:220 [1] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
    b"10.2.0.5<33092> with error 12, opcode 0, len\n0, vendor err 129 (Recv)\n",
    b"[rank1]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught "
    b"collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=4661, "
    b"NumelOut=4661, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n",
    b"NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129\n",
    # a plain line between a wrapped completion and its would-be tail ends the completion
    b"gpu2:200:220 [1] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
    b"10.2.0.5<33092> with error 12, opcode 0, len\ngpu2:200:220 [1] NCCL TRACE x\n"
    b"0, vendor err 129 (Recv) : hca mlx5_0\n",
    b"gpu1:100:100 [0] NCCL INFO 1024 Bytes -> Algo 0 proto 0\n",
    b"gpu1:100:100 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n",
    b"gpu1:100:100 [0] NCCL INFO comm 0x7f00 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 "
    b"commId 0xabc - Init COMPLETE\n",
    b"gpu2:200:200 [1] NCCL INFO comm 0x8f00 rank 1 nranks 2 cudaDev 1 busId 1b000 - Init START\n",
    b"gpu1:100:100 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n",
    b"+ NCCL_DEBUG=INFO NCCL_IB_HCA=mlx5_0 torchrun train.py\n",
    b"gpu1:100:100 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 8 datatype 7"
    b" op 0 root 0 comm 0x7f00 [nranks=2] stream 0x3\n",
    b"gpu1:100:100 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo 1 proto 2 channel{Lo..Hi}={0..3}\n",
    b"gpu1:100:100 [0] NCCL INFO  AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x2 count 9 "
    b"datatype 9\n",
    b"gpu1:100:100 [0] NCCL INFO  opCount \n",
    b"gpu1:100:100 [0] NCCL TRACE(x) 1\ngpu1:100:100 [0] NCCL TRACEx 1\ngpu1:100:100 NCCL CALL \n",
    b"gpu1:100:100 [0] NCCL INFO\ngpu1:100:100 [0] NCCL INFO \ngpu1:100:100 [0] NCCL CALL\n",
    b"xgpu1:100:100 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5\n",
    b"pu1:100:101 [0] NCCL INFO Using network IB\n",
    b"[1,0]<stdout>:gpu1:100:100 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0\n",
    b"[rank3]:gpu2:200:200 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC\n",
    b"2024-08-01T10:00:00.123Z gpu1:100:100 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n",
    b"[2025-03-12 10:22:33] gpu2:200:240 [1] misc/socket.cc:540 NCCL WARN socket closed\n",
    b"gpu1:100:100 [0] NCCL INFO AllGather: opCount 3 sendbuff 0x1 recvbuff 0x2 count 4 "
    b"datatype 7 op 0 gpu2:200:200 [1] NCCL INFO AllGather: opCount 3 sendbuff 0x1 recvbuff "
    b"0x2 count 4 datatype 7\n",
    b"NCCL INFO NCCL version 2.19.3+cuda12.3\nNCCL WARN Cuda failure 'out of memory'\n",
    b"ncclIbAccept(), transport/net_ib.cc:1539, NCCL RDMA server accept\n",
    b"noise: loss 0.123 step 42\n",
    b"\n",
    b"caf\xc3\xa9 gpu1:100:100 [0] NCCL INFO caf\xc3\xa9\n",
    b"bad \xff byte gpu1:100:100 [0] NCCL INFO Using network \xfe\n",
    b"progress 10%\rprogress 20%\rgpu1:100:100 [0] NCCL WARN after a bar\n",
]


def _sample_lines() -> list[bytes]:
    lines: list[bytes] = []
    for name in SAMPLES:
        path = SHARED / name
        if path.exists():
            lines += path.read_bytes().splitlines(keepends=True)
    return lines


LINES = _sample_lines()


def _random_log(rng: random.Random) -> bytes:
    parts = []
    for _ in range(rng.randrange(1, 200)):
        if rng.random() < 0.25 or not LINES:
            parts.append(rng.choice(EXTRAS))
        else:  # a run of real lines, in order: their comm, channel and version lines together
            start = rng.randrange(len(LINES))
            parts.append(b"".join(LINES[start : start + rng.randrange(1, 60)]))
    data = jitter(rng, b"".join(parts), rng.choice([0, 0, 0.01, 0.1]))
    if rng.random() < 0.15:
        data = data.replace(b"\n", b"\r\n")
    if rng.random() < 0.2:  # cut anywhere: the last line has no newline
        data = data[: rng.randrange(len(data) + 1)]
    return data


def _read(parse: object, data: bytes) -> str:
    try:
        result = parse(io.BytesIO(data))  # type: ignore[operator]
    except ParseError as exc:
        return "ParseError: " + exc.message
    except ValueError as exc:  # both readings must fail alike (a jittered "vendor err 029")
        return "ValueError: " + str(exc)
    return json.dumps(result.to_json(), sort_keys=True, default=str)


def _read_alike(
    data: bytes,
    monkeypatch: pytest.MonkeyPatch,
    block_bytes: int | None = None,
    memo: int | None = None,
) -> NcclDebugResult:
    """The block reading of ``data`` (in blocks of ``block_bytes``, remembering ``memo``
    messages' kinds, where given), checked equal to the line-by-line reading."""
    if block_bytes is not None:
        monkeypatch.setattr(nccl_debug, "BLOCK_BYTES", block_bytes)
    if memo is not None:
        monkeypatch.setattr(limits, "MAX_MEMO", memo)
    result = nccl_debug.parse(io.BytesIO(data))
    assert result == nccl_debug.parse_by_line(io.BytesIO(data))
    return result


@pytest.mark.parametrize("seed", range(60))
def test_blocks_read_as_lines(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(nccl_debug, "BLOCK_BYTES", rng.choice([64, 500, 4096, 1 << 20]))
    monkeypatch.setattr(limits, "MAX_MEMO", rng.choice([1, 3, 4096]))
    monkeypatch.setattr(limits, "MAX_EVENTS", rng.choice([2, 50, 10_000]))
    monkeypatch.setattr(limits, "MAX_ITEMS", rng.choice([3, 50, 50_000]))
    monkeypatch.setattr(limits, "MAX_ENV", rng.choice([1, 2_000]))
    data = _random_log(rng)
    assert _read(nccl_debug.parse, data) == _read(nccl_debug.parse_by_line, data)


def test_a_lone_carriage_return_keeps_line_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    # LineReader gives both pieces of "a\rb" one number: the block reading must too
    data = (
        b"gpu1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        b"10%\r20%\n"
        b"gpu1:1:1 [0] misc/socket.cc:1 NCCL WARN first\n"
    )
    result = _read_alike(data, monkeypatch)
    assert [e.line for e in result.events] == [3]


def test_plain_lines_are_counted_per_host_and_collectives_in_bulk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    head = b"gpu1:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 1000 - Init COMPLETE\n"
    body = (
        b"gpu1:1:1 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 8 "
        b"datatype 7\ngpu1:1:1 [0] enqueue.cc:1 NCCL TRACE call\nprefix gpu1:1:1 NCCL CALL x\n"
    )
    data = head + body * 1000
    result = _read_alike(data, monkeypatch)
    assert result.stats["nccl_lines"] == 1 + 3000
    [calls] = result.collectives
    assert (calls.collective, calls.calls) == ("AllReduce", 1000)


# The same INFO messages from two hosts and at two moments: the block reading remembers a
# message's kind by its text (``info_kinds``), and what the message then says must still
# depend on the line's host and thread and on what came before. Lines are long enough for
# small blocks to cut them, and some end in CR or begin with a space.
SAME_MESSAGES = (
    # before its comm line: the timing names no comm of this thread yet, so it is dropped
    b"gpu1:100:100 [0] NCCL INFO Init timings - ncclCommInitRank: rank 0 nranks 2 total 9.50\n"
    b"gpu1:100:100 [0] NCCL INFO comm 0xa rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
    b"gpu2:200:200 [1] NCCL INFO comm 0xb rank 1 nranks 2 cudaDev 1 busId 2000 - Init COMPLETE\n"
    b"gpu1:100:100 [0] NCCL INFO Init timings - ncclCommInitRank: rank 0 nranks 2 total 0.50\n"
    b"gpu2:200:200 [1] NCCL INFO Init timings - ncclCommInitRank: rank 0 nranks 2 total 0.50\n"
    b"gpu1:100:100 [0] NCCL INFO Ring 00 : 1 -> 0 -> 1\n"
    b"gpu2:200:200 [1] NCCL INFO Ring 00 : 1 -> 0 -> 1\r\n"
    b"gpu2:200:200 [1] NCCL INFO  Ring 00 : 1 -> 0 -> 1\n"
    b"gpu1:100:100 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0/GDRDMA\n"
    b"gpu2:200:200 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0/GDRDMA\n"
    b"gpu1:100:100 [0] NCCL INFO Using network IB\n"
    b"gpu2:200:201 [1] NCCL INFO Using network IB\n"
    b"gpu2:200:200 [1] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    b"gpu1:100:100 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    b"gpu1:100:100 [0] NCCL INFO Received and initiated operation=Init res=0\n"
    b"gpu2:200:200 [1] NCCL INFO Received and initiated operation=Init res=0\n"
    # a protocol row counts only after its thread's algorithm row; rows of another thread not
    b"gpu1:100:100 [0] NCCL INFO   Protocol |  LL |   LL128 |  Simple |\n"
    b"gpu1:100:100 [0] NCCL INFO  Algorithm |  Tree |  Ring |\n"
    b"gpu1:100:100 [0] NCCL INFO   Protocol |  LL |   LL128 |  Simple |\n"
    b"gpu1:100:100 [0] NCCL INFO  AllReduce |  4.4/ 1.0 |  8.2/ 2.0 | 10.1/ 3.0 |  4.4/ 1.1 |\n"
    b"gpu2:200:200 [1] NCCL INFO  Algorithm |  Tree |  Ring |\n"
    b"gpu2:200:200 [1] NCCL INFO   Protocol |  LL |   LL128 |  Simple |\n"
    b"gpu2:200:200 [1] NCCL INFO  AllReduce |  9.9/ 9.0 |  9.9/ 9.0 |  9.9/ 9.0 |  9.9/ 9.0 |\n"
    b"gpu1:100:100 [0] NCCL INFO 4 coll channels, 4 p2p channels, 2 p2p channels per peer\n"
    b"gpu2:200:200 [1] NCCL INFO 4 coll channels, 4 p2p channels, 2 p2p channels per peer\n"
    b"gpu2:200:200 [1] NCCL INFO misc/socket.cc:1 -> 3\n"
    b"gpu1:100:100 [0] NCCL INFO misc/socket.cc:1 -> 3\n"
)


@pytest.mark.parametrize("block_bytes", [40, 97, 1 << 20])
@pytest.mark.parametrize("memo", [1, 2, 4096])
def test_remembered_messages_are_read_by_their_host_and_thread(
    block_bytes: int, memo: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = SAME_MESSAGES * 3
    result = _read_alike(data, monkeypatch, block_bytes, memo)
    by_host = {r.host: r for r in result.ranks}
    assert by_host["gpu1"].init_seconds == 0.5  # the later timing, the earlier one dropped
    assert by_host["gpu2"].init_seconds is None  # rank 0 is not gpu2's rank
    assert by_host["gpu1"].channels == by_host["gpu2"].channels == {
        "coll": 4, "p2p": 4, "p2p_per_peer": 2
    }  # fmt: skip
    assert sorted((n.host, n.comm) for n in result.ring_neighbors) == [
        ("gpu1", "0xa"),
        ("gpu2", "0xb"),
    ]
    assert sorted(p.host for p in result.paths) == ["gpu1", "gpu2"]
    assert [h.transports for h in result.hosts] == [("IB",), ("IB",)]
    assert sorted(v.host for v in result.versions) == ["gpu1", "gpu2"]
    # the table of the first thread that printed one (gpu1's, not gpu2's), read up to its
    # last protocol column
    assert {(t.algorithm, t.protocol, t.latency_us) for t in result.tuning_model} == {
        ("TREE", "LL", 4.4),
        ("TREE", "LL128", 8.2),
        ("TREE", "SIMPLE", 10.1),
    }
    assert result.stats["error_traces"] == 6
    assert result.stats["nccl_lines"] == 3 * SAME_MESSAGES.count(b"\n")


@pytest.mark.parametrize("block_bytes", [50, 1 << 20])
def test_repeated_algorithm_choices_are_matched_once_and_counted(
    block_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = (
        b"gpu1:1:1 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo 1 proto 2 channel{Lo..Hi}={0..3}\n"
        b"gpu2:2:2 [1] NCCL INFO AllReduce: 1024 Bytes -> Algo 1 proto 2 channel{Lo..Hi}={0..3}\n"
        b"gpu1:1:1 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo 1 proto 2 channel{Lo..Hi}={0..1}\r\n"
        b"gpu1:1:1 [0] NCCL INFO 8 Bytes -> Algo 0 proto 0\n"
        b"gpu1:1:1 [0] NCCL INFO AllReduce: many Bytes -> Algo 1 proto 2\n"  # no choice read
    )
    data = body * 7
    result = _read_alike(data, monkeypatch, block_bytes)
    assert [
        (a.collective, a.algorithm, a.protocol, a.calls, a.min_bytes, a.max_bytes, a.max_channels)
        for a in result.algorithms
    ] == [
        (None, "TREE", "LL", 7, 8, 8, None),
        ("AllReduce", "RING", "SIMPLE", 21, 1024, 4096, 4),
    ]


# Lines whose message holds "NCCL " again: read as plain lines where it starts no header,
# through the line-by-line reading where it does (two processes' writes in one line).
SECOND_NCCL = (
    b"gpu1:100:100 [0] NCCL INFO comm 0xa rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
    b"gpu1:100:100 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    b"gpu1:100:101 [0] ncclIbConnect, 1364 NCCL INFO NET/IB: NCCL Dev 2 IbDev 0 Port 1 qpn 178\n"
    b"gpu1:100:100 [0] enqueue.cc:1 NCCL TRACE NCCL INFO x\n"
    b"gpu1:100:100 NCCL CALL ncclAllGather(NCCL WARN)\n"
    b"gpu1:100:100 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0 NCCL \n"
    # a second process's header after the first's message, on a pid seen first here
    b"gpu1:100:100 [0] NCCL INFO Using network IB gpu2:300:300 [1] NCCL INFO Using network IB\n"
    b"gpu1:100:100 [0] NCCL TRACE x gpu1:400:400 [1] NCCL WARN second\n"
    b"gpu1:100:100 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 8 datatype 7"
    b" NCCL INFO\n"
    b"gpu1:100:100 [0] NCCL INFO xNCCL INFO .gpu1:1:1 NCCL INFO gpu1:1:1 NCCL INFO\n"
    b"gpu1:100:100 [0] NCCL INFO gpu1:100:102 NCCL CALL x\n"  # the second right after the first
)


@pytest.mark.parametrize("block_bytes", [60, 1 << 20])
@pytest.mark.parametrize("memo", [1, 4096])
def test_a_second_nccl_word_that_starts_no_header_keeps_the_line_plain(
    block_bytes: int, memo: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = SECOND_NCCL * 3
    result = _read_alike(data, monkeypatch, block_bytes, memo)
    assert [(v.host, v.version) for v in result.versions] == [("gpu1", "2.21.5")]
    assert [p.via for p in result.paths] == ["NET/IB/0 NCCL"]
    assert [c.calls for c in result.collectives] == [3]
    assert result.stats["garbled_lines"] == 3 * 4  # the four lines of two headers
    assert [h.host for h in result.hosts] == ["gpu1", "gpu2"]


@pytest.mark.parametrize("block_bytes", [200, 1 << 20])
def test_lines_of_many_hosts_between_two_fed_lines_are_counted_per_host(
    block_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A name with its head cut ("pu15") stands for a known host only once that host printed
    # a few lines: the counts of plain lines, many hosts' at once, decide it.
    hosts = range(10, 22)
    rounds = b"".join(
        b"".join(b"gpu%d:1%d:1%d [0] enqueue.cc:1 NCCL TRACE step\n" % (h, h, h) for h in hosts)
        + b"gpu10:110:110 [0] misc/socket.cc:1 NCCL WARN round %d\n" % r
        for r in range(3)
    )
    data = rounds + b"pu15:115:115 [0] NCCL INFO Using network IB\n"
    result = _read_alike(data, monkeypatch, block_bytes)
    assert [h.host for h in result.hosts] == [f"gpu{h}" for h in hosts]
    assert [h.transports for h in result.hosts if h.host == "gpu15"] == [("IB",)]


@pytest.mark.parametrize("block_bytes", [100, 1 << 20])
def test_lines_of_one_host_between_two_fed_lines_are_each_counted(
    block_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = (
        b"gpu1:1:1 [0] NCCL INFO first\n"
        + b"gpu1:1:1 [0] NCCL TRACE a\n" * 2
        + b"gpu2:2:2 [0] NCCL TRACE b\n"
        # gpu1 printed 3 lines: "pu1" on its pid is gpu1, every time (it never becomes a host)
        + b"pu1:1:1 [0] NCCL INFO Using network IB\n" * 5
    )
    result = _read_alike(data, monkeypatch, block_bytes)
    assert [h.host for h in result.hosts] == ["gpu1", "gpu2"]
