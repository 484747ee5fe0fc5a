"""From a Collector to the frozen NcclTestsResult: versions, completeness and warnings.

Package-private to ``artifacts.runs.parsers.nccl_tests``. Every warning a user sees about a
file (what was stripped, skipped, cut or guessed) is worded here, in one place.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from artifacts.parsers.base import ParseError
from artifacts.runs.parsers.nccl_tests.infer import Inference, infer_collective, nranks_for
from artifacts.runs.parsers.nccl_tests.model import NcclRank, NcclRun, NcclTestsResult
from artifacts.runs.parsers.nccl_tests.run import (
    MAX_LINE_BYTES,
    MAX_ROWS,
    MAX_RUNS,
    Collector,
    RunBuilder,
)
from artifacts.runs.parsers.nccl_tests.values import decode_nccl_version

# The parameter keys every run reports, in this order (null when the file did not say).
PARAM_KEYS = (
    "nThread",
    "nGpus",
    "minBytes",
    "maxBytes",
    "step",
    "step_kind",
    "warmup_iters",
    "iters",
    "agg_iters",
    "validation",
    "graph",
)


def build_result(collector: Collector) -> NcclTestsResult:
    if not collector.runs and any(fatal for _, _, fatal in collector.pending_errors):
        # Only a failure before any test started (the launcher, MPI): say what failed.
        first = next(message for message, _, fatal in collector.pending_errors if fatal)
        raise ParseError(
            f"no nccl-tests output found: the job failed before any test started ({first[:300]})",
            permanent=True,
        )
    if not collector.runs:
        raise ParseError(
            "no nccl-tests output found (no parameter line, device list, results table "
            "or nccl-tests JSON)",
            permanent=True,
        )
    warnings = _file_warnings(collector)
    runs = []
    for number, builder in enumerate(collector.runs, start=1):
        run, run_warnings = _build(collector, builder, number)
        runs.append(run)
        warnings.extend(run_warnings)
    versions = list(dict.fromkeys(r.nccl_version for r in runs if r.nccl_version))
    if len(versions) > 1:
        warnings.append("runs in this file report different NCCL versions: " + ", ".join(versions))
    warnings.extend(collector.warnings)
    return NcclTestsResult(runs=tuple(runs), warnings=tuple(warnings))


def _file_warnings(c: Collector) -> list[str]:
    warnings = []
    if c.prefixes:
        kinds = ", ".join(f"{k} ({n} lines)" for k, n in c.prefixes.items())
        warnings.append(f"launcher prefixes were stripped: {kinds}")
    if c.func_prefixed:
        warnings.append(
            f"source-location prefixes ('func(), file.cu:N,') were stripped from "
            f"{c.func_prefixed} lines"
        )
    if c.debug_lines:
        warnings.append(
            f"{c.debug_lines} NCCL debug lines interleaved with the output were skipped "
            "(WARN lines are kept as run errors)"
        )
    if len(c.interleaved_runs) > 1:
        numbers = ", ".join(str(i + 1) for i in sorted(c.interleaved_runs))
        warnings.append(
            f"runs {numbers} were printed interleaved (several processes writing at once, "
            "e.g. mpirun of a binary built without MPI=1: each process ran its own test); "
            "rows were attributed to runs by message-size order"
        )
    if c.malformed:
        warnings.append(f"{c.malformed} table lines could not be parsed and were skipped")
    if c.overlong:
        warnings.append(f"{c.overlong} lines longer than {MAX_LINE_BYTES} bytes were cut")
    if c.orphan_footers:
        warnings.append(f"{c.orphan_footers} footer lines without a results table")
    if c.rows_dropped:
        warnings.append(f"row limit {MAX_ROWS} reached: {c.rows_dropped} rows dropped")
    if c.runs_dropped:
        warnings.append(f"run limit {MAX_RUNS} reached: later runs were dropped")
    return warnings


def _resolve_version(c: Collector, b: RunBuilder, label: str, warnings: list[str]) -> str | None:
    if b.nccl_version:
        return b.nccl_version
    if b.library_code:
        return decode_nccl_version(b.library_code)
    found = list(dict.fromkeys(v for v in map(c.pid_versions.get, b.rank_pids) if v))
    if len(found) > 1:
        warnings.append(f"{label}: ranks report different NCCL versions: {', '.join(found)}")
    if found:
        return found[0]
    if len(c.versions_seen) == 1:
        return next(iter(c.versions_seen))
    return None


def _build(c: Collector, b: RunBuilder, number: int) -> tuple[NcclRun, list[str]]:
    collective, source = b.named_collective()
    listed = b.nranks()  # the same for every question below: worked out once
    inference = _infer(c, b, collective, listed)
    if collective is None:
        collective, source = inference.collective, inference.source
    label = f"run {number} ({collective or 'unknown collective'})"
    warnings: list[str] = []
    if inference.warning:
        warnings.append(f"{label}: {inference.warning}")
    if inference.nranks is not None:
        warnings.append(
            f"{label}: {inference.nranks} ranks inferred from the table (the device list "
            "does not give the rank count); see nranks_inferred"
        )
    version = _resolve_version(c, b, label, warnings)
    warnings.extend(_run_warnings(b, label, listed))
    params: dict[str, Any] = {key: b.params.get(key) for key in PARAM_KEYS}
    params.update((k, v) for k, v in b.params.items() if k not in params)
    if b.layout is not None and b.layout.cputime:
        params["cputime"] = True
    run = NcclRun(
        collective=collective,
        nccl_tests_version=b.nccl_tests_version,
        nccl_version=version,
        params=params,
        ranks=_ranks(b),
        nranks=listed,
        hosts=tuple(sorted({r.host for r in b.ranks if r.host})),
        rows=tuple(b.rows),
        avg_busbw_gbps=b.avg,
        out_of_bounds=b.oob,
        complete=_is_complete(b),
        errors=tuple(b.errors),
        format=b.format,
        command=b.command_line,
        error_column=bool(b.layout and b.layout.error_column),
        started_at=b.started_at,
        ended_at=b.ended_at,
        collective_source=source,
        collective_candidates=inference.candidates,
        nranks_inferred=inference.nranks,
        env=dict(sorted(b.env.items())),
        parts=_parts(b),
    )
    return run, warnings


def _ranks(b: RunBuilder) -> tuple[NcclRank, ...]:
    """The run's ranks: the shared tuple of its device list where nothing was added after
    it (ranks are only ever appended), else a tuple of its own."""
    listed = b.listed_ranks
    if listed is not None and len(listed) == len(b.ranks):
        return listed
    return tuple(b.ranks)


def _parts(b: RunBuilder) -> tuple[str, ...]:
    """Which parts of the tool's output the run was read from (see NcclRun.parts)."""
    seen = {
        b.format: b.format != "text",
        "version": bool(b.nccl_tests_version or b.library_code),
        "parameters": any(v is not None for v in b.params.values()),
        "devices": bool(b.ranks),
        "column header": b.layout is not None,
        "rows": bool(b.rows),
        "footer": b.footer or b.avg_seen or b.oob is not None,
    }
    return tuple(part for part, present in seen.items() if present)


