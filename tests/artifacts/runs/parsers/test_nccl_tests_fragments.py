"""nccl-tests fragments: a results table pasted without its preamble, or with nothing that
names its collective. The collective is inferred from the table (busbw/algbw ratio, redop,
root, per-rank counts, in-place validation) and from the file name, and the run says which
evidence decided it (``collective_source``) plus a warning.

Two families of inputs: tables built here the way nccl-tests prints them (they run without
../shared), and fragments cut at run time from the shared samples (skipped without them).
The busbw factors are those of nccl-tests doc/PERFORMANCE.md (see ../shared/REFERENCE.md):
all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n; broadcast, reduce,
sendrecv 1.
"""
# ruff: noqa: E501

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.runs.parsers import nccl_tests
from artifacts.runs.parsers.nccl_tests import NcclRun, NcclTestsResult
from artifacts.runs.parsers.nccl_tests.infer import collectives_in_name
from tests.samples import any_sample, sample

T = "nccl_tests/"
COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
)
FACTOR_TEXT = {
    "all_reduce": "2(n-1)/n",
    "all_gather": "(n-1)/n",
    "reduce_scatter": "(n-1)/n",
    "alltoall": "(n-1)/n",
    "broadcast": "1",
    "reduce": "1",
    "sendrecv": "1",
}


def factor(collective: str, n: int) -> float:
    return {"all_reduce": 2 * (n - 1) / n, "broadcast": 1.0, "reduce": 1.0, "sendrecv": 1.0}.get(
        collective, (n - 1) / n
    )


def parse_text(text: str, name: str | None = None) -> NcclTestsResult:
    return nccl_tests.parse(io.BytesIO(text.encode()), name=name)


def only_run(result: NcclTestsResult) -> NcclRun:
    (run,) = result.runs
    return run


def warned(result: NcclTestsResult, fragment: str) -> bool:
    return any(fragment in w for w in result.warnings)


# --------------------------------------------------------------------------- built tables


