"""Metamorphic tests over the whole real corpus: every shared sample, pasted from a terminal,
fenced, with CRLF or colours, behind each launcher's and log collector's prefixes, behind
2,000 lines of libfabric noise, in UTF-16, with a second command appended, keeps its kind
and its facts (tests/transforms.py says what a fact is). ``benchmarks/real_inputs.py``
prints the same matrix as a table. Exemptions are listed, with their reason, in
docs/formats.md ("Real inputs")."""

from __future__ import annotations

from pathlib import Path

import pytest

from artifacts.parsers import OTHER
from tests.samples import REPO_DIR, SAMPLES_DIR
from tests.transforms import (
    DOCUMENT_EXEMPT,
    EXEMPT_SUFFIXES,
    TRANSFORMS,
    applies,
    reading,
    same_reading,
)


def _samples() -> list[Path]:
    if not SAMPLES_DIR.is_dir():
        return []
    files = sorted(p for p in SAMPLES_DIR.rglob("*") if p.is_file() and p.name != "MANIFEST.tsv")
    return [p for p in files if not any(p.name.endswith(s) for s in EXEMPT_SUFFIXES)]


@pytest.mark.parametrize("path", _samples(), ids=lambda p: str(p.relative_to(SAMPLES_DIR)))
def test_every_transformation_keeps_kind_and_facts(path: Path) -> None:
    data = path.read_bytes()
    kind, want = reading(path.name, data)
    if kind == OTHER or isinstance(want, str):
        pytest.skip(f"{path.name}: not evidence of a known kind ({want})")
    broken = []
    for label, transform in TRANSFORMS.items():
        if not applies(path.name, kind, label, data[:64]):
            continue
        why = same_reading(kind, want, label, *reading(path.name, transform(data)))
        if why:
            broken.append(f"{label}: {why}")
    assert not broken, broken


def test_the_exemptions_are_documented() -> None:
    text = (REPO_DIR / "docs" / "formats.md").read_text()
    for suffix in EXEMPT_SUFFIXES:
        assert f"`{suffix}`" in text, suffix
    for label in DOCUMENT_EXEMPT:
        assert label in text
