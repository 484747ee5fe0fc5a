"""nccl_debug: NCCL_DEBUG logs and the PyTorch NCCL errors around them.

Expected values were read from the shared sample files by hand (grep), not from the parser.
Constructed logs below quote real NCCL/PyTorch lines verbatim, hence the long lines.
"""
# ruff: noqa: E501

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import nccl_debug
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import all_samples, any_sample, sample

GARBLED = "nccl_debug/raddet_nccl_info_socket_garbled_interleave.log"
ROCE_INFO = "nccl_debug/ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log"
ROCE_TRACE = "nccl_debug/ssbandjl_2node_4gpu_NCCL_DEBUG_TRACE_roce.log"
TESTS_MIXED = "nccl_debug/timez_nccl_tests_2.17_allreduce_NCCL_INFO_2xA100_roce.log"
FAULT = "nccl_debug/timez_nccl_tests_allreduce_NVLINK_FAULT_INJECTION_degraded.log"


def parse_file(relative: str) -> nccl_debug.NcclDebugResult:
    with sample(relative).open("rb") as f:
        return nccl_debug.parse(f)


def parse_text(text: str) -> nccl_debug.NcclDebugResult:
    return nccl_debug.parse(io.BytesIO(text.encode()))


def by_rank(result: nccl_debug.NcclDebugResult) -> dict[int, object]:
    return {r.rank: r for r in result.ranks}


# --- shared samples ---------------------------------------------------------------------------


def test_garbled_socket_log_reads_each_interleaved_piece() -> None:
    result = parse_file(GARBLED)
    assert [h.host for h in result.hosts] == ["ljm"]
    host = result.hosts[0]
    assert host.pids == (803563, 803564)
    assert host.transports == ("Socket",)
    assert host.ib_device_found is False  # "NET/IB : No device found."
    assert host.plugin == "internal"
    assert [(s.interface, s.address) for s in host.socket_devices] == [("bond0", "192.168.3.21")]
    assert host.bootstrap_interface == "bond0:192.168.3.21"
    assert host.cuda_driver_version == 12020
    ranks = by_rank(result)
    assert result.nranks == 2
    # Both Init COMPLETE lines, one of them glued after "p2p channels ljm:80356".
    assert (ranks[0].bus_id, ranks[0].pci_address, ranks[0].pid) == ("2000", "0000:02:00.0", 803563)
    assert (ranks[1].bus_id, ranks[1].cuda_dev, ranks[1].pid) == ("3000", 1, 803564)
    assert {r.status for r in result.ranks} == {"complete"}
    assert {r.comm_id for r in result.ranks} == {"0x245d75cdaf12704b"}
    [path] = result.paths
    assert (path.src_rank, path.dst_rank, path.transport, path.via) == (
        1,
        0,
        "SHM",
        "SHM/direct/direct",
    )
    assert path.channels == (0, 1)
    # "Trees [0] -1/-1/-1->1->0 [1] -1/-1/-1->1->0" came from the middle of a garbled line.
    assert [(t.rank, t.channel, t.up, t.down) for t in result.trees] == [
        (1, 0, 0, ()),
        (1, 1, 0, ()),
    ]
    assert result.versions == ()
    assert result.stats["garbled_lines"] == 2
    assert any("interleaved" in w for w in result.warnings)


def test_roce_info_log_with_patched_prefixes() -> None:
    result = parse_file(ROCE_INFO)
    assert [h.host for h in result.hosts] == ["gdr114", "gdr116"]
    assert {(v.host, v.version, v.build) for v in result.versions} == {
        ("gdr114", "2.26.6", "cudaCUDA_MAJOR.CUDA_MINOR"),
        ("gdr116", "2.26.6", "cudaCUDA_MAJOR.CUDA_MINOR"),
    }
    assert result.version_mismatch is False
    gdr114 = result.hosts[0]
    assert [(d.index, d.name, d.port, d.link_layer, d.speed_mbps) for d in gdr114.ib_devices] == [
        (0, "mlx5_0", 1, "RoCE", 25000),
        (1, "mlx5_2", 1, "RoCE", 25000),
    ]
    assert gdr114.relaxed_ordering is True
    assert gdr114.oob_interface == "enp129s0f0:10.20.10.114"
    assert result.hosts[1].oob_interface == "enp129s0f0:10.20.10.116"
    assert gdr114.gdr is False  # "GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"
    assert gdr114.gdr_disabled_hcas == ("mlx5_0", "mlx5_2")
    # The mpirun command line at the top of the file.
    assert {(e.name, e.value) for e in result.env if e.source == "command"} == {
        ("NCCL_DEBUG", "INFO"),
        ("NCCL_IB_DISABLE", "0"),
        ("NCCL_NET", "IB"),
        ("NCCL_DEBUG_SUBSYS", "NET"),
    }
    # 16 "Channel 0x/0 : a[d] -> b[d] [send|receive] via NET/IB/n" lines, 2 channels per group.
    assert len(result.paths) == 8
    assert sum(len(p.channels) for p in result.paths) == 16
    assert {p.transport for p in result.paths} == {"NET"}
    assert not any(p.gdrdma for p in result.paths)
    send = [p for p in result.paths if p.src_rank == 1 and p.direction == "send"]
    assert {(p.via, p.channels) for p in send} == {("NET/IB/2", (0, 2)), ("NET/IB/3", (1, 3))}
    assert result.ranks == ()  # NCCL_DEBUG_SUBSYS=NET: no comm lines in this file