def table(
    collective: str,
    n: int,
    *,
    validation: bool = True,
    bare: bool = False,
    dtype: str = "float",
    footer: bool = True,
) -> str:
    """A results table as nccl-tests 2.17 prints it for ``collective`` over n ranks.

    What differs per collective is what each test's source does: the redop it names
    ("none" when nothing is reduced), the root (>= 0 only for rooted collectives), the
    count (per rank for all_gather/reduce_scatter/alltoall), the busbw factor, and the
    in-place half that alltoall and sendrecv never validate.
    """
    width = {"float": 4, "double": 8, "half": 2, "int8": 1}[dtype]
    redop = "none" if collective in ("all_gather", "alltoall", "broadcast") else "sum"
    root = 0 if collective in ("broadcast", "reduce") else -1
    per_rank = collective in ("all_gather", "reduce_scatter", "alltoall")
    checked_in_place = collective not in ("alltoall", "sendrecv")
    hash_ = "" if bare else "#"
    lines = [
        f"{hash_}{'':>62}out-of-place                       in-place          ",
        f"{hash_}{'size':>11}{'count':>14}{'type':>10}{'redop':>8}{'root':>8}"
        f"{'time':>9}{'algbw':>8}{'busbw':>8}{'#wrong':>7}{'time':>9}{'algbw':>8}"
        f"{'busbw':>8}{'#wrong':>7}",
        f"{hash_}{'(B)':>11}{'(elements)':>14}{'':>26}{'(us)':>9}{'(GB/s)':>8}{'(GB/s)':>8}"
        f"{'':>7}{'(us)':>9}{'(GB/s)':>8}{'(GB/s)':>8}",
    ]
    size = 1024 * width * n  # whole per-rank counts for every size
    busbws = []
    while size <= 1 << 30:
        count = size // width // (n if per_rank else 1)
        halves = []
        for in_place in (False, True):
            seconds = 18e-6 + size / (150e9 + 3e9 * in_place)  # a latency + a link speed
            algbw = size / 1e9 / seconds
            busbw = algbw * factor(collective, n)
            busbws.append(busbw)
            unchecked = not validation or (in_place and not checked_in_place)
            wrong = "N/A" if unchecked else "0"
            time = f"{seconds * 1e6:.2f}" if seconds < 0.01 else f"{seconds * 1e6:.0f}"
            halves.append(f"{time:>9}{algbw:>8.2f}{busbw:>8.2f}{wrong:>7}")
        lines.append(f"{size:>12}{count:>14}{dtype:>10}{redop:>8}{root:>8}{''.join(halves)}")
        size *= 4
    if footer:
        lines.append("# Out of bounds values : 0 OK")
        lines.append(f"# Avg bus bandwidth    : {sum(busbws) / len(busbws):.4f}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("n", [2, 8, 16])
@pytest.mark.parametrize("collective", COLLECTIVES)
def test_header_only_table_gives_its_collective_and_says_why(collective: str, n: int) -> None:
    result = parse_text(table(collective, n))
    run = only_run(result)
    assert run.collective == collective, (run.collective_source, result.warnings)
    assert run.collective_candidates == ()
    source = run.collective_source or ""
    assert source.startswith("busbw/algbw ratio (")
    ratio_text = re.search(r"ratio \((\S+) = (.*?)\)(?:,|$)", source)
    assert ratio_text is not None
    assert float(ratio_text[1]) == pytest.approx(factor(collective, n), abs=1e-3)
    assert FACTOR_TEXT[collective] in ratio_text[2]
    assert warned(result, f"collective {collective} inferred from the table")
    assert warned(result, "starts without its parameter line")  # still a fragment
    assert run.nranks is None and len(run.rows) >= 8 and run.complete
    # The rank count: from the ratio (all_reduce), from the per-rank counts (all_gather,
    # reduce_scatter, alltoall); a factor of 1 says nothing about n.
    expected_n = None if FACTOR_TEXT[collective] == "1" else n
    assert run.nranks_inferred == expected_n
    if expected_n is not None:
        assert warned(result, f"{n} ranks inferred from the table")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(COLLECTIVES),
    st.integers(2, 1024),
    st.sampled_from(["float", "double", "half", "int8"]),
    st.booleans(),
    st.booleans(),
)
def test_any_table_is_inferred_right_or_left_open(
    collective: str, n: int, dtype: str, validation: bool, bare: bool
) -> None:
    text = table(collective, n, validation=validation, bare=bare, dtype=dtype)
    run = only_run(parse_text(text))
    if validation:
        assert run.collective == collective, run.collective_source
    else:
        # without #wrong, all_gather/alltoall (and all_reduce/sendrecv at n = 2) look alike
        assert run.collective == collective or (
            run.collective is None and collective in run.collective_candidates
        ), run.collective_source
    assert run.nranks_inferred in (n, None)
    if collective in ("all_gather", "reduce_scatter", "alltoall"):
        assert run.nranks_inferred == n  # the per-rank count column gives n exactly
    named = only_run(parse_text(text, name=f"{collective}_perf.txt"))
    assert named.collective == collective


