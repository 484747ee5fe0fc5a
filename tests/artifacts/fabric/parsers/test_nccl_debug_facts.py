"""nccl_debug: facts that were in the files but not read (issue 22) and the more-samples logs.

Fork version lines, IB completion errors in every NCCL spelling, lines whose header a
cleaning step removed, other libraries' noise, host names damaged by interleaved writes, and
the ``parts`` a file held. Expected values were read from the files with grep; constructed
lines quote real NCCL/RCCL output (from public issues and logs) verbatim.
"""
# ruff: noqa: E501

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import nccl_debug
from artifacts.fabric.parsers.nccl_debug.ibverbs import read_completion
from artifacts.fabric.parsers.nccl_debug.versions import read_version
from artifacts.parsers import detect_kind
from tests.samples import more_sample


def parse_text(text: str) -> nccl_debug.NcclDebugResult:
    return nccl_debug.parse(io.BytesIO(text.encode()))


def parse_more(relative: str) -> nccl_debug.NcclDebugResult:
    with more_sample(relative).open("rb") as f:
        return nccl_debug.parse(f)


# --- version lines of NCCL and its forks ----------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("NCCL version 2.21.5+cuda12.4", ("NCCL", "2.21.5", "cuda12.4", None)),
        ("NCCL version 2.18.3-1+cuda12.2", ("NCCL", "2.18.3", "cuda12.2", "1")),
        ("RCCL version : 2.22.3-HEAD:7d8d67c", ("RCCL", "2.22.3", None, "HEAD:7d8d67c")),
        ("RCCL version : 2.28.3-develop:d143eea", ("RCCL", "2.28.3", None, "develop:d143eea")),
        ("MSCCL version 2.12.12+cuda11.8", ("MSCCL", "2.12.12", "cuda11.8", None)),
        (
            "NCCL version 2.4.8+cudaCUDA_MAJOR.CUDA_MINOR",
            ("NCCL", "2.4.8", "cudaCUDA_MAJOR.CUDA_MINOR", None),
        ),
    ],
)
def test_version_banners_of_nccl_and_forks(line: str, expected: tuple[object, ...]) -> None:
    found = read_version(line)
    assert found is not None and found[:4] == expected


def test_nccl_tests_banner_is_not_a_library_version() -> None:
    assert read_version("# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903") is None


def test_rccl_version_block_gives_library_hip_and_rocm() -> None:
    # vLLM on ROCm: a Ray prefix on every line, the detail lines without an NCCL header
    result = parse_text(
        "(EngineCore_DP0 pid=742) (RayWorkerWrapper pid=927) corona:927:927 [0] NCCL INFO Kernel version: 6.14.0-35-generic\n"
        "(EngineCore_DP0 pid=742) (RayWorkerWrapper pid=927) corona:927:927 [0] NCCL INFO RCCL version : 2.26.6-HEAD:f224e2c\n"
        "(EngineCore_DP0 pid=742) (RayWorkerWrapper pid=927) HIP version  : 7.0.51831-a3e329ad8\n"
        "(EngineCore_DP0 pid=742) (RayWorkerWrapper pid=927) ROCm version : 7.0.0.0-38-9428210\n"
        "(EngineCore_DP0 pid=742) (RayWorkerWrapper pid=927) Hostname     : corona\n"
    )
    [version] = result.versions
    assert (version.host, version.library, version.version, version.revision) == (
        "corona", "RCCL", "2.26.6", "HEAD:f224e2c"
    )  # fmt: skip
    assert (version.hip_version, version.rocm_version) == (
        "7.0.51831-a3e329ad8",
        "7.0.0.0-38-9428210",
    )
    assert result.summary()["libraries"] == ["RCCL"] and result.parts == ("version",)
    assert result.hosts[0].kernel_version == "6.14.0-35-generic"  # "Kernel version: ..."


def test_bare_rccl_banner_takes_its_host_from_the_hostname_line() -> None:
    # NCCL_DEBUG=VERSION under rccl-tests: no header at all, the host on its own line
    result = parse_text(
        "RCCL version : 2.22.3-HEAD:7d8d67c\n"
        "HIP version  : 6.4.43484-123eb5128\n"
        "ROCm version : 6.4.2.0-120-e7d83f5\n"
        "Hostname     : gpu-53\n"
        "Librccl path : /opt/rocm-6.4.2/lib/librccl.so.1\n"
        "gpu-53:1:1 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5\n"
        "gpu-54:1:1 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5\n"
    )
    assert [(v.host, v.library, v.version, v.rocm_version) for v in result.versions] == [
        ("gpu-53", "RCCL", "2.22.3", "6.4.2.0-120-e7d83f5")
    ]


