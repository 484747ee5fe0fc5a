"""dcgmi diag tables (wrapped cells, fragments) and dcgmi dmon samples. Expected values read
from the shared samples; the dmon fixture is the project's own (tests/fixtures/dcgm)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.fabric.parsers import dcgm
from artifacts.parsers import detect_kind
from artifacts.parsers.base import ParseError
from tests.samples import TESTS_DIR, more_sample, sample

P4DE = "dcgm/awsome_p4de_dcgmi_diag_r2_nvlinks_expected_up_EXCERPT.txt"
BUSY = "dcgm/godcgm_issue52_dcgmi_diag_gpu0_busy_fail_FRAGMENT.txt"
THERMAL = "dcgm/mlengineering_dcgmi_diag_r2_gpu_memory_thermal_fail_FRAGMENT.txt"
XID64 = "dcgm/mlengineering_dcgmi_diag_xid64_row_remap_pending_FRAGMENT.txt"
DMON = TESTS_DIR / "fixtures" / "dcgm" / "dmon_power_temp_util.txt"


def parse_file(relative: str) -> dcgm.DcgmResult:
    with sample(relative).open("rb") as f:
        return dcgm.parse(f)


def test_full_table_metadata_sections_and_passes() -> None:
    result = parse_file(P4DE)
    assert result.host == "ip-172-31-35-99"
    assert result.metadata == {
        "dcgm_version": "3.3.3",
        "driver_version": "535.104.12",
        "gpu_device_ids": "20b2,20b2,20b2,20b2,20b2,20b2,20b2,20b2",
    }
    assert len(result.results) == 11 and all(r.result == "Pass" for r in result.results)
    by_test = {r.test: r for r in result.results}
    assert by_test["Denylist"].section == "Deployment"
    assert (by_test["PCIe"].section, by_test["PCIe"].scope) == ("Integration", "All")
    assert by_test["GPU Memory"].section == "Hardware"
    assert result.summary()["failed"] == []
    json.dumps(result.to_json())


def test_pass_and_fail_lines_of_one_test_and_a_wrapped_warning() -> None:
    result = parse_file(THERMAL)
    assert [(r.test, r.result, r.gpus) for r in result.results] == [
        ("GPU Memory", "Pass", (1, 2, 3, 4, 5, 6, 7)),
        ("GPU Memory", "Fail", (0,)),
    ]
    [warning] = result.messages
    assert (warning.level, warning.test, warning.gpu) == ("Warning", "GPU Memory", 0)
    # wrapped at 45 characters mid-word ("second" + "s started") and re-joined
    assert warning.text.startswith("GPU 0 Thermal violations totaling 13.3 seconds started")
    assert warning.text.endswith("fans, and any other components.")


def test_fragment_starting_mid_table_keeps_spaces_at_the_wrap() -> None:
    result = parse_file(BUSY)
    assert [(r.result, r.gpus) for r in result.results] == [("Pass", (1,)), ("Fail", (0,))]
    texts = [m.text for m in result.messages]
    assert texts[1] == (
        "GPU 1 GPU to Host bandwidth: 12.33 GB/s, GPU 1 Host to GPU bandwidth: 13.15 GB/s, "
        "GPU 1 bidirectional bandwidth: 22.63 GB/s"
    )
    assert "cuCtxCreate Check DCGM and system logs" in texts[2]  # the space before the wrap
    assert result.summary()["failed"] == ["GPU Memory"]


def test_unclosed_fragment_with_only_an_error_row() -> None:
    result = parse_file(XID64)
    [error] = result.messages
    assert (error.level, error.section, error.gpu) == ("Error", "Deployment", 3)
    assert error.text == "GPU 3 has uncorrectable memory errors and row remappings are pending"


def test_dmon_samples_per_entity_and_interval() -> None:
    result = dcgm.parse(DMON.open("rb"))
    assert result.host == "gpu-node-09" and result.fields == ("POWER", "TEMP", "GPUTL", "SMACT")
    rows = {(s.snapshot, s.device, s.counter): (s.value, s.unit) for s in result.samples}
    assert rows[(0, "GPU 0", "POWER")] == (68.503, "W")
    assert rows[(1, "GPU 0", "GPUTL")] == (98, "%")
    assert (1, "GPU 1", "POWER") not in rows  # N/A is skipped, the columns stay aligned
    assert rows[(1, "GPU 1", "TEMP")] == (50, "C")


AZURE_DMON = "dcgm/azure_h100nvl_vm_dcgmi_dmon_e_1001_1002_1005_first_sample_NA_FRAGMENT.txt"
BREV_DMON = "dcgm/brev_a100_8gpu_dcgmi_dmon_e_150_155_156_203_252_EXCERPT.txt"


def test_dmon_fragment_of_four_lines_with_a_first_sample_of_na() -> None:
    path = more_sample(AZURE_DMON)
    assert detect_kind(path.name, path.read_bytes()) == "dcgm"
    result = dcgm.parse(path.open("rb"))
    assert result.fields == ("GRACT", "SMACT", "DRAMA")
    assert result.parts == ("dmon_header", "dmon_units", "dmon_rows")
    # the N/A row gives nothing; the second reading of GPU 0 is the next snapshot
    assert {(s.snapshot, s.device, s.counter, s.value, s.unit) for s in result.samples} == {
        (1, "GPU 0", "GRACT", 0.0, "ratio"),
        (1, "GPU 0", "SMACT", 0.0, "ratio"),
        (1, "GPU 0", "DRAMA", 0.0, "ratio"),
    }


def test_dmon_units_come_from_the_id_row_by_column() -> None:
    path = more_sample(BREV_DMON)
    result = dcgm.parse(path.open("rb"))
    assert result.host == "brev-7hpnmoj9o"
    rows = [line for line in path.read_text().splitlines() if line.startswith("GPU ")]
    assert len(result.samples) == len(rows) * 5  # every value of every row is a number
    units = {s.counter: s.unit for s in result.samples}
    # "ID  C  W  mJ" with GPUTL and FBUSD blank: mJ belongs to TOTEC, not to GPUTL
    assert units == {"TMPTR": "C", "POWER": "W", "TOTEC": "mJ", "GPUTL": "%", "FBUSD": "MiB"}
    first = {(s.device, s.counter): s.value for s in result.samples if s.snapshot == 0}
    assert first[("GPU 7", "TOTEC")] == 108702777 and first[("GPU 0", "POWER")] == 58.49


def test_dmon_rows_without_header_take_their_names_from_the_command_line() -> None:
    text = b"$ dcgmi dmon -e 155,150 -c 2\nGPU 0  61.5  40\nGPU 1  70.25  41\nGPU 0  62  40\n"
    assert dcgm.accepts("x", text)
    result = dcgm.parse(io.BytesIO(text))
    assert result.fields == ("POWER", "TMPTR") and result.parts == ("dmon_rows",)
    rows = {(s.snapshot, s.device, s.counter): (s.value, s.unit) for s in result.samples}
    assert rows[(0, "GPU 1", "POWER")] == (70.25, "W") and rows[(1, "GPU 0", "TMPTR")] == (40, "C")
    bare = dcgm.parse(io.BytesIO(b"GPU 0  61.5  40\n"))
    assert bare.fields == ("field1", "field2")


def test_dcgm4_per_gpu_result_rows_and_the_pod_host() -> None:
    path = more_sample(
        "dcgm/dcgm_issue253_dcgm423_diag_4gpu_new_per_gpu_rows_TRUNCATED_EXCERPT.txt"
    )
    assert detect_kind(path.name, path.read_bytes()) == "dcgm"
    result = dcgm.parse(path.open("rb"))
    assert result.host == "10.0.7.139"  # "Executing in Pod ... on Host 10.0.7.139"
    assert result.metadata == {
        "dcgm_version": "4.2.3",
        "driver_version": "570.148.08",
        "gpu_device_ids": "26b9, 26b9, 26b9, 26b9",
    }
    assert [(r.section, r.test, r.result, r.gpus) for r in result.results] == [
        ("Deployment", "software", "Pass", ()),
        *[("Deployment", "software", "Pass", (gpu,)) for gpu in range(4)],
    ]
    assert result.summary()["tests"] == 1 and result.summary()["failed"] == []


LEGEND_AND_ROWS = """\
$ dcgmi dmon -l
___________________________________________________________________________________
                              Long Name          Short Name          Field Id
