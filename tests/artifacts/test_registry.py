"""The registry contract: every kind is importable, self-consistent, tested and documented."""

from pathlib import Path

import pytest

from artifacts.parsers import (
    OTHER,
    PARSERS,
    detect_kind,
    get_parser,
    kind_choices,
    kind_label,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kind", sorted(PARSERS))
def test_parser_module_exposes_the_interface(kind):
    module = get_parser(kind)
    assert module.KIND == kind
    assert PARSERS[kind].label and not hasattr(module, "LABEL")  # one place for the label
    assert isinstance(module.VERSION, int)
    assert callable(module.accepts) and callable(module.parse)


@pytest.mark.parametrize("kind", sorted(PARSERS))
def test_every_kind_has_golden_tests(kind):
    # tests mirror the packages: artifacts.<family>.parsers... -> tests/artifacts/<family>/parsers
    family = PARSERS[kind].module.split(".")[1]
    expected = Path("tests", "artifacts", family, "parsers", f"test_{kind}.py")
    assert (ROOT / expected).exists(), f"kind {kind!r} has no {expected}"


@pytest.mark.parametrize("kind", sorted(PARSERS))
def test_every_kind_is_documented_in_formats_md(kind):
    text = (ROOT / "docs" / "formats.md").read_text()
    assert f"## {kind}" in text, f"docs/formats.md has no '## {kind}' section"


def test_unknown_content_is_kept_as_other():
    assert detect_kind("notes.txt", b"just some notes about the cluster\n") == OTHER
    assert detect_kind("blob.bin", b"\x00\x01\x02\xff" * 100) == OTHER


def test_choices_follow_the_registry():
    values = [value for value, _ in kind_choices()]
    assert values == [*PARSERS, OTHER]
    assert dict(kind_choices())["nccl_tests"] == kind_label("nccl_tests") == "nccl-tests output"
    assert kind_label(OTHER) == "Other attachment" and kind_label("gone_kind") == "gone_kind"


def test_labels_and_choices_import_no_parser_module():
    # a model's choices and every artifact page's kind name come from here; importing 31
    # parser modules for them cost ~0.7 s in each new process (issue 14)
    import subprocess
    import sys

    code = (
        "import sys; from artifacts.parsers import kind_choices, PARSERS; kind_choices(); "
        "print(sorted(m for m in sys.modules if any(m == k.module for k in PARSERS.values())))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