def test_a_fork_with_the_same_numbers_is_a_mismatch_of_libraries() -> None:
    result = parse_text(
        "a:1:1 [0] NCCL INFO NCCL version 2.22.3+cuda12.4\n"
        "b:2:2 [0] NCCL INFO RCCL version : 2.22.3-HEAD:7d8d67c\n"
    )
    assert result.version_mismatch
    assert {(v.host, v.library) for v in result.versions} == {("a", "NCCL"), ("b", "RCCL")}


# --- IB completion errors -----------------------------------------------------------------------

COMPLETIONS = [
    # NCCL <= 2.7
    (
        "NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129",
        {"status": 12, "opcode": 0, "length": 0, "vendor_err": 129, "peer": None, "hca": None},
    ),
    # 2.8 - 2.12
    (
        "NET/IB : Got completion from peer 10.2.0.5<33092> with error 12, opcode 0, len 0, vendor err 129 (Recv)",
        {"peer": "10.2.0.5", "peer_port": 33092, "status": 12, "request": "Recv"},
    ),
    # 2.13 - 2.18: GIDs, "remoteGids" glued to the GID
    (
        "NET/IB: Got completion from peer 10.46.70.22<39226> with status=12 opcode=32224 len=0 vendor err 129 (Recv) localGid fe80::9e63:c0ff:feab:938a remoteGidsfe80::9e63:c0ff:feab:b6b2 hca mlx5_10",
        {"status": 12, "opcode": 32224, "opcode_name": None, "local_gid": "fe80::9e63:c0ff:feab:938a",
         "remote_gid": "fe80::9e63:c0ff:feab:b6b2", "hca": "mlx5_10"},
    ),
    (
        "NET/IB: Got completion from peer 10.99.91.63<51161> with status=4 opcode=32614 len=32614 vendor err 81 (Send) localGid ::ffff:10.99.92.59 remoteGids::ffff:10.99.91.63 hca mlx5_1",
        {"status": 4, "status_name": "IBV_WC_LOC_PROT_ERR", "vendor_err": 81, "request": "Send",
         "local_gid": "::ffff:10.99.92.59", "remote_gid": "::ffff:10.99.91.63"},
    ),
    # >= 2.27: names in the line
    (
        "NET/IB: Got completion from peer 10.153.235.13<40554> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RECV_RDMA_WITH_IMM(129) vendor_err=129 localGid ::ffff:1.1.2.2 remoteGids::ffff:1.1.1.4 hca mlx5_1",
        {"status": 12, "status_name": "IBV_WC_RETRY_EXC_ERR", "opcode": 129,
         "opcode_name": "IBV_WC_RECV_RDMA_WITH_IMM", "vendor_err": 129, "hca": "mlx5_1"},
    ),
    # a vendor error printed with a leading zero (decimal, not octal), and in hex
    (
        "NET/IB : Got completion from peer 10.2.0.5<33092> with error 12, opcode 0, len 0, vendor err 029 (Recv)",
        {"status": 12, "vendor_err": 29, "request": "Recv"},
    ),
    (
        "NET/IB: Got completion from peer 10.2.0.5<33092> with status=12 opcode=0 len=0 vendor_err=0x81 hca mlx5_0",
        {"status": 12, "vendor_err": 0x81, "hca": "mlx5_0"},
    ),
    # a peer named by host name, no GIDs
    (
        "NET/IB: Got completion from peer node20<57713> with status=4 opcode=0 len=0 vendor err 81 (Send) hca mlx5_0",
        {"peer": "node20", "peer_port": 57713, "status": 4, "opcode_name": "IBV_WC_SEND", "hca": "mlx5_0"},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), COMPLETIONS)
def test_completion_spellings_of_every_nccl_version(text: str, expected: dict[str, object]) -> None:
    fields = read_completion(text)
    assert fields is not None
    assert {k: fields[k] for k in expected} == expected
    assert fields["status_name"].startswith("IBV_WC_")


