"""Which collective a results table measured, when nothing in the file names it.

Package-private to ``artifacts.runs.parsers.nccl_tests``. A table pasted without its
preamble (or from an old nccl-tests that never printed ``Collective test starting``) still
carries the collective's fingerprint, because nccl-tests derives busbw from algbw with a
factor fixed per collective for n ranks (doc/PERFORMANCE.md, ``*GetBw`` in each test):

    all_reduce                           2(n-1)/n
    all_gather, reduce_scatter, alltoall (n-1)/n
    broadcast, reduce, sendrecv          1

and because each test prints its own lead columns and counts: ``redop`` is ``none`` (or
blank) for the collectives that reduce nothing, ``root`` is >= 0 only for the rooted ones,
``count`` is per rank (size = count x type size x n) for all_gather, reduce_scatter and
alltoall, and alltoall and sendrecv never validate their in-place half (``#wrong`` N/A there
while the out-of-place half is checked). The file name ("all_reduce", "ar_", "bcast"...) is
the last resort, used when the table fits several collectives (n = 2 makes all_reduce's
factor 1, like broadcast's) or says nothing (no rows, all bandwidths 0.00).

Pure Python, no Django.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from artifacts.runs.parsers.nccl_tests.model import NcclRow

# The collectives whose busbw factor nccl-tests documents, in the order candidates are listed.
RATIO_KNOWN = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
)
_FACTORS: dict[str, tuple[str, Callable[[int], float]]] = {
    "all_reduce": ("2(n-1)/n", lambda n: 2 * (n - 1) / n),
    "all_gather": ("(n-1)/n", lambda n: (n - 1) / n),
    "reduce_scatter": ("(n-1)/n", lambda n: (n - 1) / n),
    "alltoall": ("(n-1)/n", lambda n: (n - 1) / n),
    "broadcast": ("1", lambda n: 1.0),
    "reduce": ("1", lambda n: 1.0),
    "sendrecv": ("1", lambda n: 1.0),
}
_NON_REDUCING = frozenset({"all_gather", "alltoall", "broadcast"})
_REDUCING = frozenset({"all_reduce", "reduce_scatter", "reduce", "sendrecv"})
_ROOTED = frozenset({"broadcast", "reduce"})
_PER_RANK_COUNT = frozenset({"all_gather", "reduce_scatter", "alltoall"})
_NO_IN_PLACE_CHECK = frozenset({"alltoall", "sendrecv"})

_TYPE_BYTES = {
    "int8": 1, "uint8": 1, "char": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "f8e4m3": 1, "f8e5m2": 1,
    "half": 2, "float16": 2, "bfloat16": 2, "fp16": 2, "bf16": 2,
    "float": 4, "float32": 4, "int32": 4, "uint32": 4, "int": 4,
    "double": 8, "float64": 8, "int64": 8, "uint64": 8,
}  # fmt: skip

# File-name words, as token sequences (the name is cut into letter runs and digit runs).
_NAME_ALIASES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("all", "to", "allv"), "alltoallv"),
    (("all", "to", "all"), "alltoall"),
    (("a", "2", "a"), "alltoall"),
    (("all", "reduce"), "all_reduce"),
    (("all", "gather"), "all_gather"),
    (("reduce", "scatter"), "reduce_scatter"),
    (("send", "recv"), "sendrecv"),
    (("allreduce",), "all_reduce"),
    (("ar",), "all_reduce"),
    (("allgather",), "all_gather"),
    (("ag",), "all_gather"),
    (("reducescatter",), "reduce_scatter"),
    (("rs",), "reduce_scatter"),
    (("alltoallv",), "alltoallv"),
    (("alltoall",), "alltoall"),
    (("sendrecv",), "sendrecv"),
    (("broadcast",), "broadcast"),
    (("bcast",), "broadcast"),
    (("reduce",), "reduce"),
    (("gather",), "gather"),
    (("scatter",), "scatter"),
    (("hypercube",), "hypercube"),
)
_TOKEN_RE = re.compile(r"[a-z]+|\d+")
# Printed bandwidths have two decimals: the ratio is only as exact as the rows allow.
_PRINT_HALF_STEP = 0.005
_MIN_ALGBW = 0.1  # GB/s: below this the rounding swamps the ratio
_MAX_RANKS = 1 << 20


@dataclasses.dataclass(frozen=True)
class Inference:
    """What the table (and the file name) say about a run without a named collective."""

    collective: str | None
    source: str | None  # "file name", "busbw/algbw ratio (...)", "ambiguous", or None
    candidates: tuple[str, ...]  # the collectives the evidence leaves, when more than one
    nranks: int | None  # the rank count the ratio or the counts give, when they give one
    warning: str | None


@dataclasses.dataclass(frozen=True)
class _Ratio:
    value: float
    tolerance: float

    def text(self) -> str:
        return _short(self.value)


def collectives_in_name(name: str | None) -> tuple[str, ...]:
    """Distinct collectives a file name mentions, in order: 'nccl_ar_8gpu.log' -> all_reduce."""
    if not name:
        return ()
    base = re.split(r"[/\\]", name)[-1].lower()
    tokens = _TOKEN_RE.findall(base)
    found: list[str] = []
    i = 0
    while i < len(tokens):
        for words, collective in _NAME_ALIASES:
            if tuple(tokens[i : i + len(words)]) == words:
                if collective not in found:
                    found.append(collective)
                i += len(words)
                break
        else:
            i += 1
    return tuple(found)


def nranks_for(collective: str, rows: Sequence[NcclRow]) -> int | None:
    """The rank count a named collective's table implies (per-rank counts, else the ratio)."""
    per_rank = _count_multiple(rows)
    if collective in _PER_RANK_COUNT and per_rank is not None and per_rank > 1:
        return per_rank
    ratio = _ratio(rows)
    if ratio is None or collective not in _FACTORS:
        return None
    return _fit(collective, ratio, None, 1)[1]


