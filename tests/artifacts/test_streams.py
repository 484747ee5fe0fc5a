import gzip
import io

import pytest

from artifacts.parsers import ParseError
from artifacts.parsers.streams import decompressed_limit, open_decompressed, read_head


def test_plain_stream_passes_through_unchanged():
    data = b"# nThread 1 nGpus 1\n" * 10
    assert open_decompressed(io.BytesIO(data), compressed_size=len(data)).read() == data


def test_gzip_is_decompressed_transparently():
    data = b"line\n" * 1000
    packed = gzip.compress(data)
    assert open_decompressed(io.BytesIO(packed), compressed_size=len(packed)).read() == data
    assert read_head(io.BytesIO(packed), compressed_size=len(packed)).startswith(b"line\nline")


def test_decompression_bomb_is_refused_with_a_clear_message():
    packed = gzip.compress(b"\0" * (3 * 1024 * 1024))
    stream = open_decompressed(
        io.BytesIO(packed), compressed_size=len(packed), max_ratio=2, max_bytes=1024 * 1024
    )
    with pytest.raises(ParseError, match="decompression bomb"):
        stream.read()


def test_limit_has_a_floor_for_small_files_and_a_cap():
    assert decompressed_limit(10, max_ratio=200, max_bytes=10**12) == 64 * 1024 * 1024
    assert decompressed_limit(10**9, max_ratio=200, max_bytes=10**10) == 10**10


def test_corrupt_gzip_becomes_a_parse_error():
    packed = gzip.compress(b"hello world " * 1000)
    broken = packed[:20] + b"\xff" * 40 + packed[60:]
    stream = open_decompressed(io.BytesIO(broken), compressed_size=len(broken))
    with pytest.raises(ParseError, match="gzip"):
        stream.read()


def test_truncated_gzip_yields_everything_inflated_before_the_cut():
    data = b"".join(b"line %d\n" % i for i in range(200_000))
    packed = gzip.compress(data)
    stream = open_decompressed(io.BytesIO(packed[: len(packed) // 2]), compressed_size=len(packed))
    got = b""
    with pytest.raises(ParseError):
        while chunk := stream.read(65536):
            got += chunk
    assert len(got) > len(data) // 3 and data.startswith(got)