def test_completion_warn_lines_become_structured_events_with_host_and_rank() -> None:
    result = parse_text(
        "gx10-9c8c:22890:22890 [0] NCCL INFO comm 0xaf6bad6d6e20 rank 1 nranks 2 cudaDev 0 busId f01000 - Init COMPLETE\n"
        "[2025-11-19 18:02:33] gx10-9c8c:22890:22900 [0] transport/net_ib.cc:2470 NCCL WARN NET/IB: Got completion from peer 10.77.0.1<35162> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid ::ffff:10.77.0.2 remoteGids::ffff:10.77.0.1 hca roceP2p1s0f0\n"
        "gx10-9c8c:22890:22900 [0] NCCL INFO transport/net.cc:1227 -> 6\n"
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.21.5\n"
        "Last error:\n"
        "NET/IB: Got completion from peer 10.77.0.1<35162> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid ::ffff:10.77.0.2 remoteGids::ffff:10.77.0.1 hca roceP2p1s0f0\n"
    )
    [warn] = [e for e in result.events if e.kind == "nccl_warn"]
    ib = warn.details["ib_completion"]
    assert (warn.host, warn.rank, warn.time) == ("gx10-9c8c", 1, "2025-11-19T18:02:33")
    assert (ib["status"], ib["status_name"], ib["vendor_err"], ib["peer"], ib["hca"]) == (
        12, "IBV_WC_RETRY_EXC_ERR", 129, "10.77.0.1", "roceP2p1s0f0"
    )  # fmt: skip
    # PyTorch's "Last error:" quotes the same completion: counted once, not twice
    [completion] = result.ib_completions
    assert (completion.host, completion.rank, completion.count, completion.first_line) == (
        "gx10-9c8c", 1, 1, 2
    )  # fmt: skip
    assert (completion.local_gid, completion.remote_gid) == ("::ffff:10.77.0.2", "::ffff:10.77.0.1")
    assert result.summary()["ib_completion_errors"] == 1
    assert "ib_errors" in result.parts and "init" in result.parts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NET/IB : mlx5_0:1 Got async event : port error", ("mlx5_0", 1, None, None, "port error")),
        ("NET/IB : mlx5_3:1 Got async event : client reregistration", ("mlx5_3", 1, None, None, "client reregistration")),
        ("NET/IB : Got async event : local catastrophic error", (None, None, None, None, "local catastrophic error")),
        ("NET/IB : mlx5_1:1 async fatal event on QP (0x55d5f5ac09e0): local work queue catastrophic error",
         ("mlx5_1", 1, "fatal", "QP", "local work queue catastrophic error")),
    ],
)  # fmt: skip
def test_ib_async_events(text: str, expected: tuple[object, ...]) -> None:
    result = parse_text(f"node-1:7:9 [0] transport/net_ib.cc:99 NCCL WARN {text}\n")
    event = result.events[0].details["ib_async_event"]
    assert (event["hca"], event["port"], event["severity"], event["on"], event["event"]) == expected
    assert result.parts == ("warnings", "ib_errors")


def test_repeated_completions_are_counted_per_peer() -> None:
    line = "h1:10:11 [3] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer {peer}<1> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n"
    result = parse_text(line.format(peer="10.0.0.2") * 3 + line.format(peer="10.0.0.3"))
    assert sorted((c.peer, c.count) for c in result.ib_completions) == [
        ("10.0.0.2", 3), ("10.0.0.3", 1)
    ]  # fmt: skip


def test_a_wrapped_completion_line_is_joined() -> None:
    # pasted from an issue: the WARN line broke after "len"
    result = parse_text(
        "node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer 10.2.0.5<33092> with error 12, opcode 0, len\n"
        "0, vendor err 129 (Recv)\n"
        "node-2:5776:5902 [0] NCCL INFO transport/net.cc:1134 -> 6\n"
    )
    [completion] = result.ib_completions
    assert (completion.host, completion.peer, completion.vendor_err) == ("node-2", "10.2.0.5", 129)
    assert result.events[0].text.endswith("vendor err 129 (Recv)")


