"""Failures read as symptoms: failed, truncated and out-of-bounds nccl-tests runs, and the
NCCL/CUDA/verbs error lines of the evidence (signatures.py). Pure: no Django.

The checks read two things of ``Evidence``: its log events (NCCL WARN lines, PyTorch NCCL
errors, which the nccl_debug loader stores for NCCL logs and for nccl-tests output run with
NCCL_DEBUG=INFO) and ``context["nccl_tests_runs"]``, plain rows of the artifact's nccl-tests
runs (findings.py builds them). Each yields the fields of one finding; ``RULE_SPECS`` says
which rule id, title, explanation and knowledge page each check has (rules.py makes them
``FactRule``s, so a failure is a finding like any other: stored, grouped, acknowledged).
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import Any

from artifacts.fabric.signatures import SIGNATURES, SIGNATURES_BY_KEY, classify, is_echo
from hardware.evidence import CRITICAL, WARNING, Evidence

RUNS = "nccl_tests_runs"  # the context key findings.py fills
# Log event kinds whose text may name a failure's cause.
ERROR_EVENT_KINDS = frozenset(
    {"nccl_warn", "nccl_error", "dist_backend_error", "comm_abort", "watchdog_exception"}
)
KB_RUN_FAILED = "nccl-tests-failed-runs"
KB_TRUNCATED = "nccl-tests-truncated-or-hung"
KB_OUT_OF_BOUNDS = "nccl-tests-out-of-bounds-values"
# "host: Test NCCL failure", " .. host pid 12: Test failure", "host:pid:tid [0] NCCL WARN"
_HOST_PREFIX = re.compile(
    r"^\s*(?:\.\.\s+)?(?P<host>[A-Za-z0-9][\w.-]*?)(?::\d+:\d+\s+\[\d+\]|:|\s+pid\s+\d+:)\s"
)
# lines that end a run (nccl-tests' own failure report, the launcher's abort), as the
# nccl-tests parser's fatal patterns; a complete run's NCCL WARNs alone are no failure
_FATAL = re.compile(
    r"\bTest (?:NCCL |CUDA )?failure\b|MPI_ABORT was invoked|Segmentation fault|^srun: error:"
)
MAX_LINES = 20


def _run_host(errors: list[str]) -> str:
    for line in errors:
        if m := _HOST_PREFIX.match(line):
            return m.group("host")
    return ""


def _cause(errors: list[str]) -> str:
    """The failure's cause in a few words: the first signature, else the first line."""
    for line in errors:
        for match in classify(line):
            return SIGNATURES_BY_KEY[match.key].label
    first = next((e for e in errors if not is_echo(e)), errors[0] if errors else "")
    return first.strip()[:160] or "no error text"


def _runs(ev: Evidence) -> list[Mapping[str, Any]]:
    return list(ev.context.get(RUNS) or [])


def _run_fields(run: Mapping[str, Any], host: str) -> dict[str, Any]:
    return {
        "host": host,
        "device": f"run {run['index']}",
        "port": None,
        "collective": run.get("collective") or "unknown collective",
        "index": run["index"],
        "ranks": run.get("nranks") or "?",
        "artifact_ids": (run["artifact_id"],),
        "at": run.get("at"),
    }


@dataclasses.dataclass(frozen=True)
class RunFailed:
    """An nccl-tests run that printed errors (``Test NCCL failure``, ``Cuda failure``)."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for run in _runs(ev):
            errors = [str(e) for e in run.get("errors") or []]
            if not errors or (run.get("complete") and not any(_FATAL.search(e) for e in errors)):
                continue
            fields = _run_fields(run, _run_host(errors))
            fields.update(
                cause=_cause(errors),
                first=next((e for e in errors if not is_echo(e)), errors[0])[:300],
                rows=run.get("rows", 0),
                evidence={"run_id": run.get("run_id"), "errors": errors[:MAX_LINES],
                          "rows": run.get("rows", 0)},
            )  # fmt: skip
            yield fields


@dataclasses.dataclass(frozen=True)
class RunTruncated:
    """An nccl-tests run whose output ends before its footer, without an error: a hang, a
    killed job, a cut log."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for run in _runs(ev):
            if run.get("complete") or run.get("errors"):
                continue
            fields = _run_fields(run, "")
            rows = int(run.get("rows") or 0)
            fields.update(
                rows=rows,
                stage=f"after {rows} size(s)" if rows else "before its first size",
                last_size=run.get("last_size") or "none",
                evidence={"run_id": run.get("run_id"), "rows": rows,
                          "last_size_bytes": run.get("last_size")},
            )  # fmt: skip
            yield fields


