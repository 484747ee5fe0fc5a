"""nccl-tests output read in blocks (issue 27) gives what the line-by-line reading gives.

Random files are cut from real samples (several runs, device lists, tables with both halves
or in place only, the old ``error`` column, footers, NCCL debug and TRACE lines, mpirun
commands) and mixed with launcher prefixes, glued debug lines, noise, CRLF, lone ``\\r``,
bytes that are not UTF-8 and over-long lines, then read with small blocks so that their
lines fall across many block ends.
"""

from __future__ import annotations

import functools
import io
import json
import random

import pytest

from artifacts.parsers.base import ParseError
from artifacts.runs.parsers import nccl_tests
from artifacts.runs.parsers.nccl_tests import blocks, bulk
from tests.artifacts.fabric.parsers.blocks import jitter
from tests.samples import any_sample

SOURCES = (
    "nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log",
    "nccl_tests/xxrjun_pair_N2_G4_FAIL_network_error.log",
    "nccl_tests/xxrjun_pair_N2_G4_TRUNCATED_after_devices.log",
    "nccl_tests/ssbandjl_allreduce_mpirun_without_MPI1_interleaved_debug.log",
    "nccl_tests/superbench_old_format_alltoall_8xA100_dgx.log",
    "nccl_tests/coreweave_readme_h100_64_sharp_kubectl_fragment.txt",
    "nccl_tests/coreweave_readme_2023_old_format_error_column_128gpu_fragment.txt",
    "nccl_debug/ssbandjl_2node_4gpu_NCCL_DEBUG_TRACE_roce.log",
)
PREFIXES = (b"[1,0]<stdout>: ", b"3: ", b"2024-05-01T10:00:00.123Z ", b"[pod/w-0] ", b"  ", b"\t")
NOISE = (
    b"\n",
    b"   \n",
    b"...\n",
    b"hello world\n",
    b"export NCCL_IB_HCA=mlx5_0\n",
    b"$ mpirun -np 8 ./build/all_reduce_perf -b 8 -e 1G \\\n",
    b"Test NCCL failure common.cu:1005 'unhandled system error'\n",
    b"NCCL version 2.18.3+cuda12.2\n",
    b"gdr114:1:2 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0\n",
    b"gdr114:1:2 [0] NCCL WARN Net : Connect to 10.0.0.1 failed\n",
    b"gdr114:1:2 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n",
    # the version of a process of the 80-rank sample's device list (RunBuilder.rank_pids)
    b"cnode3-002:2627782:2627782 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n",
    b"gdr114:1:2 [0] a b NCCL WARN x NCCL INFO y\n",
    b"gdr114:1:2 [0] NCCL INFO \xc2\xa0NCCL_X set by environment to 1\n",
    b"9gdr:1:2 [0] NCCL INFO Channel 00\n",
    b"  1024  256 float sum -1 gdr114:1:2 [0] NCCL INFO Channel 01\n",
    b"f(), common.cu:12, #  Rank  0 Group  0 Pid 1 on h device  0 [0x1b] GPU\n",
    b"#  Rank  0 Group  0 Pid 1 on h device  0 [0x1b] NVIDIA \xc3\xa9\n",
    b"#  Rank  x\n",
    b"#\n",
    b"# Avg bus bandwidth    : 12.5\n",
    b"caf\xe9\n",  # not UTF-8
    b"a lone\rcarriage return\n",
    b"crlf line\r\n",
    b"x" * 400 + b"\n",  # over-long with MAX_LINE_BYTES 300
)


@functools.cache
def _lines(relative: str) -> list[bytes]:
    return any_sample(relative).read_bytes().splitlines(keepends=True)


def _piece(rng: random.Random) -> bytes:
    lines = _lines(rng.choice(SOURCES))
    start = rng.randrange(len(lines))
    piece = b"".join(lines[start : start + rng.choice([5, 40, 200, 1000])])
    if rng.random() < 0.3:
        piece = jitter(rng, piece, 0.05)
    if rng.random() < 0.15:
        prefix = rng.choice(PREFIXES)
        piece = b"".join(prefix + line for line in piece.splitlines(keepends=True))
    if rng.random() < 0.15:
        piece = piece.replace(b"\n", b"\r\n")
    return piece


def _random_file(rng: random.Random) -> bytes:
    parts = []
    for _ in range(rng.randrange(1, 12)):
        parts.append(_piece(rng) if rng.random() < 0.7 else rng.choice(NOISE))
        if rng.random() < 0.3:  # the same device list or table again, as in a tiled log
            parts.append(parts[-1])
    data = b"".join(parts)
    if rng.random() < 0.2:
        data = data.rstrip(b"\n")  # the last line without its newline
    return data


def _parsed(data: bytes) -> str:
    """The result's JSON, or the ParseError's message."""
    try:
        result = nccl_tests.parse(io.BytesIO(data))
    except ParseError as exc:
        return f"ParseError: {exc.message}"
    return json.dumps(result.to_json(), sort_keys=True, default=str)


def _line_by_line(data: bytes, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as patch:
        patch.setattr(nccl_tests, "iter_pieces", blocks.iter_lines)
        return _parsed(data)


@pytest.mark.parametrize("seed", range(60))
def test_blocks_read_as_lines(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    data = _random_file(rng)
    monkeypatch.setattr(blocks, "MAX_LINE_BYTES", rng.choice([300, 1 << 20]))
    expected = _line_by_line(data, monkeypatch)
    monkeypatch.setattr(blocks, "BLOCK_BYTES", rng.choice([64, 500, 4096, 1 << 20]))
    assert _parsed(data) == expected


def test_a_tiled_log_reuses_its_device_lists_and_reads_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = any_sample(SOURCES[0]).read_bytes() * 6
    monkeypatch.setattr(bulk, "MAX_RANK_BLOCKS", 2)  # the cache is cleared on the way
    expected = _line_by_line(data, monkeypatch)
    assert _parsed(data) == expected
    result = nccl_tests.parse(io.BytesIO(data))
    assert len(result.runs) == 6 * 5 and all(len(run.ranks) == 80 for run in result.runs)


def test_quiet_debug_lines_are_counted_not_read() -> None:
    block = (
        b"\nh1:1:2 [0] NCCL INFO Channel 00\n"
        b"h1:1:2 [0] f, 12 NCCL TRACE x\n"
        b"h1:1:2 [0] NCCL WARN oops\n"  # an error: kept
        b"h1:1:2 [0] NCCL INFO NCCL_IB_HCA set by environment to x\n"  # an echo: kept
        b"h1:1:2 [0] f(), a.cc:1, NCCL INFO y\n"  # a function prefix: kept
        b"# h1:1:2 [0] NCCL INFO z\n"  # glued to program output: kept
    )
    kept, quiet = blocks.QUIET_DEBUG_RE.subn(b"", block)
    assert quiet == 2
    assert kept.count(b"\n") == 5


def test_a_run_takes_the_nccl_version_of_its_listed_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    devices = b"".join([line for line in _lines(SOURCES[0]) if b"Rank" in line][:80])
    params = b"# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5\n"
    data = (params + devices) * 2 + (
        b"cnode3-002:2627782:2627782 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        b"elsewhere:7:7 [0] NCCL INFO NCCL version 2.19.3+cuda12.2\n"
    )
    expected = _line_by_line(data, monkeypatch)
    assert _parsed(data) == expected
    result = nccl_tests.parse(io.BytesIO(data))
    assert [run.nccl_version for run in result.runs] == ["2.21.5", "2.21.5"]