def test_roce_trace_log_ranks_rings_trees_and_tuning() -> None:
    result = parse_file(ROCE_TRACE)
    assert [h.host for h in result.hosts] == ["gdr114", "gdr116"]  # glued debris removed
    ranks = by_rank(result)
    assert result.nranks == 4
    assert {r: (x.host, x.bus_id, x.cuda_dev) for r, x in ranks.items()} == {
        0: ("gdr114", "8000", 0),
        1: ("gdr114", "85000", 1),
        2: ("gdr116", "8000", 0),
        3: ("gdr116", "82000", 1),
    }
    assert {r.comm_id for r in result.ranks} == {"0x6697036b18d088cb"}
    assert ranks[0].init_seconds == 3.43 and ranks[0].init_phases["kernels"] == 3.3
    assert ranks[2].nnodes == 2 and ranks[2].local_ranks == 2 and ranks[3].local_rank == 1
    assert ranks[0].channels == {"coll": 4, "collnet": 4, "nvls": 0, "p2p": 4, "p2p_per_peer": 2}
    # "Channel 00/04 : 0 1 2 3" ... "Channel 03/04 : 0 1 2 3", printed by rank 0.
    assert [(r.channel, r.nchannels, r.ranks) for r in result.rings] == [
        (c, 4, (0, 1, 2, 3)) for c in range(4)
    ]
    trees = {(t.rank, t.channel): (t.up, t.down) for t in result.trees}
    assert trees[(1, 1)] == (-1, (0, 2))  # "[1] 0/2/-1->1->-1"
    assert trees[(2, 2)] == (-1, (3, 0))  # "[2] 3/0/-1->2->-1"
    assert trees[(3, 0)] == (2, ())
    assert len(result.trees) == 16
    assert [(a.algorithm, a.protocol) for a in result.algorithms] == [
        ("RING", "LL"),
        ("RING", "SIMPLE"),
    ]
    simple = result.algorithms[1]
    assert (simple.min_bytes, simple.max_bytes, simple.max_channels) == (65536, 268435456, 4)
    # grep counts 532 SIMPLE / 528 LL lines; one LL line lost its "N" of "NCCL INFO".
    assert simple.calls == 532 and result.algorithms[0].calls == 527
    [coll] = result.collectives
    assert (coll.collective, coll.datatype, coll.max_count) == ("AllGather", "float32", 67108864)
    assert {(g.host, g.pattern, g.type_intra) for g in result.graphs} >= {("gdr114", 4, "SYS")}
    assert len(result.tuning_model) == 105  # 5 collectives x 7 algorithms x 3 protocols
    assert [e.kind for e in result.events] == ["comm_init"] * 4
    assert result.versions == ()  # the capture starts after the version banner


