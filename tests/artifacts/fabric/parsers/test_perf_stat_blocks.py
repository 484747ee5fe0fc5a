"""perf_stat read in blocks with templates (issue 27) gives what the line-by-line reading
gives, on random files made of perf stat's shapes, their copies with other digits, and noise."""

# ruff: noqa: E501, W291

from __future__ import annotations

import io
import random

import pytest

from artifacts.fabric.parsers import perf_stat
from artifacts.parsers.base import ParseError
from artifacts.parsers.textutil import LineReader
from tests.artifacts.fabric.parsers.blocks import assert_reads_as, jittered_copies
from tests.samples import sample

PER_SOCKET = sample("counters/perf_stat_system_wide_per_socket_2S_224cpu.txt").read_bytes()

PIECES = [
    PER_SOCKET,
    b"note: " + PER_SOCKET,  # a copy of the whole run that begins inside a line
    # a process, multiplexed events
    b"""# started on Tue Sep 15 19:52:49 2026


 Performance counter stats for process id '1884396':

          6,924.46 msec task-clock                       #    0.017 CPUs utilized             
    13,304,072,756      cycles                           #    1.921 GHz                         (56.74%)
       <not counted>      cache-misses                                                        (0.00%)
   <not supported>      stalled-cycles-frontend                                           
                 0      major-faults                     #    0.000 /sec                      

     400.004093380 seconds time elapsed

       0.900000000 seconds user
       0.100000000 seconds sys

""",
    # prompts and PMU events (the before/after sample)
    b"""Before this change:
$ /tmp/perf/perf stat -M DRAM_BW_Use -a -- sleep 1

 Performance counter stats for 'system wide':

            157.47 MiB  uncore_imc/cas_count_read/ #     0.00 DRAM_BW_Use
     1,003,019,728 ns   duration_time

       1.003019728 seconds time elapsed

""",
    # -x, interval mode, with <not counted>
    b"""$ perf stat -x, -I 1000 -e cycles,instructions,cache-misses -a sleep 2
1.001035513,1234567890,,cycles,8008123456,100.00,,
1.001035513,2469135780,,instructions,8008123456,100.00,2.00,insn per cycle
1.001035513,<not counted>,,cache-misses,0,0.00,,
2.002170944,1300000000,,cycles,8008543210,100.00,,
""",
    # -x, per socket, no interval
    b"S0,112,44802562.79,msec,task-clock,44802562790,100.00,112.001,CPUs utilized\nS1,112,6663897418596,,cycles,44802438010,100.00,0.149,GHz\n",
    # interval text mode, per socket
    b"""#           time socket cpus             counts unit events
     1.001043552 S0        112         10,014.56 msec cpu-clock                 #   10.005 CPUs utilized
     1.001043552 S0        112                67      context-switches          #    6.690 /sec
     1.001043552 S1        112     3,007,611,001      cycles
     2.002147853 S0        112         10,015.21 msec cpu-clock                 #   10.006 CPUs utilized
""",
    # interval text mode, whole system
    b"""#           time             counts unit events
     1.000206000          3,007,611      cycles
     1.000206000          2,011,222      instructions              #    0.67  insn per cycle
""",
    # -r repeats, --per-thread, metric-only lines under a row
    b"""$ perf stat -r 5 --per-thread -p 3407
 Performance counter stats for process id '3407' (5 runs):

             perf-3407              1.92 msec task-clock                #    0.007 CPUs utilized            ( +-  1.50% )
             perf-3407         3,001,234      cycles                    #    1.563 GHz                      ( +-  0.80% )
                                                                        #    1.20  insn per cycle
                                                                        #    0.35  stalled cycles per insn

           0.27412 +- 0.00231 seconds time elapsed  ( +-  0.84% )
""",
    # -A per CPU, a root prompt
    b"""root@gpu-7:~# perf stat -A -e cycles -a sleep 1

 Performance counter stats for 'system wide':

CPU0               1,234,567      cycles
CPU1                 987,654      cycles
CPU12              5,555,555      cycles

       1.001234567 seconds time elapsed
""",
    # rows without a header (a fragment), some perf's own, some not
    b"     1,234,567      cycles\n        42      L1-dcache-loads\n     7      apples\n",
    b"     1,234,567      cycles                    #    1.5 GHz\n",
    b"# started on Wed Sep 16 08:00:01 2026\n",
    b" Performance counter stats for 'sleep 1':\n",
    b"       2.000000001 seconds time elapsed\n",
    b"user@host:~$ ls -l\n",
    b"0, 8192 MiB, 2100 MHz, 7001 MHz, 200.00 W, 3, 16, 2, 16\n",
    # -x, values whose digits decide whether they are numbers (a float's range)
    b"2.000000001,1e300,,cycles,100,100.00,,\n3.000000001,1"
    + b"0" * 308
    + b".5,,cycles,100,100.00,,\n",
    b"3 apples\n12 pears\n",
    b"\n",
    b"progress 10%\r20%\r100%\n",  # lone \r: its block comes line by line
    b"caf\xe9 12 cycles\n",  # not UTF-8
    b"",
]
# The pieces a long collector log repeats: runs of the table, intervals, CSV.
RUNS = [PIECES[i] for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 19)]