def infer_collective(
    rows: Sequence[NcclRow],
    *,
    nranks: int | None,
    min_nranks: int,
    file_name: str | None,
) -> Inference:
    """The collective of an unnamed table: table evidence first, then the file name.

    ``nranks`` is the rank count when the device list is complete, else None; ``min_nranks``
    is how many ranks were listed at least (an elided list gives a lower bound only).
    """
    per_rank = _count_multiple(rows)
    if nranks is None and per_rank is not None and per_rank > 1:
        nranks = per_rank  # size = count x type size x n: the count column gives n
    ratio = _ratio(rows)
    # Each piece of evidence narrows the candidates; the columns that removed a candidate
    # the ratio left are named in the source, so the user sees why.
    candidates = list(RATIO_KNOWN)
    fitted_n: dict[str, int | None] = {}
    if ratio is not None:
        for collective in RATIO_KNOWN:
            fits, n = _fit(collective, ratio, nranks, max(min_nranks, 1))
            if fits:
                fitted_n[collective] = n
        candidates = [c for c in candidates if c in fitted_n]
    # busbw > 0 rules out n = 1, where every collective prints size = count x type size
    many_ranks = (nranks or 0) > 1 or (ratio is not None and ratio.value > ratio.tolerance)
    needed: list[str] = []
    for label, allowed in _column_evidence(rows, per_rank, many_ranks=many_ranks):
        narrowed = [c for c in candidates if c in allowed]
        if narrowed != candidates:
            needed.append(label)
        candidates = narrowed
    ratio_label = _ratio_label(ratio, candidates, fitted_n) if ratio and candidates else ""
    evidence = ", ".join(x for x in (ratio_label, *needed) if x)
    table_says = bool(evidence)
    from_name = list(collectives_in_name(file_name))

    def n_of(collective: str) -> int | None:
        return fitted_n.get(collective) or nranks

    if len(candidates) == 1 and table_says:
        chosen = candidates[0]
        warning = f"collective {chosen} inferred from the table: {evidence}"
        if from_name and chosen not in from_name:
            warning += f" (the file name suggests {', '.join(from_name)})"
        return Inference(chosen, evidence, (), n_of(chosen), warning)
    if not candidates:
        # The numbers fit no documented collective (another fork, a hand-edited table).
        why = f"the table ({evidence}) fits no collective with a known busbw factor"
        if len(from_name) == 1:
            named = from_name[0]
            return Inference(
                named, "file name", (), None, f"collective {named} taken from the file name; {why}"
            )
        return Inference(None, None, (), None, f"collective unknown: {why}")
    # Several candidates (or no evidence at all): the file name decides among them; a
    # collective without a documented factor (gather, hypercube...) cannot be ruled out.
    usable = [c for c in from_name if c in candidates or c not in _FACTORS]
    if len(usable) == 1:
        named = usable[0]
        fits = f"; the table fits {'/'.join(candidates)} ({evidence})" if table_says else ""
        return Inference(
            named,
            "file name",
            tuple(candidates) if table_says else (),
            n_of(named) if named in _FACTORS else None,
            f"collective {named} taken from the file name{fits}",
        )
    if not table_says and not from_name:
        return Inference(None, None, (), None, None)  # nothing to go on: say nothing
    name_note = (
        f"; the file name suggests {', '.join(from_name)}, which does not decide"
        if from_name
        else ""
    )
    # the rank count may be known even so: all_gather and alltoall share the count column
    counts = {n_of(c) for c in candidates}
    return Inference(
        None,
        "ambiguous",
        tuple(candidates),
        counts.pop() if len(counts) == 1 else None,
        f"collective ambiguous: the table fits {'/'.join(candidates)} "
        f"({evidence or 'no usable rows'}){name_note}; "
        "a file named after its collective (e.g. all_reduce_perf.txt) decides",
    )


# --------------------------------------------------------------------------- evidence


