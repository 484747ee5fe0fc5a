"""The nccl-tests parser's bulk paths (issue 27) give what the row-by-row reading gives.

``rows.RowPlan`` reads a block of result rows with one pattern per layout; past the run
limit, device lists, rows and run preambles are counted without being read one by one.
Each is checked against ``table.parse_row`` or the line-by-line reading on rows changed in
the ways that must send a line the slow way (exponents, nan, inf, N/A, long numbers,
missing or extra columns, other whitespace, non-ASCII digits).
"""

from __future__ import annotations

import gc
import io
import json
import random

import pytest

from artifacts.parsers.base import ParseError
from artifacts.runs.parsers import nccl_tests
from artifacts.runs.parsers.nccl_tests import blocks, hashlines, rows, run, text
from artifacts.runs.parsers.nccl_tests.table import Layout, parse_row
from artifacts.runs.parsers.nccl_tests.values import BadValue
from tests.samples import any_sample

MODERN_HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
    "     time   algbw   busbw  #wrong"
)
HEADERS = (
    MODERN_HEADER,
    "#  size  count  type  redop  time  algbw  busbw  error  time  algbw  busbw  error",
    "#  size  count  type  root  time  algbw  busbw  error  time  algbw  busbw  error",
    "#  size  count  type  time  algbw  busbw  error  time  algbw  busbw  error",
    "#  size  count  type  root  redop  time  algbw  busbw  #wrong",
    "#  size  count  type  redop  root  cputime  algbw  busbw  #wrong  i_1  i_2",
    "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw"
    "  #wrong  timestamp",
    "#  size  count  type  redop  redop  time  algbw  busbw  #wrong",
)
ROW = "    33554432       4194304    double     sum      -1   798.52   42.02   82.99       0"
# Token replacements that must read as parse_row reads them (or not at all).
TOKENS = (
    "N/A", "nan", "inf", "-inf", "NaN", "1e+06", "1E3", "+5", "-", "-0", "0.", ".5", "1.5.2",
    "7" * 31, "7" * 30, "1." + "9" * 31, "٣", "x", "sum", "none", "-1", "0", "12", "1e999",
    "2024-05-01", "10:00:00", "Inf", "infx", "nanny", "_", "N/Ax",
)  # fmt: skip
GAPS = (" ", "  ", "\t", " \t ", "\x0b", "\xa0", "\u3000")


def _line(rng: random.Random, layout: Layout) -> str:
    """A row of ``layout`` (sometimes a column more or less), some tokens replaced."""
    lead = {"redop": rng.choice(["sum", "none", "prod"]), "root": rng.choice(["-1", "0", "3"])}
    words = ["33554432", "4194304", rng.choice(["double", "float", "bf16_x"])]
    words += [lead[name] for name in layout.lead]
    numbers = ("798.52", "42.02", "82.99", "0", "N/A", "1", "0.000", "12586.1", "-1")
    words += [rng.choice(numbers) for _ in range(sum(layout.widths) + rng.choice([0, 0, -1, 1]))]
    for _ in range(rng.choice([0, 0, 1, 2])):
        words[rng.randrange(len(words))] = rng.choice(TOKENS)
    line = "".join(word + rng.choice(GAPS[:3] if rng.random() < 0.8 else GAPS) for word in words)
    return rng.choice(("", " ", "  ", "\t")) + line.rstrip(" \t") + rng.choice(("", " ", "\t"))


def _parse_row(line: str, layout: Layout) -> object:
    try:
        return parse_row(line.split(), layout)
    except BadValue:
        return None


