"""What a fact describes, hence where it may travel. Pure: no Django imports.

* a **job fact** describes one process world: the ``NCCL_*`` environment it echoed, the NCCL
  version and CUDA runtime it loaded, the NICs and GPUs NCCL chose. It applies to the
  evidence of its own file and of its job, never to another job on the same hosts;
* a **host fact** describes a machine: driver, kernel, firmware, GPU model, NIC model, port
  rate and link layer, NVLink state. It applies to runs on that host close in time.
"""

from __future__ import annotations

JOB = "job"
HOST = "host"
ENV_PREFIX = "nccl.env."
JOB_FACT_NAMES = frozenset(
    {"nccl.version", "cuda.runtime_version", "nccl.ib_devices", "nccl.gpu", "nccl.gpu_count"}
)


def fact_scope(name: str) -> str:
    """``JOB`` or ``HOST`` for a fact name (``nccl.env.NCCL_IB_HCA`` -> ``JOB``)."""
    if name.startswith(ENV_PREFIX) or name in JOB_FACT_NAMES:
        return JOB
    return HOST
