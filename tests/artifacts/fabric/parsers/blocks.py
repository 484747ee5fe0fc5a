"""What the block-reading tests share: files whose numbers vary per copy, and block readers
with small blocks, so that a random file's lines fall across many block boundaries."""

from __future__ import annotations

import io
import random
from collections.abc import Callable

import pytest

from artifacts.fabric.parsers.line_blocks import BlockReader
from artifacts.parsers.base import ParseError


def jitter(rng: random.Random, data: bytes, rate: float) -> bytes:
    """``data`` with each ASCII digit replaced by a random one with probability ``rate``."""
    out = bytearray(data)
    for i, byte in enumerate(out):
        if 48 <= byte <= 57 and rng.random() < rate:
            out[i] = 48 + rng.randrange(10)
    return bytes(out)


def jittered_copies(rng: random.Random, pool: list[bytes], extras: list[bytes]) -> bytes:
    """A random file made the way a collector's log repeats itself: 1 to 59 copies of a unit
    of 1 to 4 pieces of ``pool``, each copy with its digits changed at a random rate (none in
    half of them), and a random piece of ``extras`` before some copies (15%)."""
    unit = b"".join(rng.choice(pool) for _ in range(rng.randrange(1, 5)))
    parts = []
    for _ in range(rng.randrange(1, 60)):
        copy = jitter(rng, unit, rng.choice([0, 0, 0.01, 0.2]))
        if rng.random() < 0.15:
            copy = rng.choice(extras) + copy
        parts.append(copy)
    return b"".join(parts)


def small_blocks(size: int) -> type[BlockReader]:
    """A BlockReader reading ``size`` bytes at a time (monkeypatched into a parser module)."""

    class Small(BlockReader):
        def __init__(self, stream: io.BytesIO) -> None:
            super().__init__(stream, block_bytes=size)

    return Small


def assert_reads_as(
    parse: Callable[[io.BytesIO], object], data: bytes, reference: Callable[[], object]
) -> None:
    """``parse`` (the block reading) gives what ``reference`` (the line-by-line reading)
    gives, a ParseError included."""
    try:
        expected = reference()
    except ParseError:
        with pytest.raises(ParseError):
            parse(io.BytesIO(data))
        return
    assert parse(io.BytesIO(data)) == expected