@pytest.mark.parametrize("header", HEADERS)
def test_a_row_plan_reads_a_row_as_parse_row_does(header: str) -> None:
    layout = Layout.from_header(header)
    assert layout is not None
    plan = rows.RowPlan.for_layout(layout)
    if layout.timestamp or len(set(layout.lead)) != len(layout.lead):
        assert plan is None  # parse_row's questions are needed
        return
    assert plan is not None
    rng = random.Random(header)
    read = 0
    for _ in range(3000):
        line = _line(rng, layout)
        got = plan.read(line + "\n")
        expected = _parse_row(line, layout)
        if got is not None:
            read += 1
            assert got == [expected], line
            assert repr(got) == repr([expected]), line  # -0.0 and 0.0, 1 and 1.0 too
    assert read > 100  # the plan read many of them


def test_a_block_of_rows_is_read_whole_or_not_at_all() -> None:
    layout = Layout.from_header(MODERN_HEADER)
    assert layout is not None
    plan = rows.RowPlan.for_layout(layout)
    assert plan is not None
    good = ROW + "   798.52   42.02   82.99       0\n"
    assert plan.read(good * 3) is not None
    assert plan.read(good + "x " + good + good) is None  # a match inside a line is not one
    assert plan.read(good + good.replace("0\n", "1e3\n")) is None


SOURCES = (
    "nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log",
    "nccl_tests/superbench_old_format_alltoall_8xA100_dgx.log",
    "nccl_tests/coreweave_readme_2023_old_format_error_column_128gpu_fragment.txt",
    "nccl_tests/ssbandjl_allreduce_mpirun_without_MPI1_interleaved_debug.log",
    "nccl_tests/xxrjun_pair_N2_G4_FAIL_network_error.log",
)


def _changed_rows(rng: random.Random, data: bytes) -> bytes:
    """``data`` with some of its rows' tokens changed, columns added or dropped."""
    out = []
    for raw in data.decode("utf-8", "replace").splitlines(keepends=True):
        words = raw.split()
        if words and words[0].isdigit() and rng.random() < 0.15:
            choice = rng.random()
            if choice < 0.5:
                words[rng.randrange(len(words))] = rng.choice(TOKENS)
            elif choice < 0.7:
                del words[rng.randrange(len(words))]
            elif choice < 0.85:
                words.insert(rng.randrange(len(words)), rng.choice(TOKENS))
            raw = rng.choice(GAPS).join(words) + "\n"
        out.append(raw)
    return "".join(out).encode("utf-8")


def _parsed(data: bytes) -> str:
    try:
        result = nccl_tests.parse(io.BytesIO(data))
    except ParseError as exc:
        return f"ParseError: {exc.message}"
    return json.dumps(result.to_json(), sort_keys=True, default=str)


def _line_by_line(data: bytes, monkeypatch: pytest.MonkeyPatch) -> str:
    """The reference: line by line, and every line past the run limit read as if a run
    could still be added (``Collector.full`` is what lets the bulk counting start)."""
    with monkeypatch.context() as patch:
        patch.setattr(nccl_tests, "iter_pieces", blocks.iter_lines)
        patch.setattr(run.Collector, "full", lambda self: False)
        return _parsed(data)


def _random_file(rng: random.Random) -> bytes:
    parts = []
    for _ in range(rng.randrange(2, 10)):
        data = any_sample(rng.choice(SOURCES)).read_bytes()
        lines = data.splitlines(keepends=True)
        start = rng.randrange(len(lines)) if rng.random() < 0.4 else 0
        piece = b"".join(lines[start:])
        parts.append(_changed_rows(rng, piece) if rng.random() < 0.6 else piece)
    return b"".join(parts)


