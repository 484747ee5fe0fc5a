"""Robustness of every trace and Nsight parser, across kinds (issue #3): malformed,
truncated, huge-number, bad-UTF-8 and wrong-kind inputs give a ParseError or a result
(possibly partial, with warnings) whose canonical JSON serialises, never another exception.

Each parser is fed mutations of a real sample of its own kind and, unchanged, the samples of
every other kind. The per-parser test modules fuzz their own formats more closely.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.nsight.parsers.ncu import csv as ncu_csv
from artifacts.nsight.parsers.ncu import text as ncu_text
from artifacts.nsight.parsers.nsys import (
    rep as nsys_rep,
)
from artifacts.nsight.parsers.nsys import (
    sqlite as nsys_sqlite,
)
from artifacts.nsight.parsers.nsys import (
    stats as nsys_stats,
)
from artifacts.parsers.base import ParseError
from artifacts.parsers.streams import open_decompressed
from artifacts.traces.parsers import torch_trace
from tests.samples import MORE_SAMPLES_DIR, SAMPLES_DIR

# parser -> one real sample of its kind (small ones: hypothesis runs each many times)
OWN_SAMPLE: dict[ModuleType, str] = {
    torch_trace: "torch_profiler/hta_inference_rank_1_legacy_cats.json.gz",
    nsys_sqlite: "nsys/p4arth_nsys2025.5_schema3.24.0_rtx3060.sqlite",
    nsys_stats: "nsys/yktian_nsys_profile_stats_true_torch_gcn.txt",
    nsys_rep: "nsys/p4arth_my_vector_add_report.nsys-rep",
    ncu_csv: "ncu/yktian_ncu_csv_cutlass_after_tensor_dump.csv",
    ncu_text: "ncu/yktian_ncu_text_details_torch_gcn.txt",
}
PARSERS = list(OWN_SAMPLE)
# ../shared/more-samples, read alike: each with the parser of its kind
MORE_OWN: dict[str, ModuleType] = {
    "torch_profiler/kineto_tb_resnet50_v100_2021_legacy_cats.pt.trace.json.gz": torch_trace,
    "nsys/wenscarl_nsys2023.2_schema3.1.7_4gpu_a40_a100.sqlite": nsys_sqlite,
    "nsys/ayush_nsys_stats_true_vectoradd_N10_a100.txt": nsys_stats,
    "ncu/superbench_ncu_csv_details_with_rules_sm100_b200.log": ncu_csv,
}
OWNER = {**{relative: parser for parser, relative in OWN_SAMPLE.items()}, **MORE_OWN}


def _content(relative: str) -> bytes:
    path = SAMPLES_DIR / relative
    if not path.exists():
        path = MORE_SAMPLES_DIR / relative
    if not path.exists():
        pytest.skip(f"shared sample not available: {path}")
    with path.open("rb") as fh:
        return open_decompressed(fh, compressed_size=path.stat().st_size).read()


def _honours_the_contract(parser: ModuleType, data: bytes) -> None:
    try:
        result = parser.parse(io.BytesIO(data))
    except ParseError as exc:
        assert exc.message  # says why
        return
    json.dumps(result.to_json(), allow_nan=False)


@pytest.mark.parametrize("parser", PARSERS, ids=lambda m: m.KIND)
@pytest.mark.parametrize("other", sorted(OWNER))
def test_wrong_kind_inputs_are_refused_or_read_without_crashing(
    parser: ModuleType, other: str
) -> None:
    data = _content(other)
    _honours_the_contract(parser, data)
    if OWNER[other] is not parser:
        # and detection does not claim the other kind's file for this parser
        assert not parser.accepts(Path(other).name, data[:65536])


_DIGITS = re.compile(rb"\d+")


@st.composite
def _mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """A truncated / corrupted / bad-UTF-8 / huge-number variant of ``data``."""
    out = bytearray(data[: draw(st.integers(0, len(data)))] if draw(st.booleans()) else data)
    for _ in range(draw(st.integers(0, 4))):
        if not out:
            break
        at = draw(st.integers(0, len(out) - 1))
        choice = draw(st.sampled_from(["flip", "utf8", "huge", "delete"]))
        if choice == "flip":
            out[at] ^= draw(st.integers(1, 255))
        elif choice == "utf8":
            out[at:at] = draw(st.sampled_from([b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\x00"]))
        elif choice == "huge":
            m = _DIGITS.search(bytes(out), at)
            if m:
                out[m.start() : m.end()] = b"9" * draw(st.integers(20, 400))
        else:
            del out[at : at + draw(st.integers(1, 64))]
    return bytes(out)


@pytest.mark.parametrize("parser", PARSERS, ids=lambda m: m.KIND)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_mutated_samples_give_a_result_or_a_parse_error(
    parser: ModuleType, data: st.DataObject
) -> None:
    original = _content(OWN_SAMPLE[parser])
    _honours_the_contract(parser, data.draw(_mutated(original)))


def test_an_integer_beyond_float_range_is_not_a_key_metric() -> None:
    # Found by the mutation test above: a 309-digit "registers per thread" overflowed float().
    data = _content(OWN_SAMPLE[ncu_text])
    huge = b"9" * 330
    damaged = re.sub(rb"(launch__registers_per_thread\s+register/thread\s+)\d+", rb"\g<1>" + huge,
                     data, count=1)  # fmt: skip
    assert damaged != data
    result = ncu_text.parse(io.BytesIO(damaged))
    assert result.kernels[0].registers_per_thread is None
    json.dumps(result.to_json(), allow_nan=False)