def _ratio(rows: Sequence[NcclRow]) -> _Ratio | None:
    """busbw/algbw over every half with a usable algbw, with the error printing allows."""
    alg = bus = 0.0
    used = 0
    for row in rows:
        for half in (row.out_of_place, row.in_place):
            if half is None or half.algbw_gbps is None or half.busbw_gbps is None:
                continue
            if half.algbw_gbps < _MIN_ALGBW:
                continue
            alg += half.algbw_gbps
            bus += half.busbw_gbps
            used += 1
    if not used or alg <= 0:
        return None
    value = bus / alg
    # each printed value is off by at most half a step: the ratio of the sums by at most
    # (1 + ratio) * half step / mean algbw; doubled to stay clear of the boundary.
    tolerance = 2 * (1 + value) * _PRINT_HALF_STEP * used / alg + 1e-9
    return _Ratio(value, tolerance)


def _fit(
    collective: str, ratio: _Ratio, nranks: int | None, min_nranks: int
) -> tuple[bool, int | None]:
    """Whether the collective's factor matches the ratio, and the n that makes it match."""
    _, factor = _FACTORS[collective]
    if nranks is not None:
        return abs(factor(nranks) - ratio.value) <= ratio.tolerance, nranks
    if collective in ("broadcast", "reduce", "sendrecv"):
        return abs(1.0 - ratio.value) <= ratio.tolerance, None
    scale = 2.0 if collective == "all_reduce" else 1.0
    # factor(n) = scale * (1 - 1/n): every n whose factor is within the tolerance
    lo, hi = ratio.value - ratio.tolerance, ratio.value + ratio.tolerance
    n_lo = max(min_nranks, _n_at(lo, scale, ceil=True))
    n_hi = min(_MAX_RANKS, _n_at(hi, scale, ceil=False))
    if n_lo > n_hi:
        return False, None
    return True, n_lo if n_lo == n_hi else None  # several n fit: the count stays unknown


def _n_at(value: float, scale: float, *, ceil: bool) -> int:
    """The smallest (ceil) or largest n with scale * (1 - 1/n) >= or <= value."""
    share = value / scale
    if share >= 1:
        return _MAX_RANKS if not ceil else _MAX_RANKS + 1
    if share <= 0:
        return 1 if ceil else (1 if share == 0 else 0)
    exact = 1 / (1 - share)
    nearest = round(exact)
    if abs(exact - nearest) < 1e-9:
        return nearest
    return int(exact) + 1 if ceil else int(exact)


def _ratio_label(ratio: _Ratio, candidates: list[str], fitted_n: dict[str, int | None]) -> str:
    factors = []
    for collective in candidates:
        formula, _ = _FACTORS[collective]
        n = fitted_n.get(collective)
        text = formula if formula == "1" or n is None else f"{formula} with n={n}"
        if text not in factors:
            factors.append(text)
    return f"busbw/algbw ratio ({ratio.text()} = {' or '.join(factors)})"


def _count_multiple(rows: Sequence[NcclRow]) -> int | None:
    """size / (count x type size) when it is the same whole number on every row, else None."""
    found: int | None = None
    for row in rows:
        width = _TYPE_BYTES.get((row.dtype or "").lower())
        if not width or not row.count or not row.size_bytes:
            continue
        whole, rest = divmod(row.size_bytes, row.count * width)
        if rest or whole < 1 or (found is not None and whole != found):
            return None
        found = whole
    return found


def _column_evidence(
    rows: Sequence[NcclRow], per_rank: int | None, *, many_ranks: bool
) -> list[tuple[str, frozenset[str]]]:
    """(label, collectives it allows) for each column that says something."""
    out: list[tuple[str, frozenset[str]]] = []
    everything = frozenset(RATIO_KNOWN)
    redops = {r.redop.lower() for r in rows if r.redop}
    if redops == {"none"}:
        out.append(("redop none", _NON_REDUCING))
    elif redops and "none" not in redops:
        out.append((f"redop {sorted(redops)[0]}", _REDUCING))
    roots = {r.root for r in rows if r.root is not None}
    if roots and min(roots) >= 0:
        out.append((f"root {min(roots)}", _ROOTED))
    elif roots == {-1}:
        out.append(("root -1", everything - _ROOTED))
    if per_rank is not None and per_rank > 1:
        out.append((f"count per rank (size = count x type size x {per_rank})", _PER_RANK_COUNT))
    elif per_rank == 1 and many_ranks:
        out.append(("count = size / type size", everything - _PER_RANK_COUNT))
    checked_out = any(r.out_of_place and r.out_of_place.wrong is not None for r in rows)
    in_place = [r.in_place for r in rows if r.in_place is not None]
    if checked_out and in_place:
        if any(h.wrong is not None for h in in_place):
            out.append(("in-place results validated", everything - _NO_IN_PLACE_CHECK))
        else:
            out.append(("in-place results not validated", _NO_IN_PLACE_CHECK))
    return out


def _short(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")