@pytest.mark.parametrize(
    ("collective", "n", "source"),
    [
        ("all_reduce", 8, "busbw/algbw ratio (1.75 = 2(n-1)/n with n=8)"),
        # n = 2: all_reduce's factor is 1 too; each column that ruled a rival out is named
        ("all_reduce", 2, "busbw/algbw ratio (1 = 2(n-1)/n with n=2), redop sum, root -1, count = size / type size, in-place results validated"),
        ("sendrecv", 8, "busbw/algbw ratio (1 = 1), redop sum, root -1, count = size / type size, in-place results not validated"),
        ("broadcast", 16, "busbw/algbw ratio (1 = 1), redop none, root 0"),
        ("reduce", 8, "busbw/algbw ratio (1 = 1), redop sum, root 0"),
        ("reduce_scatter", 16, "busbw/algbw ratio (0.937 = (n-1)/n with n=16), redop sum"),
        ("all_gather", 2, "busbw/algbw ratio (0.5 = (n-1)/n with n=2), redop none, in-place results validated"),
        ("alltoall", 8, "busbw/algbw ratio (0.875 = (n-1)/n with n=8), redop none, in-place results not validated"),
    ],
)  # fmt: skip
def test_the_source_names_the_evidence_that_decided(collective: str, n: int, source: str) -> None:
    run = only_run(parse_text(table(collective, n)))
    assert (run.collective, run.collective_source) == (collective, source)


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_a_header_that_lost_its_hash_is_read_and_detected(collective: str) -> None:
    text = table(collective, 8, bare=True, footer=False)
    assert not any(line.lstrip().startswith("#") for line in text.splitlines())
    assert nccl_tests.accepts("paste.txt", text.encode())
    run = only_run(parse_text(text))
    assert run.collective == collective and len(run.rows) == 8
    with_hash = only_run(parse_text(table(collective, 8, footer=False)))
    assert run.rows == with_hash.rows


def test_the_registry_detects_a_bare_table_as_nccl_tests() -> None:
    from artifacts.parsers import detect_kind

    data = table("all_reduce", 8, bare=True, footer=False).encode()
    assert detect_kind("results.txt", data) == "nccl_tests"


@pytest.mark.parametrize(
    "text",
    [
        "size count type redop root time algbw busbw #wrong\n",  # a header and nothing under it
        "size count type\n1024 256 float\n",  # no bandwidth columns: not nccl-tests' header
        "size,count,type,time,algbw,busbw\n1024,256,float,1.0,2.0,3.0\n",  # a CSV
        "The size count type of each message and its time algbw busbw are listed below.\n",
        "size count type redop root time algbw busbw #wrong\nsee https://example.org\n",
    ],
)
def test_the_sniffer_wants_the_header_and_a_row_in_its_layout(text: str) -> None:
    assert not nccl_tests.accepts("notes.txt", text.encode())


def test_without_validation_the_file_name_decides_between_equal_ratios() -> None:
    # -c 0: every #wrong is N/A, so all_gather and alltoall look the same at any n.
    text = table("alltoall", 8, validation=False)
    run = only_run(parse_text(text))
    assert run.collective is None and run.collective_source == "ambiguous"
    assert run.collective_candidates == ("all_gather", "alltoall")
    result = parse_text(text)
    assert warned(result, "collective ambiguous: the table fits all_gather/alltoall")
    named = parse_text(text, name="nccl_alltoall_perf_8gpu.log")
    run = only_run(named)
    assert (run.collective, run.collective_source) == ("alltoall", "file name")
    assert run.collective_candidates == ("all_gather", "alltoall")
    assert run.nranks_inferred == 8
    assert warned(named, "collective alltoall taken from the file name; the table fits")


def test_ratio_one_at_two_ranks_prefers_the_file_name() -> None:
    # n = 2: all_reduce's 2(n-1)/n is 1, like sendrecv's; unvalidated tables keep both.
    text = table("all_reduce", 2, validation=False)
    run = only_run(parse_text(text))
    assert run.collective is None and run.collective_candidates == ("all_reduce", "sendrecv")
    run = only_run(parse_text(text, name="ar_2gpu.txt"))
    assert (run.collective, run.collective_source) == ("all_reduce", "file name")
    run = only_run(parse_text(text, name="sendrecv_pair.txt"))
    assert run.collective == "sendrecv"


