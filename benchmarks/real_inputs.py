"""Real inputs: does every shared sample keep its kind and facts however it arrives?

For every text sample in ../shared/samples and ../shared/more-samples and every
transformation in tests/transforms.py
(terminal prompt, fence, CRLF, colours, launcher prefixes, kubectl/journald/tee stamps,
libfabric noise, UTF-16, BOM, a second command appended), parse the original and the
transformed bytes the way an upload is parsed (detect on a cleaned sample, clean, parse) and
compare kind and facts (the result JSON without warnings and line positions). Prints, per
kind and per transformation, the share of files that survive, the files that did not, and
the mean/worst detection time per file.

Then the generated matrix: ``--generated N`` random variations per sample (the large
profile of tests/artifacts/test_generated_variation.py: prefix shapes, prompts, noise, cuts,
line ends, encodings, colours), the share kept per kind and per layer type. Last, detection
time for a 1 GB file (``--gigabyte``: 1 GB of another program's lines with an nccl-tests run
at the end, written to a temporary file and streamed).

Run: ``.venv/bin/python benchmarks/real_inputs.py [--only KIND] [--show-failures]
[--generated N] [--gigabyte]``.
"""

from __future__ import annotations

import argparse
import io
import platform
import random
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from artifacts.parsers import OTHER  # noqa: E402
from artifacts.parsers.detection import detect_sample, sample  # noqa: E402
from tests.samples import SAMPLES_DIR  # noqa: E402
from tests.transforms import (  # noqa: E402
    KNOWN,
    NOISE_LINES,
    TRANSFORMS,
    applies,
    check_variation,
    original_reading,
    random_variation,
    reading,
    same_reading,
    sample_id,
    text_samples,
)


def detection_ms(name: str, data: bytes) -> tuple[float, float]:
    """(wall, CPU) milliseconds of one detection: on cores shared with other work the wall
    clock also counts the waits, the CPU time only what detection itself did."""
    wall, cpu = time.perf_counter(), time.process_time()
    detect_sample(name, sample(io.BytesIO(data), len(data)))
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def run(only: str | None) -> dict[str, Any]:
    table: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    failures: list[str] = []
    times: list[tuple[float, float]] = []  # (wall, CPU) ms per transformed copy
    own: list[tuple[float, float]] = []  # the samples as they are stored
    for path in text_samples():
        data = path.read_bytes()
        kind, want = original_reading(path)
        if kind in (OTHER, "?") or isinstance(want, str) or (only and kind != only):
            continue
        detection_ms(path.name, data)  # warm: importing a parser is start-up, not sniffing
        own.append(detection_ms(path.name, data))
        for label, transform in TRANSFORMS.items():
            if not applies(path.name, kind, label, data[:64]) or (sample_id(path), label) in KNOWN:
                continue
            changed = transform(data)
            times.append(detection_ms(path.name, changed))
            why = same_reading(kind, want, label, *reading(path.name, changed))
            table[(kind, label)][0] += why is None
            table[(kind, label)][1] += 1
            if why:
                failures.append(f"{sample_id(path)} [{label}]: {why}")
    return {"table": table, "failures": failures, "times": times, "own": own}


def generated(per_sample: int, only: str | None, seed: int = 0) -> dict[str, Any]:
    """``per_sample`` random variations of every sample: kept / run per kind and per layer
    type (a variation counts under each layer type it applies)."""
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_layer: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    failures: list[str] = []
    for path in text_samples():
        kind, want = original_reading(path)
        if kind in (OTHER, "?") or isinstance(want, str) or (only and kind != only):
            continue
        data = path.read_bytes()
        # per sample, so that a run over one kind draws what the full run draws for it
        rng = random.Random(zlib.crc32(sample_id(path).encode()) ^ seed)
        for _ in range(per_sample):
            variation = random_variation(rng)
            why = check_variation(path.name, data, kind, want, variation, sample=sample_id(path))
            for row in (by_kind[kind], *(by_layer[label] for label in variation.labels())):
                row[0] += why is None
                row[1] += 1
            if why:
                failures.append(f"{sample_id(path)} {variation.labels()}: {why} {variation}")
    return {"kinds": by_kind, "layers": by_layer, "failures": failures}


def gigabyte_detection_s(size: int = 1 << 30) -> float:
    """Seconds to detect a file of ``size`` bytes: other programs' lines, then a run."""
    block = b"\n".join(NOISE_LINES) + b"\n"
    run = next(p for p in text_samples() if p.name.endswith("all_reduce_nccl221.dat"))
    with tempfile.TemporaryFile() as handle:
        chunk = block * max(1, (8 << 20) // len(block))
        while handle.tell() < size:
            handle.write(chunk)
        handle.write(run.read_bytes())
        total = handle.tell()
        handle.seek(0)
        start = time.perf_counter()
        found = detect_sample("big.log", sample(handle, total))
        elapsed = time.perf_counter() - start
    print(f"detection of a {total / 2**30:.2f} GB file: {elapsed:.3f} s, kind {found.kind}")
    return elapsed


def _share(row: list[int]) -> str:
    return f"{row[0]}/{row[1]} ({100 * row[0] / max(row[1], 1):.1f} %)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one kind")
    parser.add_argument("--show-failures", action="store_true")
    parser.add_argument("--generated", type=int, default=0, help="variations per sample")
    parser.add_argument("--seed", type=int, default=0, help="another set of variations")
    parser.add_argument("--gigabyte", action="store_true", help="time detection of 1 GB")
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
    for label, pairs in (("samples as stored", out["own"]), ("transformed copies", times)):
        if pairs:
            wall, cpu = [p[0] for p in pairs], [p[1] for p in pairs]
            print(
                f"detection per file, {label}: mean {sum(wall) / len(wall):.2f} ms "
                f"(CPU {sum(cpu) / len(cpu):.2f} ms), worst {max(wall):.1f} ms "
                f"over {len(wall)} files"
            )
    if args.show_failures:
        print("\n".join(out["failures"]))
    if args.generated:
        gen = generated(args.generated, args.only, args.seed)
        total = [sum(r[0] for r in gen["kinds"].values()), sum(r[1] for r in gen["kinds"].values())]
        print(f"\n# generated variation, {args.generated} per sample: kept {_share(total)}")
        for title, rows in (("kind", gen["kinds"]), ("layer type", gen["layers"])):
            print(f"{title:<24}{'kept':>24}")
            for key in sorted(rows):
                print(f"{key:<24}{_share(rows[key]):>24}")
        if args.show_failures:
            print("\n".join(gen["failures"]))
    if args.gigabyte:
        gigabyte_detection_s()


if __name__ == "__main__":
    main()
