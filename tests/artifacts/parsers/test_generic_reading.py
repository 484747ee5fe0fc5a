"""The generic reading of files no parser takes: pairs, tables and labelled numbers, each on
the line of the file as uploaded; bounded; and the nearest kinds with why each declined.

Pure: runs without Django. Real files are read in place from ../shared (skipped without it).
"""

from __future__ import annotations

import io
import json
import string
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from artifacts.parsers.generic import read_generic, search_text
from artifacts.parsers.generic.nearest import nearest_kinds
from artifacts.parsers.generic.unknown import read_unknown
from artifacts.parsers.normalize import View
from artifacts.parsers.reading import detect_file
from artifacts.parsers.streams import open_decompressed
from tests.samples import MORE_SAMPLES_DIR, SAMPLES_DIR, more_sample, relative_name, sample


def read(data: bytes, view: View | None = None, **kwargs: Any) -> dict[str, Any]:
    return read_generic(io.BytesIO(data), view, **kwargs).to_json()


def pairs(reading: dict[str, Any]) -> dict[str, tuple[str, int]]:
    return {p["key"]: (p["value"], p["line"]) for p in reading["pairs"]}


CSV = b"""# exported by our own scheduler, made-up columns
job,nodes,gpus,step_ms,tokens_per_s
a17,4,32,412.5,99120
a18,8,64,430.1,190440
a19,8,64,401.9,198210
"""


def test_a_csv_of_made_up_columns_is_a_table_with_each_rows_line() -> None:
    reading = read(CSV)
    (table,) = reading["tables"]
    assert (table["separator"], table["line"]) == ("csv", 2)
    assert table["header"] == ["job", "nodes", "gpus", "step_ms", "tokens_per_s"]
    assert [r["line"] for r in table["rows"]] == [3, 4, 5]
    assert table["rows"][1]["cells"] == ["a18", "8", "64", "430.1", "190440"]
    assert table["row_count"] == 3
    assert reading["complete"] and reading["lines"] == 5


YAML = b"""cluster: r07
fabric:
  nics: 8
  link_speed: 400 Gb/s
  pfc = on
gpus:
  model: H100 SXM
  count: 8

notes: racked in May
"""


def test_a_yaml_ish_config_gives_pairs_with_their_sections_and_lines() -> None:
    reading = read(YAML)
    by_key = {p["key"]: p for p in reading["pairs"]}
    assert (by_key["cluster"]["value"], by_key["cluster"]["line"]) == ("r07", 1)
    assert "section" not in by_key["cluster"]
    speed = by_key["link_speed"]
    assert (speed["section"], speed["line"], speed["number"], speed["unit"]) == (
        "fabric",
        4,
        400.0,
        "Gb/s",
    )
    assert (by_key["pfc"]["value"], by_key["pfc"]["section"]) == ("on", "fabric")
    assert (by_key["model"]["value"], by_key["model"]["section"]) == ("H100 SXM", "gpus")
    # a key back at the left margin closes the nested section, a blank line or not
    assert (by_key["notes"]["line"], by_key.get("notes", {}).get("section")) == (10, None)
    assert "fabric" not in {p["key"] for p in reading["pairs"]}  # a heading, not a pair


PROSE = b"""Post-incident note, written by hand.
The all_reduce reached 12.5 GB/s on the new rack, against 48 GB/s before.
Efficiency was 99 % while the link flapped 3 times.
"""


def test_prose_gives_numbers_with_their_labels_units_and_lines() -> None:
    reading = read(PROSE)
    found = [(n["line"], n["label"], n["value"], n["unit"]) for n in reading["numbers"]]
    assert (2, "The all_reduce", 12.5, "GB/s") in found
    assert (2, "against", 48.0, "GB/s") in found
    assert (3, "Efficiency", 99.0, "%") in found
    assert (3, "while the link flapped", 3.0, "") in found
    assert not reading["pairs"] and not reading["tables"]


