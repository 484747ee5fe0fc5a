"""InfiniBand work-completion errors as NCCL's IB transport reports them, read into fields.

NCCL has printed a failed completion in several spellings over the years (all WARN lines of
``transport/net_ib.cc`` or ``net_ib/p2p.cc``, also quoted by PyTorch after ``Last error:``)::

    NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129            (<= 2.7)
    NET/IB : Got completion from peer 10.2.0.5<33092> with error 12, opcode 0, len 0,
        vendor err 129 (Recv)                                                         (2.8-2.12)
    NET/IB: Got completion from peer 10.0.0.2<39226> with status=12 opcode=129 len=0
        vendor err 129 (Recv) localGid fe80::... remoteGid fe80::... hca mlx5_10      (2.13-2.18)
    ... vendor err 129 (Recv) localGid ::ffff:10.77.0.2 remoteGids::ffff:10.77.0.1 hca ...
    NET/IB: Got completion from peer 10.1.2.3<40554> with status=IBV_WC_RETRY_EXC_ERR(12)
        opcode=IBV_WC_RECV_RDMA_WITH_IMM(129) vendor_err=129 localGid ... hca mlx5_1  (>= 2.27)

So each field is looked for on its own, whatever the order and separators. The opcode of an
error completion is not valid in libibverbs (only ``status`` and ``vendor_err`` are), which is
why NCCL sometimes prints garbage there; it is kept as printed and named only when known.
"""

from __future__ import annotations

import re
from typing import Any

MARKER = "Got completion"
ASYNC_MARKER = "async "

# ibv_wc_status (libibverbs verbs.h): the work-completion status of a failed RDMA operation.
IBV_WC_STATUS: dict[int, str] = {
    0: "IBV_WC_SUCCESS", 1: "IBV_WC_LOC_LEN_ERR", 2: "IBV_WC_LOC_QP_OP_ERR",
    3: "IBV_WC_LOC_EEC_OP_ERR", 4: "IBV_WC_LOC_PROT_ERR", 5: "IBV_WC_WR_FLUSH_ERR",
    6: "IBV_WC_MW_BIND_ERR", 7: "IBV_WC_BAD_RESP_ERR", 8: "IBV_WC_LOC_ACCESS_ERR",
    9: "IBV_WC_REM_INV_REQ_ERR", 10: "IBV_WC_REM_ACCESS_ERR", 11: "IBV_WC_REM_OP_ERR",
    12: "IBV_WC_RETRY_EXC_ERR", 13: "IBV_WC_RNR_RETRY_EXC_ERR", 14: "IBV_WC_LOC_RDD_VIOL_ERR",
    15: "IBV_WC_REM_INV_RD_REQ_ERR", 16: "IBV_WC_REM_ABORT_ERR", 17: "IBV_WC_INV_EECN_ERR",
    18: "IBV_WC_INV_EEC_STATE_ERR", 19: "IBV_WC_FATAL_ERR", 20: "IBV_WC_RESP_TIMEOUT_ERR",
    21: "IBV_WC_GENERAL_ERR", 22: "IBV_WC_TM_ERR", 23: "IBV_WC_TM_RNDV_INCOMPLETE",
}  # fmt: skip
# ibv_wc_opcode (verbs.h): what the completed work request was.
IBV_WC_OPCODE: dict[int, str] = {
    0: "IBV_WC_SEND", 1: "IBV_WC_RDMA_WRITE", 2: "IBV_WC_RDMA_READ", 3: "IBV_WC_COMP_SWAP",
    4: "IBV_WC_FETCH_ADD", 5: "IBV_WC_BIND_MW", 6: "IBV_WC_LOCAL_INV", 7: "IBV_WC_TSO",
    128: "IBV_WC_RECV", 129: "IBV_WC_RECV_RDMA_WITH_IMM",
}  # fmt: skip

