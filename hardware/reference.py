"""Reference node designs: the network a GPU model usually comes with. Pure: no Django.

When nothing states a multi-node run's network (no NICs on the hardware profile, no
``ibstat``/``mlxlink`` of its hosts, no NCCL log naming its devices), the run can still be
read against the networks its GPU is commonly built with: DGX/HGX designs and the cloud
instance types with their published network. Each is a *candidate*: pages and the API show
the run's % of peak under each one, marked "assumed", and an editor adopts the one that
matches for the profile (after which the efficiency is stated, not assumed).

Every number comes with the public document it is read from (the ``source`` text shown
beside it); docs/efficiency.md lists them. Only the GPU-to-GPU (compute) network counts:
storage and management NICs carry no collective traffic.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NodeDesign:
    """A node design: its GPUs and the NICs of its compute network."""

    key: str  # stable id, used by the adopt form and the API
    name: str
    gpu_models: tuple[str, ...]  # the models ``hardware.gpus.gpu_model`` reads
    gpus_per_node: int
    nics_per_node: int
    nic_gbit: float  # per NIC port, Gb/s
    nic_model: str
    fabric: str  # infiniband, roce, efa, ethernet (the profile's fabric choices where known)
    source: str

    @property
    def network_gbit(self) -> float:
        return self.nics_per_node * self.nic_gbit

    @property
    def label(self) -> str:
        return f"{self.name}: {self.nics_per_node} x {self.nic_gbit:g} Gb/s {self.nic_model}"

    def to_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "name": self.name,
            "gpus_per_node": self.gpus_per_node,
            "nics_per_node": self.nics_per_node,
            "nic_line_rate_gbit": self.nic_gbit,
            "nic_model": self.nic_model,
            "fabric": self.fabric,
            "network_gbit": self.network_gbit,
            "source": self.source,
        }


_CX7 = "ConnectX-7"
DESIGNS: tuple[NodeDesign, ...] = (
    # --- NVIDIA DGX / HGX ------------------------------------------------------------------
    NodeDesign(
        "dgx-h100", "NVIDIA DGX H100 / HGX H100", ("H100",), 8, 8, 400, _CX7, "infiniband",
        "NVIDIA DGX H100 datasheet: 8 x single-port ConnectX-7 VPI, 400 Gb/s InfiniBand/"
        "Ethernet (compute fabric)",
    ),
    NodeDesign(
        "dgx-h200", "NVIDIA DGX H200 / HGX H200", ("H200",), 8, 8, 400, _CX7, "infiniband",
        "NVIDIA DGX H200 datasheet: 8 x single-port ConnectX-7 VPI, 400 Gb/s InfiniBand/"
        "Ethernet",
    ),
    NodeDesign(
        "dgx-b200", "NVIDIA DGX B200 / HGX B200", ("B200", "B100"), 8, 8, 400, _CX7,
        "infiniband",
        "NVIDIA DGX B200 datasheet: 4 x OSFP ports serving 8 x single-port ConnectX-7 VPI, "
        "up to 400 Gb/s InfiniBand/Ethernet",
    ),
    NodeDesign(
        "dgx-b300", "NVIDIA DGX B300 / HGX B300", ("B300",), 8, 8, 800, "ConnectX-8",
        "infiniband",
        "NVIDIA DGX B300 datasheet: 8 x OSFP ports serving 8 x single-port ConnectX-8 VPI, "
        "up to 800 Gb/s InfiniBand/Ethernet",
    ),
    NodeDesign(
        "gb200-nvl72", "NVIDIA GB200 NVL72 compute tray", ("GB200",), 4, 4, 400, _CX7,
        "infiniband",
        "NVIDIA GB200 NVL72 reference: per compute tray 4 x ConnectX-7 400 Gb/s (one per "
        "GPU) for the scale-out network",
    ),
    NodeDesign(
        "gb300-nvl72", "NVIDIA GB300 NVL72 compute tray", ("GB300",), 4, 4, 800, "ConnectX-8",
        "infiniband",
        "NVIDIA GB300 NVL72 reference: per compute tray 4 x ConnectX-8 SuperNIC 800 Gb/s",
    ),
    NodeDesign(
        "dgx-a100", "NVIDIA DGX A100 / HGX A100", ("A100",), 8, 8, 200, "ConnectX-6",
        "infiniband",
        "NVIDIA DGX A100 datasheet: 8 x single-port ConnectX-6 VPI, 200 Gb/s HDR InfiniBand "
        "(compute fabric)",
    ),
    # --- clouds ----------------------------------------------------------------------------
    NodeDesign(
        "aws-p5", "AWS p5.48xlarge", ("H100",), 8, 32, 100, "EFA v2", "efa",
        "AWS EC2 P5 instances: p5.48xlarge, 8 x H100, 3200 Gbps EFAv2 networking (32 x "
        "100 Gbps network cards)",
    ),
    NodeDesign(
        "aws-p5en", "AWS p5en.48xlarge", ("H200",), 8, 16, 200, "EFA v3", "efa",
        "AWS EC2 P5en instances: p5en.48xlarge, 8 x H200, 3200 Gbps EFAv3 networking "
        "(16 x 200 Gbps)",
    ),
    NodeDesign(
        "aws-p4d", "AWS p4d/p4de.24xlarge", ("A100",), 8, 4, 100, "EFA", "efa",
        "AWS EC2 P4d instances: p4d.24xlarge, 8 x A100, 400 Gbps EFA networking (4 x 100 Gbps)",
    ),
    NodeDesign(
        "azure-nd-h100-v5", "Azure ND H100 v5", ("H100",), 8, 8, 400, _CX7, "infiniband",
        "Microsoft Azure ND H100 v5 series: 8 x H100, one 400 Gb/s NVIDIA Quantum-2 CX7 "
        "InfiniBand per GPU, 3.2 Tb/s per VM",
    ),
    NodeDesign(
        "azure-nd-h200-v5", "Azure ND H200 v5", ("H200",), 8, 8, 400, _CX7, "infiniband",
        "Microsoft Azure ND H200 v5 series: 8 x H200, 400 Gb/s NVIDIA Quantum-2 CX7 "
        "InfiniBand per GPU, 3.2 Tb/s per VM",
    ),
    NodeDesign(
        "azure-nd-a100-v4", "Azure ND A100 v4", ("A100",), 8, 8, 200, "ConnectX-6", "infiniband",
        "Microsoft Azure ND A100 v4 series: 8 x A100, 200 Gb/s HDR InfiniBand per GPU, "
        "1.6 Tb/s per VM",
    ),
    NodeDesign(
        "azure-nd-mi300x-v5", "Azure ND MI300X v5", ("MI300X",), 8, 8, 400, _CX7, "infiniband",
        "Microsoft Azure ND MI300X v5 series: 8 x MI300X, 400 Gb/s NVIDIA Quantum-2 CX7 "
        "InfiniBand per GPU, 3.2 Tb/s per VM",
    ),
    NodeDesign(
        "gcp-a3-mega", "GCP A3 Mega (a3-megagpu-8g)", ("H100",), 8, 8, 200, "gVNIC (TCPXO)",
        "ethernet",
        "Google Cloud A3 Mega machine types: a3-megagpu-8g, 8 x H100, 8 GPU NICs x 200 Gbps "
        "(GPUDirect-TCPXO), 1,800 Gbps with the host NIC",
    ),
    NodeDesign(
        "gcp-a3-high", "GCP A3 High (a3-highgpu-8g)", ("H100",), 8, 4, 200, "gVNIC (TCPX)",
        "ethernet",
        "Google Cloud A3 High machine types: a3-highgpu-8g, 8 x H100, 4 GPU NICs x 200 Gbps "
        "(GPUDirect-TCPX), 1,000 Gbps with the host NIC",
    ),
    NodeDesign(
        "gcp-a3-ultra", "GCP A3 Ultra (a3-ultragpu-8g)", ("H200",), 8, 8, 400, _CX7, "roce",
        "Google Cloud A3 Ultra machine types: a3-ultragpu-8g, 8 x H200, 8 x ConnectX-7 "
        "400 Gbps RDMA over Converged Ethernet, 3,200 Gbps GPU-to-GPU",
    ),
    NodeDesign(
        "gcp-a4", "GCP A4 (a4-highgpu-8g)", ("B200",), 8, 8, 400, _CX7, "roce",
        "Google Cloud A4 machine types: a4-highgpu-8g, 8 x B200, 8 x ConnectX-7 400 Gbps "
        "RoCE, 3,200 Gbps GPU-to-GPU",
    ),
    NodeDesign(
        "oci-bm-gpu-h100", "OCI BM.GPU.H100.8", ("H100",), 8, 16, 200, "ConnectX-7", "roce",
        "Oracle Cloud BM.GPU.H100.8: 8 x H100, 16 x 200 Gb/s RDMA (RoCE v2) cluster network "
        "interfaces, 3.2 Tb/s",
    ),
)  # fmt: skip
DESIGNS_BY_KEY: dict[str, NodeDesign] = {d.key: d for d in DESIGNS}


def designs_for(gpu_model: str) -> list[NodeDesign]:
    """The designs built with this GPU model ("H100"), most common first (table order)."""
    model = (gpu_model or "").upper()
    return [d for d in DESIGNS if model in d.gpu_models]
