"""The log event kinds that are faults: each one a timeline entry, a symptom, a suspect.

Communicator init/destroy lines and Fabric Manager warnings are routine and would drown the
rest, so they are not here; NCCL warnings and errors, watchdog timeouts, Xid/SXid, a GPU off
the bus, PCIe AER, NIC link changes, OOM kills and Fabric Manager errors and NVSwitch/NVLink
faults are. Incidents (timeline suggestions, incident facts) and the knowledge base (pages a
symptom points to) read the same set.
"""

from __future__ import annotations

NCCL_FAULTS = (
    "nccl_warn",
    "comm_abort",
    "watchdog_timeout",
    "watchdog_exception",
    "work_timeout",
    "nccl_error",
    "dist_backend_error",
    "watchdog_stuck",
)
KERNEL_FAULTS = ("xid", "sxid", "gpu_off_bus", "pcie_aer", "nic_link", "oom_kill")
FABRIC_MANAGER_FAULTS = (
    "fm_nvswitch_fatal",
    "fm_nvswitch_non_fatal",
    "fm_nvlink_failure",
    "fm_error",
)
FAULT_EVENT_KINDS: frozenset[str] = frozenset(
    (*NCCL_FAULTS, *KERNEL_FAULTS, *FABRIC_MANAGER_FAULTS)
)
