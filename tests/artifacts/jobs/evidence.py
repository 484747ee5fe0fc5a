"""Small evidence files for the job tests, written here (not samples): an nccl-tests table
of chosen hosts and an NCCL_DEBUG log of chosen hosts echoing one NCCL_* variable."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from artifacts.models import Artifact
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from baselines.services import artifact_evaluate


def nccl_tests_text(hosts: Sequence[str], *, busbw: float = 0.05, tag: str = "") -> bytes:
    ranks = "\n".join(
        f"#  Rank {i:2d} Group  0 Pid {1000 + i:6d} on {host:>10} device  0 [0x00] "
        "Tesla V100-SXM2-16GB"
        for i, host in enumerate(hosts)
    )
    return (
        f"# {tag}\n"
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 "
        "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
        f"{ranks}\n#\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
        "     (us)  (GB/s)  (GB/s)\n"
        "           8             2     float     sum      -1    30.12    0.00    0.00      0"
        "    29.85    0.00    0.00      0\n"
        f"        1024           256     float     sum      -1    35.00    0.03 {busbw:7.2f}"
        f"      0    34.00    0.03 {busbw:7.2f}      0\n"
        "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.025\n#\n"
    ).encode()


def nccl_debug_text(hosts: Sequence[str], *, hca: str, nccl: str = "2.21.5") -> bytes:
    lines = []
    for i, host in enumerate(hosts):
        pid = 2000 + i
        lines += [
            f"{host}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using eth0:10.0.0.{i + 1}<0>",
            f"{host}:{pid}:{pid} [0] NCCL INFO NCCL_IB_HCA set by environment to {hca}",
            f"{host}:{pid}:{pid} [0] NCCL INFO NET/IB : Using [0]{hca}:1/RoCE ; OOB eth0",
        ]
        if i == 0:
            lines.append(f"NCCL version {nccl}+cuda12.4")
    return ("\n".join(lines) + "\n").encode()


def upload(content: bytes, name: str, **kwargs: Any) -> Artifact:
    """Ingest, parse and evaluate in-process (the after-parse task's body, run directly)."""
    outcome = artifact_ingest(stream=io.BytesIO(content), name=name, enqueue=False, **kwargs)
    artifact = artifact_parse(artifact_id=outcome.artifact.pk)
    assert artifact.status == Artifact.Status.PARSED, artifact.error
    artifact_evaluate(artifact_id=artifact.pk, notify=False)
    return artifact


def reparse(artifact: Artifact) -> Artifact:
    artifact = artifact_parse(artifact_id=artifact.pk)
    artifact_evaluate(artifact_id=artifact.pk, notify=False)
    return artifact