def test_lines_without_their_header_still_give_versions_settings_and_warnings() -> None:
    # what is left when a cleaning step or a paste removed "host:pid:tid [dev]"
    result = parse_text(
        "NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        "NCCL INFO NCCL_IB_GID_INDEX set by environment to 3\n"
        "[2024-03-15 05:25:41] [rank 64] NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129\n"
    )
    assert [(v.version, v.build) for v in result.versions] == [("2.21.5", "cuda12.4")]
    assert [(e.name, e.value) for e in result.env] == [("NCCL_IB_GID_INDEX", "3")]
    [warn] = result.events
    assert (warn.rank, warn.time, warn.details["ib_completion"]["status"]) == (
        64,
        "2024-03-15T05:25:41",
        12,
    )
    assert result.parts == ("version", "env", "warnings", "ib_errors")


# Other libraries' real log lines (Gloo, UCX, libfabric, Open MPI) put before and between ours
NOISE = (
    "[Gloo] Rank 3 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7",
    "[1701945372.211183] [gpu-a:2411 :0]     ucp_context.c:1849 UCX  WARN  UCP version is incompatible, required: 1.16, actual: 1.15 (release 0)",
    "libfabric:1612793:1751035970::core:core:fi_param_get_():279<info> variable perf_cntr=<not set>",
    "[gpu-a:02411] mca_base_component_repository_open: unable to open mca_btl_openib: librdmacm.so.1: cannot open shared object file",
    "W1203 10:11:12.345678 140000 ProcessGroupGloo.cpp:771] Warning: Unable to resolve hostname to a (local) address.",
)
CORE = [
    "gpu-a:2411:2411 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
    "gpu-a:2411:2500 [0] transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<12345> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0",
    "gpu-a:2411:2411 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.integers(min_value=0, max_value=300), min_size=len(CORE) + 1, max_size=len(CORE) + 1
    )
)
@example([300, 0, 0, 0])
def test_hundreds_of_other_librarys_lines_change_nothing(amounts: list[int]) -> None:
    lines: list[str] = []
    for i, amount in enumerate(amounts):
        lines += [NOISE[j % len(NOISE)] for j in range(amount)]
        if i < len(CORE):
            lines.append(CORE[i])
    text = "\n".join(lines) + "\n"
    assert detect_kind("job.log", text.encode()) == "nccl_debug"
    result = parse_text(text)
    assert [h.host for h in result.hosts] == ["gpu-a"]
    assert [(v.library, v.version) for v in result.versions] == [("NCCL", "2.21.5")]
    [completion] = result.ib_completions
    assert (completion.peer, completion.status_name, completion.hca) == (
        "10.0.0.2",
        "IBV_WC_RETRY_EXC_ERR",
        "mlx5_0",
    )
    assert [(e.name, e.value, e.host) for e in result.env] == [("NCCL_IB_HCA", "mlx5_0", "gpu-a")]
    assert result.events[0].kind == "nccl_warn"


# --- ../shared/more-samples/nccl_debug ----------------------------------------------------------

POLARIS = {
    # file -> (hosts, aws-ofi-nccl version); every file: NCCL 2.20.5+cuda12.4, cxi with 4 NICs
    "nccl_debug/alcf_polaris_resnet50_WATCHDOG_TIMEOUT_allgather_aws_ofi.log": (
        ("x3006c0s1b1n0", "x3006c0s25b0n0"),
        "aws-ofi-nccl 1.6.0",
    ),
    "nccl_debug/alcf_polaris_resnet50_libfabric_nccl_info.log": (
        ("x3006c0s19b1n0", "x3006c0s1b0n0"),
        "aws-ofi-nccl 1.6.0",
    ),
    "nccl_debug/alcf_polaris_vae_DistBackendError_2024.log": (
        ("x3200c0s37b0n0", "x3200c0s37b1n0"),
        "aws-ofi-nccl 1.9.1-aws",
    ),
    "nccl_debug/alcf_polaris_vae_nccl_info_trace_aws_ofi_cxi.log": (
        ("x3207c0s25b0n0", "x3207c0s25b1n0"),
        "aws-ofi-nccl 1.6.0",
    ),
}