def test_versions_dates_addresses_and_names_are_no_numbers() -> None:
    line = b"NCCL 2.18.3 on 2024-05-01 from 10.0.0.1 node cnode2-001 at 12:30:01\n"
    assert read(line)["numbers"] == []


def test_aligned_pipe_and_json_lines_tables() -> None:
    data = (
        b"| host | port | errors |\n|------|------|--------|\n| n1 | 1 | 0 |\n| n2 | 2 | 17 |\n"
        b"\n"
        b"rx_bytes      1024\nrx_drops      3\n"
        b"\n"
        b'{"t": 1, "gpu": {"util": 56}}\n{"t": 2, "gpu": {"util": 51}}\n'
    )
    reading = read(data)
    pipe, jsonl = reading["tables"]
    assert (pipe["separator"], pipe["header"], pipe["row_count"]) == (
        "pipe",
        ["host", "port", "errors"],
        2,
    )
    assert pipe["rows"][1] == {"line": 4, "cells": ["n2", "2", "17"]}  # the rule is skipped
    assert pairs(reading) == {"rx_bytes": ("1024", 6), "rx_drops": ("3", 7)}
    assert (jsonl["separator"], jsonl["header"], jsonl["line"]) == ("jsonl", ["t", "gpu.util"], 9)
    assert [r["cells"] for r in jsonl["rows"]] == [["1", "56"], ["2", "51"]]


def test_lines_are_those_of_the_file_as_uploaded_through_the_cleaning() -> None:
    # UTF-16 with a byte-order mark, CRLF line ends and colour codes: the numbers stay
    text = "intro\r\n\x1b[32mtemperature: 71 C\x1b[0m\r\n\r\nfan = 40 %\r\n"
    reading = read(text.encode("utf-16"), View(encoding="utf-16"))
    assert pairs(reading) == {"temperature": ("71 C", 2), "fan": ("40 %", 4)}


def test_what_is_kept_is_capped_and_what_is_left_out_is_counted() -> None:
    many = b"".join(b"key_%d: %d\n" % (i, i) for i in range(700))
    reading = read(many)
    assert len(reading["pairs"]) == 500 and reading["left_out"]["pairs"] == 200
    assert reading["pairs"][-1] == {
        "line": 500,
        "key": "key_499",
        "value": "499",
        "number": 499.0,
        "unit": "",
    }
    stopped = read(many, max_bytes=1000)
    assert not stopped["complete"] and stopped["bytes_read"] == 1000
    assert stopped["lines"] < 120


def test_a_binary_file_says_so_and_reads_nothing() -> None:
    reading = read(b"\x00\x01\x02", View(encoding="binary"))
    assert reading["binary"] and not reading["pairs"]


def test_search_text_holds_keys_values_cells_and_labels() -> None:
    text = search_text(read(CSV + b"\n" + YAML + b"\n" + PROSE))
    for word in ("tokens_per_s", "a18", "link_speed", "H100 SXM", "Efficiency 99 %"):
        assert word in text, word


_KEY = st.text(string.ascii_lowercase + "_", min_size=1, max_size=12).filter(
    lambda k: k.strip("_") != ""
)
_VALUE = st.one_of(
    st.integers(-(10**9), 10**9).map(str),
    st.text(string.ascii_letters + string.digits + "-.", min_size=1, max_size=16).filter(
        lambda v: v[0].isalpha()
    ),
)


@given(
    entries=st.lists(st.tuples(_KEY, _VALUE), min_size=1, max_size=12, unique_by=lambda e: e[0]),
    separator=st.sampled_from([": ", " = ", "=", ":\t"]),
    indent=st.sampled_from(["", "  ", "\t"]),
    blank_every=st.integers(0, 4),
)
@example(entries=[("a", "1")], separator="=", indent="", blank_every=0)
def test_any_key_value_listing_is_read_back_with_its_lines(
    entries: list[tuple[str, str]], separator: str, indent: str, blank_every: int
) -> None:
    lines, expected = [], {}
    for index, (key, value) in enumerate(entries):
        if blank_every and index and index % blank_every == 0:
            lines.append("")
        lines.append(f"{indent}{key}{separator}{value}")
        expected[key] = (value, len(lines))
    reading = read(("\n".join(lines) + "\n").encode())
    assert pairs(reading) == expected