def test_the_table_wins_over_a_file_name_it_contradicts() -> None:
    result = parse_text(table("reduce_scatter", 8), name="allreduce_results.txt")
    run = only_run(result)
    assert run.collective == "reduce_scatter"
    assert run.collective_source == "busbw/algbw ratio (0.875 = (n-1)/n with n=8), redop sum"
    assert warned(result, "(the file name suggests all_reduce)")
    # ...and a name the ambiguous table does not fit does not decide it either
    result = parse_text(table("alltoall", 8, validation=False), name="bcast.txt")
    assert only_run(result).collective is None
    assert warned(result, "the file name suggests broadcast, which does not decide")


def test_a_table_without_usable_bandwidths_has_its_columns_and_the_file_name() -> None:
    # A fragment of the smallest sizes: every algbw prints as 0.00, so no ratio.
    head = table("all_gather", 8).splitlines()[:3]

    def fragment(oop_wrong: str, ip_wrong: str) -> str:
        rows = [
            f"{size:>12}{size // 32:>14}     float    none      -1    20.11    0.00    0.00"
            f"{oop_wrong:>7}    19.87    0.00    0.00{ip_wrong:>7}"
            for size in (8192, 16384)
        ]
        return "\n".join([*head, *rows]) + "\n"

    # per-rank counts (x 8), redop none and a checked in-place half: all_gather
    run = only_run(parse_text(fragment("0", "0")))
    assert run.collective == "all_gather" and run.nranks_inferred == 8
    assert run.collective_source == "redop none, root -1, in-place results validated"
    # only the in-place half unchecked: what alltoall prints
    run = only_run(parse_text(fragment("0", "N/A")))
    assert run.collective == "alltoall"
    # validation off: all_gather or alltoall, the name decides
    text = fragment("N/A", "N/A")
    run = only_run(parse_text(text))
    assert run.collective is None and run.collective_candidates == ("all_gather", "alltoall")
    run = only_run(parse_text(text, name="all_gather_perf.log"))
    assert (run.collective, run.collective_source) == ("all_gather", "file name")
    # with neither rows nor a name, nothing is said
    result = parse_text("\n".join(head) + "\n")
    assert only_run(result).collective is None and only_run(result).collective_source is None
    assert not warned(result, "collective ")


def test_a_named_run_keeps_its_source_and_gets_its_rank_count() -> None:
    text = "# Collective test starting: all_reduce_perf\n" + table("all_reduce", 16)
    run = only_run(parse_text(text, name="alltoall.txt"))
    assert (run.collective, run.collective_source) == ("all_reduce", "header")
    assert run.nranks_inferred == 16  # no device list: the ratio gives n
    text = "$ mpirun -np 8 ./build/all_gather_perf -b 8 -e 1G -f 4\n" + table("all_gather", 8)
    run = only_run(parse_text(text))
    assert (run.collective, run.collective_source) == ("all_gather", "command line")
    assert run.nranks_inferred == 8


