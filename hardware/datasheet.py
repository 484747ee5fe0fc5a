"""Vendor datasheet and specification numbers the limits model starts from. Pure: no Django.

Every number here has its source in ``docs/efficiency.md`` (the ``source`` text below is the
short form shown beside the number on pages and in the API). Bandwidths are *per direction*:
vendors quote NVLink and Infinity Fabric as the sum of both directions (H100: "900 GB/s"),
while nccl-tests' bus bandwidth counts the bytes one GPU sends, so the per-direction half is
the number busbw is measured against. A hardware profile's ``limits`` overrides any of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuLinks:
    """A GPU model's scale-up links: how many, how fast each is per direction, and whether
    they reach every other GPU of the node through a switch (NVSwitch) or as a direct mesh
    (AMD Infinity Fabric), where one peer is reachable over one link only."""

    model: str
    links: int
    link_gbps: float  # GB/s per link per direction
    switched: bool
    source: str
    pcie_gen: int  # the GPU's host interface, for PCIe-bound topologies and GPUDirect RDMA
    pcie_width: int = 16
    # GPUs one NVLink domain joins across hosts (GB200 NVL72: 72 over 18 trays); 0 = a node
    domain: int = 0

    @property
    def total_gbps(self) -> float:
        return self.links * self.link_gbps


_NV_A100 = "NVIDIA A100 datasheet: NVLink 600 GB/s (12 x NVLink3)"
_NV_H100 = "NVIDIA H100 datasheet: NVLink 900 GB/s (18 x NVLink4)"
_NV_H200 = "NVIDIA H200 datasheet: NVLink 900 GB/s (18 x NVLink4)"
_NV_B200 = "NVIDIA HGX B200 / DGX B200 datasheet: NVLink 1.8 TB/s (18 x NVLink5)"
_NV_GB200 = "NVIDIA GB200 NVL72 datasheet: NVLink 1.8 TB/s per GPU (18 x NVLink5)"
_AMD_MI300 = "AMD Instinct MI300X datasheet: 7 x Infinity Fabric links, 896 GB/s peak aggregate"
_AMD_MI250 = "AMD Instinct MI250X datasheet: Infinity Fabric 800 GB/s per module (2 GCDs)"

# Keyed by the model ``hardware.gpus.gpu_model`` reads from a GPU name.
GPUS: dict[str, GpuLinks] = {
    "V100": GpuLinks("V100", 6, 25.0, True, "NVIDIA V100 datasheet: NVLink 300 GB/s", 3),
    "A100": GpuLinks("A100", 12, 25.0, True, _NV_A100, 4),
    # Export variants: fewer NVLinks enabled (A800/H800 datasheets: NVLink 400 GB/s).
    "A800": GpuLinks("A800", 8, 25.0, True, "NVIDIA A800 datasheet: NVLink 400 GB/s", 4),
    "H800": GpuLinks("H800", 8, 25.0, True, "NVIDIA H800 datasheet: NVLink 400 GB/s", 5),
    "H100": GpuLinks("H100", 18, 25.0, True, _NV_H100, 5),
    "H200": GpuLinks("H200", 18, 25.0, True, _NV_H200, 5),
    "H20": GpuLinks("H20", 18, 25.0, True, "NVIDIA H20 datasheet: NVLink 900 GB/s", 5),
    "GH200": GpuLinks("GH200", 18, 25.0, True, "NVIDIA GH200 datasheet: NVLink 900 GB/s", 5),
    "B100": GpuLinks("B100", 18, 50.0, True, "NVIDIA HGX B100 datasheet: NVLink 1.8 TB/s", 5),
    "B200": GpuLinks("B200", 18, 50.0, True, _NV_B200, 5),
    "B300": GpuLinks("B300", 18, 50.0, True, "NVIDIA HGX B300 datasheet: NVLink 1.8 TB/s", 6),
    "GB200": GpuLinks("GB200", 18, 50.0, True, _NV_GB200, 5, domain=72),
    "GB300": GpuLinks("GB300", 18, 50.0, True, "NVIDIA GB300 NVL72: NVLink 1.8 TB/s", 6, domain=72),
    # ROCm lists each MI250X GCD as a device: per device half the module's 8 links.
    "MI250X": GpuLinks("MI250X", 4, 50.0, False, _AMD_MI250, 4),
    "MI250": GpuLinks("MI250", 4, 50.0, False, _AMD_MI250, 4),
    "MI300X": GpuLinks("MI300X", 7, 64.0, False, _AMD_MI300, 5),
    "MI325X": GpuLinks("MI325X", 7, 64.0, False, "AMD Instinct MI325X datasheet: 896 GB/s", 5),
    "MI355X": GpuLinks("MI355X", 7, 76.8, False, "AMD Instinct MI355X datasheet: 1075 GB/s", 5),
}

# GPU names that say "PCIe card": no NVSwitch, GPUs talk over PCIe (an NVLink bridge joins
# pairs at most, which the profile's limits can state).
_PCIE_CARD = re.compile(r"PCIe|\bNVL\b", re.IGNORECASE)


def is_pcie_card(gpu_name: str) -> bool:
    return bool(_PCIE_CARD.search(gpu_name or ""))


# PCI Express: GB/s per lane per direction after line encoding (PCI-SIG base specifications:
# 8b/10b up to 5 GT/s, 128b/130b for 8-32 GT/s, FLIT mode for 64 GT/s).
PCIE_LANE_GBPS: dict[int, float] = {
    1: 0.25,
    2: 0.5,
    3: 0.985,
    4: 1.969,
    5: 3.938,
    6: 7.563,
}
PCIE_SOURCE = "PCI-SIG PCIe base specification (rate x encoding), per lane per direction"


def pcie_gbps(gen: int | None, width: int | None) -> float | None:
    """GB/s per direction of a PCIe link, None when the generation is unknown."""
    if not gen or not width or int(gen) not in PCIE_LANE_GBPS:
        return None
    return round(PCIE_LANE_GBPS[int(gen)] * int(width), 3)


# InfiniBand lane data rates (IBTA specification, as ibstat/mlxlink name them), Gb/s per lane.
IB_LANE_GBIT: dict[str, float] = {
    "SDR": 2.5,
    "DDR": 5.0,
    "QDR": 10.0,
    "FDR10": 10.0,
    "FDR": 14.0,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
}
IB_SOURCE = "InfiniBand Trade Association specification (lane rate x width)"


@dataclass(frozen=True)
class Nic:
    model: str
    max_gbit: float  # fastest port rate the adapter supports
    pcie_gen: int
    pcie_width: int
    source: str


# Keyed by the PCI device id ibstat prints as "CA type: MT4129" (ibv_devinfo: vendor_part_id).
NICS: dict[str, Nic] = {
    "4115": Nic("ConnectX-4", 100, 3, 16, "NVIDIA ConnectX-4 VPI product brief: EDR 100 Gb/s"),
    "4117": Nic("ConnectX-4 Lx", 50, 3, 8, "NVIDIA ConnectX-4 Lx EN product brief: 50 GbE"),
    "4119": Nic("ConnectX-5", 100, 3, 16, "NVIDIA ConnectX-5 VPI product brief: 100 Gb/s"),
    "4121": Nic("ConnectX-5 Ex", 100, 4, 16, "NVIDIA ConnectX-5 Ex product brief: 100 Gb/s"),
    "4123": Nic("ConnectX-6", 200, 4, 16, "NVIDIA ConnectX-6 VPI product brief: HDR 200 Gb/s"),
    "4125": Nic("ConnectX-6 Dx", 200, 4, 16, "NVIDIA ConnectX-6 Dx product brief: 200 GbE"),
    "4127": Nic("ConnectX-6 Lx", 50, 4, 8, "NVIDIA ConnectX-6 Lx product brief: 50 GbE"),
    "4129": Nic("ConnectX-7", 400, 5, 16, "NVIDIA ConnectX-7 product brief: NDR 400 Gb/s"),
    "4131": Nic("ConnectX-8", 800, 6, 16, "NVIDIA ConnectX-8 SuperNIC brief: XDR 800 Gb/s"),
    "41686": Nic("BlueField-2", 200, 4, 16, "NVIDIA BlueField-2 DPU product brief: 200 Gb/s"),
    "41692": Nic("BlueField-3", 400, 5, 16, "NVIDIA BlueField-3 DPU product brief: 400 Gb/s"),
}
_NIC_NAMES = {n.model.lower().replace("-", "").replace(" ", ""): n for n in NICS.values()}
_PART = re.compile(r"(?:MT)?(\d{4,5})\b", re.IGNORECASE)


def nic_for(text: str) -> Nic | None:
    """The adapter an ``hca.type`` ("MT4129", "4129") or a profile's NIC model
    ("ConnectX-7") names, None when unknown."""
    key = (text or "").lower().replace("-", "").replace(" ", "")
    for name, nic in sorted(_NIC_NAMES.items(), key=lambda kv: -len(kv[0])):
        if name in key:
            return nic
    m = _PART.search(text or "")
    return NICS.get(m.group(1)) if m else None
