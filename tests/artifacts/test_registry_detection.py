"""Kind detection gives the same answer it gave before the sniffers were made faster.

tests/expected/detection/shared_samples.json holds, for every file in ../shared/samples and
../shared/more-samples (keys ``more-samples/...``),
the kind ``detect_kind`` and the bundle's ``choose_kind`` returned with the code of the
commit before the speed-up (sniffers asked one by one, nothing skipped), for three head
lengths (64 KiB, 4 KiB, 512 B: a short member, or a head cut in the middle of a line) and
four names (the file's own, a neutral one, and two sysinfo-snapshot member names that the
name-trusting sniffers react to). A sniffer shortcut that changes any of them fails here.

When a detection change is intended (a new kind, a sharper sniffer), regenerate with
``.venv/bin/python -m tests.artifacts.test_registry_detection --write`` and review the diff.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.samples import MORE_SAMPLES_DIR, SAMPLES_DIR

EXPECTED = Path(__file__).resolve().parents[1] / "expected" / "detection" / "shared_samples.json"
CUTS = (65536, 4096, 512)
NAMES = ("{own}", "upload.bin", "ethtool_-S_ens1f0np0.txt", "hw_counters_mlx5_0_port1.txt")
COLUMNS = [f"{cut}:{name}{how}" for cut in CUTS for name in NAMES for how in ("", ":bundle")]


def current_table() -> dict[str, list[str]]:
    from artifacts.bundles.parsers.common import choose_kind
    from artifacts.parsers import detect_kind
    from artifacts.parsers.streams import read_head

    table: dict[str, list[str]] = {}
    for key, path in sample_files():
        with path.open("rb") as f:
            head = read_head(f, compressed_size=path.stat().st_size)
        row = []
        for cut in CUTS:
            for name in NAMES:
                used = path.name if name == "{own}" else name
                row.append(detect_kind(used, head[:cut]))
                row.append(choose_kind(used, head[:cut]))
        table[key] = row
    return table


def sample_files() -> list[tuple[str, Path]]:
    """(key, path) of every file of both shared folders that are here."""
    found = []
    for root, prefix in ((SAMPLES_DIR, ""), (MORE_SAMPLES_DIR, "more-samples/")):
        if root.is_dir():
            files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != "MANIFEST.tsv")
            found += [(prefix + p.relative_to(root).as_posix(), p) for p in files]
    return found


def test_no_detection_result_changed() -> None:
    if not SAMPLES_DIR.is_dir():
        pytest.skip(f"shared samples not available: {SAMPLES_DIR}")
    expected = json.loads(EXPECTED.read_text())
    assert expected["columns"] == COLUMNS
    got = current_table()
    changed = [
        f"{rel} [{column}]: {want} -> {have}"
        for rel, row in expected["kinds"].items()
        if rel in got
        for column, want, have in zip(COLUMNS, row, got[rel], strict=True)
        if want != have
    ]
    assert not changed, "detection changed:\n" + "\n".join(changed[:40])
    here = [
        key for key in expected["kinds"] if MORE_SAMPLES_DIR.is_dir() or not key.startswith("more-")
    ]
    assert sorted(got) == sorted(here), "the shared samples changed: regenerate"


def test_a_bytearray_head_is_detected_like_bytes() -> None:
    """The decoded-head cache takes bytes; other buffers are decoded each time, same answer."""
    from artifacts.parsers import detect_kind

    for text in (b"NIC statistics:\n     rx_bytes: 12\n", b"net.core.rmem_max = 1\n" * 3):
        assert detect_kind("x.txt", bytearray(text)) == detect_kind("x.txt", text) != "other"


if __name__ == "__main__" and "--write" in sys.argv:
    rows = current_table()
    lines = ",\n".join(
        f"  {json.dumps(rel)}: {json.dumps(row)}" for rel, row in sorted(rows.items())
    )
    EXPECTED.write_text(
        '{"columns": ' + json.dumps(COLUMNS) + ',\n "kinds": {\n' + lines + "\n }}\n"
    )
    print(f"wrote {len(rows)} rows to {EXPECTED}")