def test_a_complete_device_list_is_the_rank_count() -> None:
    devices = "\n".join(
        f"#  Rank {r:2d} Group  0 Pid  {4000 + r} on node-a device  {r} [0000:{r:02x}:00] NVIDIA H100"
        for r in range(8)
    )
    result = parse_text("# nThread 1 nGpus 8 minBytes 8 maxBytes 1G step: 4(factor)\n" + devices
                        + "\n" + table("all_reduce", 8))  # fmt: skip
    run = only_run(result)
    assert run.collective == "all_reduce" and run.nranks == 8 and run.nranks_inferred is None
    # a table that does not fit the listed rank count fits no collective
    result = parse_text(devices + "\n" + table("all_reduce", 16))
    run = only_run(result)
    assert run.nranks == 8 and run.collective is None
    assert warned(result, "fits no collective with a known busbw factor")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("all_reduce_perf.log", ("all_reduce",)),
        ("nccl-allreduce-8gpu.txt", ("all_reduce",)),
        ("ar_h100_n8.txt", ("all_reduce",)),
        ("AllReduce.log", ("all_reduce",)),
        ("reduce_scatter_2nodes.log", ("reduce_scatter",)),
        ("reducescatter.txt", ("reduce_scatter",)),
        ("alltoall_perf_mpi.out", ("alltoall",)),
        ("all_to_all.txt", ("alltoall",)),
        ("a2a_64.txt", ("alltoall",)),
        ("all_gather.txt", ("all_gather",)),
        ("allgather8.log", ("all_gather",)),
        ("sendrecv.log", ("sendrecv",)),
        ("send_recv_pair.log", ("sendrecv",)),
        ("broadcast.log", ("broadcast",)),
        ("bcast_root0.log", ("broadcast",)),
        ("reduce_perf.log", ("reduce",)),
        ("gather_perf.log", ("gather",)),
        ("logs/run3/alltoallv.log", ("alltoallv",)),
        ("C:\\Users\\me\\Desktop\\allreduce.txt", ("all_reduce",)),
        ("allreduce_vs_allgather.txt", ("all_reduce", "all_gather")),
        ("nccl_N2_G1_cnode2-001.log", ()),
        ("target_ar.log", ("all_reduce",)),
        ("tag_rs.log", ("reduce_scatter",)),
        ("garage.txt", ()),  # "ag"/"rs" count only as words of their own
        (None, ()),
    ],
)
def test_collectives_in_file_names(name: str | None, expected: tuple[str, ...]) -> None:
    assert collectives_in_name(name) == expected


def test_the_new_fields_are_in_the_json() -> None:
    document = parse_text(table("broadcast", 8)).to_json()
    run = document["runs"][0]
    assert list(run)[-5:] == [
        "collective_source", "collective_candidates", "nranks_inferred", "env", "parts"
    ]  # fmt: skip
    assert run["collective_source"] == "busbw/algbw ratio (1 = 1), redop none, root 0"
    # a table built without a preamble: the parts it holds, nothing more
    assert run["parts"] == ["column header", "rows", "footer"]
    assert run["collective_candidates"] == [] and run["nranks_inferred"] is None


# --------------------------------------------------------------------------- shared samples


def fragments(relative: str) -> list[tuple[str, list[str]]]:
    """Each run's table of a sample, cut from its column header through its footer: the
    collective each run's own header named, and the lines with nothing that names it."""
    lines = any_sample(relative).read_text().splitlines()
    out: list[tuple[str, list[str]]] = []
    named = None
    start = None
    for i, line in enumerate(lines):
        started = re.match(r"# Collective test starting: (\w+)_perf", line)
        if started:
            named = started[1]
        if re.match(r"#\s+size\s+count\s+type", line):
            start = i - 1 if "out-of-place" in lines[i - 1] else i
        if start is not None and line.startswith("# Avg bus bandwidth"):
            out.append((named or "", lines[start : i + 1]))
            start = None
    return out


@pytest.mark.parametrize(
    "relative",
    [
        T + "xxrjun_multinode_N10_G8_80ranks_h100.log",
        T + "xxrjun_multinode_N10_G1_10ranks_h100.log",
        T + "xxrjun_singlenode_G8_h100.log",
    ],
)
def test_fragments_of_real_logs_give_the_collective_their_header_named(relative: str) -> None:
    whole = nccl_tests.parse(sample(relative).open("rb"))
    cuts = fragments(relative)
    assert [c for c, _ in cuts] == [
        "all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv",
    ]  # fmt: skip
    for (named, lines), original in zip(cuts, whole.runs, strict=True):
        for bare in (False, True):
            text = "\n".join(re.sub(r"^#", "", ln) if bare else ln for ln in lines) + "\n"
            assert nccl_tests.accepts("fragment.txt", text.encode())
            run = only_run(parse_text(text, name="fragment.txt"))
            assert run.collective == named == original.collective, run.collective_source
            assert run.collective_source and run.collective_source.startswith("busbw/algbw")
            assert run.rows == original.rows
            assert run.nranks_inferred in (original.nranks, None)
            if named in ("all_reduce", "all_gather", "reduce_scatter", "alltoall"):
                assert run.nranks_inferred == original.nranks