_PEER = re.compile(r"from peer (?P<addr>[^\s<]*?)(?:<(?P<port>\d+)>)?(?=\s+with\b)")
_STATUS = re.compile(
    r"with error (?P<a>\d+)|status=(?:(?P<name>IBV_WC_\w+)\()?(?P<b>\d+)\)?", re.IGNORECASE
)
_OPCODE = re.compile(r"opcode[ =](?:(?P<name>IBV_WC_\w+)\()?(?P<code>\d+)\)?", re.IGNORECASE)
_LEN = re.compile(r"\b(?:len|reqSize)[ =](?P<n>\d+)")
_VENDOR = re.compile(r"vendor[ _]err(?:=| )?(?P<v>0x[0-9a-fA-F]+|\d+)", re.IGNORECASE)
_REQUEST = re.compile(
    r"vendor[ _]err[= ]?(?:0x[0-9a-fA-F]+|\d+)\s+\((?P<r>[A-Za-z ]+)\)|req_type=(?P<r2>\w+)"
)
_LOCAL_GID = re.compile(r"localGid\s*(?P<g>[0-9a-fA-F:.]*[0-9a-fA-F])")
_REMOTE_GID = re.compile(r"remoteGids?\s*(?P<g>[0-9a-fA-F:.]*[0-9a-fA-F])")
_HCA = re.compile(r"\bhca (?P<h>[\w.\-]+)")


def read_completion(text: str) -> dict[str, Any] | None:
    """The fields of a failed IB completion named in ``text``, or None if it holds none."""
    at = text.find(MARKER)
    if at < 0:
        return None
    body = text[at:]
    status = _STATUS.search(body)
    if status is None:
        return None
    code = int(status["a"] or status["b"])
    fields: dict[str, Any] = {
        "status": code,
        "status_name": status["name"] or IBV_WC_STATUS.get(code, "unknown status"),
        "opcode": None,
        "opcode_name": None,
        "length": None,
        "vendor_err": None,
        "request": None,
        "peer": None,
        "peer_port": None,
        "local_gid": None,
        "remote_gid": None,
        "hca": None,
    }
    if peer := _PEER.search(body):
        fields["peer"] = peer["addr"] or None
        fields["peer_port"] = int(peer["port"]) if peer["port"] else None
    if opcode := _OPCODE.search(body):
        fields["opcode"] = int(opcode["code"])
        fields["opcode_name"] = opcode["name"] or IBV_WC_OPCODE.get(fields["opcode"])
    if length := _LEN.search(body):
        fields["length"] = int(length["n"])
    if vendor := _VENDOR.search(body):
        # hex with its 0x, else decimal: "029" is twenty-nine (int(v, 0) refuses it)
        raw = vendor["v"]
        fields["vendor_err"] = int(raw, 16) if raw[:2].lower() == "0x" else int(raw)
    if request := _REQUEST.search(body):
        fields["request"] = (request["r"] or request["r2"]).strip()
    if gid := _LOCAL_GID.search(body):
        fields["local_gid"] = gid["g"]
    if gid := _REMOTE_GID.search(body):
        fields["remote_gid"] = gid["g"]
    if hca := _HCA.search(body):
        fields["hca"] = hca["h"]
    return fields


# the HCA's asynchronous events (port error, port active, QP fatal...), NCCL <= 2.18 and later:
# "NET/IB : mlx5_0:1 Got async event : port error",
# "NET/IB : mlx5_0:1 async fatal event on QP (0x55d5): local work queue catastrophic error"
_ASYNC = re.compile(
    r"NET/IB ?: ?(?:(?P<hca>[\w.\-]+):(?P<port>\d+) )?(?:Got )?async "
    r"(?:(?P<sev>fatal|non-fatal) )?event(?: on (?P<on>\w+)(?: \([^)]*\))?)?\s*:\s*"
    r"(?P<event>\S.*?)\s*$"
)


def read_async_event(text: str) -> dict[str, Any] | None:
    """The HCA, port and event of an IB asynchronous event NCCL reported, or None."""
    m = _ASYNC.search(text)
    if m is None:
        return None
    return {
        "hca": m["hca"],
        "port": int(m["port"]) if m["port"] else None,
        "severity": m["sev"],
        "on": m["on"],  # QP, CQ, SRQ or None (a port/device event)
        "event": m["event"],
    }


def incomplete(fields: dict[str, Any]) -> bool:
    """A completion whose line was wrapped (pasted text): its tail may be on the next line."""
    return fields["vendor_err"] is None or (
        fields["peer"] is not None and fields["hca"] is None and fields["local_gid"] is None
    )


def identity(fields: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two reports the same failure (PyTorch re-quotes NCCL's last WARN)."""
    return (fields["peer"], fields["status"], fields["vendor_err"], fields["hca"])
