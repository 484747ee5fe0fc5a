"""ethtool -S read in blocks (issue 27) gives what the line-by-line reading gives."""

from __future__ import annotations

import io
import random

import pytest

from artifacts.fabric.parsers import ethtool_stats
from artifacts.parsers.textutil import LineReader
from tests.artifacts.fabric.parsers.blocks import jitter, small_blocks

SNAPSHOT = b"".join(
    b"     rx%d_packets: %d\n     tx_prio%d_bytes: %d\n" % (i, i * 7, i, i) for i in range(40)
)
EXTRAS = [
    b"NIC statistics:\n",
    b"\n",
    b"---\n",
    b"$ ethtool -S eth1\n",
    b"2024-01-01 10:00:00\n",
    b"     rx_extra: 5\n",
    b"     rx0_packets: -3\n",
    b"Settings for eth1:\n\tSpeed: 100000Mb/s\n\tLanes: 4\n\tLink detected: yes\n",
    b"",
    b"",
]


def _line_by_line(data: bytes) -> ethtool_stats.EthtoolStatsResult:
    reader = LineReader(io.BytesIO(data))
    state = ethtool_stats._State()
    for line in reader:
        state.feed(line)
    return state.result(reader.repair_warnings())


@pytest.mark.parametrize("seed", range(40))
def test_blocks_read_as_lines(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(ethtool_stats, "MAX_ROWS", rng.choice([50, 500, 250_000]))
    parts = []
    for _ in range(rng.randrange(1, 30)):
        parts.append(rng.choice(EXTRAS))
        snapshot = jitter(rng, SNAPSHOT, rng.choice([0, 0, 0.01, 0.2]))
        if rng.random() < 0.2:  # cut short: the next copy repeats a name midway
            snapshot = snapshot[: rng.randrange(len(snapshot))].rpartition(b"\n")[0] + b"\n"
        parts.append(snapshot)
    data = b"".join(parts)
    monkeypatch.setattr(ethtool_stats, "BlockReader", small_blocks(rng.choice([64, 1000, 1 << 20])))
    assert ethtool_stats.parse(io.BytesIO(data)) == _line_by_line(data)


def test_a_long_polling_file_keeps_the_row_cap_and_counts_the_rest() -> None:
    data = b"$ ethtool -S eth0\n" + SNAPSHOT * 4000  # 320,000 counters
    result = ethtool_stats.parse(io.BytesIO(data))
    assert result == _line_by_line(data)
    assert len(result.samples) == ethtool_stats.MAX_ROWS
    assert len(result.snapshots) == 4000
    assert result.warnings == ("70000 counter value(s) beyond 250000 were not kept",)