@dataclasses.dataclass(frozen=True)
class RunOutOfBounds:
    """nccl-tests validation found wrong values (``# Out of bounds values : N FAILED``, the
    sum of the ``#wrong`` columns): the data arrived corrupted, which no tuning explains."""

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        for run in _runs(ev):
            oob = int(run.get("out_of_bounds") or 0)
            if oob <= 0:
                continue
            fields = _run_fields(run, "")
            fields.update(
                oob=oob,
                severity=CRITICAL,
                evidence={"run_id": run.get("run_id"), "out_of_bounds": oob},
            )
            yield fields


@dataclasses.dataclass(frozen=True)
class SignatureSeen:
    """Error lines holding one signature, grouped by host and the signature's detail (the
    IB status, the verbs call, the CUDA error): one finding per distinct failure."""

    key: str

    def __call__(self, ev: Evidence) -> Iterator[dict[str, Any]]:
        groups: dict[tuple[str, str], list[tuple[str, dict[str, str], int, Any]]] = defaultdict(
            list
        )
        for host, text, artifact_id, at in _error_lines(ev):
            for match in classify(text):
                if match.key != self.key:
                    continue
                detail = _detail(match.fields)
                groups[(host, detail)].append((text, match.fields, artifact_id, at))
        sig = SIGNATURES_BY_KEY[self.key]
        for (host, detail), hits in sorted(groups.items()):
            text, fields, _aid, _at = hits[0]
            times = [at for *_rest, at in hits if at is not None]
            yield {
                "host": host,
                "device": "",
                "port": None,
                "subject": detail,
                "severity": CRITICAL if sig.critical else WARNING,
                "count": len(hits),
                "text": text.strip()[:300],
                **{k: v[:120] for k, v in fields.items()},
                "evidence": {"signature": self.key, "lines": [h[0][:300] for h in hits[:MAX_LINES]],
                             "lines_total": len(hits), **fields},
                "artifact_ids": tuple(sorted({h[2] for h in hits})),
                "at": min(times) if times else None,
            }  # fmt: skip


def _detail(fields: Mapping[str, str]) -> str:
    for name in ("status", "call", "error", "where"):
        if fields.get(name):
            return f"{name}={fields[name][:60]}"
    return ""


def _error_lines(ev: Evidence) -> Iterator[tuple[str, str, int, Any]]:
    """(host, text, artifact id, time) of every line that may name a failure's cause. A run's
    error lines repeat the NCCL WARNs the log events hold when both parsers read the file
    (nccl-tests run with NCCL_DEBUG=INFO): each line counts once."""
    said: list[str] = []
    for e in ev.events:
        if e.kind in ERROR_EVENT_KINDS:
            said.append(e.text.strip())
            yield e.host, e.text, e.artifact_id, e.at
    for run in _runs(ev):
        for line in run.get("errors") or []:
            text = str(line).rstrip()
            # the same NCCL WARN as a log event ("host:pid:tid [d] NCCL WARN <event text>")
            echoed = " NCCL WARN " in text and any(t and text.endswith(t) for t in said[:2000])
            if is_echo(text) or echoed:
                continue
            m = _HOST_PREFIX.match(str(line))
            yield (m.group("host") if m else ""), str(line), run["artifact_id"], run.get("at")


def _signature_spec(key: str) -> dict[str, Any]:
    sig = SIGNATURES_BY_KEY[key]
    return {
        "id": key,
        "title": _TITLES[key],
        "explanation": _EXPLANATIONS[key],
        "kb": sig.kb,
        "check": SignatureSeen(key),
        "severity": CRITICAL if sig.critical else WARNING,
    }


