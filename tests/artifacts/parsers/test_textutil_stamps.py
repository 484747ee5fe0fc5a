"""textutil.stamp_iso: a stamp's text read as find_timestamp reads it, remembered per text."""

from __future__ import annotations

import pytest

from artifacts.parsers.textutil import find_timestamp, stamp_iso


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("Sun Feb 23 16:24:18 2025", "2025-02-23T16:24:18"),
        ("2024-12-03T10:11:12.123456+00:00", "2024-12-03T10:11:12.123456+00:00"),
        ("2024-12-03T10:11:12Z", "2024-12-03T10:11:12+00:00"),
        ("Dec 03 10:11:12", None),  # no year: no time, as find_timestamp says
        ("Feb 30 2025 10:00:00 nonsense", None),
    ],
)
def test_same_answer_as_find_timestamp(text: str, iso: str | None) -> None:
    found = find_timestamp(text)
    assert stamp_iso(text) == (found[0] if found else None) == iso


def test_a_repeated_stamp_is_converted_once() -> None:
    stamp_iso.cache_clear()
    for _ in range(3):
        assert stamp_iso("Mon Mar  3 01:02:03 2025") == "2025-03-03T01:02:03"
    info = stamp_iso.cache_info()
    assert (info.misses, info.hits) == (1, 2)
