"""Metamorphic tests over the whole real corpus: every sample of ../shared/samples and of
../shared/more-samples (both folders read alike), pasted from a terminal, fenced, with CRLF
or colours, behind each launcher's and log collector's prefixes, behind 2,000 lines of
libfabric noise, in UTF-16, with a second command appended, keeps its kind and its facts
(tests/transforms.py says what a fact is). ``benchmarks/real_inputs.py`` prints the same
matrix as a table. Exemptions are listed, with their reason, in docs/formats.md ("Real
inputs"); cases that are a parser's own problem are listed in ``KNOWN`` below."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifacts.parsers import OTHER
from tests.samples import REPO_DIR
from tests.transforms import (
    DOCUMENT_EXEMPT,
    EXEMPT_SUFFIXES,
    KNOWN,
    TRANSFORMS,
    applies,
    reading,
    same_reading,
    sample_id,
    text_samples,
)


@pytest.mark.parametrize("path", text_samples(), ids=sample_id)
def test_every_transformation_keeps_kind_and_facts(path: Path) -> None:
    data = path.read_bytes()
    kind, want = reading(path.name, data)
    if kind == OTHER or isinstance(want, str):
        pytest.skip(f"{path.name}: not evidence of a known kind ({want})")
    broken = []
    for label, transform in TRANSFORMS.items():
        if not applies(path.name, kind, label, data[:64]):
            continue
        if (sample_id(path), label) in KNOWN:
            continue
        why = same_reading(kind, want, label, *reading(path.name, transform(data)))
        if why:
            broken.append(f"{label}: {why}")
    assert not broken, broken


def test_the_known_cases_still_fail() -> None:
    """A case listed as a parser's problem is dropped from the list once it is fixed."""
    fixed = []
    for (name, label), _reason in KNOWN.items():
        path = next((p for p in text_samples() if sample_id(p) == name), None)
        if path is None:
            continue  # ../shared absent
        data = path.read_bytes()
        kind, want = reading(path.name, data)
        if same_reading(kind, want, label, *reading(path.name, TRANSFORMS[label](data))) is None:
            fixed.append((name, label))
    assert not fixed, f"fixed: remove from tests/transforms.py KNOWN: {fixed}"


def test_the_exemptions_are_documented() -> None:
    text = (REPO_DIR / "docs" / "formats.md").read_text()
    for suffix in EXEMPT_SUFFIXES:
        assert f"`{suffix}`" in text, suffix
    for label in DOCUMENT_EXEMPT:
        assert label in text
