"""Real inputs: does every shared sample keep its kind and facts however it arrives?

For every text sample in ../shared/samples and every transformation in tests/transforms.py
(terminal prompt, fence, CRLF, colours, launcher prefixes, kubectl/journald/tee stamps,
libfabric noise, UTF-16, BOM, a second command appended), parse the original and the
transformed bytes the way an upload is parsed (detect on a cleaned sample, clean, parse) and
compare kind and facts (the result JSON without warnings and line positions). Prints, per
kind and per transformation, the share of files that survive, the files that did not, and
the mean/worst detection time per file.

Run: ``.venv/bin/python benchmarks/real_inputs.py [--only KIND] [--show-failures]``.
"""

from __future__ import annotations

import argparse
import io
import platform
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from artifacts.parsers import OTHER  # noqa: E402
from artifacts.parsers.detection import detect, sample  # noqa: E402
from tests.samples import SAMPLES_DIR  # noqa: E402
from tests.transforms import (  # noqa: E402
    EXEMPT_SUFFIXES,
    TRANSFORMS,
    applies,
    reading,
    same_reading,
)


def text_samples() -> list[Path]:
    files = sorted(p for p in SAMPLES_DIR.rglob("*") if p.is_file() and p.name != "MANIFEST.tsv")
    return [p for p in files if not any(p.name.endswith(s) for s in EXEMPT_SUFFIXES)]


def detection_ms(name: str, data: bytes) -> float:
    start = time.perf_counter()
    taken = sample(io.BytesIO(data), len(data))
    detect(name, taken.head, windows=taken.windows, whole=taken.whole, encoding=taken.encoding)
    return (time.perf_counter() - start) * 1000


def run(only: str | None) -> dict[str, Any]:
    table: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    failures: list[str] = []
    times: list[float] = []
    own: list[float] = []  # the samples as they are stored
    for path in text_samples():
        data = path.read_bytes()
        kind, want = reading(path.name, data)
        if kind == OTHER or (only and kind != only):
            continue
        detection_ms(path.name, data)  # warm: importing a parser is start-up, not sniffing
        own.append(detection_ms(path.name, data))
        for label, transform in TRANSFORMS.items():
            if not applies(path.name, kind, label, data[:64]):
                continue
            changed = transform(data)
            times.append(detection_ms(path.name, changed))
            why = same_reading(kind, want, label, *reading(path.name, changed))
            table[(kind, label)][0] += why is None
            table[(kind, label)][1] += 1
            if why:
                failures.append(f"{path.relative_to(SAMPLES_DIR)} [{label}]: {why}")
    return {"table": table, "failures": failures, "times": times, "own": own}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one kind")
    parser.add_argument("--show-failures", action="store_true")
    args = parser.parse_args()
    if not SAMPLES_DIR.is_dir():
        sys.exit(f"shared samples not found at {SAMPLES_DIR}")
    out = run(args.only)
    table, times = out["table"], out["times"]
    kinds = sorted({k for k, _ in table})
    print(
        f"# real inputs, {datetime.now(UTC):%Y-%m-%d}, {platform.machine()}, "
        f"{platform.python_version()}, {len(text_samples())} text samples"
    )
    print(f"{'transformation':<20}" + "".join(f"{k[:12]:>13}" for k in kinds) + f"{'all':>8}")
    for label in TRANSFORMS:
        cells, ok_all, n_all = [], 0, 0
        for kind in kinds:
            ok, n = table.get((kind, label), [0, 0])
            ok_all, n_all = ok_all + ok, n_all + n
            cells.append(f"{ok}/{n}" if n else "-")
        share = f"{100 * ok_all / n_all:.0f}%" if n_all else "-"
        print(f"{label:<20}" + "".join(f"{c:>13}" for c in cells) + f"{share:>8}")
    total_ok = sum(v[0] for v in table.values())
    total = sum(v[1] for v in table.values())
    print(f"\nsurvived: {total_ok}/{total} ({100 * total_ok / max(total, 1):.1f} %)")
    for label, values in (("samples as stored", out["own"]), ("transformed copies", times)):
        if values:
            print(
                f"detection per file, {label}: mean {sum(values) / len(values):.2f} ms, "
                f"worst {max(values):.1f} ms over {len(values)} files"
            )
    if args.show_failures:
        print("\n".join(out["failures"]))


if __name__ == "__main__":
    main()
