"""Kind detection speed: per-sniffer cost, detect_kind, and a 500-member support bundle.

Three tables:

1. ``accepts()`` of every registered parser over the detection heads (first 64 KiB,
   decompressed) of every file in ../shared/samples: mean and worst milliseconds per file.
2. ``detect_kind`` over the same heads (what every upload pays once).
3. A synthetic sysinfo-snapshot tarball of N members (default 500; the member bytes are
   the shared samples' text files, cycled, under sysinfo-snapshot-like names): the parse
   (which chooses each member's kind), the unpack walk (``iter_parts``, as
   ``bundle_unpack`` runs it, given the parse's parts) and the detections that ingesting
   the members costs, with the number of ``detect_kind`` calls each step made.

Run: ``.venv/bin/python benchmarks/detect_kinds.py [--members 500] [--repeat 3]``.
``--root DIR`` imports the project from another checkout (e.g. ``git archive HEAD`` unpacked
under /tmp) so before/after figures come from one script on one machine.
"""

from __future__ import annotations

import argparse
import importlib
import io
import statistics
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parent.parent.parent / "shared" / "samples"
TOP = "sysinfo-snapshot-v3.7.6-gpu-node-07-20250223-162501"
# Member names in sysinfo-snapshot's style, by the sample folder the bytes come from.
NAMES = {
    "ethtool_rdma": "ethtool_-S_{i}.txt",
    "mlxlink": "mlxlink_-d_mlx5_{i}_-m_-c.txt",
    "mlxconfig": "mlxconfig_-d_mlx5_{i}_q.txt",
    "counters": "sys_class_infiniband_counters_{i}.txt",
    "numa": "numastat_{i}.txt",
    "interrupts": "cat_proc_interrupts_{i}.txt",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--members", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    sys.path.insert(0, str(args.root))
    registry = importlib.import_module("artifacts.parsers")
    streams = importlib.import_module("artifacts.parsers.streams")
    sysinfo = importlib.import_module("artifacts.bundles.parsers.sysinfo_snapshot")
    if not SAMPLES.is_dir():
        sys.exit(f"no shared samples at {SAMPLES}")
    heads = _heads(streams)
    print(f"project: {args.root}\nheads: {len(heads)} shared samples\n")
    _sniffer_table(registry, heads, args.repeat)
    _detect_table(registry, heads, args.repeat)
    _bundle_table(registry, sysinfo, heads, args.members, args.repeat)


def _heads(streams: Any) -> list[tuple[str, str, bytes]]:
    out = []
    for path in sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name != "MANIFEST.tsv"):
        with path.open("rb") as f:
            head = streams.read_head(f, compressed_size=path.stat().st_size)
        out.append((path.parent.name, path.name, head))
    return out


def _sniffer_table(registry: Any, heads: list[tuple[str, str, bytes]], repeat: int) -> None:
    rows = []
    for kind in registry.PARSERS:
        accepts = registry.get_parser(kind).accepts
        per_file = []
        for _folder, name, head in heads:
            per_file.append(_best(lambda a=accepts, n=name, h=head: a(n, h), repeat))
        rows.append((kind, statistics.fmean(per_file), max(per_file)))
    total = sum(r[1] for r in rows)
    print(f"{'sniffer':<20} {'mean ms':>9} {'worst ms':>9}")
    for kind, mean, worst in sorted(rows, key=lambda r: -r[1]):
        print(f"{kind:<20} {mean * 1e3:9.3f} {worst * 1e3:9.3f}")
    print(f"{'all sniffers':<20} {total * 1e3:9.3f}\n")


def _detect_table(registry: Any, heads: list[tuple[str, str, bytes]], repeat: int) -> None:
    times = [
        _best(lambda n=name, h=head: registry.detect_kind(n, h), repeat)
        for _folder, name, head in heads
    ]
    print(f"{'detect_kind':<20} {'mean ms':>9} {'worst ms':>9} {'total ms':>9}")
    print(
        f"{'shared samples':<20} {statistics.fmean(times) * 1e3:9.3f} {max(times) * 1e3:9.3f} "
        f"{sum(times) * 1e3:9.1f}\n"
    )


def _bundle_table(
    registry: Any, sysinfo: Any, heads: list[tuple[str, str, bytes]], members: int, repeat: int
) -> None:
    texts = [(f, n) for f, n, _ in heads if _is_text((SAMPLES / f / n).read_bytes()[:4096])]
    raw = _tarball(texts, members)
    calls = _count_detections(registry)
    rows = []
    parse_s, result = _timed(lambda: sysinfo.parse(io.BytesIO(raw)), repeat, calls)
    rows.append(("parse (kinds chosen)", parse_s, calls.per_run))
    iter_parts = sysinfo.iter_parts
    known = result.parts
    takes_known = "known" in iter_parts.__code__.co_varnames

    def unpack() -> list[Any]:
        extra = {"known": known} if takes_known else {}
        return [
            (p, b.read(64 * 1024) if b else b"") for p, b in iter_parts(io.BytesIO(raw), **extra)
        ]

    unpack_s, parts = _timed(unpack, repeat, calls)
    rows.append(("unpack walk", unpack_s, calls.per_run))
    # artifact_ingest detects each stored member again unless the bundle says what it found
    skips = any(getattr(p, "detected", "") for p, _ in parts)

    def ingest() -> None:
        for part, head in parts:
            if part.stored and not (skips and part.detected):
                registry.detect_kind(part.name, head)

    ingest_s, _ = _timed(ingest, repeat, calls)
    rows.append(("ingest detections", ingest_s, calls.per_run))
    print(f"sysinfo-snapshot of {len(result.parts)} members ({len(raw) / 1e6:.1f} MB)")
    print(f"{'step':<22} {'seconds':>8} {'ms/member':>10} {'detect_kind calls':>18}")
    for step, seconds, n in rows:
        print(f"{step:<22} {seconds:8.2f} {seconds / members * 1e3:10.2f} {n:18d}")
    total = sum(r[1] for r in rows)
    print(f"{'total':<22} {total:8.2f} {total / members * 1e3:10.2f}")


class _Counter:
    def __init__(self) -> None:
        self.calls = 0
        self.per_run = 0


def _count_detections(registry: Any) -> _Counter:
    """Wrap detect_kind (and the copy bundle_common imports lazily) to count calls."""
    counter = _Counter()
    original = registry.detect_kind

    def counted(name: str, head: bytes) -> str:
        counter.calls += 1
        return original(name, head)

    registry.detect_kind = counted
    return counter


def _timed(fn: Callable[[], Any], repeat: int, counter: _Counter) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        counter.calls = 0
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
        counter.per_run = counter.calls
    return best, out


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _is_text(head: bytes) -> bool:
    return bool(head) and b"\x00" not in head and not head.startswith((b"SQLite", b"\x1f\x8b"))


def _tarball(texts: list[tuple[str, str]], members: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for i in range(members):
            folder, name = texts[i % len(texts)]
            data = (SAMPLES / folder / name).read_bytes()[: 512 * 1024]
            member = NAMES.get(folder, "{i}_" + name).format(i=i)
            info = tarfile.TarInfo(f"{TOP}/commands_txt_output/{member}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


if __name__ == "__main__":
    main()