___________________________________________________________________________________
sm_clock                                             SMCLK                 100
power_usage                                          POWER                 155
nvlink_bandwidth_total                               NVLTL                 449
$ dcgmi dmon -e 155,449
GPU 0     312.5        1052
GPU 1     298.0        987
"""


def test_rows_named_by_the_legend_of_dmon_l() -> None:
    result = dcgm.parse(io.BytesIO(LEGEND_AND_ROWS.encode()))
    # 449 is not in the parser's own table: the pasted legend names it
    assert result.fields == ("POWER", "NVLTL")
    assert result.parts == ("dmon_legend", "dmon_rows")
    rows = {(s.device, s.counter): (s.value, s.unit) for s in result.samples}
    assert rows[("GPU 1", "POWER")] == (298.0, "W") and rows[("GPU 0", "NVLTL")] == (1052, "count")


def test_parts_of_a_diag_table() -> None:
    assert parse_file(THERMAL).parts == ("diag", "diag_messages")
    assert parse_file(P4DE).parts[:2] == ("metadata", "diag")


def test_nothing_of_the_kind_is_refused() -> None:
    with pytest.raises(ParseError, match="no dcgmi diag"):
        dcgm.parse(io.BytesIO(b"| a | b |\n"))


@pytest.mark.parametrize("relative", [P4DE, BUSY, THERMAL, XID64])
def test_detection(relative: str) -> None:
    path = sample(relative)
    assert detect_kind(path.name, path.read_bytes()) == "dcgm"


def test_dmon_detection() -> None:
    assert detect_kind(DMON.name, DMON.read_bytes()) == "dcgm"


@pytest.mark.parametrize(
    "relative",
    [
        "counters/gpud_nvidia-smi_default_table_550.90.07.txt",
        "counters/gpud_ibstat_h100_all_active.txt",
    ],
)
def test_refuses_other_kinds(relative: str) -> None:
    path = sample(relative)
    assert not dcgm.accepts(path.name, path.read_bytes())


ROBUST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROBUST
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    with contextlib.suppress(ParseError):
        json.dumps(dcgm.parse(io.BytesIO(data)).to_json())


@ROBUST
@given(st.integers(min_value=0, max_value=1933), st.binary(max_size=8))
def test_truncated_and_corrupted(cut: int, junk: bytes) -> None:
    data = sample(P4DE).read_bytes()
    for blob in (data[:cut], data[:cut] + junk + data[cut:]):
        with contextlib.suppress(ParseError):
            json.dumps(dcgm.parse(io.BytesIO(blob)).to_json())