@pytest.mark.parametrize(
    ("relative", "collective", "nranks", "pinned"),
    [
        (T + "alcf_sirius_n2_g4_all_reduce.dat", "all_reduce", 8, True),
        # all_reduce at 32 and 2160 ranks: 2(n-1)/n is within the printing error (two
        # decimals of a few GB/s) of many n, so the fragment leaves the count unknown
        (T + "alcf_polaris_n8_g4_all_reduce_nccl221.dat", "all_reduce", 32, False),
        (T + "alcf_polaris_n540_g4_all_reduce_2160ranks.dat", "all_reduce", 2160, False),
        # per-rank counts (all_gather, alltoall) give n exactly
        (
            T + "alcf_polaris_n128_g4_all_gather_512ranks_zero_size_rows.dat",
            "all_gather",
            512,
            True,
        ),
        (T + "alcf_polaris_n8_g4_alltoall_slingshot_timeouts.dat", "alltoall", 32, True),
        (T + "alcf_sophia_n2_g8_all_gather_ok.dat", "all_gather", 16, True),
    ],
)
def test_tables_of_other_clusters_cut_from_their_logs(
    relative: str, collective: str, nranks: int, pinned: bool
) -> None:
    # ../shared/more-samples: logs that never name their collective (no version or
    # "Collective test starting" line); the file name (not read) says what ran. Cut to the
    # table, each still gives it, its rows and (from busbw/algbw) its rank count.
    whole = only_run(nccl_tests.parse(any_sample(relative).open("rb")))
    assert whole.collective == collective and whole.nranks == nranks
    [(named, lines)] = fragments(relative)
    assert named == ""
    run = only_run(parse_text("\n".join(lines) + "\n", name="fragment.txt"))
    assert run.collective == collective and run.rows == whole.rows
    assert run.nranks is None and run.nranks_inferred == (nranks if pinned else None)
    assert run.parts == ("column header", "rows", "footer")


SUPERBENCH = ["allgather", "allreduce", "alltoall", "broadcast", "reduce", "reducescatter"]


@pytest.mark.parametrize("name", SUPERBENCH)
def test_old_logs_without_a_collective_line_take_it_from_table_and_name(name: str) -> None:
    # nccl-tests of 2021 printed no "Collective test starting" line, and these runs had
    # validation off: the table decides where its columns can, the file name elsewhere.
    relative = f"{T}superbench_old_format_{name}_8xA100_dgx.log"
    expected = nccl_tests.normalise_collective(name)
    run = only_run(nccl_tests.parse(sample(relative).open("rb"), name=Path(relative).name))
    assert run.collective == expected
    decided_by_table = name in ("allreduce", "reduce", "reducescatter")
    assert (run.collective_source or "").startswith("busbw/algbw") == decided_by_table
    if not decided_by_table:
        assert run.collective_source == "file name" and expected in run.collective_candidates
    # cut to its table and renamed: the same answer from the table and the new name
    (_, lines), *_ = fragments(relative)
    fragment = parse_text("\n".join(lines) + "\n", name=f"{name}_fragment.txt")
    assert only_run(fragment).collective == expected
    assert only_run(fragment).rows == run.rows


def test_an_elided_device_list_bounds_the_rank_count_from_below() -> None:
    # The README fragment lists 5 of its ranks then '...': the ratio 1.938 is all_reduce
    # over 32 ranks, which the 5 listed ranks do not contradict.
    relative = T + "coreweave_readme_2023_old_format_error_column_128gpu_fragment.txt"
    result = nccl_tests.parse(sample(relative).open("rb"))
    run = only_run(result)
    assert run.nranks == 5 and run.nranks_inferred == 32
    assert run.collective == "all_reduce"
    assert run.collective_source == "busbw/algbw ratio (1.938 = 2(n-1)/n with n=32)"
    assert warned(result, "32 ranks inferred from the table")


