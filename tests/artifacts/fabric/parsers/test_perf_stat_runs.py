"""perf stat: every block appended run after run, fragments without the header, -r repeats,
--per-thread, interval text mode, metric-only lines (issue 22). Values of the samples were
read from the files; the constructed blocks follow perf's documented layout."""
# ruff: noqa: E501

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import perf_stat
from artifacts.parsers.base import ParseError
from tests.samples import more_sample, sample

BEFORE_AFTER = "counters/perf_stat_uncore_imc_DRAM_BW_before_after.txt"
PID = "counters/perf_stat_pid_multiplexed.txt"
PER_SOCKET = "counters/perf_stat_system_wide_per_socket_2S_224cpu.txt"


def parse_text(text: str) -> perf_stat.PerfStatResult:
    return perf_stat.parse(io.BytesIO(text.encode()))


def test_before_and_after_blocks_are_two_runs_with_their_command() -> None:
    with more_sample(BEFORE_AFTER).open("rb") as f:
        result = perf_stat.parse(f)
    before, after = result.runs
    command = "/tmp/perf/perf stat -M DRAM_BW_Use -a -- sleep 1"
    assert (before.command, before.target, before.line, before.events) == (
        command,
        "system wide",
        2,
        2,
    )
    assert (after.command, after.target, after.line, after.events) == (
        command,
        "system wide",
        12,
        3,
    )
    assert (before.elapsed_s, after.elapsed_s) == (1.002614251, 1.003019728)
    by_run = {(e.run, e.event): e for e in result.events}
    assert (
        by_run[(0, "uncore_imc/cas_count_read/")].value,
        by_run[(0, "duration_time")].value,
    ) == (
        41.14,
        1002614251,
    )
    read_after = by_run[(1, "uncore_imc/cas_count_read/")]
    assert (read_after.value, read_after.unit, read_after.metric) == (
        157.47,
        "MiB",
        "0.00 DRAM_BW_Use",
    )
    assert by_run[(1, "uncore_imc/cas_count_write/")].value == 126.97
    # each run is its own snapshot: the two readings of one counter never merge
    snapshots = {(s.snapshot, s.counter): s.value for s in result.samples}
    assert snapshots[(0, "uncore_imc/cas_count_read/")] == 41.14
    assert snapshots[(1, "uncore_imc/cas_count_read/")] == 157.47
    assert result.elapsed_s == 1.003019728 and result.summary()["runs"] == 2
    assert result.parts == ("command", "header", "counters", "footer")


def test_process_target_keeps_its_quotes_and_gives_the_pid() -> None:
    with more_sample(PID).open("rb") as f:
        result = perf_stat.parse(f)
    [run] = result.runs
    assert (run.target, run.pid, run.started_at) == (
        "process id '1884396'",
        1884396,
        "2026-09-15T19:52:49",
    )
    assert run.elapsed_s == 400.00409338 and run.events == 9
    cycles = next(e for e in result.events if e.event == "cycles")
    assert (cycles.value, cycles.metric, cycles.multiplexed_pct) == (
        13304072756,
        "1.921 GHz",
        56.74,
    )
    clock = result.events[0]
    assert (clock.event, clock.value, clock.unit, clock.multiplexed_pct) == (
        "task-clock",
        6924.46,
        "msec",
        None,
    )
    assert any("multiplexed" in w for w in result.warnings)


def test_rows_without_the_header_are_a_fragment_that_still_gives_counters() -> None:
    # the middle of the per-socket sample, as pasted into a chat
    lines = sample(PER_SOCKET).read_text().splitlines()
    fragment = "\n".join(line for line in lines if line.startswith("S1 "))
    result = parse_text(fragment + "\n")
    assert len(result.events) == 12 and {e.scope for e in result.events} == {"S1"}
    context = next(e for e in result.events if e.event == "context-switches")
    assert context.value == 50412443  # as in the file
    assert result.parts == ("counters",) and result.runs[0].target is None
    assert any("fragment" in w for w in result.warnings)
    assert perf_stat.accepts("x.txt", fragment.encode())


