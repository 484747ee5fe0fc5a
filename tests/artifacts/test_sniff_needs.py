"""``SNIFF_NEEDS`` (artifacts/parsers/registry.py) is a necessary condition of each sniffer:
detection skips a sniffer whose byte strings a sample lacks, so a sniffer that accepts a
sample without them would lose its files. Checked on every text sample (as stored, fenced
under a prompt, behind launcher tags and with colours, the way detection cleans them) and on
the test fixtures: wherever the sniffer says yes, its needs hold."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from artifacts.parsers import cleaning, normalize
from artifacts.parsers.detection import _score, detect, sample
from artifacts.parsers.registry import SNIFF_NEEDS, get_parser
from tests.transforms import TRANSFORMS, text_samples

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SHOWN = ("fenced", "Open MPI", "ANSI", "libfabric noise")


def _files() -> list[Path]:
    fixtures = [p for p in sorted(FIXTURES.rglob("*")) if p.is_file()]
    return [*text_samples(), *fixtures]


def _sniffed(name: str, data: bytes) -> list[bytes]:
    """What the sniffers see of a file: its head and windows, raw and cleaned."""
    taken = sample(io.BytesIO(data), len(data))
    if taken.encoding == "binary":
        return []
    view = normalize.plan(b"\n".join((taken.head, *taken.windows)))
    out = []
    # a long file's windows with those around its signature lines
    windows = taken.scan() if taken.scan else taken.windows
    for part in (taken.head, *windows):
        out += [part, cleaning.clean_bytes(part, view)]
    return out


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_a_sniffer_accepts_nothing_without_its_needs(path: Path) -> None:
    data = path.read_bytes()
    copies = [data, *(TRANSFORMS[label](data) for label in SHOWN)]
    wrong = set()
    for copy in copies:
        for clean in _sniffed(path.name, copy):
            for kind, needs in SNIFF_NEEDS.items():
                if not needs(clean) and _score(get_parser(kind), kind, path.name, clean):
                    wrong.add(kind)
    assert not wrong, f"{path.name}: sniffers accept it without their SNIFF_NEEDS: {wrong}"


def test_needs_skip_only_sniffers_that_say_no() -> None:
    """A sample holding a kind's needs is still sniffed: a prometheus scrape is detected."""
    scrape = b'# TYPE up gauge\nup{job="a"} 1\nup{job="b"} 0\n'
    assert SNIFF_NEEDS["prometheus_text"](scrape)
    assert detect("metrics.txt", scrape).kind == "prometheus_text"
    assert not SNIFF_NEEDS["numa"](b"rx_packets: 12\ntx_packets: 13\n")
