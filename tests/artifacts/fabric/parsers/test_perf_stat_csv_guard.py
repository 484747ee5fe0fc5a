"""A CSV line whose fifth cell is not perf's run share (nvidia-smi's ``--format=csv`` rows)
is not a perf row: ``--kind perf_stat`` on such a file raised ValueError instead of a result
or ParseError."""

from __future__ import annotations

import io

import pytest

from artifacts.fabric.parsers import perf_stat
from artifacts.parsers.base import ParseError

NVSMI = b"0, 8192 MiB, 2100 MHz, 7001 MHz, 200.00 W, 3, 16, 2, 16\n" * 3


def test_nvidia_smi_csv_rows_are_not_perf_rows() -> None:
    with pytest.raises(ParseError):
        perf_stat.parse(io.BytesIO(NVSMI))


def test_perf_csv_rows_still_read() -> None:
    text = b"1234,,cycles,100000,100.00,,\n5678,,instructions,100000,50.00,1.2,insn per cycle\n"
    result = perf_stat.parse(io.BytesIO(text + NVSMI))
    assert [(e.event, e.value, e.multiplexed_pct) for e in result.events] == [
        ("cycles", 1234.0, 100.0),
        ("instructions", 5678.0, 50.0),
    ]
