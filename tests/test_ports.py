"""`make run` checks its address first (perfhub/ports.py): a port in use is one clear line."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ports(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfhub.ports", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip


def test_a_port_in_use_is_one_clear_line_and_exit_1() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        done = _ports("127.0.0.1", str(port))
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"port {port} on 127.0.0.1 is in use (another PerfHub, or another server): "
        f"stop it, or run `make run PORT={port + 1}`"
    )


def test_a_free_port_passes_and_a_bad_one_is_a_usage_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert _ports("127.0.0.1", str(port)).returncode == 0
    bad = _ports("127.0.0.1", "http")
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_make_run_takes_host_and_port() -> None:
    plan = subprocess.run(
        ["make", "-n", "run", "PORT=8123", "HOST=0.0.0.0"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "perfhub.ports 0.0.0.0 8123" in plan
    assert "PERFHUB_HOST=0.0.0.0 PERFHUB_PORT=8123" in plan and "honcho start" in plan
    procfile = (ROOT / "Procfile").read_text()
    assert "runserver --nostatic ${PERFHUB_HOST:-127.0.0.1}:${PERFHUB_PORT:-8000}" in procfile