# ------------------------------------------------------------------- NCCL_* settings (env)

SWEEP_RUN = """$ export NCCL_IB_QPS_PER_CONNECTION=4
$ NCCL_ALGO=Tree mpirun -x NCCL_PROTO=LL -x NCCL_DEBUG=INFO ./build/all_reduce_perf -b 8 -g 8
# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  1 on  h1 device  0 [0x18] NVIDIA H100
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
h1:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring
h1:1:1 [0] NCCL INFO NCCL_NCHANNELS_PER_NET_PEER set by environment to 4.
           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0
"""


def test_env_from_exports_the_command_and_nccl_echoes() -> None:
    [run] = parse_text(SWEEP_RUN).runs
    # the echo (what NCCL read) beats the command's NCCL_ALGO=Tree; NCCL_DEBUG is not a setting
    assert run.env == {
        "NCCL_ALGO": "Ring",
        "NCCL_IB_QPS_PER_CONNECTION": "4",
        "NCCL_NCHANNELS_PER_NET_PEER": "4",
        "NCCL_PROTO": "LL",
    }


def test_env_of_real_runs_that_differ_in_one_setting() -> None:
    base = "nccl_debug/timez_nccl_tests_"
    [normal] = nccl_tests.parse(
        sample(base + "2.17_allreduce_NCCL_INFO_2xA100_roce.log").open("rb")
    ).runs
    path = sample(base + "allreduce_NVLINK_FAULT_INJECTION_degraded.log")
    [faulty] = nccl_tests.parse(path.open("rb")).runs
    # both echo NCCL_TOPO_DUMP_FILE (a dump switch, left out); only one loads a topology file
    assert normal.env == {}
    assert faulty.env == {"NCCL_TOPO_FILE": "/home/zx/nccl-tests/topo_fail.xml"}


# ------------------------------------------- any contiguous part of a real log (generated)

ROW_LINE = re.compile(r"^\s*\d+\s+\d+\s+(?:float|double|half|bfloat16|u?int\d+)\s")
CUT_SAMPLES = [
    T + "alcf_sirius_n2_g4_all_reduce.dat",
    T + "alcf_sophia_n2_g8_all_gather_ok.dat",
    T + "alcf_polaris_n8_g4_alltoall_slingshot_timeouts.dat",
    T + "xxrjun_smoke_N2_G1.log",
]


def _lines_and_rows(relative: str) -> tuple[list[str], dict[int, object]]:
    """The sample's lines, and the parsed row of each row line (by line index)."""
    path = any_sample(relative)
    lines = path.read_text().splitlines()
    rows = [row for run in nccl_tests.parse(path.open("rb")).runs for row in run.rows]
    at = [i for i, line in enumerate(lines) if ROW_LINE.match(line)]
    assert len(at) == len(rows)  # every row line is a row of the whole file
    return lines, dict(zip(at, rows, strict=True))


@pytest.mark.parametrize("relative", CUT_SAMPLES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_cut_keeps_every_row_in_the_kept_part(relative: str, data: st.DataObject) -> None:
    # Fragments are first-class: any contiguous part of the output holding a result row
    # gives those rows, as the whole file read them, and says which parts it saw.
    lines, rows = _lines_and_rows(relative)
    start = data.draw(st.integers(0, len(lines) - 1))
    end = data.draw(st.integers(start + 1, len(lines)))
    kept = [rows[i] for i in range(start, end) if i in rows]
    if not kept:
        return
    result = nccl_tests.parse(io.BytesIO(("\n".join(lines[start:end]) + "\n").encode()))
    got = [row for run in result.runs for row in run.rows]
    assert got == kept
    assert all("rows" in run.parts for run in result.runs if run.rows)
