"""The cleaning step on constructed inputs (runs without ../shared): every transformation of
a clean file cleans back to the same text, formats whose lines look like prefixes are left
alone, glued NCCL lines are cut where the next header starts, and line numbers map back."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artifacts.parsers import normalize
from artifacts.parsers.cleaning import CleanStream
from tests.transforms import TRANSFORMS

NCCL_LOG = (
    b"gpu07:4242:4242 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    b"gpu07:4242:4250 [0] NCCL INFO Channel 00/02 :    0   1\n"
    b"gpu08:4343:4343 [1] NCCL INFO cudaDriverVersion 12040\n"
    b"gpu08:4343:4351 [1] NCCL WARN NET/IB : Got completion with error 12\n"
) * 8
ETHTOOL = b"NIC statistics:\n     rx_packets: 845320277\n     rx_prio3_pause: 12\n" * 4
INTERRUPTS = b"".join(
    b"%4d:   %d   0   IR-PCI-MSI  mlx5_comp%d\n" % (90 + i, i, i) for i in range(12)
)
COUNTER_LIST = b"".join(b"counter_%d: %d\n" % (i, i * 7) for i in range(30))


def cleaned(data: bytes) -> bytes:
    view = normalize.plan(data)
    return CleanStream(io.BytesIO(data), view).read() if view.needed else data


# Transformations that only add what the cleaning removes (the prompt line stays: parsers
# read host and device from it; the appended command is a part of its own).
LOSSLESS = [name for name in TRANSFORMS if name not in ("prompt", "root prompt", "second command")]


@pytest.mark.parametrize("transform", LOSSLESS)
@pytest.mark.parametrize(
    "data", [NCCL_LOG, ETHTOOL, INTERRUPTS, COUNTER_LIST], ids=["nccl", "ethtool", "irq", "list"]
)
def test_every_transformation_cleans_back_to_the_original_lines(
    data: bytes, transform: str
) -> None:
    got = cleaned(TRANSFORMS[transform](data)).decode()
    want = data.decode()
    if transform == "libfabric noise":
        got = "\n".join(line for line in got.split("\n") if not line.startswith("libfabric:"))
    # CRLF is left to the parsers' line reader: it ends lines either way
    assert got.strip("\r\n").splitlines() == want.strip("\n").splitlines()


@pytest.mark.parametrize("data", [ETHTOOL, INTERRUPTS, COUNTER_LIST, NCCL_LOG])
def test_lines_that_only_look_like_prefixes_are_left_alone(data: bytes) -> None:
    view = normalize.plan(data)
    assert view.layers == ()
    assert not view.needed  # a clean file is parsed byte for byte


def test_layers_nest_and_are_peeled_outermost_first() -> None:
    data = b"".join(
        b"2025-06-01T10:00:%02d.5Z %d: gpu07:1:1 [0] NCCL INFO line %d\n" % (i, i % 2, i)
        for i in range(20)
    )
    view = normalize.plan(data)
    assert view.layers == ("kubectl", "slurm")
    assert cleaned(data).split(b"\n")[0] == b"gpu07:1:1 [0] NCCL INFO line 0"


@pytest.mark.parametrize(
    "outer, inner",
    [
        (b"node-12> ", b"gpu07> "),  # two hosts' tags of one style (found by the helpers)
        (b"1701234567.123 ", b"1701234568.456 "),  # two epoch stamps
        (b"[worker-2] ", b"[rank-3] "),
    ],
)
def test_a_layer_stacked_on_one_of_its_own_shape_is_peeled_twice(
    outer: bytes, inner: bytes
) -> None:
    body = [b"    13,304,072,756      cycles   #  1.921 GHz  (56.74%%) %d" % i for i in range(20)]
    data = b"".join(outer + inner + line + b"\n" for line in body)
    assert len(normalize.plan(data).layers) == 2
    assert cleaned(data).split(b"\n")[:20] == body


def test_a_glued_nccl_line_is_cut_before_the_known_host() -> None:
    data = (
        b"gpu07:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read"
        b"gpu08:2:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read\n"
        b"gpu08:2:2 [1] NCCL INFO ready\n"
        b"    8388608  2097152  float  sum  -1gpu07:1:1 [0] NCCL INFO AllReduce: opCount 0\n"
    )
    view = normalize.View(hosts=("gpu07", "gpu08"))
    lines = CleanStream(io.BytesIO(data), view).read().decode().splitlines()
    assert lines[0].endswith("via P2P/CUMEM/read")
    assert lines[1].startswith("gpu08:2:2 [1] NCCL INFO Channel")
    assert lines[3] == "    8388608  2097152  float  sum  -1"
    assert lines[4].startswith("gpu07:1:1 [0] NCCL INFO AllReduce")


def test_a_glued_host_never_seen_alone_is_cut_like_its_siblings() -> None:
    view = normalize.View(hosts=("node0001",))
    line = "node0001:1:1 [0] NCCL INFO via P2P/CUMEM/readnode0002:2:2 [1] NCCL INFO x"
    assert list(normalize.clean_line(line, view))[1].startswith("node0002:2:2")


def test_another_librarys_text_never_becomes_a_host() -> None:
    view = normalize.View(hosts=("gpu07",))
    line = "libfabric:99:1717::cxi:core:warnx2:3:4 [0] NCCL INFO text"
    assert list(normalize.clean_line(line, view)) == [line]  # no phantom "warnx2"


def test_nothing_is_split_outside_nccl_logs() -> None:
    row = "    8388608  2097152  float  sum  -1gpu07:1:1 [0] NCCL INFO AllReduce"
    assert list(normalize.clean_line(row, normalize.View())) == [row]


def test_line_map_points_back_at_the_uploaded_lines() -> None:
    data = b"```\n" + b"".join(b"[1,0]<stdout>:line %d\n" % i for i in range(5)) + b"```\n"
    view = normalize.plan(data)
    stream = CleanStream(io.BytesIO(data), view)
    assert stream.read().decode().splitlines() == [f"line {i}" for i in range(5)]
    assert [stream.line_map.original(n) for n in range(1, 6)] == [2, 3, 4, 5, 6]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_windows_encodings_are_read(encoding: str) -> None:
    data = ETHTOOL.decode().encode(encoding)
    view = normalize.plan(data)
    assert view.needed
    assert CleanStream(io.BytesIO(data), view).read() == ETHTOOL


def test_transcript_parts_keep_their_command_lines() -> None:
    text = "notes before\n$ hostname\ngpu07\nroot@gpu07:~# ethtool -S eth0\nNIC statistics:\n"
    parts = normalize.transcript_parts(text)
    assert [(p.title, p.start, p.end) for p in parts] == [
        ("", 1, 1),
        ("hostname", 2, 3),
        ("ethtool -S eth0", 4, 5),
    ]


def test_a_document_under_its_prompt_loses_only_the_prompt() -> None:
    data = b'$ cat topo.xml\n<system version="1">\n</system>\n'
    view = normalize.plan(data)
    assert view.document
    assert CleanStream(io.BytesIO(data), view).read() == b'<system version="1">\n</system>\n'


# --- layers and prompts found by their shape ------------------------------------------------

SHAPED_PREFIXES = {
    "pipe tag": lambda i: b"%-12s| " % (b"gpu%02d" % (i // 10 % 3)),
    "bracket tag": lambda i: b"[worker-%d] " % (i // 10 % 2),
    "address tag": lambda i: b"10.0.0.%d: " % (i // 10 % 2 + 5),
    "angle tag": lambda i: b"rank%d> " % (i // 10 % 2),
    "epoch stamp": lambda i: b"17172360%02d.%06d " % (i, i * 7919),
    "uptime stamp": lambda i: b"[%6d.%06d] " % (100 + i, i),
    "clock stamp with a pipe": lambda i: b"10:00:%02d.%03d | " % (i, i),
    "bracketed date": lambda i: b"[2025-06-01 10:00:%02d,%03d] " % (i, i),
}


@pytest.mark.parametrize("shape", SHAPED_PREFIXES)
@pytest.mark.parametrize("data", [NCCL_LOG, ETHTOOL * 2], ids=["nccl", "ethtool"])
def test_a_prefix_no_list_names_is_found_by_its_shape(data: bytes, shape: str) -> None:
    prefix = SHAPED_PREFIXES[shape]
    lines = data.split(b"\n")[:-1]
    view = normalize.plan(b"".join(prefix(i) + line + b"\n" for i, line in enumerate(lines)))
    assert view.layers  # a shaped layer, or the named fast path of the same shape
    got = cleaned(b"".join(prefix(i) + line + b"\n" for i, line in enumerate(lines)))
    assert got == data


# Content whose line starts look like a prefix: a name, a number or a bracket that the lines
# do not repeat the way a launcher's tag repeats.
CONTENT = {
    "gpu list": b"".join(b"GPU %d: NVIDIA H100 80GB HBM3 (UUID: %d)\n" % (i, i) for i in range(8)),
    "show_gids": b"".join(
        b"mlx5_%d\t1\t%d\tfe80::%x\tv2\tib0\n" % (i // 4, i, i) for i in range(16)
    ),
    "ibstat blocks": b"".join(
        b"CA 'mlx5_%d'\n\tCA type: MT4129\n\tState: Active\n\tRate: 400\n\tBase lid: %d\n" % (i, i)
        for i in range(8)
    ),
    "bpftrace events": b"".join(b"[%03d] latency=%d ns\n" % (i, 1000 + i) for i in range(30)),
    "nvrm lines": b"".join(b"NVRM: GPU at PCI:0000:%02x:00: GPU-%d\n" % (i, i) for i in range(12)),
    "counters with digits": COUNTER_LIST,
}


@pytest.mark.parametrize("name", CONTENT)
def test_content_that_looks_like_a_prefix_is_left_alone(name: str) -> None:
    view = normalize.plan(CONTENT[name])
    assert view.layers == ()
    assert cleaned(CONTENT[name]) == CONTENT[name]


@pytest.mark.parametrize(
    ("line", "command", "rewritten"),
    [
        ("user@gpu07:~/runs$ ibstat", "ibstat", "user@gpu07:~/runs$ ibstat"),
        ("[user@gpu07 runs]$ ibstat", "ibstat", "[user@gpu07 runs]$ ibstat"),
        ("user@gpu07 runs % ibstat -v", "ibstat -v", "user@gpu07:~$ ibstat -v"),
        ("gpu07% ethtool -S eth0", "ethtool -S eth0", "$ ethtool -S eth0"),
        ("user@gpu07 ~/runs> cat x.txt", "cat x.txt", "user@gpu07:~$ cat x.txt"),
        ("PS C:\\Users\\me> type x.txt", "type x.txt", "$ type x.txt"),
        ("# cat /proc/interrupts", "cat /proc/interrupts", "$ cat /proc/interrupts"),
        ("# ./biolatency", "./biolatency", "$ ./biolatency"),
        ("\u276f mlnx_qos -i eth2", "mlnx_qos -i eth2", "$ mlnx_qos -i eth2"),
        ("(venv) user@gpu07 ~> nvidia-smi", "nvidia-smi", "user@gpu07:~$ nvidia-smi"),
    ],
)
def test_prompts_of_other_shells_are_found_and_written_the_bash_way(
    line: str, command: str, rewritten: str
) -> None:
    found = normalize.prompt_command(line)
    assert found is not None and found[0] == command
    view = normalize.plan(f"{line}\nrx_packets: 1\n".encode())
    assert view.needed or rewritten == line
    assert list(normalize.clean_line(line, view)) == [rewritten]


@pytest.mark.parametrize(
    "line",
    [
        "# nThread 1 nGpus 8",
        "#  Rank  0 Group  0",
        "# TYPE dcgm gauge",
        "# this is a comment",
        "> quoted mail text",
        "% of peak",
        "# Avg bus bandwidth    : 0.493556",
    ],
)
def test_comments_headings_and_quotes_are_not_prompts(line: str) -> None:
    assert normalize.prompt_command(line) is None


@given(
    hosts=st.lists(st.from_regex(r"[a-z]{2,8}[0-9]{1,3}", fullmatch=True), min_size=1, max_size=3),
    separator=st.sampled_from([" | ", ": ", "> "]),
    run=st.integers(4, 12),
)
@settings(max_examples=40, deadline=None, database=None, derandomize=True)
def test_any_repeating_tag_cleans_back_to_the_nccl_log(
    hosts: list[str], separator: str, run: int
) -> None:
    lines = NCCL_LOG.split(b"\n")[:-1]
    tagged = b"".join(
        hosts[i // run % len(hosts)].encode() + separator.encode() + line + b"\n"
        for i, line in enumerate(lines)
    )
    assert cleaned(tagged) == NCCL_LOG
