"""``python -m perfhub.ports HOST PORT``: is the address free for the web server?

``make run`` asks before it starts honcho, so a port in use gets one clear line and exit
code 1 instead of the web process's traceback between the worker's start-up lines.
"""

from __future__ import annotations

import errno
import socket
import sys


def port_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be served, or None when it can."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as runserver binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (
                    f"port {port} on {host} is in use (another PerfHub, or another server): "
                    f"stop it, or run `make run PORT={port + 1}`"
                )
            return f"cannot serve on {host}:{port}: {exc.strerror or exc}"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].isdigit() or not 0 < int(argv[1]) < 65536:
        print("usage: python -m perfhub.ports HOST PORT (PORT 1-65535)", file=sys.stderr)
        return 2
    problem = port_problem(argv[0], int(argv[1]))
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
