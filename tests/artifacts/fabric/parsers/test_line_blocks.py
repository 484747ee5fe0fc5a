"""BlockReader gives exactly the lines and repair counts of textutil.LineReader (issue 27)."""

from __future__ import annotations

import io
import random

import pytest

from artifacts.fabric.parsers.line_blocks import BlockReader
from artifacts.parsers.textutil import LineReader


def _block_lines(data: bytes, block: int, limit: int) -> tuple[list[str], list[str]]:
    reader = BlockReader(io.BytesIO(data), block_bytes=block, max_line_bytes=limit)
    lines: list[str] = []
    for piece in reader:
        if isinstance(piece, str):
            lines.append(piece)
        else:
            assert piece.endswith(b"\n")
            lines += [line.decode() for line in piece.split(b"\n")[:-1]]
    return lines, reader.repair_warnings()


def _line_lines(data: bytes, limit: int) -> tuple[list[str], list[str]]:
    reader = LineReader(io.BytesIO(data), max_line_bytes=limit)
    return list(reader), reader.repair_warnings()


PARTS = [b"rx_packets: 12", b"\n", b"\r\n", b"\r", b"\xff\xfe", "é".encode(), b"x" * 9, b""]


@pytest.mark.parametrize("seed", range(300))
def test_the_same_lines_as_line_reader(seed: int) -> None:
    rng = random.Random(seed)
    data = b"".join(rng.choice(PARTS) for _ in range(rng.randrange(0, 60)))
    block, limit = rng.choice([4, 7, 16, 64]), rng.choice([5, 8, 13, 1000])
    assert _block_lines(data, block, limit) == _line_lines(data, limit)


def test_whole_blocks_of_plain_lines_come_as_bytes() -> None:
    data = b"a: 1\nb: 2\r\nc: 3\n" * 100
    pieces = list(BlockReader(io.BytesIO(data), block_bytes=256))
    assert all(isinstance(p, bytes) for p in pieces)
    assert b"".join(pieces) == data.replace(b"\r\n", b"\n")
