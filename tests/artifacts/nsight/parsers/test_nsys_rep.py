"""nsys_rep: .nsys-rep reports are kept as evidence, with the export command as the message."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artifacts.nsight.parsers.nsys import rep as nsys_rep
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import sample

REPORT = "nsys/p4arth_my_vector_add_report.nsys-rep"


def test_report_is_detected_by_its_signature():
    head = sample(REPORT).read_bytes()[:65536]
    assert detect_kind("my_vector_add_report.nsys-rep", head) == "nsys_rep"
    assert detect_kind("renamed.bin", head) == "nsys_rep"


def test_parse_keeps_the_file_and_says_how_to_export_it():
    with sample(REPORT).open("rb") as f:
        result = nsys_rep.parse(f)
    # "NVIDIA Tegra Profiler Report 2025@5@2@266-..." at the start of the file
    assert result.nsys_version == "2025.5.2.266"
    assert result.size_bytes == 95189
    [warning] = result.warnings
    assert "nsys export --type sqlite --lazy=false report.nsys-rep" in warning
    assert result.to_json()["message"] == warning
    assert result.summary()["needs"] == "nsys export --type sqlite"


def test_other_bytes_are_refused():
    with pytest.raises(ParseError, match="not an Nsight Systems report"):
        nsys_rep.parse(io.BytesIO(b"SQLite format 3\x00" + b"\x00" * 100))


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=2000))
def test_random_bytes_give_a_result_or_a_parse_error(data):
    try:
        result = nsys_rep.parse(io.BytesIO(nsys_rep.MAGIC + data))
    except ParseError:
        return
    assert result.size_bytes == len(nsys_rep.MAGIC) + len(data)
