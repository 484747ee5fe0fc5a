"""Database reads of the limits model: one run's efficiency, a profile's best efficiency.

Computed on read (a handful of queries per run: its profile, its ranks, its points and the
link facts of its hosts), so a profile edit or a newly uploaded ``ibstat`` shows at once,
with nothing stored to go stale. The computation itself is pure (``model``, ``links``).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import Max

from artifacts.models import BenchmarkRun, HostFact
from artifacts.runs.hooks import RunLimits
from baselines.models import HardwareProfile, RunContext, Series
from baselines.provenance.host_facts import FACTS_WINDOW
from hardware import efficiency as eff
from hardware.gpus import gpu_model as model_of
from hardware.links import LINK_FACTS, HostLinks, LinkFact, host_links
from hardware.model import (
    BOTTLENECK_LABELS,
    Limits,
    NetworkFill,
    Peak,
    ProfileSpec,
    Topology,
    Unknown,
    peak_for,
    resolve_limits,
)
from hardware.reference import NodeDesign, designs_for

PERFTEST = "perftest"
MAX_FACTS = 5000
NIC_LINE_RATE = "nic_line_rate"


def threshold_pct(limits: Limits | None = None) -> float:
    """The share of the peak under which a large-message run is a finding (setting, or the
    profile's ``limits.efficiency_threshold_pct``)."""
    own = limits.get("efficiency_threshold_pct") if limits else None
    return float(own or getattr(settings, "PERFHUB_EFFICIENCY_THRESHOLD_PCT", 70.0))


@dataclass(frozen=True)
class RunEfficiency:
    run_id: int
    collective: str
    peak: Peak
    topology: Topology
    limits: Limits
    sizes: list[eff.SizeEfficiency]
    profile_slug: str = ""
    hosts: dict[str, HostLinks] = field(default_factory=dict)
    metric_note: str = ""
    assumed: NodeDesign | None = None  # the reference design assumed for the network

    @property
    def large(self) -> eff.SizeEfficiency | None:
        return eff.large_message(self.sizes)

    @property
    def threshold_pct(self) -> float:
        return threshold_pct(self.limits)

    @property
    def below_threshold(self) -> bool:
        large = self.large
        pct = large.pct_of_peak if large else None
        return pct is not None and pct < self.threshold_pct

    @property
    def bottleneck_label(self) -> str:
        return BOTTLENECK_LABELS.get(self.peak.bottleneck, self.peak.bottleneck)

    def pct_by_size(self) -> dict[int, float | None]:
        return {s.size_bytes: s.pct_of_peak for s in self.sizes}

    def model_inputs(self) -> dict[str, dict[str, Any]]:
        """Every input of the model with its value, unit and source (the API's ``model``)."""
        run_output = "the run's output (rank lines)"
        inputs: dict[str, dict[str, Any]] = {
            "collective": {"value": self.collective, "unit": "", "source": "the run's output"},
            "ranks": {"value": self.topology.nranks, "unit": "", "source": run_output},
            "nodes": {"value": self.topology.nnodes, "unit": "", "source": run_output},
            "gpus_per_node_used": {
                "value": self.topology.ranks_per_node, "unit": "", "source": run_output,
            },
        }  # fmt: skip
        inputs.update({k: v.to_json() for k, v in self.limits.values.items()})
        for host, value in self.limits.node_network.items():
            inputs[f"node_network_gbps.{host}"] = value.to_json()
        return inputs

    def to_json(self) -> dict[str, Any]:
        """The API body (``GET /api/v1/runs/{id}/efficiency/``): the issue's contract
        (``peak_busbw_gbps``, ``bottleneck``, ``model`` = inputs with their sources, ``sizes``)
        plus how the peak was chosen and the large-message summary."""
        large = self.large
        return {
            "run": self.run_id,
            "assumed": self.assumed is not None,
            "peak_busbw_gbps": self.peak.peak_busbw_gbps,
            "bottleneck": self.peak.bottleneck,
            "model": self.model_inputs(),
            "bottleneck_label": self.bottleneck_label,
            "explanation": self.peak.explanation,
            "bounds_gbps": self.peak.bounds,
            "notes": list(self.peak.notes),
            "profile": self.profile_slug or None,
            "metric": self.metric_note or "out-of-place busbw (in-place when missing)",
            "large_message": large.to_json() if large else None,
            "threshold_pct": self.threshold_pct,
            "sizes": [s.to_json() for s in self.sizes],
        }


@dataclass(frozen=True)
class Unavailable:
    """Why the limits are not stated; for a multi-node run whose network nothing states,
    the run under each reference design of its GPU (``candidates``, all assumed)."""

    reason: str
    candidates: tuple[RunEfficiency, ...] = ()
    profile_slug: str = ""
    run_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The API body when nothing states the network: 200 with ``assumed: true``."""
        return {
            "run": self.run_id,
            "assumed": True,
            "peak_busbw_gbps": None,
            "detail": self.reason,
            "profile": self.profile_slug or None,
            "candidates": [
                {"design": c.assumed.to_json() if c.assumed else None, **c.to_json()}
                for c in self.candidates
            ],
        }


def run_page_limits(run: BenchmarkRun) -> RunLimits:
    """The run page's view of ``run_efficiency`` (provides ``artifacts.runs.hooks.run_limits``)."""
    result = run_efficiency(run)
    if isinstance(result, Unavailable):
        return RunLimits(
            reason=result.reason,
            candidates=result.candidates,
            profile_slug=result.profile_slug,
        )
    peak = result.peak.peak_busbw_gbps
    return RunLimits(
        efficiency=result,
        pct_by_size=result.pct_by_size(),
        peak_gbps=peak,
        peak_label=f"peak {peak:g} GB/s ({result.bottleneck_label})" if peak else "",
    )


def run_efficiency(run: BenchmarkRun) -> RunEfficiency | Unavailable:
    """The run's peak, its bottleneck and each size's share of it, or why it cannot be said."""
    context = RunContext.objects.select_related("profile").filter(run=run).first()
    profile = context.profile if context else None
    spec = profile_spec(profile)
    if run.benchmark == PERFTEST:
        return _perftest_efficiency(run, spec)
    ranks = list(run.ranks.values_list("host", flat=True))
    hosts = tuple(sorted({h for h in ranks if h}))
    topology = _topology(run, ranks, hosts, spec)
    links = host_links(_link_facts(run, hosts))
    from_log = network_from_nccl_log(links)
    limits = resolve_limits(spec, gpu_name=run.gpu, hosts=links, network=from_log)
    peak = peak_for(run.collective, topology, limits)
    slug = profile.slug if profile else ""
    points = [
        (m[0], m[1] if m[1] is not None else m[2])
        for m in run.measurements.values_list("size_bytes", "oop_busbw_gbps", "ip_busbw_gbps")
    ]
    if isinstance(peak, Unknown):
        model = (spec.gpu_model if spec else "") or model_of(run.gpu)
        candidates = []
        if topology.nnodes > 1:
            for design in designs_for(model):
                fill = _assumed_fill(design, from_log)
                assumed = resolve_limits(spec, gpu_name=run.gpu, hosts=links, network=fill)
                got = peak_for(run.collective, topology, assumed)
                if isinstance(got, Peak):
                    candidates.append(
                        RunEfficiency(
                            run_id=run.pk,
                            collective=run.collective,
                            peak=got,
                            topology=topology,
                            limits=assumed,
                            sizes=eff.per_size(points, got.peak_busbw_gbps),
                            profile_slug=slug,
                            hosts=links,
                            assumed=design,
                        )
                    )
        return Unavailable(
            _unknown_text(run, profile, peak.reason), tuple(candidates), slug, run.pk
        )
    return RunEfficiency(
        run_id=run.pk,
        collective=run.collective,
        peak=peak,
        topology=topology,
        limits=limits,
        sizes=eff.per_size(points, peak.peak_busbw_gbps),
        profile_slug=slug,
        hosts=links,
    )


def network_from_nccl_log(links: dict[str, HostLinks]) -> NetworkFill | None:
    """The NICs NCCL said it used on the run's hosts (``NET/IB : Using [0]mlx5_0:1/IB ...``,
    the OFI plugin's "found N nics"), with their speed where the log prints it. The fewest
    NICs of any host: the run's rings go at the pace of its thinnest node.

    This is the seam a job's evidence replaces: today the log counts when it describes one
    of the run's hosts within the facts window (the run's own artifact, when nccl-tests ran
    with NCCL_DEBUG=INFO, or another upload of the same hosts close in time); a job lookup
    (same Slurm id) can hand in its logs' links instead."""
    seen = [h for h in links.values() if h.nccl_nic_count]
    if not seen:
        return None
    host = min(seen, key=lambda h: h.nccl_nic_count or 0)
    count = host.nccl_nic_count
    names = ", ".join(host.nccl_devices) or f"{count} NICs"
    source = f"NCCL INFO on {host.host}: {names} ({host.nccl_source})"
    speeds = [s for h in seen for s in h.nccl_speeds_gbit]
    return NetworkFill(
        nics_per_node=count,
        nic_gbit=min(speeds) if speeds else None,
        source=source,
    )


def _assumed_fill(design: NodeDesign, from_log: NetworkFill | None) -> NetworkFill:
    """The design's network, keeping what the NCCL log did say (its NIC count)."""
    text = f"assumed: {design.name} ({design.source})"
    if from_log and from_log.nics_per_node:
        return NetworkFill(
            nics_per_node=from_log.nics_per_node,
            nic_gbit=from_log.nic_gbit or design.nic_gbit,
            source=text,
            gpus_per_node=design.gpus_per_node,
            nic_source=from_log.source,
        )
    return NetworkFill(design.nics_per_node, design.nic_gbit, text, design.gpus_per_node)


def _unknown_text(run: BenchmarkRun, profile: HardwareProfile | None, reason: str) -> str:
    what = f"GPU {run.gpu!r}" if run.gpu else "no GPU named in the output"
    where = f"profile {profile.slug}" if profile else "no hardware profile (run not filed)"
    return f"hardware limits unknown for run {run.pk} ({what}, {where}): {reason}"


def profile_spec(profile: HardwareProfile | None) -> ProfileSpec | None:
    if profile is None:
        return None
    return ProfileSpec(
        slug=profile.slug,
        gpu_model=profile.gpu_model,
        gpus_per_node=profile.gpus_per_node,
        nvlink=profile.nvlink,
        nvswitch=profile.nvswitch,
        nic_model=profile.nic_model,
        nic_speed_gbit=profile.nic_speed_gbps,
        nics_per_node=profile.nics_per_node,
        limits=profile.limits or {},
    )


def _topology(
    run: BenchmarkRun, ranks: list[str], hosts: tuple[str, ...], spec: ProfileSpec | None
) -> Topology:
    nranks = run.nranks or len(ranks) or 0
    nnodes = len(hosts) or run.nhosts or 1
    per_host = Counter(h for h in ranks if h)
    per_node = max(per_host.values()) if per_host else max(1, nranks // nnodes)
    gpus = spec.gpus_per_node if spec else None
    if nranks and len(ranks) < nranks:
        # Rank lines elided (a README fragment, a cut log): the hosts listed are not all of
        # them; the profile's GPUs per node says how the ranks spread.
        per_node = min(nranks, gpus) if gpus else max(1, math.ceil(nranks / nnodes))
        nnodes = max(nnodes, math.ceil(nranks / per_node))
    return Topology(nranks=nranks, nnodes=nnodes, ranks_per_node=per_node, hosts=hosts)


def _link_facts(run: BenchmarkRun, hosts: tuple[str, ...]) -> list[LinkFact]:
    """Link facts of the run's hosts within the facts window, nearest in time first."""
    if not hosts:
        return []
    at = run.measured_at
    rows = (
        HostFact.objects.filter(
            host__in=hosts,
            name__in=LINK_FACTS,
            observed_at__range=(at - FACTS_WINDOW, at + FACTS_WINDOW),
        )
        .order_by()
        .values_list(
            "host", "device", "port", "name", "value", "number", "extra", "observed_at",
            "artifact_id", "artifact__kind",
        )[:MAX_FACTS]
    )  # fmt: skip
    ordered = sorted(rows, key=lambda r: (abs((r[7] - at).total_seconds()), -r[8]))
    return [
        LinkFact(h, d, p, n, v, num, f"{kind} artifact #{aid}", extra or {})
        for h, d, p, n, v, num, extra, _at, aid, kind in ordered
    ]


# ------------------------------------------------------------------------------- perftest


def _perftest_efficiency(
    run: BenchmarkRun, spec: ProfileSpec | None
) -> RunEfficiency | Unavailable:
    """perftest bandwidth against the negotiated line rate of the port it ran on (the host's
    fastest active port when the file does not name the device)."""
    evidence = (run.extra or {}).get("evidence") or {}
    points = [
        (int(p.get("size_bytes") or 0), float(p["value"]) / 8)
        for p in evidence.get("points") or []
        if p.get("metric") == "bw_avg_gbps" and p.get("value") is not None
    ]
    if not points:
        return Unavailable(f"run {run.pk} is a perftest latency run: no bandwidth to bound")
    hosts = tuple(str(h) for h in evidence.get("hosts") or [] if h) or (
        (run.artifact.host,) if run.artifact.host else ()
    )
    device = (
        HostFact.objects.filter(artifact_id=run.artifact_id, name__startswith="perftest.")
        .exclude(device="")
        .values_list("device", flat=True)
        .first()
    )
    links = host_links(_link_facts(run, hosts))
    limits = resolve_limits(spec, gpu_name=run.gpu, hosts=links)
    rate, source = _line_rate(links, device, limits)
    if rate is None:
        return Unavailable(
            f"the line rate of run {run.pk}'s port is unknown: upload ibstat or mlxlink of "
            "the host, or set the NIC rate on its hardware profile"
        )
    peak = Peak(
        peak_busbw_gbps=round(rate / 8, 3),
        bottleneck=NIC_LINE_RATE,
        explanation=f"negotiated line rate {rate:g} Gb/s / 8 ({source})",
        bounds={NIC_LINE_RATE: round(rate / 8, 3)},
    )
    return RunEfficiency(
        run_id=run.pk,
        collective=run.collective,
        peak=peak,
        topology=Topology(nranks=2, nnodes=len(hosts) or 1, ranks_per_node=1, hosts=hosts),
        limits=limits,
        sizes=eff.per_size(points, peak.peak_busbw_gbps),
        profile_slug=spec.slug if spec else "",
        hosts=links,
        metric_note="perftest BW average, Gb/s / 8 = GB/s",
    )


def _line_rate(
    links: dict[str, HostLinks], device: str | None, limits: Limits
) -> tuple[float | None, str]:
    for host in links.values():
        for family in ("ports", "mlxlink", "ethtool", "topology"):
            ports = [p for p in host.families.get(family, []) if p.active and p.gbit]
            named = [p for p in ports if device and p.device == device]
            if named:
                return named[0].gbit, f"{named[0].source}: {host.host} {device}"
            if ports and not device:
                best = max(ports, key=lambda p: p.gbit or 0)
                return best.gbit, f"{best.source}: {host.host} fastest active port"
    rate = limits.values.get("nic_line_rate_gbit")
    return (float(rate.value), rate.source) if rate else (None, "")


# ---------------------------------------------------------------------- profile summaries


@dataclass(frozen=True)
class BestEfficiency:
    collective: str
    nranks: int
    nnodes: int
    busbw_gbps: float
    size_bytes: int
    peak_busbw_gbps: float | None
    bottleneck: str
    pct_of_peak: float | None
    reason: str = ""


def profile_best_efficiency(profile: HardwareProfile) -> list[BestEfficiency]:
    """Per collective and topology: the best large-message busbw any run on the profile
    reached (one aggregate query over its series) against the profile's own limits."""
    rows = (
        Series.objects.filter(
            profile=profile, benchmark="nccl-tests", metric="busbw",
            size_bytes__gte=eff.LARGE_BYTES,
        )
        .values("collective", "nranks", "nnodes", "size_bytes")
        .annotate(best=Max("points__value"))
        .order_by()
    )  # fmt: skip
    best: dict[tuple[str, int, int], tuple[float, int]] = {}
    for r in rows:
        if r["best"] is None:
            continue
        key = (r["collective"], r["nranks"], r["nnodes"])
        if key not in best or r["best"] > best[key][0]:
            best[key] = (float(r["best"]), int(r["size_bytes"]))
    limits = resolve_limits(profile_spec(profile), gpu_name=profile.gpu_model)
    out = []
    for (collective, nranks, nnodes), (value, size) in sorted(best.items()):
        nodes = nnodes or 1
        topology = Topology(nranks, nodes, max(1, nranks // nodes))
        peak = peak_for(collective, topology, limits)
        if isinstance(peak, Unknown):
            out.append(
                BestEfficiency(collective, nranks, nnodes, value, size, None, "", None, peak.reason)
            )
            continue
        pct = round(100 * value / peak.peak_busbw_gbps, 1)
        out.append(
            BestEfficiency(
                collective, nranks, nnodes, value, size, peak.peak_busbw_gbps, peak.bottleneck, pct
            )
        )
    return out
