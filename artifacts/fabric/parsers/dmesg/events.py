"""What a kernel log line's message says as an event: an Xid, an SXid, a GPU off the bus,
another NVRM message, a PCIe AER error, a NIC link change, an OOM kill, and the CPU, memory
and NIC trouble a GPU job feels. Pure functions of the message text (``dmesg._State`` keeps
their answers per text: an Xid storm repeats its lines)."""

from __future__ import annotations

import re
from typing import Any

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)\): "
    r"(?P<code>\d+),\s*(?P<rest>.*)$"
)
_SXID = re.compile(
    r"(?P<dev>nvidia-nvswitch\d+): SXid \((?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)\): (?P<code>\d+),"
    r"\s*(?P<rest>.*)$"
)
_PID = re.compile(r"^pid=(?P<pid>\d+|'<unknown>'), name=(?P<name>[^,]*),\s*(?P<msg>.*)$")
NVRM = re.compile(r"NVRM: (?P<msg>\S.*?)\s*$")
_NVRM_DEVICE = re.compile(
    r"(?:PCI:|GPU )(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)"
)
API_MISMATCH = re.compile(
    r"API mismatch: the client has the version (?P<client>\d+(?:\.\d+)+), but\s+(?:NVRM: )?"
    r"this kernel module has the version (?P<kernel>\d+(?:\.\d+)+)"
)
# what an NVRM message without an Xid says, by its words (details.what)
_NVRM_KINDS = (
    ("api_mismatch", re.compile(r"API mismatch")),
    ("rm_init_failed", re.compile(r"RmInitAdapter failed|rm_init_adapter failed")),
    ("os_schedule", re.compile(r"os_schedule")),
    ("gsp_timeout", re.compile(r"GSP.*(?:timeout|Timeout)|Timeout.*GSP")),
    ("probe_failed", re.compile(r"probe of \S+ failed|failed to (?:enable|allocate|map)", re.I)),
    ("ecc", re.compile(r"\bECC\b|row remap", re.I)),
)
_OFF_BUS = re.compile(r"NVRM: GPU (?:at )?(?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)?.*fallen off the bus")
_AER = re.compile(
    r"(?P<dev>\d{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d).*?(?:AER: (?P<kind>Corrected|Uncorrected|Multiple"
    r"[^:]*) error|PCIe Bus Error: severity=(?P<sev>[\w ]+?)(?:,|$))",
    re.IGNORECASE,
)
_MLX_LINK = re.compile(
    r"mlx5_core (?P<pci>\d{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d) (?P<dev>\S+): Link (?P<state>up|down)",
    re.IGNORECASE,
)
_OOM = re.compile(r"Out of memory: Killed process (?P<pid>\d+) \((?P<name>[^)]*)\)")
# pcie_print_link_status(): "<driver> <bdf>: 63.008 Gb/s available PCIe bandwidth, limited by
# 8.0 GT/s PCIe x8 link at 0000:3a:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)"
PCIE_LINK = re.compile(
    r"(?:(?P<driver>[\w\-]+) )?(?P<dev>[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d): "
    r"(?P<gbps>[\d.]+) Gb/s available PCIe bandwidth"
    r"(?:, limited by (?P<lspeed>[\d.]+ GT/s) PCIe x(?P<lwidth>\d+) link at (?P<at>[0-9a-f:.]+)"
    r" \(capable of (?P<cgbps>[\d.]+) Gb/s with (?P<cspeed>[\d.]+ GT/s)"
    r" PCIe x(?P<cwidth>\d+) link\)"
    r"| \((?P<speed>[\d.]+ GT/s) PCIe x(?P<width>\d+) link\))",
    re.IGNORECASE,
)
_MCE = re.compile(r"mce: \[Hardware Error\]:\s*(?P<msg>.*)$")
_EDAC = re.compile(r"EDAC (?P<mc>MC\d+|\w+): (?P<count>\d+) (?P<kind>CE|UE) (?P<msg>.*)$")
_SOFT_LOCKUP = re.compile(
    r"soft lockup - CPU#(?P<cpu>\d+) stuck for (?P<secs>\d+)s! \[(?P<name>.+):(?P<pid>\d+)\]"
)
_HUNG_TASK = re.compile(
    r"INFO: task (?P<name>.+):(?P<pid>\d+) blocked for more than (?P<secs>\d+) seconds"
)
_TX_TIMEOUT = re.compile(
    r"NETDEV WATCHDOG: (?P<dev>\S+) \((?P<driver>[^)]+)\): transmit queue (?P<queue>\d+) timed out"
)