def test_nccl_tests_mixed_log_parses_when_asked_explicitly() -> None:
    result = parse_file(TESTS_MIXED)
    assert [(v.host, v.version, v.build) for v in result.versions] == [
        ("mew0", "2.27.7", "cuda13.0")
    ]
    host = result.hosts[0]
    assert host.cuda_driver_version == 13000
    assert host.transports == ("IB",)
    assert host.plugin == "internal"  # "NET/Plugin: Could not find: libnccl-net.so."
    assert [(d.name, d.link_layer, d.speed_mbps) for d in host.ib_devices] == [
        ("mlx5_0", "RoCE", 100000),
        ("mlx5_1", "RoCE", 100000),
    ]
    assert host.gdr is False and "mlx5_0+mlx5_1" in host.gdr_disabled_hcas
    ranks = by_rank(result)
    assert (ranks[0].pci_address, ranks[1].pci_address) == ("0000:17:00.0", "0000:65:00.0")
    assert {r.status for r in result.ranks} == {"destroyed"}  # "- Destroy COMPLETE" at the end
    assert ranks[1].init_seconds == 0.67
    assert ranks[0].channels["coll"] == 24 and ranks[0].channels["p2p"] == 32
    assert len(result.rings) == 24
    p2p = {(p.src_rank, p.dst_rank): p for p in result.paths}
    assert p2p[(0, 1)].via == "P2P/direct pointer/read" and len(p2p[(0, 1)].channels) == 24
    assert [(e.name, e.value, e.source) for e in result.env] == [
        ("NCCL_TOPO_DUMP_FILE", "nccl_topo_dump.xml", "nccl")
    ]
    [algo] = result.algorithms
    assert (algo.collective, algo.algorithm, algo.protocol, algo.calls) == (
        "AllReduce",
        "RING",
        "SIMPLE",
        495,
    )
    assert (algo.min_bytes, algo.max_bytes, algo.max_channels) == (8388608, 8589934592, 24)
    [coll] = result.collectives
    assert (coll.calls, coll.min_count, coll.max_count) == (990, 2097152, 2147483648)
    cell = {(t.collective, t.algorithm, t.protocol): t for t in result.tuning_model}
    assert (
        cell[("AllReduce", "RING", "SIMPLE")].latency_us,
        cell[("AllReduce", "RING", "SIMPLE")].bandwidth_gbps,
    ) == (
        15.2,
        240.0,
    )
    assert cell[("AllReduce", "TREE", "LL")].bandwidth_gbps == 37.9
    assert cell[("AllReduce", "COLLNET_CHAIN", "SIMPLE")].latency_us == 35.6
    assert {(g.pattern, g.nchannels, g.type_intra, g.type_inter) for g in result.graphs} == {
        (4, 12, "NVL", "PIX"),
        (1, 12, "NVL", "PIX"),
    }
    kinds = [e.kind for e in result.events]
    assert kinds.count("comm_init") == 2 and kinds.count("comm_destroy") == 2


def test_fault_injection_log_shows_the_forced_topology() -> None:
    result = parse_file(FAULT)
    assert ("NCCL_TOPO_FILE", "/home/zx/nccl-tests/topo_fail.xml") in {
        (e.name, e.value) for e in result.env
    }
    assert {r.channels["coll"] for r in result.ranks} == {2}  # 24 in the healthy run
    assert {g.nchannels for g in result.graphs} == {1}
    assert len(result.rings) == 2


@pytest.mark.parametrize("path", all_samples("nccl_debug", "*.log"), ids=lambda p: p.name)
def test_every_debug_log_sample_parses_to_json(path) -> None:  # type: ignore[no-untyped-def]
    with path.open("rb") as f:
        result = nccl_debug.parse(f)
    assert result.hosts
    json.dumps(result.to_json())
    assert result.to_json()["kind"] == "nccl_debug"
    assert set(result.summary()) >= {"hosts", "nranks", "version_mismatch", "warnings"}


# --- constructed logs: the formats the samples do not cover ---------------------------------

MULTI_HOST = """\
[1,0]<stdout>:node-a:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
[1,1]<stdout>:node-b:2222:2222 [0] NCCL INFO NCCL version 2.20.3+cuda12.2
[1,0]<stdout>:node-a:1234:1300 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0
[1,0]<stdout>:node-a:1234:1300 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.
[1,0]<stdout>:node-a:1234:1300 [0] NCCL INFO NET/OFI Using aws-ofi-nccl 1.7.4-aws
[1,0]<stdout>:node-a:1234:1300 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)
[1,0]<stdout>:node-a:1234:1300 [0] NCCL INFO Using network AWS Libfabric
[1,1]<stdout>:node-b:2222:2300 [0] NCCL INFO NET/IB : No device found.
[1,1]<stdout>:node-b:2222:2300 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>
[1,1]<stdout>:node-b:2222:2300 [0] NCCL INFO Using network Socket
[1,0]<stdout>:node-a:1234:1300 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/AWS Libfabric/0/GDRDMA
[1,0]<stdout>:node-a:1234:1300 [0] NCCL INFO comm 0x7f00 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0xabc - Init COMPLETE
[1,1]<stdout>:node-b:2222:2300 [0] NCCL INFO comm 0x8f00 rank 1 nranks 2 cudaDev 0 busId 1b000 - Init COMPLETE
[1,1]<stdout>:
[1,1]<stdout>:[2025-03-12 10:22:33] node-b:2222:2400 [0] transport/net_socket.cc:540 NCCL WARN NET/Socket : peer 10.0.0.1<55555> message truncated
[1,1]<stdout>:[2025-03-12 10:22:34] node-b:2222:2400 [0] transport/net_socket.cc:540 NCCL WARN NET/Socket : peer 10.0.0.1<55555> message truncated
[1,1]<stdout>:node-b:2222:2400 [0] NCCL INFO misc/socket.cc:568 -> 2
"""