# --- real files no parser takes (found by running detection over both sample folders) ------


def test_a_pairwise_failure_summary_gives_its_totals_and_the_failed_pairs() -> None:
    path = sample("nccl_tests/xxrjun_pairwise_failures_summary.txt")
    reading = read(path.read_bytes())
    by_key = {p["key"]: p for p in reading["pairs"]}
    # "Total tests processed:     810" on line 4, "  - FAIL:   34" on line 6 (read by hand)
    assert (by_key["Total tests processed"]["number"], by_key["Total tests processed"]["line"]) == (
        810.0,
        4,
    )
    assert (by_key["FAIL"]["value"], by_key["FAIL"]["line"]) == ("34", 6)
    failed = [p for p in reading["pairs"] if p["key"] == "Unique failed node pairs"]
    assert failed[0]["value"] == "18"  # the count, then the 18 pairs listed under it
    assert [p["value"] for p in failed[1:]][:2] == [
        "(cnode2-001, cnode2-003)",
        "(cnode2-001, cnode2-004)",
    ]
    assert len(failed) == 19


def test_an_mpi_profile_gives_its_routine_table_and_timings() -> None:
    path = more_sample("counters/alcf_polaris_mpich_mpi_profile_rank0.txt")
    reading = read(path.read_bytes())
    routines = reading["tables"][0]
    assert routines["header"] == ["MPI Routine", "#calls", "avg. bytes", "time(sec)"]
    assert routines["line"] == 4 and routines["row_count"] == 7
    assert {"line": 10, "cells": ["MPI_Allreduce", "110", "8.0", "0.038"]} in routines["rows"]
    by_key = {p["key"]: p for p in reading["pairs"]}
    elapsed = by_key["total elapsed time"]
    assert (elapsed["number"], elapsed["unit"], elapsed["line"]) == (6.484, "seconds", 15)
    tasks = next(t for t in reading["tables"] if t["header"][0] == "taskid")
    assert tasks["row_count"] == 32  # "Data for MPI rank 0 of 32"


def test_a_launch_failure_of_one_line_is_one_pair() -> None:
    path = more_sample("nccl_tests/alcf_polaris_n128_launch_failed_PMI.dat")
    assert read(path.read_bytes())["pairs"] == [
        {
            "line": 1,
            "key": "launch failed on x3006c0s1b1n0",
            "value": "Couldn't allocate a port for PMI to use",
        }
    ]