@pytest.mark.parametrize("seed", range(40))
def test_rows_read_in_bulk_as_line_by_line(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    data = _random_file(rng)
    # The run and row limits reached on the way (the bulk counting past them) or not.
    monkeypatch.setattr(run, "MAX_RUNS", rng.choice([2, 7, 10_000]))
    monkeypatch.setattr(run, "MAX_ROWS", rng.choice([5, 60, 1_000_000]))
    monkeypatch.setattr(hashlines.HashLines, "MAX_LINES", rng.choice([1, 4096]))
    monkeypatch.setattr(hashlines.HashLines, "MAX_RUNS", rng.choice([1, 256]))
    monkeypatch.setattr(hashlines.HashLines, "MAX_RUN_BYTES", rng.choice([200, 1 << 20]))
    monkeypatch.setattr(rows.RowPlans, "LIMIT", rng.choice([1, 64]))
    expected = _line_by_line(data, monkeypatch)
    monkeypatch.setattr(blocks, "BLOCK_BYTES", rng.choice([300, 4096, 1 << 20]))
    assert _parsed(data) == expected


def test_bulk_paths_are_taken_on_a_long_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 80-rank log tiled past the run and row limits: every row of the kept runs comes
    from a RowPlan, the dropped runs are counted in bulk, and the result is the same."""
    data = any_sample(SOURCES[0]).read_bytes() * 4
    monkeypatch.setattr(run, "MAX_RUNS", 7)
    monkeypatch.setattr(run, "MAX_ROWS", 65)
    expected = _line_by_line(data, monkeypatch)
    calls = {"parse_row": 0, "place_rank": 0}
    real_parse_row, real_place = text.parse_row, text.TextReader._place_rank

    def counting_parse_row(*args: object) -> object:
        calls["parse_row"] += 1
        return real_parse_row(*args)  # type: ignore[arg-type]

    def counting_place(self: text.TextReader, *args: object) -> None:
        calls["place_rank"] += 1
        real_place(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(text, "parse_row", counting_parse_row)
    monkeypatch.setattr(text.TextReader, "_place_rank", counting_place)
    assert _parsed(data) == expected
    assert calls == {"parse_row": 0, "place_rank": 0}
    result = nccl_tests.parse(io.BytesIO(data))
    assert sum(len(r.rows) for r in result.runs) == 65
    assert any("run limit" in w for w in result.warnings)


def test_the_cycle_collector_is_left_as_it_was() -> None:
    """The parse pauses Python's cycle collector; it is on again after, even after a failed
    parse, and stays off where the caller had turned it off."""
    data = any_sample(SOURCES[0]).read_bytes()
    assert gc.isenabled()
    nccl_tests.parse(io.BytesIO(data))
    assert gc.isenabled()
    with pytest.raises(ParseError):
        nccl_tests.parse(io.BytesIO(b"nothing to see\n"))
    assert gc.isenabled()
    gc.disable()
    try:
        nccl_tests.parse(io.BytesIO(data))
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("seed", range(5))
def test_holds_answers_as_in_does(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(500):
        block = bytes(rng.choice(b"NCL (), x\n") for _ in range(rng.randrange(0, 60)))
        for needle, probe in ((b"NCCL ", 3), (b"(), ", 2), (b"NCCL ", 0)):
            for budget in (0, 1, 3, 1000):
                assert blocks.holds(block, needle, probe, budget) == (needle in block), block


def test_a_shared_device_list_is_not_changed_by_a_run_that_adds_to_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Runs listing the same devices share one set of rank numbers (bulk.py); a rank line
    after the list, in one run, must not reach the others."""
    lines = any_sample(SOURCES[0]).read_bytes().splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if line.startswith(b"# Reducing"))
    run_text = b"".join(lines[:end])
    rest = b"".join(lines[end : next(i for i, x in enumerate(lines) if b"concluded" in x) + 1])
    extra = b"#\n#  Rank 99 Group  0 Pid 5 on cnode9 device  0 [0000:1b:00] NVIDIA H100\n"
    data = run_text + extra + rest + run_text + rest + run_text + extra + rest + run_text + rest
    expected = _line_by_line(data, monkeypatch)
    assert _parsed(data) == expected
    result = nccl_tests.parse(io.BytesIO(data))
    assert [run.nranks for run in result.runs] == [100, 80, 100, 80]
    assert result.runs[1].ranks is result.runs[3].ranks  # one tuple for the list's runs
    assert len(result.runs[2].ranks) == 81