def test_versions_mismatch_plugins_and_socket_fallback_across_hosts() -> None:
    result = parse_text(MULTI_HOST)
    assert result.version_mismatch is True
    assert {(v.host, v.version) for v in result.versions} == {
        ("node-a", "2.21.5"),
        ("node-b", "2.20.3"),
    }
    a, b = result.hosts
    assert (a.host, a.plugin, a.ofi_provider, a.transports) == (
        "node-a",
        "aws-ofi-nccl 1.7.4-aws",
        "efa",
        ("AWS Libfabric",),
    )
    assert a.gdr is True  # the "/GDRDMA" path
    assert (b.transports, b.ib_device_found) == (("Socket",), False)
    assert {(e.name, e.value, e.host) for e in result.env} == {
        ("NCCL_SOCKET_IFNAME", "eth0", "node-a"),
        ("NCCL_IB_GID_INDEX", "3", "node-a"),  # the trailing period of old NCCL versions dropped
    }
    assert by_rank(result)[1].pci_address == "0000:1b:00.0"
    assert result.stats["error_traces"] == 1
    assert result.summary()["version_mismatch"] is True


def test_warn_lines_keep_timestamp_source_and_are_counted_not_repeated() -> None:
    result = parse_text(MULTI_HOST)
    [warn] = [e for e in result.events if e.kind == "nccl_warn"]
    assert warn.time == "2025-03-12T10:22:33"
    assert (warn.host, warn.rank, warn.pid) == ("node-b", 1, 2222)  # rank via (host, pid, dev)
    assert warn.text == "NET/Socket : peer 10.0.0.1<55555> message truncated"
    assert warn.details["source"] == "transport/net_socket.cc:540"
    assert warn.details["repeats"] == 2
    event = result.to_json()["events"][2]
    assert set(event) >= {"kind", "time", "host", "rank", "text"}


TORCH = """\
[rank1]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.
[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600070 milliseconds before timing out.
[rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.
terminate called after throwing an instance of 'c10::DistBackendError'
  what():  [PG 1 Rank 0] Process group watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600070 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:458] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96120, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25624887 milliseconds before timing out.
2024-08-01 10:00:00,123 torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3
ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
"""


def test_pytorch_watchdog_timeouts_become_structured_events_and_groups() -> None:
    result = parse_text(TORCH)
    first, second = result.timeouts
    assert (first.collective, first.seq, first.timeout_ms, first.ranks) == (
        "ALLREDUCE",
        1580,
        600000,
        (0, 1),
    )
    assert first.pgs == ("1",)  # named only by the "what():" line
    assert (first.max_ran_ms, first.numel_in) == (600070, 466119168)
    assert (second.seq, second.ranks, second.numel_in) == (96120, (7,), None)  # PyTorch 1.x format
    timeouts = [e for e in result.events if e.kind == "watchdog_timeout"]
    assert [(e.rank, e.details["seq"]) for e in timeouts] == [(1, 1580), (0, 1580), (7, 96120)]
    [progress] = [e for e in result.events if e.kind == "watchdog_exception"]
    assert progress.details == {
        "pg": "1",
        "seq": 1580,
        "last_enqueued": 1582,
        "last_completed": 1579,
    }


def test_dist_backend_error_and_nccl_error_code() -> None:
    result = parse_text(TORCH)
    [backend] = [e for e in result.events if e.kind == "dist_backend_error"]
    assert backend.time == "2024-08-01T10:00:00.123000"
    assert backend.details["reason"] == "unhandled system error"
    assert backend.details["nccl_version"] == "2.19.3"
    assert backend.details["source"].endswith("ProcessGroupNCCL.cpp:1691")
    [code] = [e for e in result.events if e.kind == "nccl_error"]
    assert code.details["error_code"] == "ncclSystemError"


