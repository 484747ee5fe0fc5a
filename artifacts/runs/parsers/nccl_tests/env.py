"""The NCCL_* settings a run ran with, as its own output states them. Pure Python.

Package-private to ``artifacts.runs.parsers.nccl_tests``. Three places say it, weakest first:

* ``export NCCL_ALGO=Tree`` lines of a pasted session (they hold for every later command);
* the launch command: ``NCCL_ALGO=Tree ./all_reduce_perf ...``, ``mpirun -x NCCL_PROTO=LL``,
  ``env NCCL_MIN_NCHANNELS=8 ...``;
* NCCL's own echo under ``NCCL_DEBUG=INFO``: ``NCCL INFO NCCL_ALGO set by environment to
  Tree``: what the library really read, so it wins over the command.

Variables that only change what NCCL prints (``NCCL_DEBUG*``, dump files) are left out: a sweep
or a software stack must not split on them.
"""

from __future__ import annotations

import re

MAX_ENV = 200
MAX_VALUE = 500
# "NCCL_ALGO set by environment to Tree" (older NCCL: "set to"); some end with a period.
ECHO_RE = re.compile(r"^(?P<name>NCCL_[A-Z0-9_]+) set (?:by environment )?to (?P<value>.*?)\s*$")
# NAME=value inside a command line; quoted values keep their spaces.
ASSIGN_RE = re.compile(
    r"(?<![\w$])(?P<name>NCCL_[A-Z0-9_]+)=(?P<value>\"[^\"]*\"|'[^']*'|[^\s;'\"\\]*)"
)
EXPORT_RE = re.compile(r"^(?:export|setenv|declare -x)\s+NCCL_")
# Logging and dump switches: they change the output, not how NCCL moves data.
NOT_SETTINGS = frozenset(
    {
        "NCCL_DEBUG",
        "NCCL_DEBUG_SUBSYS",
        "NCCL_DEBUG_FILE",
        "NCCL_DEBUG_TIMESTAMP_FORMAT",
        "NCCL_DEBUG_TIMESTAMP_LEVELS",
        "NCCL_TOPO_DUMP_FILE",
        "NCCL_GRAPH_DUMP_FILE",
        "NCCL_TESTS_SPLIT_MASK",
    }
)


def clean_value(value: str) -> str:
    value = value.strip().strip("'\"").strip()
    if value.endswith(".") and value[:-1].replace(".", "").isdigit():
        value = value[:-1]  # "... set by environment to 3."
    return value[:MAX_VALUE]


def assignments(command: str) -> dict[str, str]:
    """``NCCL_*=value`` pairs of one command line (later ones win, as in a shell)."""
    found: dict[str, str] = {}
    for match in ASSIGN_RE.finditer(command):
        name = match.group("name")
        if name not in NOT_SETTINGS and len(found) < MAX_ENV:
            found[name] = clean_value(match.group("value"))
    return found


def echoed(message: str) -> tuple[str, str] | None:
    """(name, value) of an NCCL INFO environment echo, else None."""
    match = ECHO_RE.match(message)
    if match is None or match.group("name") in NOT_SETTINGS:
        return None
    return match.group("name"), clean_value(match.group("value"))


def is_export(line: str) -> bool:
    return EXPORT_RE.match(line) is not None