def test_json_lines_of_a_gpu_monitor_are_one_table() -> None:
    path = more_sample("counters/superbench_gpu_monitor.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    (table,) = read(path.read_bytes())["tables"]
    assert table["row_count"] == len(records)
    column = table["header"].index("gpu_temperature:3")
    assert [r["cells"][column] for r in table["rows"]] == [
        str(r["gpu_temperature:3"]) for r in records
    ]


def test_the_nearest_kinds_say_why_each_declined() -> None:
    path = more_sample("counters/alcf_polaris_mpich_mpi_profile_rank0.txt")
    nearest = nearest_kinds(path.name, path.read_bytes())
    assert 1 <= len(nearest) <= 8
    by_kind = {k["kind"]: k for k in nearest}
    # a table of calls and seconds, as nsys stats prints, and ranks and bytes, as NCCL's tools
    assert {"nsys_stats", "nccl_tests"} <= {k["kind"] for k in nearest[:3]}
    stats = by_kind["nsys_stats"]
    assert "calls" in stats["shared"] and not stats["reads"]
    assert any(r.startswith("read as nsys_stats: no nsys stats report") for r in stats["reasons"])
    assert all(
        k["reasons"][0] == "its sniffer found none of its markers in the file" for k in nearest
    )
    scores = [k["score"] for k in nearest if not k["reads"]]
    assert scores == sorted(scores, reverse=True)
    skipped = nearest_kinds(path.name, path.read_bytes(), skip={"nsys_stats"})
    assert "nsys_stats" not in {k["kind"] for k in skipped}


def test_json_lines_of_gpu_samples_are_nearest_to_their_reader_then_nvidia_smi() -> None:
    path = more_sample("counters/superbench_gpu_monitor.jsonl")
    nearest = nearest_kinds(path.name, path.read_bytes())
    # its own kind's reader takes it, so it comes first; then the kind whose words it shares
    assert nearest[0]["kind"] == "superbench_monitor" and nearest[0]["reads"]
    assert nearest[1]["kind"] == "nvidia_smi"  # gpu_temperature, gpu_power_limit, ... by part
    assert {"temperature", "power", "ecc"} <= set(nearest[1]["shared"])


def test_a_kinds_reader_that_takes_the_file_is_ranked_first() -> None:
    # ethtool -S counters without their "NIC statistics:" heading: no sniffer takes them, and
    # the ethtool reader (its name hinted by the file's) reads them
    counters = b"counters, as a colleague pasted them\nrx_packets: 845320277\nrx_prio3_pause: 12\n"
    nearest = nearest_kinds("ethtool-S_eth0.txt", counters)
    assert nearest[0]["kind"] == "ethtool_stats"
    assert nearest[0]["reads"], nearest[0]
    assert "try parse as" in nearest[0]["reasons"][-1]


def _opener(path: Path) -> Any:
    @contextmanager
    def opened() -> Iterator[BinaryIO]:
        with path.open("rb") as raw:
            yield open_decompressed(raw, compressed_size=path.stat().st_size)

    return opened


def test_no_sample_is_refused_without_a_reading_and_ranked_reasons() -> None:
    """Every file of both sample folders that no parser recognises is read generically
    (something read, or said to be binary) and gets nearest kinds, each with reasons."""
    files = [
        p
        for root in (SAMPLES_DIR, MORE_SAMPLES_DIR)
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "MANIFEST.tsv"
    ]
    if not files:
        pytest.skip("../shared is not available")
    unknown = []
    for path in files:
        opened = _opener(path)
        found = detect_file(opened, path.name, path.stat().st_size)
        if found.kind != "other":
            continue
        unknown.append(relative_name(path))
        body = read_unknown(opened, path.name, encoding=found.view.encoding)
        assert body["binary"] or body["pairs"] or body["tables"] or body["numbers"], path.name
        nearest = body["nearest"]
        assert nearest and all(len(k["reasons"]) >= 2 for k in nearest), relative_name(path)
    assert unknown, "no sample is left to the generic reading: pick made-up ones instead"


_COLUMN = st.text(string.ascii_lowercase + "_", min_size=1, max_size=10).filter(
    lambda c: c.strip("_") != ""
)
_CELL = st.one_of(
    st.integers(0, 10**6).map(str),
    st.floats(0, 1e6, allow_nan=False).map(lambda f: f"{f:.3f}"),
)


@given(
    header=st.lists(_COLUMN, min_size=2, max_size=8, unique=True),
    data=st.data(),
    separator=st.sampled_from([",", "\t", " | ", "   "]),
    lead=st.integers(0, 3),
)
def test_any_table_of_numbers_under_a_header_is_read_back(
    header: list[str], data: st.DataObject, separator: str, lead: int
) -> None:
    rows = data.draw(
        st.lists(
            st.lists(_CELL, min_size=len(header), max_size=len(header)), min_size=2, max_size=6
        )
    )
    lines = ["the table below was pasted by hand"] * lead
    lines += [separator.join(header), *(separator.join(row) for row in rows)]
    reading = read(("\n".join(lines) + "\n").encode())
    (table,) = reading["tables"]
    assert (table["header"], table["line"]) == (header, lead + 1)
    assert [(r["line"], r["cells"]) for r in table["rows"]] == [
        (lead + 2 + index, row) for index, row in enumerate(rows)
    ]