def test_pytorch_rank_is_mapped_to_its_host_through_the_world_comm() -> None:
    log = (
        "gpu7:10:10 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
        "gpu8:20:20 [0] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
        "[E ProcessGroupNCCL.cpp:458] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=3, OpType=BROADCAST, Timeout(ms)=1000) ran for 1001 milliseconds before timing out.\n"
    )
    [event] = [e for e in parse_text(log).events if e.kind == "watchdog_timeout"]
    assert (event.rank, event.host) == (1, "gpu8")


def test_timestamps_launchers_and_glued_hosts() -> None:
    log = (
        "  | 2025-05-16T16:39:51.208-07:00 | ip-10-36-29-253:79:79 [0] NCCL INFO cudaDriverVersion 12040\n"
        "2025-05-16T16:39:51.208-07:00ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using eth0:10.36.29.253<0>\n"
        "12:00:00 ip-10-36-29-253:79:80 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.36.29.253<0>\n"
        "0: ip-10-36-29-253:79:80 [0] NCCL INFO Using network IB\n"
        "NCCL version 2.21.5+cuda12.8\n"
        "[2025-05-16 16:40:00] ip-10-36-29-253:79:80 [0] init.cc:1 NCCL WARN Cuda failure 'out of memory'\n"
    )
    result = parse_text(log)
    [host] = result.hosts
    assert host.host == "ip-10-36-29-253"
    assert host.cuda_driver_version == 12040
    assert host.bootstrap_interface == "eth0:10.36.29.253"
    assert [(d.name, d.link_layer) for d in host.ib_devices] == [("mlx5_0", "IB")]
    assert host.relaxed_ordering is False
    assert host.transports == ("IB",)
    # NCCL_DEBUG=VERSION prints the banner bare; a single-host file owns it.
    assert [(v.host, v.version) for v in result.versions] == [("ip-10-36-29-253", "2.21.5")]
    [warn] = [e for e in result.events if e.kind == "nccl_warn"]
    assert (warn.time, warn.details["source"]) == ("2025-05-16T16:40:00", "init.cc:1")


def test_comm_lifecycle_statuses() -> None:
    log = (
        "h:1:2 [0] NCCL INFO ncclCommInitRankConfig comm 0xa rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1 - Init START\n"
        "h:1:3 [1] NCCL INFO ncclCommInitRankConfig comm 0xb rank 1 nranks 8 cudaDev 1 nvmlDev 1 busId 2a000 commId 0x1 - Init START\n"
        "h:1:3 [1] NCCL INFO comm 0xb rank 1 nranks 8 cudaDev 1 nvmlDev 1 busId 2a000 commId 0x1 - Init COMPLETE\n"
        "h:1:9 [1] NCCL INFO comm 0xb rank 1 nranks 8 cudaDev 1 busId 2a000 - Abort COMPLETE\n"
    )
    ranks = by_rank(parse_text(log))
    assert ranks[0].status == "started"  # never completed: a hang during init
    assert ranks[1].status == "aborted"
    assert ranks[0].pci_address == "0000:18:00.0"


def test_command_line_env_is_read_but_error_hints_are_not() -> None:
    log = (
        "export NCCL_IB_HCA=mlx5_0,mlx5_1\n"
        "  -x NCCL_SOCKET_IFNAME=bond0 \\\n"
        "RuntimeError: NCCL error in: x.cpp:1, unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
    )
    result = parse_text(log)
    assert {(e.name, e.value) for e in result.env} == {
        ("NCCL_IB_HCA", "mlx5_0"),
        ("NCCL_SOCKET_IFNAME", "bond0"),
    }


def test_overlong_and_undecodable_lines_are_repaired_with_warnings() -> None:
    data = (
        b"h:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"
        + b"x" * 600_000
        + b"\n\xff\xfe junk\n"
    )
    result = nccl_debug.parse(io.BytesIO(data))
    assert result.versions[0].version == "2.18.1"
    assert any("over-long" in w for w in result.warnings)
    assert any("not UTF-8" in w for w in result.warnings)


@pytest.mark.parametrize("text", ["", "hello world\n", "# nccl-tests only\n#  Rank  0 Group  0\n"])
def test_files_without_nccl_lines_are_refused_clearly(text: str) -> None:
    with pytest.raises(ParseError, match="no NCCL_DEBUG lines"):
        parse_text(text)


# --- detection --------------------------------------------------------------------------------


# This log opens with about 490 KB of libfabric's own "<info>" lines: its first NCCL header
# (byte 498,492) lies past the 64 KiB head this test hands ``accepts``, so the expectation does
# not fit it. Detection, handed the whole file, still finds it (the test below).
HEAD_WITHOUT_NCCL = {"alcf_polaris_resnet50_libfabric_nccl_info.log"}


