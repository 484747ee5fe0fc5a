"""Turning printed or JSON tokens into the values of nccl-tests results.

Package-private to ``artifacts.runs.parsers.nccl_tests``. Text tables and every JSON variant go
through the same few converters, so "N/A", nan/inf and quoted numbers mean the same in all
of them. Pure Python, no Django.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

_COLLECTIVES = {
    "allreduce": "all_reduce",
    "allgather": "all_gather",
    "reducescatter": "reduce_scatter",
    "alltoall": "alltoall",
    "alltoallv": "alltoallv",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "sendrecv": "sendrecv",
    "gather": "gather",
    "scatter": "scatter",
    "hypercube": "hypercube",
}


class BadValue(Exception):
    """A token that should be a number is not: the line is not a table row."""


NUM_RE = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?(?:nan|inf)$", re.I)
INT_RE = re.compile(r"^-?\d{1,30}$")
_NA = {"N/A", "NA", "n/a", "-"}


def num(token: str) -> float | None:
    """A printed number; N/A (and nan/inf, which JSON cannot carry) become None."""
    if token in _NA:
        return None
    if not NUM_RE.match(token):
        raise BadValue(token)
    value = float(token)
    return value if math.isfinite(value) else None


def integer(token: str) -> int:
    """A printed integer; BadValue for anything else (the digit cap keeps int() cheap)."""
    if not INT_RE.match(token):
        raise BadValue(token)
    return int(token)


def json_num(value: Any) -> float | None:
    """A JSON number (or numeric string, as some writers quote them) as a finite float."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    if isinstance(value, str):
        try:
            return num(value.strip())
        except BadValue:
            return None
    return None


def json_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and INT_RE.match(value.strip()):
        return int(value.strip())
    return None


def json_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    return None


def wrong_value(value: float | None, *, error_column: bool) -> int | float | None:
    """#wrong is a count (printed with %g, so '1e+06' happens); the old column is an error."""
    if value is None or error_column:
        return value
    return int(value) if value.is_integer() else value


def decode_nccl_version(code: int | None) -> str | None:
    """NCCL_VERSION_CODE to "major.minor.patch" (2.9+: X*10000+Y*100+Z, before: X*1000+...)."""
    if code is None or code <= 0:
        return None
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def normalise_collective(raw: str | None) -> str | None:
    """'all_reduce_perf', './build/nccl_alltoall_perf_mpi', 'AllReduce' -> canonical name."""
    if not raw:
        return None
    # A log of many runs names the same few collectives in each: each name is worked out
    # once (short ones only, so that the memo stays small).
    return _normalised(raw) if len(raw) <= 256 else _normalise(raw)


@functools.lru_cache(maxsize=256)
def _normalised(raw: str) -> str | None:
    return _normalise(raw)


def _normalise(raw: str) -> str | None:
    name = raw.strip().strip("\"'").rsplit("/", 1)[-1]
    name = re.sub(r"_perf(?:_mpi)?$", "", name, flags=re.I)
    name = re.sub(r"^(?:nccl|rccl)_", "", name, flags=re.I)
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    if key in _COLLECTIVES:
        return _COLLECTIVES[key]
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    snake = re.sub(r"[^a-z0-9]+", "_", snake).strip("_")
    return snake[:64] or None
