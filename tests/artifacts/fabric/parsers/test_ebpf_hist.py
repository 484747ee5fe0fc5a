"""bpftrace and BCC histograms. Expected totals and buckets counted in the sample files."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import ebpf_hist
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import all_samples, any_sample, sample

RUNQLAT = "ebpf/bpftrace_runqlat_example.txt"
BIOLATENCY = "ebpf/bcc_biolatency_example.txt"
SSL = "ebpf/bpftrace_ssllatency_example.txt"


def parse_file(relative: str) -> ebpf_hist.EbpfHistResult:
    with sample(relative).open("rb") as f:
        return ebpf_hist.parse(f)


def test_bpftrace_power_of_two_histogram_with_k_and_m_suffixes() -> None:
    first = parse_file(RUNQLAT).histograms[0]
    assert (first.tool, first.name, first.unit, first.line) == ("bpftrace", "usecs", "usecs", 15)
    assert first.buckets[0] == ebpf_hist.Bucket(0, 1, 1)  # "[0]": the single value 0
    assert first.buckets[2] == ebpf_hist.Bucket(2, 4, 16)
    assert first.buckets[-1] == ebpf_hist.Bucket(512 * 1024, 1024 * 1024, 1)  # [512K, 1M)
    assert first.total == 662 and (first.p50, first.p99) == (32, 8192)
    assert len(parse_file(RUNQLAT).histograms) == 4


def test_bpftrace_keyed_linear_maps_overflow_bucket_and_stats() -> None:
    result = parse_file(SSL)
    handshake = next(h for h in result.histograms if h.key == "SSL_do_handshake")
    assert [(b.lo, b.hi, b.count) for b in handshake.buckets] == [
        (600, 800, 1359), (800, 1000, 12), (1000, None, 32)
    ]  # fmt: skip
    assert handshake.total == 1403 and handshake.p99 == 1000  # the open bucket's lower bound
    stats = {(s.name, s.key): (s.count, s.average, s.total) for s in result.stats}
    assert stats[("stat", "rsa_ossl_private_decrypt")] == (1403, 643, 902780)
    assert len(result.stats) == 11  # every @stat and @statF line


def test_bcc_tables_labels_intervals_and_python_dict_json() -> None:
    result = parse_file(BIOLATENCY)
    first = result.histograms[0]
    assert (first.tool, first.name, first.total) == ("bcc", "usecs", 277)
    assert first.buckets[0] == ebpf_hist.Bucket(0, 2, 0)  # "0 -> 1" holds 0 and 1
    assert first.buckets[-1] == ebpf_hist.Bucket(65536, 131072, 2)
    timed = result.histograms[1]
    assert (timed.name, timed.interval, timed.total) == ("msecs", "06:20:16", 103)
    disks = [h.key for h in result.histograms if h.key and h.key.startswith("disk=")]
    assert disks == ["disk=xvdb", "disk=xvdc", "disk=xvda1"]
    as_json = [h for h in result.histograms if h.tool == "bcc-json"]
    assert len(as_json) == 7
    assert (as_json[0].interval, as_json[0].unit, as_json[0].total) == (
        "2020-12-30 14:33:03", "usecs", 124
    )  # fmt: skip
    assert as_json[1].key == "flags=Sync-Write"
    extended = [h.summary for h in result.histograms if h.summary]
    assert extended == [{"avg": 663.0, "total": 16575.0, "count": 25.0}]


def test_bcc_funclatency_summary_lines_attach_to_their_table() -> None:
    first = parse_file("ebpf/bcc_funclatency_example.txt").histograms[0]
    assert first.unit == "nsecs" and first.total == 476
    assert first.summary == {"avg": 13746.0, "total": 6543360.0, "count": 476.0}


@pytest.mark.parametrize(
    "relative",
    ["ebpf/bcc_offcputime_example.txt", "ebpf/bpftrace_tcpretrans_example.txt",
     "ebpf/bcc_tcpretrans_example.txt"],
)  # fmt: skip
def test_tools_without_histograms_are_refused_with_a_clear_message(relative: str) -> None:
    with pytest.raises(ParseError, match="no bpftrace/BCC histogram"):
        parse_file(relative)


def test_every_histogram_sample_is_detected() -> None:
    refused = {"bcc_offcputime_example.txt", "bpftrace_tcpretrans_example.txt",
               "bcc_tcpretrans_example.txt"}  # fmt: skip
    found = all_samples("ebpf")  # ../shared/samples and ../shared/more-samples alike
    if not found:
        pytest.skip("shared samples not available (checkout without ../shared/)")
    for path in found:
        kind = detect_kind(path.name, path.read_bytes()[: 64 * 1024])
        assert kind == ("other" if path.name in refused else "ebpf_hist"), path.name


# ------------------------------------------------ ../shared/more-samples (other sources)
# Counts copied from the files' bucket lines; totals summed here from those literals.


def parse_any(relative: str) -> ebpf_hist.EbpfHistResult:
    with any_sample(relative).open("rb") as f:
        return ebpf_hist.parse(f)


def test_bpftrace_script_output_with_printf_lines_before_its_map() -> None:
    # pagefaultlatency.bt prints an event line per fault ("[000] latency=11637 ns", with
    # the author's "..."), then its summary glued to "^C", then the @usecs map.
    result = parse_any("ebpf/bpftrace_usertools_pagefaultlatency_readme_output_EXCERPT.txt")
    [hist] = result.histograms
    assert (hist.tool, hist.name, hist.unit) == ("bpftrace", "usecs", "usecs")
    assert [(b.lo, b.hi, b.count) for b in hist.buckets] == [
        (0, 1, 45), (1, 2, 191), (2, 4, 126), (4, 8, 37), (8, 16, 10), (16, 32, 2)
    ]  # fmt: skip
    assert hist.total == 45 + 191 + 126 + 37 + 10 + 2 == 411  # the script's own cnt=411
    assert hist.p50 == 2  # the 206th of 411 events falls in [1]
    assert result.parts == ("bpftrace histograms",)


def test_bcc_funclatency_table_with_a_narrow_bar() -> None:
    result = parse_any("ebpf/lkml_virtio_crypto_patch_funclatency_close_session_hist_EXCERPT.txt")
    [hist] = result.histograms
    counts = [0, 7, 72, 186485, 687, 5, 3, 1, 0, 0, 0, 0, 0, 2]
    assert [b.count for b in hist.buckets] == counts and hist.total == sum(counts)
    assert (hist.unit, hist.buckets[3].lo, hist.buckets[3].hi) == ("usecs", 8, 16)
    assert hist.max_bucket_hi == 16384 and hist.p99 == 16  # the outlier bucket is 8192->16383


def test_bpftrace_scalar_map_and_unit_from_the_map_name() -> None:
    result = parse_any("ebpf/scx_pr466_dsq_latency_bpftrace_usec_hist_TRUNCATED_EXCERPT.txt")
    assert result.values == (ebpf_hist.MapValue("avg_lat", None, 396.0),)
    [hist] = result.histograms  # "@usec_hist: " (a space after the colon)
    assert (hist.name, hist.unit) == ("usec_hist", "usecs")
    counts = [16807, 69339, 106525, 82849, 76488, 63287, 49775, 14701, 2163, 968, 827, 786,
              812, 1044, 1198]  # fmt: skip
    assert [b.count for b in hist.buckets] == counts and hist.total == sum(counts)
    assert (hist.buckets[-1].lo, hist.buckets[-1].hi) == (8 * 1024, 16 * 1024)
    assert result.parts == ("bpftrace values", "bpftrace histograms")


def test_bcc_per_operation_tables_under_an_interval_stamp_with_a_colon() -> None:
    result = parse_any("ebpf/student_notes_vagrant_ext4dist_bpfcc_per_op_interval_EXCERPT.txt")
    assert [(h.key, h.interval, h.total, len(h.buckets)) for h in result.histograms] == [
        ("operation=read", "00:40:20", 2, 4),
        ("operation=write", "00:40:20", 1, 6),
        ("operation=open", "00:40:20", 2, 2),
    ]
    write = result.histograms[1]
    assert (write.buckets[-1].lo, write.buckets[-1].hi, write.buckets[-1].count) == (32, 64, 1)


def test_other_programs_lines_inside_a_table_are_passed_over() -> None:
    # Found by the generated variation (tests/artifacts/test_generated_variation.py): two
    # lines of another program in the middle of a BCC table split it in two.
    lines = sample(BIOLATENCY).read_text().splitlines()
    middle = len(lines) // 2
    assert " -> " in lines[middle - 1] and " -> " in lines[middle]  # inside a table
    noise = ["libfabric:48213:1717236012::verbs:core:vrb_get_device_attrs():617<info> x",
             "RuntimeError: CUDA error: an illegal memory access was encountered"]  # fmt: skip
    mixed = "\n".join(lines[:middle] + noise + lines[middle:]) + "\n"
    whole = parse_file(BIOLATENCY)
    result = ebpf_hist.parse(io.BytesIO(mixed.encode()))
    assert [(h.key, h.interval, h.buckets) for h in result.histograms] == [
        (h.key, h.interval, h.buckets) for h in whole.histograms
    ]
    assert any("2 lines of other output" in w for w in result.warnings)


def test_a_bar_cut_to_its_width_keeps_its_bucket() -> None:
    # "0 -> 1 : 522 |****...*+|": BCC ends the bar with '+' when the count overflows it
    result = parse_file(BIOLATENCY)
    at_19 = next(h for h in result.histograms if h.interval == "06:20:19")
    assert [(b.lo, b.count) for b in at_19.buckets] == [(0, 522), (2, 225), (4, 38), (8, 8),
                                                          (16, 1)]  # fmt: skip
    assert at_19.total == 522 + 225 + 38 + 8 + 1


def test_a_bucket_below_the_last_one_starts_the_next_table() -> None:
    text = "@usecs:\n[0] 1 |@|\n[1] 2 |@@|\n[2, 4) 3 |@@@|\n[0] 4 |@@@@|\n[1] 5 |@@@@@|\n"
    first, second = ebpf_hist.parse(io.BytesIO(text.encode())).histograms
    assert (first.total, second.total) == (6, 9) and second.name == "usecs"


def test_refuses_other_kinds() -> None:
    path = sample("counters/gpud_nvidia-smi_q_560.35.03.txt")
    assert not ebpf_hist.accepts(path.name, path.read_bytes())


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(ebpf_hist.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=8616), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = sample(RUNQLAT).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(ebpf_hist.parse(io.BytesIO(blob)).to_json())