def _infer(c: Collector, b: RunBuilder, named: str | None, listed: int | None) -> Inference:
    """The table's collective when the file names none, and its rank count when unknown.

    A device list that is elided or has gaps only bounds the rank count from below (the
    128-GPU README fragment lists 5 ranks), so the ratio is then fitted for any n above it.
    """
    complete = bool(b.ranks) and not b.elided and len(b.rank_numbers) == listed
    known = listed if complete or (not b.ranks and b.nranks_hint) else None
    if named is None:
        inference = infer_collective(
            b.rows, nranks=known, min_nranks=listed or 1, file_name=c.file_name
        )
    else:
        inference = Inference(named, None, (), None, None)
    if known is not None:
        return dataclasses.replace(inference, nranks=None)  # the file says it already
    n = inference.nranks
    if named is not None and b.rows:
        n = nranks_for(named, b.rows)
    if n is not None and n < (listed or 1):
        n = None  # fewer ranks than the device list shows: not a fit after all
    return dataclasses.replace(inference, nranks=n)


def _is_complete(b: RunBuilder) -> bool:
    if b.failed or b.json_truncated:
        return False
    if b.format == "rccl_jsonl":
        # No footer in this format: complete when every size has both halves.
        return bool(b.rows) and all(r.out_of_place and r.in_place for r in b.rows)
    return b.footer


def _run_warnings(b: RunBuilder, label: str, nranks: int | None) -> list[str]:
    warnings = []
    if b.implicit:
        warnings.append(f"{label}: starts without its parameter line (a fragment of a log?)")
    if b.failed:
        first = next(iter(b.errors), "")
        warnings.append(f"{label}: failed: {first}")
    elif b.json_truncated:
        problem = f" ({b.json_problem})" if b.json_problem else ""
        warnings.append(f"{label}: JSON ends early{problem}; kept {len(b.rows)} rows")
    elif b.format == "rccl_jsonl" and not _is_complete(b):
        warnings.append(
            f"{label}: some sizes lack their in-place or out-of-place record (output cut?)"
        )
    elif b.format == "text" and not b.footer:
        where = f"after {len(b.rows)} rows" if b.rows else _truncation_point(b)
        warnings.append(f"{label}: no footer, output truncated {where}")
    if b.format == "text" and b.footer and not b.avg_seen:
        warnings.append(f"{label}: no 'Avg bus bandwidth' line")
    if b.ranks and b.elided:
        warnings.append(
            f"{label}: device list elided with '...' ({len(b.ranks)} ranks listed; nranks "
            "counts only those)"
        )
    elif b.ranks and (nranks or 0) > len(b.ranks):
        warnings.append(
            f"{label}: device list incomplete ({len(b.ranks)} of at least {nranks} ranks "
            "listed; nranks comes from the highest rank number)"
        )
    if b.duplicate_ranks:
        warnings.append(f"{label}: {b.duplicate_ranks} duplicate rank lines ignored")
    if b.layout is not None and b.layout.extra_columns:
        warnings.append(f"{label}: extra columns (per-iteration i_*, #bitdiff...) are not reported")
    zero = sum(1 for r in b.rows if r.size_bytes == 0)
    if zero:
        warnings.append(
            f"{label}: {zero} rows of size 0 (fewer elements than ranks at the smallest "
            "sizes: nothing was moved); kept as printed"
        )
    if b.in_place_only_rows:
        warnings.append(f"{label}: {b.in_place_only_rows} rows have no out-of-place result")
    if b.errors_dropped:
        warnings.append(f"{label}: {b.errors_dropped} further error messages dropped")
    return warnings


def _truncation_point(b: RunBuilder) -> str:
    if b.layout is not None:
        return "after the column header"
    if b.ranks:
        return "after the device list"
    return "after the parameter line"
