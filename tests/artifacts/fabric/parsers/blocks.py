"""What the block-reading tests share: files whose numbers vary per copy, and block readers
with small blocks, so that a random file's lines fall across many block boundaries."""

from __future__ import annotations

import io
import random

from artifacts.fabric.parsers.line_blocks import BlockReader


def jitter(rng: random.Random, data: bytes, rate: float) -> bytes:
    """``data`` with each ASCII digit replaced by a random one with probability ``rate``."""
    out = bytearray(data)
    for i, byte in enumerate(out):
        if 48 <= byte <= 57 and rng.random() < rate:
            out[i] = 48 + rng.randrange(10)
    return bytes(out)


def small_blocks(size: int) -> type[BlockReader]:
    """A BlockReader reading ``size`` bytes at a time (monkeypatched into a parser module)."""

    class Small(BlockReader):
        def __init__(self, stream: io.BytesIO) -> None:
            super().__init__(stream, block_bytes=size)

    return Small