@pytest.mark.parametrize(
    "path",
    [p for p in all_samples("nccl_debug", "*.log") if p.name not in HEAD_WITHOUT_NCCL],
    ids=lambda p: p.name,
)
def test_accepts_its_samples(path) -> None:  # type: ignore[no-untyped-def]
    assert nccl_debug.accepts(path.name, path.read_bytes()[: 64 * 1024])


@pytest.mark.parametrize("name", sorted(HEAD_WITHOUT_NCCL))
def test_a_log_whose_head_has_no_nccl_line_is_still_detected(name: str) -> None:
    path = any_sample(f"nccl_debug/{name}")
    assert detect_kind(path.name, path.read_bytes()) == "nccl_debug"


@pytest.mark.parametrize(
    "relative",
    [
        "nccl_tests/xxrjun_pair_N2_G1_ok.log",
        "nccl_debug/timez_NCCL_TOPO_DUMP_FILE_normal.xml",
        "torch_profiler/hta_backward_thread_tiny.json",
        "ethtool_rdma/ethq_mlx5_core_cx4lx_ubuntu1804_ethtool_S.txt",
        "counters/gpud_ibstat_h100_all_active.txt",
        "counters/gpud_nvidia-smi_q_560.35.03.txt",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not nccl_debug.accepts(path.name, path.read_bytes()[: 64 * 1024])


def test_refuses_random_text_and_accepts_a_bare_watchdog_line() -> None:
    assert not nccl_debug.accepts("notes.txt", b"lorem ipsum dolor sit amet\n" * 50)
    assert nccl_debug.accepts("job.log", TORCH.encode())


# --- robustness -------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", [GARBLED])
def test_the_registry_detects_it(relative: str) -> None:
    path = sample(relative)
    assert detect_kind(path.name, path.read_bytes()[: 64 * 1024]) == "nccl_debug"


ROBUST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes_give_a_result_or_parse_error(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(nccl_debug.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=1670), st.binary(max_size=8))
def test_truncated_and_corrupted_sample_prefixes(cut: int, junk: bytes) -> None:
    data = sample(GARBLED).read_bytes()[:cut]
    corrupted = data[: cut // 2] + junk + data[cut // 2 :]
    for blob in (data, corrupted):
        with contextlib.suppress(ParseError):
            json.dumps(nccl_debug.parse(io.BytesIO(blob)).to_json())


@ROBUST
@given(
    st.lists(st.sampled_from(MULTI_HOST.splitlines() + TORCH.splitlines()), max_size=30), st.data()
)
def test_shuffled_and_spliced_real_lines(lines: list[str], data: st.DataObject) -> None:
    if lines and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(lines) - 1))
        cut = data.draw(st.integers(0, len(lines[i])))
        lines[i] = lines[i][:cut] + lines[-1]  # glue two writes together, as ranks do
    with contextlib.suppress(ParseError):
        nccl_debug.parse(io.BytesIO("\n".join(lines).encode()))


def test_the_ofi_plugin_says_how_many_nics_it_found() -> None:
    """aws-ofi-nccl's "Selected Provider is cxi (found 4 nics)": the NICs per node the limits
    model reads when the profile states none (docs/efficiency.md)."""
    from tests.samples import more_sample

    path = more_sample("nccl_debug/alcf_polaris_vae_nccl_info_trace_aws_ofi_cxi.log")
    with path.open("rb") as stream:
        result = nccl_debug.parse(stream)
    counts = {h.host: h.ofi_nics for h in result.hosts}
    # the two nodes (other "hosts" are pieces of lines the launcher glued together)
    assert counts["x3207c0s25b0n0"] == counts["x3207c0s25b1n0"] == 4


def test_ib_device_speeds_are_kept_per_device() -> None:
    text = (
        "\n".join(
            f"h1:1:1 [0] NCCL INFO NET/IB: [{i}] mlx5_{i}:uverbs{i}:1/RoCE provider=Mlx5 "
            f"speed=200000 context=0x1 pciPath=/sys/x ar=0"
            for i in range(2)
        )
        + "\nh1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB e0:1<0>\n"
    )
    [host] = parse_text(text).hosts
    assert [(d.name, d.link_layer, d.speed_mbps) for d in host.ib_devices] == [
        ("mlx5_0", "RoCE", 200000), ("mlx5_1", "RoCE", 200000),
    ]  # fmt: skip
