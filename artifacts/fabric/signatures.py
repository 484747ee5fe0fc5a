"""Failure signatures: what an NCCL, nccl-tests or CUDA error line says went wrong. Pure.

A failed collective prints its cause in a handful of shapes, each from a fixed place in the
NCCL or nccl-tests source: the ``ncclResult_t`` text (``remote process exited or there was
a network error`` = ``ncclRemoteError``), a verbs call that failed (``Call to ibv_reg_mr
failed with error Cannot allocate memory``), an InfiniBand work completion with its status
and vendor syndrome (``Got completion from peer ... with status=12 ... vendor err 129``), a
CUDA runtime error (``Cuda failure 'out of memory'``). ``classify`` turns a line into the
signatures it holds, with the fields the finding's text and the knowledge page need.

The order of ``SIGNATURES`` matters only for the title of a line that holds several (an
nccl-tests ``Test NCCL failure`` line quoting ``unhandled system error`` is a system error).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# the work-completion status names (libibverbs verbs.h), shared with the NCCL log parser
from artifacts.fabric.parsers.nccl_debug.ibverbs import IBV_WC_STATUS


@dataclass(frozen=True)
class Signature:
    key: str  # the finding's rule id and the symptom ``rule:<key>``
    label: str  # a few words for titles
    pattern: re.Pattern[str]
    kb: str  # the starter knowledge page that explains it
    critical: bool = True


def _re(text: str) -> re.Pattern[str]:
    return re.compile(text, re.IGNORECASE)


SIGNATURES: tuple[Signature, ...] = (
    Signature(
        "ib_completion_error",
        "InfiniBand completion error",
        _re(
            r"Got completion (?:from peer (?P<peer>\S+) )?with (?:error |status=)"
            r"(?:IBV_WC_\w+\()?(?P<status>\d+)"
            r"(?:,? opcode[ =](?P<opcode>\d+))?(?:,? len[ =](?P<len>\d+))?"
            r"(?:,? vendor err (?P<vendor_err>\d+))?"
        ),
        "nccl-ib-completion-errors",
    ),
    Signature(
        "ibv_call_failed",
        "verbs call failed",
        _re(
            r"Call to (?P<call>ibv_\w+)(?:\([^)]*\))? failed(?: with (?:error )?"
            r"(?P<error>[^\n]*?))?\s*$"
        ),
        "nccl-ibv-call-failed",
    ),
    Signature(
        "nccl_remote_error",
        "remote process exited or network error",
        _re(r"remote process exited or there was a network error|ncclRemoteError"),
        "nccl-remote-error",
    ),
    Signature(
        "nccl_system_error",
        "unhandled system error",
        _re(r"unhandled system error|ncclSystemError"),
        "nccl-system-error",
    ),
    Signature(
        "nccl_cuda_error",
        "unhandled cuda error",
        _re(r"unhandled cuda error|ncclUnhandledCudaError"),
        "nccl-unhandled-cuda-error",
    ),
    Signature(
        "nccl_internal_error",
        "NCCL internal error",
        _re(r"\binternal error\b|ncclInternalError"),
        "nccl-internal-error-and-invalid-usage",
    ),
    Signature(
        "nccl_invalid_usage",
        "invalid usage or argument",
        _re(r"\binvalid (?:usage|argument)\b|ncclInvalid(?:Usage|Argument)"),
        "nccl-internal-error-and-invalid-usage",
        critical=False,
    ),
    Signature(
        "cuda_failure",
        "CUDA failure",
        _re(
            r"Cuda failure\s*(?:(?P<where>\S+:\d+)\s*)?'?(?P<error>[^'\n]*)'?"
            r"|CUDA error: (?P<error2>.+)"
        ),
        "cuda-failure-in-nccl-tests",
    ),
)  # fmt: skip
SIGNATURES_BY_KEY: dict[str, Signature] = {s.key: s for s in SIGNATURES}


@dataclass(frozen=True)
class SignatureMatch:
    key: str
    fields: dict[str, str]


def classify(text: str) -> list[SignatureMatch]:
    """Every signature the line holds, with its named fields (status -> its verbs name).

    A line naming a specific cause (an IB completion error, a verbs call) also quotes the
    generic NCCL result it led to; both are kept, so the page of the cause and the page of
    the result both apply."""
    found = []
    for sig in SIGNATURES:
        m = sig.pattern.search(text or "")
        if not m:
            continue
        fields = {k: v.strip() for k, v in m.groupdict().items() if v}
        if "error2" in fields:
            fields["error"] = fields.pop("error2")
        if sig.key == "ib_completion_error" and fields.get("status", "").isdigit():
            fields["status_name"] = IBV_WC_STATUS.get(int(fields["status"]), "unknown status")
        found.append(SignatureMatch(sig.key, fields))
    return found


# nccl-tests lines that echo a failure already said: " .. host pid 12: Test failure common.cu:1100"
_ECHO = re.compile(r"^\s*\.\.\s+\S+\s+pid\s+\d+:\s+Test failure\s+\S+:\d+\s*$")


def is_echo(line: str) -> bool:
    """A stack line of an nccl-tests failure (where it passed the error up), no cause."""
    return bool(_ECHO.match(line or ""))