def event(body: str) -> tuple[str, dict[str, Any]] | None:
    # each pattern only where its words are: most kernel lines name none of them
    if "NVRM" in body or "fallen off" in body:
        return _nvrm_event(body)
    if "SXid" in body and (m := _SXID.search(body)):
        return "sxid", {
            "sxid": int(m["code"]),
            "device": m["dev"],
            "pci": pci(m["pci"]),
            "message": m["rest"].strip()[:500],
        }
    if "mlx5_core" in body and (m := _MLX_LINK.search(body)):
        return "nic_link", {"device": m["dev"].rstrip(":"), "pci": m["pci"], "state": m["state"]}
    if ("AER" in body or "PCIe Bus Error" in body) and (m := _AER.search(body)):
        severity = (m["kind"] or m["sev"] or "").strip()
        return "pcie_aer", {"device": m["dev"], "severity": severity}
    if "Out of memory" in body and (m := _OOM.search(body)):
        return "oom_kill", {"pid": int(m["pid"]), "process": m["name"]}
    return _host_event(body)


def _host_event(body: str) -> tuple[str, dict[str, Any]] | None:
    """CPU, memory and NIC trouble a GPU job feels: machine checks, ECC, stalls, TX timeouts,
    and PCIe links trained below what the device can do."""
    if "PCIe bandwidth, limited by" in body and (m := PCIE_LINK.search(body)):
        return "pcie_link_limited", {
            "device": m["dev"], "driver": m["driver"], "available_gbps": float(m["gbps"]),
            "speed": m["lspeed"], "width": int(m["lwidth"]), "limited_at": m["at"],
            "capable_gbps": float(m["cgbps"]), "capable_speed": m["cspeed"],
            "capable_width": int(m["cwidth"]),
        }  # fmt: skip
    if "Hardware Error" in body and (m := _MCE.search(body)):
        return "hardware_error", {"source": "mce", "message": m["msg"].strip()[:500]}
    if "EDAC" in body and (m := _EDAC.search(body)):
        return "hardware_error", {
            "source": "edac", "controller": m["mc"], "count": int(m["count"]),
            "corrected": m["kind"] == "CE", "message": m["msg"].strip()[:500],
        }  # fmt: skip
    if "soft lockup" in body and (m := _SOFT_LOCKUP.search(body)):
        return "cpu_stall", {"what": "soft_lockup", "cpu": int(m["cpu"]),
                             "seconds": int(m["secs"]), "process": m["name"],
                             "pid": int(m["pid"])}  # fmt: skip
    if "blocked for more than" in body and (m := _HUNG_TASK.search(body)):
        return "cpu_stall", {"what": "hung_task", "seconds": int(m["secs"]),
                             "process": m["name"], "pid": int(m["pid"])}  # fmt: skip
    if "NETDEV WATCHDOG" in body and (m := _TX_TIMEOUT.search(body)):
        return "nic_tx_timeout", {"device": m["dev"], "driver": m["driver"],
                                  "queue": int(m["queue"])}  # fmt: skip
    return None


def _nvrm_event(body: str) -> tuple[str, dict[str, Any]] | None:
    # each pattern only where its literal words are (most NVRM lines are neither)
    if "Xid" in body and (m := _XID.search(body)):
        details: dict[str, Any] = {"xid": int(m["code"]), "device": pci(m["pci"])}
        rest = m["rest"]
        if p := _PID.match(rest):
            if p["pid"].isdigit():
                details["pid"] = int(p["pid"])
            details["process"] = p["name"]
            rest = p["msg"]
        details["message"] = rest.strip()[:500]
        return "xid", details
    if "fallen off the bus" in body and (m := _OFF_BUS.search(body)):
        return "gpu_off_bus", {"device": pci(m["pci"]) if m["pci"] else None}
    if m := NVRM.search(body):
        return "nvrm", nvrm_details(m["msg"])
    return None


def nvrm_details(message: str) -> dict[str, Any]:
    device = _NVRM_DEVICE.search(message)
    what = next((name for name, pattern in _NVRM_KINDS if pattern.search(message)), "other")
    details: dict[str, Any] = {
        "what": what,
        "device": pci(device["pci"]) if device else None,
        "message": message[:500],
    }
    if m := API_MISMATCH.search(message):
        details.update(client_version=m["client"], kernel_version=m["kernel"])
    return details


def pci(text: str) -> str:
    """NVRM prints 'PCI:0000:9b:00' (no function): keep it as printed, lower-case."""
    return text.lower().rstrip(":")
