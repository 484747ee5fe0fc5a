"""The findings rules, declared as data, and their evaluation. Pure: no Django.

A rule is one of three shapes:

* ``CounterRule``: counters whose name matches a pattern (named groups such as ``prio``
  feed the title), measured as a per-second ``rate``, a ``delta`` between two readings, a
  ``derived`` metric (rates.py) or the ``total`` of a single reading; a threshold, and a
  higher threshold that makes it critical.
* ``FactRule``: a check over the facts a file states (port state, PCIe link, NCCL
  transports...). The checks are small named predicates (checks.py), so the rule table stays a
  table.
* ``EventRule``: log events of some kinds (Xid, watchdog timeout), with severity by code.

Each rule has an id, a title and an explanation template (``str.format`` over the hit's
fields), a severity and a knowledge-base topic slug. ``evaluate`` turns evidence into
``Hit`` objects; the findings service stores them. docs/fabric.md lists the rules.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from artifacts.fabric.checks import (
    BelowExpectedRate,
    DistinctAcrossHosts,
    EachFact,
    FactCompare,
    GdrOff,
    ReasonsActive,
    SocketFallback,
    StateNotIn,
    is_idle,
)
from artifacts.fabric.failure_checks import RULE_SPECS as FAILURE_RULE_SPECS
from artifacts.fabric.host_checks import (
    ArpFlux,
    GidIndexMismatch,
    GidV2Missing,
    QosDscpNotOnRocePriority,
    QosPfcOffOnRoce,
    QosTrustPcp,
    RpFilterStrict,
    SysctlCompare,
)
from hardware.checks import (
    KB_LINK_HEALTH,
    BelowPeak,
    LinkBelowHost,
    PortBelowAdapterMax,
)
from hardware.evidence import (
    CRITICAL,
    INFO,
    SEVERITY_RANK,
    WARNING,
    EventRow,
    Evidence,
    FactRow,
    Hit,
    RateRow,
    SampleRow,
)

__all__ = [
    "CRITICAL", "EVENT_RULES", "FACT_RULES", "INFO", "RULES", "RULES_BY_ID", "SEVERITY_RANK",
    "WARNING", "CounterRule", "EventRow", "EventRule", "Evidence", "FactRow", "FactRule", "Hit",
    "RateRow", "SampleRow", "evaluate",
]  # fmt: skip

# --- rule shapes ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CounterRule:
    id: str
    title: str
    explanation: str
    kb: str
    counters: str  # regular expression, matched against the whole counter name
    measure: str  # "rate" | "delta" | "derived" | "total"
    above: float  # fires when the measure is above this
    severity: str = WARNING
    critical_above: float | None = None
    unit: str = ""  # how the measure reads in titles ("frames/s", "%")

    def __post_init__(self) -> None:
        object.__setattr__(self, "_pattern", re.compile(self.counters))

    def match(self, counter: str) -> re.Match[str] | None:
        return self._pattern.fullmatch(counter)  # type: ignore[attr-defined,no-any-return]


@dataclasses.dataclass(frozen=True)
class FactRule:
    id: str
    title: str
    explanation: str
    kb: str
    check: Callable[[Evidence], Iterable[dict[str, Any]]]
    severity: str = WARNING


@dataclasses.dataclass(frozen=True)
class EventRule:
    id: str
    title: str
    explanation: str
    kb: str
    kinds: frozenset[str]
    severity: str = WARNING
    # severity per ``extra[code_field]`` value (Xid numbers); others use ``severity``
    code_field: str = ""
    severity_by_code: Mapping[Any, str] = dataclasses.field(default_factory=dict)
    group_by: tuple[str, ...] = ("host",)


Rule = CounterRule | FactRule | EventRule


# --- the rules --------------------------------------------------------------------------------

KB_PFC = "roce-pfc-and-pause-frames"
KB_ECN = "roce-ecn-dcqcn"
KB_DROPS = "nic-buffer-drops"
KB_RETRIES = "rdma-transport-retries"
KB_LINK = "link-flaps-and-symbol-errors"
KB_PCIE = "gpu-pcie-link-training"
KB_THERMAL = "gpu-throttling"
KB_ECC = "gpu-ecc-and-xid"
KB_NCCL = "nccl-transport-selection"
KB_IRQ = "irq-affinity"
# topics of the knowledge pages in knowledge/content/ (slug = file name)
KB_ROCE_QOS = "roce-v2-lossless-connectx-7"
KB_ROCE_GID = "nccl-env-roce-h100-h200"
KB_NVSWITCH = "nvlink-nvswitch-health"
KB_HOST_NUMA = "numa-irq-affinity-cpu-isolation"
KB_SOCKETS = "nccl-falls-back-to-sockets"
KB_GDR = "gpudirect-rdma-checks"
MIB_16 = 16 * 1024 * 1024

COUNTER_RULES: tuple[CounterRule, ...] = (
    CounterRule(
        id="pfc_pause_storm",
        title="PFC pause storm on {device} priority {prio}",
        explanation=(
            "{device} {direction} {rate:,.0f} PFC pause frames per second on priority {prio} "
            "(over {dt:.0f} s). Pause frames stop the sender on that priority; a steady flow "
            "of them means a receiver cannot drain its buffers (slow host, PCIe back-pressure, "
            "or congestion that ECN/DCQCN should have handled earlier)."
        ),
        kb=KB_PFC,
        counters=r"(?P<dir>rx|tx)_prio(?P<prio>\d)_pause",
        measure="rate",
        above=1000,
        critical_above=10000,
        unit="frames/s",
    ),
    CounterRule(
        id="pfc_pause_duration",
        title="{device} {prio_text} paused {value:.1f}% of the time",
        explanation=(
            "For {value:.1f}% of {dt:.0f} s, {device} was told to stop sending (or told its "
            "peer to stop) ({prio_text}). Above 1% the lossless class loses real "
            "bandwidth; above 10% it is a pause storm."
        ),
        kb=KB_PFC,
        counters=r"(?P<dir>rx|tx)_(?P<prio>prio\d|global)_pause_duration_pct",
        measure="derived",
        above=1.0,
        critical_above=10.0,
        unit="%",
    ),
    CounterRule(
        id="pfc_storm_warning_events",
        title="PFC storm warning on {device}",
        explanation=(
            "{counter} rose by {delta:,.0f} on {device}: the NIC saw itself pausing the link "
            "for longer than its storm-warning threshold. The host is not draining its "
            "receive queues fast enough."
        ),
        kb=KB_PFC,
        counters=r"tx_pause_storm_warning_events",
        measure="delta",
        above=0,
        unit="events",
    ),
    CounterRule(
        id="pfc_storm_error_events",
        title="PFC storm prevention stopped pause frames on {device}",
        explanation=(
            "{counter} rose by {delta:,.0f} on {device}: the NIC paused the link for so long "
            "that storm prevention stopped sending pause frames to protect the fabric. The "
            "lossless class is now lossy on this port; find out why the host stalls."
        ),
        kb=KB_PFC,
        counters=r"tx_pause_storm_error_events",
        measure="delta",
        above=0,
        severity=CRITICAL,
        unit="events",
    ),
    CounterRule(
        id="pfc_storm_events_total",
        title="{device} has PFC storm events since its counters were cleared",
        explanation=(
            "{counter} is {total:,.0f} on {device} in a single reading. It cannot say when "
            "they happened; upload a second reading to see whether they are still rising."
        ),
        kb=KB_PFC,
        counters=r"tx_pause_storm_(?:warning|error)_events",
        measure="total",
        above=0,
        severity=INFO,
    ),
    CounterRule(
        id="ecn_marked_share",
        title="{value:.1f}% of RoCE packets ECN-marked on {device}",
        explanation=(
            "{value:.1f}% of the RoCE packets {device} received over {dt:.0f} s carried an ECN "
            "congestion mark: switches queues are building up on the path. A few percent is "
            "DCQCN doing its job; a large share means persistent congestion (incast, "
            "oversubscription, or ECN thresholds set too low)."
        ),
        kb=KB_ECN,
        counters=r"ecn_marked_share_pct",
        measure="derived",
        above=5.0,
        critical_above=20.0,
        unit="%",
    ),
    CounterRule(
        id="cnp_rate",
        title="{rate:,.0f} CNPs per second on {device}",
        explanation=(
            "{counter} rose {rate:,.0f} per second over {dt:.0f} s on {device}. Congestion "
            "notification packets make senders slow down (DCQCN); a high steady rate means "
            "flows through this NIC spend their time throttled."
        ),
        kb=KB_ECN,
        counters=r"np_cnp_sent|rp_cnp_handled",
        measure="rate",
        above=1000,
        critical_above=50000,
        unit="CNP/s",
    ),
    CounterRule(
        id="buffer_drops",
        title="Packets dropped for lack of buffer on {device}",
        explanation=(
            "{counter} rose by {delta:,.0f} ({rate_text}) on {device}. The NIC had no "
            "receive buffer (or the lossless priority overflowed): RoCE retransmits, and "
            "collective bandwidth collapses. Check PFC on the priority, ring sizes and the "
            "host's ability to keep up (IRQ affinity, PCIe)."
        ),
        kb=KB_DROPS,
        counters=(
            r"rx_discards_phy|rx_out_of_buffer|out_of_buffer|rx_prio(?P<prio>\d)_discards"
            r"|port_rcv_discards|port_xmit_discards"
        ),
        measure="delta",
        above=0,
        critical_above=1e6,
        unit="packets",
    ),
    CounterRule(
        id="transport_retries",
        title="RDMA transport retries on {device}",
        explanation=(
            "{counter} rose by {delta:,.0f} ({rate_text}) on {device}. Requests were lost "
            "or arrived out of order and had to be retried (go-back-N on RoCE): a lossy "
            "path, drops in a switch, or timeouts set too short."
        ),
        kb=KB_RETRIES,
        counters=(
            r"out_of_sequence|packet_seq_err|local_ack_timeout_err|rnr_nak_retry_err"
            r"|implied_nak_seq_err|roce_adp_retrans|roce_adp_retrans_to|req_transport_retries_exceeded"
        ),
        measure="delta",
        above=0,
        critical_above=10000,
        unit="events",
    ),
    CounterRule(
        id="out_of_sequence_share",
        title="{value:,.0f} out-of-sequence packets per million on {device}",
        explanation=(
            "{device} received {value:,.0f} out-of-sequence packets per million RoCE packets "
            "over {dt:.0f} s. Each one triggers a go-back-N retransmission; anything above a "
            "few per million costs bandwidth."
        ),
        kb=KB_RETRIES,
        counters=r"out_of_sequence_ppm",
        measure="derived",
        above=10,
        critical_above=1000,
        unit="ppm",
    ),
    CounterRule(
        id="link_flap",
        title="Link flapped on {device}",
        explanation=(
            "{counter} rose by {delta:,.0f} on {device} between the two readings: the link "
            "went down and came back. Every flap stalls collectives on this port and may "
            "reroute traffic; suspect the cable/transceiver or the switch port."
        ),
        kb=KB_LINK,
        counters=r"link_downed|link_down_counter|link_down_events_phy",
        measure="delta",
        above=0,
        severity=CRITICAL,
        unit="flaps",
    ),
    CounterRule(
        id="symbol_errors",
        title="Symbol errors rising on {device}",
        explanation=(
            "{counter} rose by {delta:,.0f} ({rate_text}) on {device}. Bit errors the FEC "
            "could not hide: a marginal cable, dirty optics or a failing transceiver. They "
            "usually precede link flaps."
        ),
        kb=KB_LINK,
        counters=r"symbol_error|symbol_errors|rx_pcs_symbol_err_phy|effective_physical_errors",
        measure="delta",
        above=0,
        critical_above=1000,
        unit="errors",
    ),
    CounterRule(
        id="gpu_pcie_replays",
        title="PCIe replays rising on GPU {device}",
        explanation=(
            "{counter} rose by {delta:,.0f} on GPU {device}: the PCIe link is retransmitting "
            "packets (signal integrity, riser or slot problem), which costs host-device "
            "bandwidth and GPUDirect RDMA throughput."
        ),
        kb=KB_PCIE,
        counters=r"pcie\.replay_counter",
        measure="delta",
        above=0,
        critical_above=1000,
        unit="replays",
    ),
    CounterRule(
        id="gpu_ecc_rising",
        title="Uncorrectable ECC errors rising on GPU {device}",
        explanation=(
            "{counter} rose by {delta:,.0f} on GPU {device}. Uncorrectable memory errors "
            "kill the process that touched the memory; the GPU needs a reset and, if it "
            "repeats, an RMA."
        ),
        kb=KB_ECC,
        counters=r"ecc\.errors\.uncorrected\.(?:volatile|aggregate)\.total",
        measure="delta",
        above=0,
        severity=CRITICAL,
        unit="errors",
    ),
)

FACT_RULES: tuple[FactRule, ...] = (
    FactRule(
        id="port_down",
        title="Port {device}/{port} is {state}",
        explanation=(
            "{device} port {port} on {host} is {state} (physical state: {phys_state}). "
            "Traffic that NCCL would put on this rail goes elsewhere or nowhere: check the "
            "cable, the switch port and the subnet manager (IB)."
        ),
        kb=KB_LINK,
        check=StateNotIn(
            "port.state", frozenset({"ACTIVE"}), critical=frozenset({"DOWN", "POLLING"})
        ),
        severity=CRITICAL,
    ),
    FactRule(
        id="link_down",
        title="Link {device} is {state}",
        explanation=("mlxlink reports {device} {state} (physical state: {phys_state}) on {host}."),
        kb=KB_LINK,
        check=StateNotIn(
            "link.state", frozenset({"ACTIVE"}), critical=frozenset({"DOWN", "POLLING"})
        ),
        severity=CRITICAL,
    ),
    FactRule(
        id="port_below_expected_rate",
        title="Port {device}/{port} runs at {rate_gbps:g} Gb/s, expected {expected_gbps:g}",
        explanation=(
            "{device} port {port} on {host} is active at {rate_gbps:g} Gb/s while "
            "{expected_gbps:g} Gb/s was expected ({basis}). A port that trained down (bad "
            "lane, cable, or auto-negotiation) makes its rail the slowest in every ring."
        ),
        kb=KB_LINK,
        check=BelowExpectedRate(),
    ),
    FactRule(
        id="link_status_issue",
        title="mlxlink reports an issue on {device}",
        explanation=(
            "mlxlink's troubleshooting opcode for {device} is {value} (0 means no issue). "
            "Its recommendation: {recommendation}"
        ),
        kb=KB_LINK,
        check=FactCompare("link.status_opcode", above=0),
    ),
    FactRule(
        id="gpu_pcie_width_downtrained",
        title="GPU {device} PCIe link at x{value}, capable of x{limit}",
        explanation=(
            "The GPU at {device} trained its PCIe link at x{value} lanes of a possible "
            "x{limit}. Width does not drop to save power: host-device copies and GPUDirect "
            "RDMA run at a fraction of their bandwidth. Reseat the GPU or check the riser."
        ),
        kb=KB_PCIE,
        check=FactCompare("gpu.pcie_width_current", below_fact="gpu.pcie_width_max"),
    ),
    FactRule(
        id="gpu_pcie_gen_downtrained",
        title="GPU {device} PCIe link at Gen{value}, capable of Gen{limit}",
        explanation=(
            "The GPU at {device} runs its PCIe link at Gen{value} of a possible Gen{limit}. "
            "Idle GPUs lower the generation to save power (then this is informational); "
            "under load it halves bandwidth per step."
        ),
        kb=KB_PCIE,
        check=FactCompare(
            "gpu.pcie_gen_current",
            below_fact="gpu.pcie_gen_max",
            unless_fact="gpu.utilization_gpu_percent",
            unless=is_idle,
        ),
    ),
    FactRule(
        id="gpu_throttling",
        title="GPU {device} throttled: {reasons}",
        explanation=(
            "nvidia-smi lists active clock-event reasons {reasons} for the GPU at {device}. "
            "Hardware and thermal slowdowns cut clocks hard and make this GPU the straggler "
            "of every collective; a power cap is milder but still slows compute."
        ),
        kb=KB_THERMAL,
        check=ReasonsActive(
            critical=frozenset({"hw_thermal_slowdown", "hw_power_brake_slowdown"}),
            warning=frozenset({"hw_slowdown", "sw_thermal_slowdown"}),
            info=frozenset({"sw_power_cap"}),
        ),
    ),
    FactRule(
        id="gpu_ecc_uncorrectable",
        title="GPU {device} has {value} uncorrectable ECC errors",
        explanation=(
            "The volatile uncorrectable ECC count of the GPU at {device} is {value}: since "
            "the last reset it lost data it could not repair. Drain the node, reset the GPU "
            "and watch for Xid 48/63/64."
        ),
        kb=KB_ECC,
        check=FactCompare("gpu.ecc_uncorrected_volatile", above=0),
        severity=CRITICAL,
    ),
    FactRule(
        id="gpu_row_remap_pending",
        title="GPU {device} has row remappings pending",
        explanation=(
            "The GPU at {device} remapped memory rows after uncorrectable errors and needs a "
            "reset for the remapping to take effect; until then the bad rows stay in use."
        ),
        kb=KB_ECC,
        check=FactCompare("gpu.remapped_rows_pending", equals=frozenset({"yes"})),
        severity=CRITICAL,
    ),
    FactRule(
        id="gpu_row_remap_failure",
        title="GPU {device} ran out of spare rows",
        explanation=(
            "Row remapping failed on the GPU at {device}: it has no spare memory rows left. "
            "The GPU should be replaced."
        ),
        kb=KB_ECC,
        check=FactCompare("gpu.remapped_rows_failure", equals=frozenset({"yes"})),
        severity=CRITICAL,
    ),
    FactRule(
        id="nccl_version_mismatch",
        title="NCCL version mismatch across hosts: {versions}",
        explanation=(
            "The hosts of this job do not run the same NCCL: {versions}. Odd one(s) out: "
            "{odd_hosts} (most run {majority}). Mixed versions can pick different "
            "algorithms or protocols per rank, hang at init, or silently slow down."
        ),
        kb=KB_NCCL,
        check=DistinctAcrossHosts("nccl.version"),
        severity=CRITICAL,
    ),
    FactRule(
        id="nccl_socket_fallback",
        title="NCCL fell back to sockets on {host}",
        explanation=(
            "NCCL on {host} moved inter-node traffic over TCP sockets (NET/Socket), not "
            "IB/RoCE. Expected RDMA because: {why_expected}. Socket transport is an order "
            "of magnitude slower; check NCCL_IB_HCA, the RDMA devices seen by the container "
            "and 'NET/IB : No device found' lines."
        ),
        kb=KB_NCCL,
        check=SocketFallback(),
    ),
    FactRule(
        id="nccl_gdr_disabled",
        title="GPUDirect RDMA disabled on {host}",
        explanation=(
            "NCCL uses NET/IB on {host} but printed 'GPU Direct RDMA Disabled' for its HCAs: "
            "every message is copied through host memory. Load nvidia-peermem (or use "
            "DMA-BUF) and check the GPU-NIC PCIe topology."
        ),
        kb=KB_NCCL,
        check=GdrOff(),
    ),
    FactRule(
        id="nic_irqs_on_one_cpu",
        title="{value}% of {device} interrupts land on CPU {top_cpu}",
        explanation=(
            "The {count} interrupt vectors of {driver} device {device} on {host} are served "
            "almost only by CPU {top_cpu} ({value}% of its interrupts). That core handles "
            "every completion of the NIC and becomes the bottleneck at high message rates: "
            "spread the IRQs over the cores of the NIC's NUMA node (set_irq_affinity, an "
            "irqbalance policy)."
        ),
        kb=KB_IRQ,
        check=FactCompare("irq.top_cpu_pct", above=90),
    ),
    FactRule(
        id="dcgm_diag_failure",
        title="DCGM diagnostic {value} failed",
        explanation=(
            "dcgmi diag reported a failure on {host} ({device}): {value}. See the artifact "
            "for DCGM's own warning text."
        ),
        kb=KB_ECC,
        check=EachFact("dcgm.diag.failed"),
        severity=CRITICAL,
    ),
)

# NIC QoS, GID tables, NVLink state and kernel settings (host_checks.py).
HOST_CONFIG_RULES: tuple[FactRule, ...] = (
    FactRule(
        id="roce_trust_pcp",
        title="{device} classifies traffic by PCP, not DSCP",
        explanation=(
            "mlnx_qos reports 'Priority trust state: pcp' for {device} on {host} (PFC on: "
            "{pfc}). RoCE v2 packets carry their class in the DSCP field; without VLAN tags "
            "there is no PCP, so in PCP trust the NIC puts RoCE on priority 0, where PFC and "
            "the RoCE queue are not. Unless this fabric tags RoCE with VLAN priorities on "
            "purpose, set 'mlnx_qos -i {device} --trust dscp'."
        ),
        kb=KB_ROCE_QOS,
        check=QosTrustPcp(),
    ),
    FactRule(
        id="roce_pfc_off_on_roce_priority",
        title="PFC is not enabled on RoCE priority {prio} of {device}",
        explanation=(
            "mlnx_qos on {host} shows PFC enabled on {enabled} for {device}, not on priority "
            "{prio} where RoCE traffic is expected (upload metadata 'roce_priority', default "
            "3). With PFC on another priority the lossless class is on the wrong queue and "
            "RoCE drops under congestion (go-back-N retransmissions); with PFC nowhere the "
            "fabric is lossy, which only works when it was designed for it (ECN-only)."
        ),
        kb=KB_ROCE_QOS,
        check=QosPfcOffOnRoce(),
    ),
    FactRule(
        id="roce_dscp_not_on_roce_priority",
        title="DSCP {dscp} maps to priority {mapped} on {device}, not {prio}",
        explanation=(
            "{device} on {host} trusts DSCP, but its dscp2prio table sends DSCP {dscp} (RoCE "
            "data; upload metadata 'roce_dscp') to priority {mapped} instead of the lossless "
            "priority {prio}: RoCE misses PFC and its ETS share. Fix with 'mlnx_qos -i "
            "{device} --dscp2prio set,{dscp},{prio}'."
        ),
        kb=KB_ROCE_QOS,
        check=QosDscpNotOnRocePriority(),
    ),
    FactRule(
        id="roce_gid_v2_missing",
        title="{device}/{port} ({netdev}) has {what}",
        explanation=(
            "show_gids on {host} lists no routable RoCE v2 GID for {device} port {port} "
            "({netdev}): {what}. NCCL (NCCL_IB_GID_INDEX) and RDMA-CM need the RoCE v2 GID "
            "of the interface's IP address; without it they fall back to RoCE v1 (not "
            "routable, no ECN) or fail to connect. Check the interface's IPv4 address and "
            "that RoCE v2 is the default mode ('cma_roce_mode -d {device} -p {port}')."
        ),
        kb=KB_ROCE_GID,
        check=GidV2Missing(),
    ),
    FactRule(
        id="nccl_gid_index_wrong",
        title="NCCL_IB_GID_INDEX={index} {what} on {device}/{port}",
        explanation=(
            "NCCL on {host} was told NCCL_IB_GID_INDEX={index}, but in the GID table of "
            "{device} port {port} that index {what}. NCCL then connects over RoCE v1 (not "
            "routable, no ECN marking on most fabrics), over a link-local address, or not at "
            "all. The RoCE v2 GID of the port's IPv4 address is index {best}."
        ),
        kb=KB_ROCE_GID,
        check=GidIndexMismatch(),
    ),
    FactRule(
        id="nvlink_inactive",
        title="NVLink {port} of {device} is inactive",
        explanation=(
            "nvidia-smi nvlink --status on {host} shows link {port} of {device} inactive. A "
            "GPU with fewer NVLinks than its peers slows every intra-node collective it is "
            "part of; on NVSwitch systems check Fabric Manager and the NVSwitch SXids."
        ),
        kb=KB_NVSWITCH,
        check=FactCompare("nvlink.active", equals=frozenset({"false"})),
    ),
    FactRule(
        id="gpu_nic_far",
        title="{device}'s nearest NIC is {value} on {host}",
        explanation=(
            "nvidia-smi topo -m on {host} shows no NIC behind {device}'s PCIe switch: its "
            "nearest is {value}. NCCL uses GPUDirect RDMA only up to NCCL_NET_GDR_LEVEL "
            "(default PXB), so this GPU's network traffic is staged through host memory "
            "(lower bus bandwidth, CPU and memory load), and across sockets (SYS) it also "
            "crosses the inter-socket link. Check the slot and cabling plan, or NCCL's choice "
            "of NIC per GPU (NCCL_IB_HCA, the topology dump)."
        ),
        kb=KB_GDR,
        check=EachFact("gpu.nic_far"),
    ),
    FactRule(
        id="nvlink_topology_asymmetric",
        title="NVLink count differs by direction on GPU {device}",
        explanation=(
            "NCCL's topology dump on {host} shows {value}. Both directions of a GPU pair "
            "have the same number of NVLinks on healthy hardware: a link is down or "
            "degraded, and NCCL builds its rings and trees around the slow pair."
        ),
        kb=KB_NVSWITCH,
        check=EachFact("topo.nvlink_asymmetry"),
    ),
    FactRule(
        id="sysctl_numa_balancing",
        title="Automatic NUMA balancing is on ({host})",
        explanation=(
            "{settings} on {host} (recommended: {recommended}). The kernel then unmaps and "
            "migrates pages of running processes to follow their threads: page faults and "
            "jitter in ranks that pin memory for GPUs and NICs. Set kernel.numa_balancing=0 "
            "and bind ranks to their GPU's NUMA node instead."
        ),
        kb=KB_HOST_NUMA,
        check=SysctlCompare(("kernel.numa_balancing",), above=0, recommended="0"),
    ),
    FactRule(
        id="sysctl_zone_reclaim",
        title="vm.zone_reclaim_mode is on ({host})",
        explanation=(
            "{settings} on {host} (recommended: {recommended}). The kernel reclaims page "
            "cache on the local node instead of using free memory on another one: allocation "
            "stalls on hosts with large page caches and busy data loaders."
        ),
        kb=KB_HOST_NUMA,
        check=SysctlCompare(("vm.zone_reclaim_mode",), above=0, recommended="0"),
    ),
    FactRule(
        id="sysctl_swappiness",
        title="vm.swappiness is {value} on {host}",
        explanation=(
            "{settings} on {host} (recommended: {recommended} on training hosts). A high "
            "swappiness lets the kernel swap out idle parts of the training process or data "
            "loaders under page-cache pressure; a step that touches them stalls."
        ),
        kb=KB_HOST_NUMA,
        check=SysctlCompare(("vm.swappiness",), above=10, recommended="10 or less"),
        severity=INFO,
    ),
    FactRule(
        id="sysctl_socket_buffers_small",
        title="Small socket buffer limits on {host}",
        explanation=(
            "{settings} on {host} (recommended: {recommended}). TCP traffic (NCCL's "
            "bootstrap and NET/Socket transport, checkpoint and data-loading traffic) cannot "
            "fill a 100-400 Gb/s link with windows this small."
        ),
        kb=KB_SOCKETS,
        check=SysctlCompare(
            ("net.core.rmem_max", "net.core.wmem_max"), below=MIB_16, recommended="≥ 16 MiB"
        ),
        severity=INFO,
    ),
    FactRule(
        id="sysctl_tcp_buffers_small",
        title="Small TCP autotuning limits on {host}",
        explanation=(
            "{settings} on {host}: the largest TCP window autotuning may use (the third field "
            "of tcp_rmem/tcp_wmem; recommended: {recommended}) is too small for long fat "
            "links, so socket transfers stay far below line rate."
        ),
        kb=KB_SOCKETS,
        check=SysctlCompare(
            ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"),
            below=MIB_16,
            position=-1,
            recommended="≥ 16 MiB",
        ),
        severity=INFO,
    ),
    FactRule(
        id="sysctl_rp_filter_strict",
        title="Strict reverse-path filtering on {count} interface(s) of {host}",
        explanation=(
            "rp_filter is 1 (strict) on {interfaces} of {host} (the larger of 'all' and the "
            "interface's own value applies). On a multi-rail host with several NICs in one "
            "subnet, replies that arrive on another rail than the route back are dropped: "
            "RDMA-CM connections, ARP and TCP bootstrap fail intermittently. Use 0 or 2 "
            "(loose) on the rails."
        ),
        kb=KB_ROCE_GID,
        check=RpFilterStrict(),
    ),
    FactRule(
        id="sysctl_arp_flux",
        title="ARP flux possible between the rails of {host}",
        explanation=(
            "arp_ignore and arp_announce are 0 on {interfaces} of {host}: any NIC answers ARP "
            "for any address of the host. With several rails in one subnet, peers may learn "
            "one rail's IP on another rail's MAC and send its RoCE traffic there. Multi-rail "
            "hosts usually set arp_ignore=1 and arp_announce=2 (plus per-rail routing)."
        ),
        kb=KB_ROCE_GID,
        check=ArpFlux(),
        severity=INFO,
    ),
)
FACT_RULES = (*FACT_RULES, *HOST_CONFIG_RULES)

# Xid codes that mean the GPU (not the application) is in trouble.
_XID_CRITICAL = {48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140}
_XID_WARNING = {31, 43, 45, 13}

EVENT_RULES: tuple[EventRule, ...] = (
    EventRule(
        id="gpu_xid",
        title="Xid {code} on {host} GPU {device}",
        explanation=(
            "The NVIDIA driver logged Xid {code} {count} time(s) for GPU {device}: {text}. "
            "Xid 48/63/64/94/95 are memory errors, 74 NVLink, 79 fell off the bus, 119/120 "
            "GSP firmware timeouts; 13/31/43 usually point at the application."
        ),
        kb=KB_ECC,
        kinds=frozenset({"xid"}),
        code_field="xid",
        severity_by_code={
            **dict.fromkeys(_XID_CRITICAL, CRITICAL),
            **dict.fromkeys(_XID_WARNING, INFO),
        },
        group_by=("host", "device", "xid"),
    ),
    EventRule(
        id="nccl_watchdog_timeout",
        title="NCCL watchdog timeout in {collective} (seq {seq}) on {host}",
        explanation=(
            "PyTorch's NCCL watchdog gave up on {collective} #{seq} after {timeout_ms} ms on "
            "{host} ({count} report(s)). One rank never joined the collective: look for the "
            "host that is slow, hung or lost its network in the same minute."
        ),
        kb=KB_NCCL,
        kinds=frozenset({"watchdog_timeout"}),
        severity=CRITICAL,
        group_by=("host", "collective", "seq"),
    ),
)

EVENT_RULES = (
    *EVENT_RULES,
    EventRule(
        id="nvswitch_fatal_error",
        title="NVSwitch fatal error {code} on {host} ({device})",
        explanation=(
            "Fabric Manager logged NVSwitch fatal SXid {code} {count} time(s) on the switch at "
            "{device}: {text}. A fatal SXid takes the NVLink fabric (or the affected GPUs) "
            "down until the GPUs and switches are reset; jobs on those GPUs fail or hang."
        ),
        kb=KB_NVSWITCH,
        kinds=frozenset({"fm_nvswitch_fatal"}),
        severity=CRITICAL,
        code_field="sxid",
        group_by=("host", "device", "sxid"),
    ),
    EventRule(
        id="nvswitch_sxid",
        title="NVSwitch error {code} on {host} ({device})",
        explanation=(
            "NVSwitch SXid {code} was logged {count} time(s) for {device}: {text}. Non-fatal "
            "SXids are corrected or contained by the switch, but repeated ones on the same "
            "port point at a degrading NVLink (check 'nvidia-smi nvlink -e' and the trays)."
        ),
        kb=KB_NVSWITCH,
        kinds=frozenset({"fm_nvswitch_non_fatal", "sxid"}),
        code_field="sxid",
        group_by=("host", "device", "sxid"),
    ),
    EventRule(
        id="fabric_manager_nvlink_failure",
        title="Fabric Manager reports NVLink failures on {host}",
        explanation=(
            "Fabric Manager logged {count} NVLink failure(s) on {host}, first: {text}. GPUs "
            "missing from a multicast team, GPU NVL errors or trunk/access port failures mean "
            "NVLink peer-to-peer or NVLS collectives are degraded or unavailable."
        ),
        kb=KB_NVSWITCH,
        kinds=frozenset({"fm_nvlink_failure"}),
        severity=CRITICAL,
    ),
    EventRule(
        id="fabric_manager_error",
        title="Fabric Manager logged {count} error(s) on {host}",
        explanation=(
            "Fabric Manager on {host} logged {count} error entr(ies), first: {text}. Fabric "
            "Manager must run, at the driver's exact version, for NVSwitch systems to route "
            "NVLink traffic; see the artifact's events for every entry."
        ),
        kb=KB_NVSWITCH,
        kinds=frozenset({"fm_error"}),
    ),
)

# --- link rates and efficiency (docs/efficiency.md) -------------------------------------------

LINK_RATE_RULES: tuple[FactRule, ...] = (
    FactRule(
        id="link_width_below_host",
        title="Link {device} runs {value}x wide, expected {expected}x",
        explanation=(
            "mlxlink shows {device} on {host} active at {value} lanes ({speed}) while "
            "{expected} was expected ({basis}). A link that lost lanes moves a fraction of "
            "its rate, and NCCL's evenly striped rails all wait for it: reseat or replace the "
            "cable or transceiver, check the switch port."
        ),
        kb=KB_LINK_HEALTH,
        check=LinkBelowHost("width"),
    ),
    FactRule(
        id="link_speed_below_host",
        title="Link {device} runs at {value} Gb/s, expected {expected}",
        explanation=(
            "mlxlink shows {device} on {host} active at {value} Gb/s ({speed}) while {expected} "
            "Gb/s was expected ({basis}). A link that negotiated a lower speed bounds every "
            "ring through its rail: check the cable, the module and the switch port's speed."
        ),
        kb=KB_LINK_HEALTH,
        check=LinkBelowHost("speed"),
    ),
    FactRule(
        id="port_below_adapter_max",
        title="Port {device}/{port} at {rate_gbps:g} Gb/s, its {adapter} can do {max_gbps:g}",
        explanation=(
            "{device} port {port} on {host} is active at {rate_gbps:g} Gb/s; a {adapter} runs "
            "up to {max_gbps:g} Gb/s (datasheet, docs/efficiency.md) and other {adapter} ports "
            "of the host run faster: this one trained down (cable, module, switch port)."
        ),
        kb=KB_LINK_HEALTH,
        check=PortBelowAdapterMax(),
    ),
)

EFFICIENCY_RULES: tuple[FactRule, ...] = (
    FactRule(
        id="run_below_peak",
        title="{collective} at {pct_of_peak:.1f}% of its {peak_busbw_gbps:g} GB/s peak "
        "({bottleneck})",
        explanation=(
            "Run {index} ({collective}, {ranks} ranks on {nodes} node(s)) reaches "
            "{busbw_gbps:g} GB/s busbw at large messages, {pct_of_peak:.1f}% of the "
            "{peak_busbw_gbps:g} GB/s its hardware allows, below the {threshold_pct:g}% "
            "threshold. Suspected bottleneck: {bottleneck_label} ({explanation}). "
            "What to check: {checks}."
        ),
        kb="nccl-tests-methodology",
        check=BelowPeak(),
    ),
)

# --- failures: failed/truncated/out-of-bounds runs and error signatures (failure_checks.py) --

FAILURE_RULES: tuple[FactRule, ...] = tuple(FactRule(**spec) for spec in FAILURE_RULE_SPECS)

FACT_RULES = (*FACT_RULES, *LINK_RATE_RULES, *EFFICIENCY_RULES, *FAILURE_RULES)
# Rules whose findings another pass stores (baselines.limits.findings, after filing): the
# artifact's own findings pass neither evaluates nor deletes them.
STORED_ELSEWHERE = frozenset({"run_below_peak"})

RULES: tuple[Rule, ...] = (*COUNTER_RULES, *FACT_RULES, *EVENT_RULES)
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}


# --- evaluation -------------------------------------------------------------------------------


def evaluate(evidence: Evidence, rules: Iterable[Rule] = RULES) -> list[Hit]:
    hits: list[Hit] = []
    for rule in rules:
        if isinstance(rule, CounterRule):
            hits.extend(_counter_hits(rule, evidence))
        elif isinstance(rule, FactRule):
            hits.extend(_fact_hits(rule, evidence))
        else:
            hits.extend(_event_hits(rule, evidence))
    return hits


def _counter_hits(rule: CounterRule, ev: Evidence) -> Iterator[Hit]:
    """The worst reading per (device, port, pattern groups); evidence lists every match."""
    best: dict[tuple[Any, ...], tuple[float, dict[str, Any]]] = {}
    matches: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in _rows_for(rule, ev):
        m = rule.match(row["counter"])
        if m is None:
            continue
        measure = row["measure"]
        if measure is None or measure <= rule.above:
            continue
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        key = (row["host"], row["device"], row["port"], tuple(sorted(groups.items())))
        matches[key].append({k: row[k] for k in ("counter", "delta", "rate", "dt", "total")})
        if key not in best or measure > best[key][0]:
            best[key] = (measure, {**row, **groups})
    for key, (measure, row) in best.items():
        severity = rule.severity
        if rule.critical_above is not None and measure > rule.critical_above:
            severity = CRITICAL
        fields = _template_fields(row)
        evidence = {
            "measure": rule.measure,
            "value": measure,
            "unit": rule.unit,
            "threshold": rule.above,
            "critical_above": rule.critical_above,
            "readings": _compact(matches[key]),
        }
        yield _hit(rule, severity, fields, evidence, row["artifact_ids"], row["at"], key)


def _rows_for(rule: CounterRule, ev: Evidence) -> Iterator[dict[str, Any]]:
    """Rows whose counter matches the rule and whose measure passes the threshold. Names are
    matched once each (a fleet has few distinct counters and many rows)."""
    names: dict[str, bool] = {}

    def wanted(counter: str) -> bool:
        if counter not in names:
            names[counter] = rule.match(counter) is not None
        return names[counter]

    if rule.measure == "total":
        for s in ev.samples:
            if not wanted(s.counter) or s.value <= rule.above:
                continue
            yield {
                "host": s.host,
                "device": s.device,
                "port": s.port,
                "counter": s.counter,
                "measure": s.value,
                "total": s.value,
                "delta": None,
                "rate": None,
                "dt": None,
                "value": s.value,
                "artifact_ids": (s.artifact_id,),
                "at": s.at,
            }
        return
    for r in ev.rates:
        if r.derived != (rule.measure == "derived") or not wanted(r.counter):
            continue
        if rule.measure == "derived":
            measure = r.value
        elif r.flag not in ("", "no_time"):
            continue  # a reset or wrapped counter has no trustworthy delta
        elif rule.measure == "rate":
            measure = r.value
        else:
            measure = r.delta
        if measure is None or measure <= rule.above:
            continue
        ids = tuple(i for i in (r.artifact_id, r.before_artifact_id) if i is not None)
        yield {
            "host": r.host,
            "device": r.device,
            "port": r.port,
            "counter": r.counter,
            "measure": measure,
            "delta": r.delta,
            "rate": None if r.derived else r.value,
            "value": r.value,
            "dt": r.dt_seconds,
            "total": None,
            "artifact_ids": tuple(dict.fromkeys(ids)),
            "at": r.at,
        }


def _template_fields(row: dict[str, Any]) -> dict[str, Any]:
    fields = dict(row)
    direction = {"rx": "received", "tx": "sent"}.get(row.get("dir", ""), "saw")
    fields["direction"] = direction
    fields.setdefault("prio", "")
    for name in ("rate", "delta", "dt", "value", "total"):
        if fields.get(name) is None:
            fields[name] = float("nan")
    rate = row.get("rate")
    if rate is not None and row.get("dt"):
        fields["rate_text"] = f"{rate:,.1f}/s over {row['dt']:.0f} s"
    else:
        fields["rate_text"] = "no time between the readings"
    if isinstance(fields.get("prio"), str) and fields["prio"].startswith("prio"):
        fields["prio"] = fields["prio"].removeprefix("prio")
    fields["prio_text"] = (
        "global pause" if fields["prio"] == "global" else f"priority {fields['prio']}"
    )
    return fields


def _fact_hits(rule: FactRule, ev: Evidence) -> Iterator[Hit]:
    for found in rule.check(ev):
        fields = {"recommendation": "none given", **found}
        subject = found.get("subject")
        key = (
            found.get("host", ""),
            found.get("device", ""),
            found.get("port"),
            (("subject", str(subject)),) if subject else (),
        )
        yield _hit(
            rule,
            found.get("severity", rule.severity),
            fields,
            dict(found.get("evidence", {})),
            tuple(found.get("artifact_ids", ())),
            found.get("at") or ev.default_at,
            key,
        )


def _event_hits(rule: EventRule, ev: Evidence) -> Iterator[Hit]:
    groups: dict[tuple[Any, ...], list[EventRow]] = defaultdict(list)
    for e in ev.events:
        if e.kind in rule.kinds:
            fields = {"host": e.host, **e.extra}
            groups[tuple(fields.get(k) for k in rule.group_by)].append(e)
    for key, events in groups.items():
        first = events[0]
        fields: dict[str, Any] = {
            "host": first.host,
            "device": str(first.extra.get("device") or first.extra.get("pci") or ""),
            "code": first.extra.get(rule.code_field, "") if rule.code_field else "",
            "count": len(events),
            "text": first.text[:300],
            "collective": first.extra.get("collective") or "a collective",
            "seq": first.extra.get("seq", "?"),
            "timeout_ms": first.extra.get("timeout_ms", "?"),
        }
        severity = rule.severity
        if rule.code_field:
            severity = rule.severity_by_code.get(_int(fields["code"]), rule.severity)
        times = [e.at for e in events if e.at is not None]
        evidence = {
            "events": len(events),
            "first_line": first.line,
            "lines": [e.line for e in events[:20]],
            "details": {k: v for k, v in first.extra.items() if isinstance(v, str | int | float)},
        }
        yield _hit(
            rule,
            severity,
            fields,
            evidence,
            tuple(sorted({e.artifact_id for e in events})),
            min(times) if times else ev.default_at,
            (fields["host"], fields["device"], None, _pairs(rule.group_by, key)),
        )


def _pairs(names: tuple[str, ...], values: tuple[Any, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((name, str(value)) for name, value in zip(names, values, strict=True))


def _hit(
    rule: Rule,
    severity: str,
    fields: dict[str, Any],
    evidence: dict[str, Any],
    artifact_ids: tuple[int, ...],
    at: Any,
    key: tuple[Any, ...],
) -> Hit:
    safe = _SafeFields({k: v for k, v in fields.items() if v is not None})
    host, device, port = key[0] or "", key[1] or "", key[2]
    if not safe.get("host"):
        safe["host"] = "the host"
    if not safe.get("device"):
        safe["device"] = "(unnamed device)"
    safe.setdefault("port", "" if port is None else port)
    extra = "|".join(f"{k}={v}" for k, v in key[3]) if len(key) > 3 else ""
    return Hit(
        rule=rule.id,
        severity=severity,
        title=_format(rule.title, safe)[:255],
        explanation=_format(rule.explanation, safe),
        kb_slug=rule.kb,
        host=host,
        device=device,
        port=port,
        fingerprint=f"{rule.id}|{host}|{device}|{'' if port is None else port}|{extra}"[:255],
        evidence=_jsonable(evidence),
        artifact_ids=artifact_ids,
        at=at,
    )


class _SafeFields(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> str:
        return "?"


def _format(template: str, fields: _SafeFields) -> str:
    try:
        return template.format_map(fields)
    except (ValueError, TypeError, KeyError):
        # a field of an unexpected type for its format spec: fall back to plain text
        plain = re.sub(r"\{(\w+)(?::[^}]*)?\}", r"{\1}", template)
        return plain.format_map(fields)


def _compact(readings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if v is not None} for r in readings[:20]]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