def test_plain_numbers_and_words_are_no_fragment() -> None:
    text = "3 apples\n12 pears\n7 oranges\n"
    assert not perf_stat.accepts("notes.txt", text.encode())
    with pytest.raises(ParseError):
        parse_text(text)


def test_repeats_per_thread_and_metric_only_lines() -> None:
    result = parse_text(
        "$ perf stat -r 5 --per-thread -p 3407\n"
        " Performance counter stats for process id '3407' (5 runs):\n"
        "\n"
        "             perf-3407              1.92 msec task-clock                #    0.007 CPUs utilized            ( +-  1.50% )\n"
        "             perf-3407         3,001,234      cycles                    #    1.563 GHz                      ( +-  0.80% )\n"
        "                                                                        #    1.20  insn per cycle\n"
        "\n"
        "           0.27412 +- 0.00231 seconds time elapsed  ( +-  0.84% )\n"
    )
    [run] = result.runs
    assert (run.pid, run.elapsed_s, run.elapsed_variance_pct) == (3407, 0.27412, 0.84)
    assert (run.target, run.repeats) == ("process id '3407'", 5)
    clock, cycles = result.events
    assert (clock.scope, clock.value, clock.variance_pct) == ("perf-3407", 1.92, 1.5)
    assert (cycles.value, cycles.variance_pct, cycles.more_metrics) == (
        3001234,
        0.8,
        ("1.20 insn per cycle",),
    )


def test_interval_text_mode_gives_one_snapshot_per_interval() -> None:
    result = parse_text(
        "#           time             counts unit events\n"
        "     1.000206000          3,007,611      cycles\n"
        "     1.000206000          2,011,222      instructions              #    0.67  insn per cycle\n"
        "     2.000512000          3,100,000      cycles\n"
    )
    assert [(e.interval_s, e.event, e.value) for e in result.events] == [
        (1.000206, "cycles", 3007611),
        (1.000206, "instructions", 2011222),
        (2.000512, "cycles", 3100000),
    ]
    assert sorted({s.snapshot for s in result.samples}) == [0, 1]
    assert result.runs[0].intervals == 2 and result.parts == ("interval_header", "interval")


BLOCK = (
    " Performance counter stats for '{cmd}':\n\n"
    "          {clock:,.2f} msec task-clock                       #    0.998 CPUs utilized\n"
    "     {cycles:,}      cycles                           #    3.000 GHz\n\n"
    "       {secs:.9f} seconds time elapsed\n\n"
    "       0.900000000 seconds user\n"
    "       0.100000000 seconds sys\n\n"
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(1, 10**12),
            st.floats(0.01, 1e6),
            st.sampled_from(["sleep 1", "./a.out", "ls"]),
        ),
        min_size=1,
        max_size=6,
    ),
    st.booleans(),
)
def test_every_appended_run_is_read_with_its_own_values(
    runs: list[tuple[int, float, str]], prompts: bool
) -> None:
    text = ""
    for cycles, clock, cmd in runs:
        if prompts:
            text += f"$ perf stat {cmd}\n"
        text += BLOCK.format(cmd=cmd, clock=clock, cycles=cycles, secs=clock / 1000)
    result = parse_text(text)
    assert len(result.runs) == len(runs)
    for run, (cycles, clock, cmd) in zip(result.runs, runs, strict=True):
        assert run.target == cmd and run.events == 2 and (run.user_s, run.sys_s) == (0.9, 0.1)
        assert run.command == (f"perf stat {cmd}" if prompts else None)
        assert run.elapsed_s == float(f"{clock / 1000:.9f}")  # as printed
        values = {e.event: e.value for e in result.events if e.run == run.index}
        assert values["cycles"] == cycles
        assert values["task-clock"] == pytest.approx(round(clock, 2))