_TITLES = {
    "ib_completion_error": "IB completion error {status_name} (status {status}, vendor err "
    "{vendor_err}) on {host}",
    "ibv_call_failed": "{call} failed on {host}: {error}",
    "nccl_remote_error": "NCCL remote error on {host}: a peer exited or the network failed",
    "nccl_system_error": "NCCL unhandled system error on {host}",
    "nccl_cuda_error": "NCCL unhandled cuda error on {host}",
    "nccl_internal_error": "NCCL internal error on {host}",
    "nccl_invalid_usage": "NCCL invalid usage on {host}",
    "cuda_failure": "CUDA failure on {host}: {error}",
}
_EXPLANATIONS = {
    "ib_completion_error": (
        "{count} RDMA operation(s) on {host} completed with {status_name} (vendor syndrome "
        "{vendor_err}). 12 (retry exceeded) means the peer stopped acknowledging: a link, "
        "switch port or the peer host failed, or the fabric dropped packets; 5 (flushed) "
        "follows an earlier error on the same QP. First line: {text}"
    ),
    "ibv_call_failed": (
        "A verbs call failed on {host} ({count} line(s)): {text}. ibv_reg_mr failing is "
        "usually memory registration (ulimit -l, nvidia-peermem, GPUDirect RDMA); "
        "ibv_create_qp/cq resources; ibv_modify_qp a peer or path (GID index, routing) "
        "that never answered."
    ),
    "nccl_remote_error": (
        "{count} line(s) on {host} report ncclRemoteError: a peer of this rank went away "
        "(its process died, or the network between them failed). The host that prints it "
        "is usually a survivor: look for the first failure in time on the other hosts "
        "(Xid, OOM kill, link down, IB completion errors). First line: {text}"
    ),
    "nccl_system_error": (
        "ncclSystemError on {host} ({count} line(s)): a system call or library NCCL relies "
        "on failed (sockets, shared memory /dev/shm, verbs, the net plugin). The NCCL WARN "
        "line just before it names the call; run with NCCL_DEBUG=INFO if none was logged. "
        "First line: {text}"
    ),
    "nccl_cuda_error": (
        "ncclUnhandledCudaError on {host} ({count} line(s)): a CUDA call inside NCCL failed. "
        "Check the GPU (Xid in dmesg, nvidia-smi), the driver/CUDA/NCCL versions and memory. "
        "First line: {text}"
    ),
    "nccl_internal_error": (
        "ncclInternalError on {host} ({count} line(s)): NCCL hit a state it does not expect, "
        "often a topology, plugin or version mismatch between ranks. First line: {text}"
    ),
    "nccl_invalid_usage": (
        "ncclInvalidUsage/ncclInvalidArgument on {host} ({count} line(s)): the program "
        "called NCCL wrongly (mismatched counts or types across ranks, a bad device). "
        "First line: {text}"
    ),
    "cuda_failure": (
        "A CUDA runtime call failed on {host} ({count} line(s)): {text}. 'out of memory' is "
        "the buffer size (-e) or another process on the GPU; 'no CUDA-capable device' or "
        "'initialization error' the driver, the container or a GPU off the bus (Xid 79)."
    ),
}

RULE_SPECS: tuple[dict[str, Any], ...] = (
    {
        "id": "nccl_tests_failed",
        "title": "{collective} run {index} failed on {host}: {cause}",
        "explanation": (
            "nccl-tests run {index} ({collective}, {ranks} ranks) stopped with an error after "
            "{rows} size(s): {first}. The error lines are in the evidence; the findings of "
            "the same file name the signature (remote error, system error, CUDA, verbs)."
        ),
        "kb": KB_RUN_FAILED,
        "check": RunFailed(),
        "severity": CRITICAL,
    },
    {
        "id": "nccl_tests_truncated",
        "title": "{collective} run {index} ends {stage} (truncated or hung)",
        "explanation": (
            "The output of nccl-tests run {index} ({collective}, {ranks} ranks) stops "
            "{stage} without its footer or an error: the job hung (a collective that never "
            "completed), was killed (time limit, OOM) or the log was cut. Last size: "
            "{last_size} bytes."
        ),
        "kb": KB_TRUNCATED,
        "check": RunTruncated(),
        "severity": WARNING,
    },
    {
        "id": "nccl_tests_out_of_bounds",
        "title": "{collective} run {index}: {oob} out-of-bounds value(s)",
        "explanation": (
            "nccl-tests validation found wrong results in run {index} ({collective}): data "
            "arrived corrupted. That is a hardware or driver fault (GPU memory, NVLink, PCIe, "
            "NIC), never a tuning matter: find the GPU or link with Xid/ECC/replay counters."
        ),
        "kb": KB_OUT_OF_BOUNDS,
        "check": RunOutOfBounds(),
        "severity": CRITICAL,
    },
    *(_signature_spec(sig.key) for sig in SIGNATURES),
)
