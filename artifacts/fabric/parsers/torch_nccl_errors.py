"""Recognise PyTorch ProcessGroupNCCL / c10d error lines (watchdog timeouts, DistBackendError).

Pure functions over one line of text; the nccl_debug parser turns the matches into events.
Formats seen in the wild (PyTorch 1.x to 2.x):

    [E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout:
        WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 ...
    [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught ...
        WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=..., Timeout(ms)=...)
    [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by
        watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.
    torch.distributed.DistBackendError: NCCL error in: .../ProcessGroupNCCL.cpp:1691, unhandled
        system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3

and the desync report of ``TORCH_NCCL_DESYNC_DEBUG=1`` (which rank lagged)::

     - [0] Timeout at collective: ALLREDUCE, #3
     - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:
         [1] finished collective #2, but didn't join collective #3 (count from 1)
         [2] joined but didn't finish collective #3 (count from 1)
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

_WATCHDOG = re.compile(
    r"Watchdog caught collective operation timeout: WorkNCCL\((?P<body>.*?)\) "
    r"ran for (?P<ran>\d+) milliseconds before timing out"
)
_WORK_FIELD = re.compile(r"(?P<k>\w+(?:\(ms\))?)=(?P<v>[^,]+)")
_WORK_PROGRESS = re.compile(
    r"(?P<what>Exception \(either an error or timeout\) detected by watchdog at work"
    r"|Timeout at NCCL work): (?P<seq>\d+), last enqueued NCCL work: (?P<enq>-?\d+), "
    r"last completed NCCL work: (?P<done>-?\d+)"
)
_PG_RANK = re.compile(r"\[(?:PG (?:ID )?(?P<pg>\S+)(?: PG GUID \S+)? )?Rank (?P<rank>\d+)\]")
_NCCL_ERROR_IN = re.compile(
    r"NCCL error in: (?P<src>\S+?), (?P<reason>[^,(]+)"
    r"(?:\(run with NCCL_DEBUG=INFO for details\))?"
    r"(?:, NCCL version (?P<version>[\w.\-+]+))?"
)
_NCCL_ERROR_CODE = re.compile(
    r"\b(?P<code>nccl(?:SystemError|InternalError|RemoteError|UnhandledCudaError|InvalidUsage|"
    r"InvalidArgument|InProgress)):? (?P<msg>.*)"
)
_DESYNC_TIMEOUT = re.compile(
    r"\[(?P<rank>\d+)\] Timeout at collective: (?P<coll>\w+), #(?P<seq>\d+)"
)
_DESYNC_LAGGING = re.compile(
    r"\[(?P<rank>\d+)\] (?:(?P<done>finished|completed) collective #(?P<last>\d+), but didn't "
    r"join collective #(?P<next>\d+)|joined but didn't finish collective #(?P<stuck>\d+)"
    r"|(?P<never>didn't join) collective #(?P<missed>\d+))"
)
_STUCK = re.compile(r"watchdog got stuck for (?P<secs>\d+) seconds|Heartbeat monitor timed out")
_LAUNCHER_RANK = (
    re.compile(r"^\s*\[\d+,(\d+)\]<std(?:out|err)>:"),  # OpenMPI --tag-output
    re.compile(r"^\s*\[rank(\d+)\]:"),  # torchrun --tee / local ranks
    re.compile(r"^\s*(\d+): "),  # srun -l
)

# Cheap substring test before the regexes run: patched NCCL builds print thousands of
# "ncclIbAccept(), ... NCCL RDMA server accept" lines that must stay cheap.
MARKERS = (
    "WorkNCCL",
    "NCCL work",
    "NCCL error",
    "DistBackendError",
    "Error:",
    "watchdog",
    "Heartbeat",
    "collective",
)


@dataclasses.dataclass(frozen=True)
class TorchError:
    kind: str  # watchdog_timeout | watchdog_exception | work_timeout | dist_backend_error | ...
    rank: int | None
    pg: str | None
    text: str
    details: dict[str, Any]
    identity: tuple[Any, ...]  # what makes two reports of it "the same" (PyTorch repeats itself)


def launcher_rank(line: str) -> int | None:
    """The rank a launcher prefix names (``[1,3]<stdout>:``, ``[rank3]:``, ``3: ``), if any."""
    for pattern in _LAUNCHER_RANK:
        m = pattern.match(line)
        if m:
            return int(m.group(1))
    return None


def recognise(line: str) -> TorchError | None:
    """The PyTorch NCCL error this line reports, or None."""
    if not any(marker in line for marker in MARKERS):
        return None
    launcher = launcher_rank(line)
    for reader in (_watchdog, _progress, _nccl_error, _backend_error, _stuck, _desync):
        found = reader(line, launcher)
        if found is not None:
            return found
    return None


def _watchdog(line: str, launcher: int | None) -> TorchError | None:
    m = _WATCHDOG.search(line)
    if not m:
        return None
    fields = {f["k"]: f["v"].strip() for f in _WORK_FIELD.finditer(m["body"])}
    pg, rank = _pg_rank(line[: m.start()], launcher)
    details = {
        "pg": pg,
        "collective": fields.get("OpType"),
        "seq": _int(fields.get("SeqNum")),
        "timeout_ms": _int(fields.get("Timeout(ms)")),
        "ran_ms": int(m["ran"]),
        "numel_in": _int(fields.get("NumelIn")),
        "numel_out": _int(fields.get("NumelOut")),
    }
    identity = (details["collective"], details["seq"])
    return TorchError("watchdog_timeout", rank, pg, m.group(0), details, identity)


def _progress(line: str, launcher: int | None) -> TorchError | None:
    m = _WORK_PROGRESS.search(line)
    if not m:
        return None
    kind = "watchdog_exception" if m["what"].startswith("Exception") else "work_timeout"
    pg, rank = _pg_rank(line[: m.start()], launcher)
    details = {
        "pg": pg,
        "seq": int(m["seq"]),
        "last_enqueued": int(m["enq"]),
        "last_completed": int(m["done"]),
    }
    return TorchError(kind, rank, pg, m.group(0), details, (pg, details["seq"]))


def _nccl_error(line: str, launcher: int | None) -> TorchError | None:
    error_in = _NCCL_ERROR_IN.search(line)
    code = _NCCL_ERROR_CODE.search(line)
    if not error_in and not (code and "DistBackendError" not in line):
        return None
    kind = "dist_backend_error" if "DistBackendError" in line else "nccl_error"
    start = error_in.start() if error_in else code.start() if code else 0
    pg, rank = _pg_rank(line[:start], launcher)
    details: dict[str, Any] = {"pg": pg}
    if error_in:
        details.update(
            source=error_in["src"],
            reason=error_in["reason"].strip(),
            nccl_version=error_in["version"],
        )
    if code:
        details["error_code"] = code["code"]
    text = line[start:].strip()
    return TorchError(kind, rank, pg, text, details, (text[:200],))


def _backend_error(line: str, launcher: int | None) -> TorchError | None:
    if "DistBackendError:" not in line:
        return None
    text = line.split("DistBackendError:", 1)[1].strip()
    pg, rank = _pg_rank(text, launcher)
    return TorchError("dist_backend_error", rank, pg, text, {"pg": pg}, (text[:200],))


def _stuck(line: str, launcher: int | None) -> TorchError | None:
    m = _STUCK.search(line)
    if not m:
        return None
    pg, rank = _pg_rank(line[: m.start()], launcher)
    details = {"pg": pg, "seconds": int(m["secs"]) if m["secs"] else None}
    return TorchError("watchdog_stuck", rank, pg, line.strip(), details, (pg,))


def _desync(line: str, launcher: int | None) -> TorchError | None:
    """A line of the desync report: the rank that timed out, or a rank that lagged."""
    if m := _DESYNC_TIMEOUT.search(line):
        rank, seq = int(m["rank"]), int(m["seq"])
        details = {"collective": m["coll"], "seq": seq}
        return TorchError("desync_timeout", rank, None, m.group(0), details, (seq,))
    if m := _DESYNC_LAGGING.search(line):
        rank = int(m["rank"])
        if m["done"]:
            what, seq = "did_not_join", int(m["next"])
        elif m["stuck"]:
            what, seq = "did_not_finish", int(m["stuck"])
        else:
            what, seq = "did_not_join", int(m["missed"])
        details = {"what": what, "seq": seq}
        return TorchError("desync_lagging_rank", rank, None, m.group(0), details, (seq, what))
    return None


def _pg_rank(text: str, launcher: int | None) -> tuple[str | None, int | None]:
    """The last ``[PG x Rank n]`` / ``[Rank n]`` before a message; else the launcher's rank."""
    found = list(_PG_RANK.finditer(text))
    if not found:
        return None, launcher
    pg = next((m["pg"] for m in reversed(found) if m["pg"]), None)
    return pg, int(found[-1]["rank"])


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