@pytest.mark.parametrize("relative", sorted(POLARIS))
def test_polaris_logs_hosts_versions_and_network(relative: str) -> None:
    hosts, plugin = POLARIS[relative]
    result = parse_more(relative)
    # interleaved writes damage a few host names ("06c0s1b1n0", "x3006c0s19b1x3006c0s1b0n0",
    # "xn0"): they are the two nodes of the job, never hosts of their own
    assert tuple(h.host for h in result.hosts) == hosts
    named = (
        {p.host for p in result.paths}
        | {t.host for t in result.trees}
        | {r.host for r in result.ranks}
    )
    assert named == set(hosts)
    assert [(v.library, v.version, v.build) for v in result.versions] == [
        ("NCCL", "2.20.5", "cuda12.4")
    ]
    for host in result.hosts:
        assert (host.plugin, host.ofi_provider, host.ofi_nics) == (plugin, "cxi", 4)
        assert host.transports == ("AWS Libfabric",) and host.cuda_driver_version == 12020
        assert len(host.pids) >= 4  # four ranks per node (one pid of a damaged line may join)
    assert result.nranks == 8 and len({r.rank for r in result.ranks if r.nranks == 8}) == 8
    # "Setting affinity for GPU 1 to ff0000" / "GPU 2 to ff00,00000000" (grep: only GPUs 1, 2)
    assert {h.host: h.gpu_cpu_affinity for h in result.hosts} == {
        host: {"GPU 1": "ff0000", "GPU 2": "ff00,00000000"} for host in hosts
    }
    # "DMA-BUF is available on GPU device 0", "NVLS multicast support is not available on dev N"
    assert {(h.dmabuf, h.nvls_multicast) for h in result.hosts} == {(True, False)}
    assert {r.mnnvl for r in result.ranks if r.nnodes is not None} == {0}  # "... MNNVL 0"
    assert result.parts[:5] == ("version", "env", "network", "init", "topology")


def test_polaris_allgather_watchdog_timeout_on_all_eight_ranks() -> None:
    result = parse_more("nccl_debug/alcf_polaris_resnet50_WATCHDOG_TIMEOUT_allgather_aws_ofi.log")
    [timeout] = result.timeouts
    assert (timeout.collective, timeout.seq, timeout.timeout_ms) == ("ALLGATHER", 1, 120000)
    assert (timeout.numel_in, timeout.numel_out, timeout.ranks) == (1, 8, tuple(range(8)))
    assert "pytorch_errors" in result.parts


def test_polaris_dist_backend_error_two_timeouts() -> None:
    result = parse_more("nccl_debug/alcf_polaris_vae_DistBackendError_2024.log")
    assert [(t.collective, t.seq, t.timeout_ms, t.numel_in, t.ranks) for t in result.timeouts] == [
        ("BROADCAST", 3861, 300000, 800, (1, 4, 5, 6)),
        ("ALLREDUCE", 6215, 300000, 509532, (0,)),
    ]


def test_polaris_aborted_communicators() -> None:
    result = parse_more("nccl_debug/alcf_polaris_vae_nccl_info_trace_aws_ofi_cxi.log")
    assert sum(e.kind == "comm_abort" for e in result.events) == 8  # grep -c "Abort COMPLETE"
    assert {r.status for r in result.ranks} == {"aborted"}


def test_desync_report_fragment_is_a_timeout_not_a_refusal() -> None:
    result = parse_more("nccl_debug/mlengineering_pytorch_watchdog_timeout_desync.txt")
    [timeout] = result.timeouts
    assert (timeout.collective, timeout.seq, timeout.timeout_ms, timeout.max_ran_ms) == (
        "ALLREDUCE", 2, 8000, 8097
    )  # fmt: skip
    assert timeout.ranks == (0,) and result.hosts == () and result.parts == ("pytorch_errors",)
    # TORCH_NCCL_DESYNC_DEBUG's report: rank 0 timed out in #3, rank 1 never joined it
    desync = [(e.kind, e.rank, e.details) for e in result.events if e.kind.startswith("desync")]
    assert desync == [
        ("desync_timeout", 0, {"collective": "ALLREDUCE", "seq": 3}),
        ("desync_lagging_rank", 1, {"what": "did_not_join", "seq": 3}),
    ]


def test_desync_report_variants() -> None:
    result = parse_text(
        " - [3] Timeout at collective: ALLGATHER, #17\n"
        "     [5] joined but didn't finish collective #17 (count from 1)\n"
        "     [6] completed collective #16, but didn't join collective #17 (count from 1)\n"
    )
    assert [(e.kind, e.rank, e.details.get("what"), e.details["seq"]) for e in result.events] == [
        ("desync_timeout", 3, None, 17),
        ("desync_lagging_rank", 5, "did_not_finish", 17),
        ("desync_lagging_rank", 6, "did_not_join", 17),
    ]
