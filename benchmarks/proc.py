"""Run a command as a user would and measure its wall time and peak RSS (shared by scripts).

Peak RSS comes from GNU ``/usr/bin/time``: its own small process forks the command, so the
figure is the command's alone. (``ru_maxrss`` of a child forked from a big Python process
starts at the parent's high-water mark: Linux carries it over fork and exec.)
"""

from __future__ import annotations

import os
import platform
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

GNU_TIME = "/usr/bin/time"


@dataclass(frozen=True)
class Timed:
    wall_s: float
    peak_mb: float | None  # None when GNU time is missing
    returncode: int
    stdout_bytes: int
    stderr_tail: str


def timed(
    cmd: list[str], *, cwd: str | Path | None = None, env: dict[str, str] | None = None
) -> Timed:
    """Run ``cmd`` with its stdout in a temporary file (as ``> out.json`` would put it)."""
    use_time = os.path.exists(GNU_TIME)
    with tempfile.TemporaryDirectory(prefix="perfhub-proc-") as tmp:
        report = Path(tmp) / "time.txt"
        full = [GNU_TIME, "-f", "%M", "-o", str(report), *cmd] if use_time else cmd
        out_path = Path(tmp) / "stdout"
        with out_path.open("wb") as out:
            clock = time.perf_counter()
            done = subprocess.run(
                full, cwd=cwd, env=env, stdout=out, stderr=subprocess.PIPE, check=False
            )
            wall = time.perf_counter() - clock
        peak = None
        if use_time and report.exists():
            lines = [ln for ln in report.read_text().splitlines() if ln.strip().isdigit()]
            peak = int(lines[-1]) / 1024 if lines else None
        return Timed(
            wall_s=wall,
            peak_mb=peak,
            returncode=done.returncode,
            stdout_bytes=out_path.stat().st_size,
            stderr_tail=done.stderr.decode(errors="replace")[-2000:],
        )


def machine_line() -> str:
    """Where and when: the line every benchmark table starts with."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    model = ""
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh if "model name" in ln), "")
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {platform.node()} · {cores} cores"
        f"{' (' + model + ')' if model else ''} · Python {platform.python_version()} · "
        f"load average {load:.2f} at the start"
    )
