"""Speed and memory of evidence-bundle redaction (incidents.redaction) and the zip writer.

Builds a large NCCL_DEBUG=INFO log by tiling a real sample (every copy with its own host
names and addresses, so the pseudonym maps grow like they do on a real cluster), then, in a
fresh process per size so peak RSS is clean:

* pass 1 (``Redactor.discover``) and pass 2 (``Redactor.redact``) line by line, streaming
  from disk to disk, as the bundle builder does;
* the deterministic zip of the redacted file
  (``incidents.bundles.services.write_deterministic_zip``),
  written twice to show the two archives are byte-identical.

    .venv/bin/python benchmarks/redaction.py            # 16 and 64 MB
    .venv/bin/python benchmarks/redaction.py --mb 256

There is no reference tool doing consistent pseudonymisation of NCCL logs to compare with;
``sed`` replacing IPv4 addresses alone is printed as a floor for one regex over the bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = (
    ROOT.parent
    / "shared"
    / "samples"
    / "nccl_debug"
    / "ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log"
)
MB = 1_000_000
_HOST = re.compile(rb"\bgdr(11[46])\b")
_IP = re.compile(rb"192\.168\.(\d+)\.(\d+)")


def generate(target: Path, megabytes: int) -> int:
    """Tile the sample; copy k talks about hosts gdr<k>-114/116 and 10.<k>.x.y."""
    text = SAMPLE.read_bytes()
    written, copy = 0, 0
    with target.open("wb") as out:
        while written < megabytes * MB:
            k = str(copy % 4096).encode()
            chunk = _HOST.sub(rb"gdr" + k + rb"-\1", text)
            chunk = _IP.sub(rb"10." + str(copy % 250).encode() + rb".\1.\2", chunk)
            out.write(chunk)
            written += len(chunk)
            copy += 1
    return written


def child(path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")
    import django

    django.setup()
    from incidents.bundles.services import write_deterministic_zip
    from incidents.redaction import Redactor

    size = path.stat().st_size
    redactor = Redactor()
    start = time.perf_counter()
    with path.open("rb") as handle:
        for raw in handle:
            redactor.discover(raw.decode("utf-8", "surrogateescape"))
    discover_s = time.perf_counter() - start
    out = path.with_suffix(".redacted")
    start = time.perf_counter()
    with path.open("rb") as handle, out.open("wb") as target:
        for raw in handle:
            line = redactor.redact(raw.decode("utf-8", "surrogateescape"), "raw/01-big.log")
            target.write(line.encode("utf-8", "surrogateescape"))
    redact_s = time.perf_counter() - start
    digests = []
    start = time.perf_counter()
    for n in (1, 2):
        archive = path.with_suffix(f".{n}.zip")
        write_deterministic_zip(archive, [("bundle/raw/01-big.log", out)])
        digests.append(hashlib.sha256(archive.read_bytes()).hexdigest())
    zip_s = (time.perf_counter() - start) / 2
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    hosts = len([r for r in redactor.replacements() if r.category == "host"])
    identical = "yes" if digests[0] == digests[1] else "NO"
    print(
        f"{size / MB:8.0f} {size / MB / discover_s:10.1f} {size / MB / redact_s:10.1f} "
        f"{size / MB / zip_s:8.1f} {rss_mb:8.0f} {hosts:7d} {identical:>10}"
    )


def sed_floor(path: Path) -> str:
    if not shutil.which("sed"):
        return "n/a"
    start = time.perf_counter()
    subprocess.run(
        ["sed", "-E", r"s/[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+/198.18.0.1/g", str(path)],
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return f"{path.stat().st_size / MB / (time.perf_counter() - start):.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    if not SAMPLE.exists():
        sys.exit(f"sample missing: {SAMPLE} (needs ../shared/samples)")
    print("Redaction of a tiled NCCL_DEBUG=INFO log (one CPU core; MB/s of input)")
    columns = ("MB", 8), ("discover", 10), ("redact", 10), ("zip", 8), ("RSS MB", 8)
    columns += ("hosts", 7), ("identical", 10)
    print(" ".join(f"{name:>{width}}" for name, width in columns))
    floors = []
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in args.mb:
            path = Path(tmp) / f"big-{megabytes}.log"
            generate(path, megabytes)
            subprocess.run([sys.executable, __file__, "--child", str(path)], check=True)
            floors.append((megabytes, sed_floor(path)))
    for megabytes, floor in floors:
        print(f"floor: sed -E one IPv4 regex over {megabytes} MB: {floor} MB/s")


if __name__ == "__main__":
    main()