def line_by_line(data: bytes) -> object:
    reader = LineReader(io.BytesIO(data))
    state = perf_stat._State()
    for line in reader:
        state.feed(line, reader.line_no)
    if not state.events:
        raise ParseError("none")
    return state.result(reader.repair_warnings())


def random_file(rng: random.Random, pool: list[bytes]) -> bytes:
    """Copies of a few pieces, some with other digits, some with a random piece before."""
    data = jittered_copies(rng, pool, PIECES)
    if rng.random() < 0.2:
        data = data.rstrip(b"\n")  # the last line without its newline
    return data


@pytest.mark.parametrize("pool", [PIECES, RUNS], ids=["all", "runs"])
@pytest.mark.parametrize("seed", range(40))
def test_blocks_read_as_lines(
    seed: int, pool: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(perf_stat, "MAX_EVENTS", rng.choice([5, 60, 100_000]))
    monkeypatch.setattr(perf_stat, "BLOCK_BYTES", rng.choice([100, 2000, 1 << 20]))
    data = random_file(rng, pool)
    assert_reads_as(perf_stat.parse, data, lambda: line_by_line(data))


def test_a_long_log_is_read_in_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiled sample: after its first copies, lines are not read one by one."""
    read_one_by_one = 0
    effect = perf_stat.line_effect

    def counted(line: str) -> object:
        nonlocal read_one_by_one
        read_one_by_one += 1
        return effect(line)

    monkeypatch.setattr(perf_stat, "line_effect", counted)
    data = PER_SOCKET * 3000  # 93,000 lines, 72,000 rows
    result = perf_stat.parse(io.BytesIO(data))
    assert read_one_by_one < 1000
    assert result == line_by_line(data)
    assert len(result.runs) == 3000 and len(result.events) == 72_000


def test_rows_past_the_cap_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(perf_stat, "MAX_EVENTS", 100)
    data = PER_SOCKET * 50
    result = perf_stat.parse(io.BytesIO(data))
    assert result == line_by_line(data)
    assert len(result.events) == 100 and sum(run.events for run in result.runs) == 1200
    assert "1100 event row(s) beyond 100 were not kept (the runs count them all)" in result.warnings


@pytest.mark.parametrize(("block", "cap"), [(1 << 20, 100_000), (3000, 50), (200, 5)])
def test_intervals_whose_values_change_read_the_same(
    block: int, cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A -I log: every interval's numbers differ, some in width (a line read afresh)."""
    monkeypatch.setattr(perf_stat, "MAX_EVENTS", cap)
    monkeypatch.setattr(perf_stat, "BLOCK_BYTES", block)
    rng = random.Random(3)
    lines = []
    for tick in range(1, 400):
        stamp = b"%d.%09d" % (tick, rng.randrange(10**9))
        clock = f"{rng.randrange(10**7) / 100:,.2f}".encode()
        cycles = f"{rng.randrange(10**12):,}".encode()
        lines.append(
            b"     %s S0        112 %17s msec cpu-clock                 #   10.005 CPUs utilized"
            % (stamp, clock)
        )
        lines.append(b"     %s S0        112 %17s      cycles" % (stamp, cycles))
    data = (
        b"#           time socket cpus             counts unit events\n" + b"\n".join(lines) + b"\n"
    )
    result = perf_stat.parse(io.BytesIO(data))
    assert result == line_by_line(data)
    assert result.runs[0].intervals == 399 and len(result.events) == min(cap, 798)
