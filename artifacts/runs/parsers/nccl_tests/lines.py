"""Cleaning nccl-tests output lines, and the line shapes that say "this is nccl-tests".

Package-private to ``artifacts.runs.parsers.nccl_tests``: shared by content sniffing and by the
text reader, so that detection and parsing strip the same launcher prefixes. Pure Python.
"""

from __future__ import annotations

import re

# Launcher prefixes, tried repeatedly because they stack (kubectl timestamps + mpirun tags).
_PREFIXES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Open MPI --tag-output '[1,0]<stdout>:'", re.compile(r"^\[\d+,\d+\]<(?:stdout|stderr)>:\s?")),
    ("rank prefix '0: ' (srun -l, pdsh)", re.compile(r"^\d{1,6}:\s")),
    ("kubectl --prefix '[pod/...]'", re.compile(r"^\[pod/[^\]\s]+\]\s")),
    (
        "timestamp prefix",
        re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s"),
    ),
)
_PREFIX_STARTS = frozenset("[0123456789")
# Some patched builds print "func(), file.cu:123, " before every printf, even mid-row.
_FUNC_PREFIX_RE = re.compile(r"[A-Za-z_]\w*\(\), [\w./-]+\.(?:cu|cc|cpp|c|h):\d+, ?")
_NA_GLUED_RE = re.compile(r"N/A(?=[A-Za-z_]\w*\(\), )")  # "N/ABenchTime()": keep the N/A
# The part of an NCCL debug line after "host": ":pid:tid [dev] [time func:line] NCCL LEVEL"
# (NCCL_DEBUG=TRACE API tracing prints "host:pid:tid NCCL CALL ..." without the device).
DEBUG_TAIL_RE = re.compile(
    r":(?P<pid>\d+):(?P<tid>\d+) (?:\[(?P<dev>-?\d+)\] )?(?:\S+ ){0,3}?"
    r"NCCL (?P<level>INFO|WARN|TRACE|ERROR|ABORT|CALL)\b ?(?P<msg>.*)$"
)
HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")

# A '#' line only nccl-tests prints: one of them is enough to claim a file.
TEXT_MARKER_RE = re.compile(
    r"^#\s*(?:nThread\s+\d+\s+nGpus\s+\d+"
    r"|Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s"
    r"|Collective test (?:starting|concluded):"
    r"|nccl-tests version\s"
    r"|size\s+count\s+type\b"
    r"|Avg bus bandwidth\s*:"
    r"|Out of bounds values\s*:"
    r"|.*out-of-place\s+in-place)"
)
# A results row in today's column layout (for fragments that start inside a table).
MODERN_ROW_RE = re.compile(
    r"^\d+\s+\d+\s+(?:float|double|half|bfloat16|int8|uint8|int32|uint32|int64|uint64|"
    r"fp8_e4m3|fp8_e5m2|f8e4m3|f8e5m2)\s+\w+\s+-?\d+(?:\s+\S+){8}$"
)


def strip_func_prefixes(line: str) -> str:
    return _FUNC_PREFIX_RE.sub(" ", _NA_GLUED_RE.sub("N/A ", line))


def strip_prefixes(line: str, seen: dict[str, int] | None = None) -> str:
    """``line`` without its launcher prefixes; ``seen`` counts each kind that was removed."""
    for _ in range(4):
        # A prefixed block may itself be indented (a Markdown list, an e-mail quote): the
        # indent goes with the prefix, and stays when no prefix follows (rows are indented).
        unindented = line.lstrip(" \t")
        # every prefix starts with "[" or a digit: most lines are rejected without a pattern
        if not unindented or unindented[0] not in _PREFIX_STARTS:
            return line
        for label, pattern in _PREFIXES:
            match = pattern.match(unindented)
            if match:
                line = unindented[match.end() :]
                if seen is not None:
                    seen[label] = seen.get(label, 0) + 1
                break
        else:
            return line
    return line
