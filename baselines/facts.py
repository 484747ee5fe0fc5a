"""Facts about hardware and software read from what artifacts say. Pure: no Django imports.

* ``stack_facts(run_facts, metadata)`` -> the software-stack components and the ``NCCL_*``
  environment, from the benchmark's own output first (the version line nccl-tests prints is
  what was really loaded) and the upload metadata second.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Component name -> metadata keys that may carry it, most specific first. Upload metadata is
# written by people and CI scripts, so a few spellings are accepted.
COMPONENTS: dict[str, tuple[str, ...]] = {
    "nccl": ("nccl", "nccl_version"),
    "cuda": ("cuda", "cuda_version"),
    "driver": ("driver", "driver_version", "nvidia_driver"),
    "kernel": ("kernel", "kernel_version", "uname_r"),
    "pytorch": ("pytorch", "torch", "pytorch_version", "torch_version"),
    "ofed": ("ofed", "doca", "mlnx_ofed", "ofed_version", "doca_version"),
    "nic_firmware": ("nic_firmware", "firmware", "fw", "fw_version", "nic_fw"),
    "nccl_tests": ("nccl_tests", "nccl_tests_version"),
}
COMPONENT_LABELS: dict[str, str] = {
    "nccl": "NCCL",
    "cuda": "CUDA",
    "driver": "driver",
    "kernel": "kernel",
    "pytorch": "PyTorch",
    "ofed": "OFED/DOCA",
    "nic_firmware": "NIC firmware",
    "nccl_tests": "nccl-tests",
}
MAX_VERSION = 80


@dataclass(frozen=True)
class StackFacts:
    """Versions by component (only the known ones) and the NCCL_* environment."""

    versions: dict[str, str] = field(default_factory=dict)
    nccl_env: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # component -> where it came from


def stack_facts(run: Mapping[str, Any], metadata: Mapping[str, Any]) -> StackFacts:
    """Components from the run (``nccl_version``, ``nccl_tests_version``), then metadata;
    the run's own ``env`` (NCCL_* its output states) over the metadata's.

    Metadata keys are matched case-insensitively; upper-case ``NCCL_*`` keys (top level, or
    inside an ``env``/``environment`` object) form the environment. Values are stripped.
    """
    lowered = {str(k).strip().lower(): v for k, v in metadata.items()}
    versions: dict[str, str] = {}
    sources: dict[str, str] = {}
    from_run = {"nccl": run.get("nccl_version"), "nccl_tests": run.get("nccl_tests_version")}
    for component, value in from_run.items():
        if text := _clean(value):
            versions[component], sources[component] = text, "benchmark output"
    for component, keys in COMPONENTS.items():
        if component in versions:
            continue
        for key in keys:
            if text := _clean(lowered.get(key)):
                versions[component], sources[component] = text, f"metadata {key}"
                break
    env: dict[str, str] = {}
    nested = lowered.get("env") or lowered.get("environment")
    for source in (nested if isinstance(nested, Mapping) else {}, metadata):
        for key, value in source.items():
            name = str(key).strip()
            # Environment variables are upper case: "nccl_tests" is a version, not NCCL_TESTS.
            if name.startswith("NCCL_") and (text := _clean(value, limit=500)):
                env[name] = text
    # What the run's own output says it ran with (command line, NCCL's echo) beats what
    # someone typed into the upload form.
    run_env = run.get("env")
    for key, value in run_env.items() if isinstance(run_env, Mapping) else ():
        if str(key).startswith("NCCL_") and (text := _clean(value, limit=500)):
            env[str(key)] = text
    return StackFacts(versions=versions, nccl_env=dict(sorted(env.items())), sources=sources)


def _clean(value: Any, *, limit: int = MAX_VERSION) -> str:
    if value is None or isinstance(value, dict | list):
        return ""
    return str(value).strip()[:limit]


@dataclass(frozen=True)
class Change:
    """One difference between two stacks: a component version or an NCCL_* variable."""

    name: str  # "nccl", "cuda", ... or the variable name "NCCL_ALGO"
    label: str
    before: str  # "" = absent
    after: str
    is_env: bool = False

    @property
    def text(self) -> str:
        return f"{self.label} {self.before or '(unset)'} → {self.after or '(unset)'}"


def diff_stacks(
    before: Mapping[str, str],
    before_env: Mapping[str, str],
    after: Mapping[str, str],
    after_env: Mapping[str, str],
) -> list[Change]:
    """What differs, components in ``COMPONENTS`` order, then variables alphabetically."""
    changes = [
        Change(name, COMPONENT_LABELS[name], before.get(name, ""), after.get(name, ""))
        for name in COMPONENTS
        if before.get(name, "") != after.get(name, "")
    ]
    for key in sorted(set(before_env) | set(after_env)):
        old, new = before_env.get(key, ""), after_env.get(key, "")
        if old != new:
            changes.append(Change(key, key, old, new, is_env=True))
    return changes


def change_text(changes: list[Change], *, limit: int = 3) -> str:
    """ "NCCL 2.21.5 → 2.23.4, CUDA 12.4 → 12.6" (the nccl-tests binary only when alone)."""
    shown = [c for c in changes if c.name != "nccl_tests" and not c.is_env]
    env = [c for c in changes if c.is_env]
    parts = [c.text for c in shown[:limit]]
    if len(shown) > limit:
        parts.append(f"{len(shown) - limit} more")
    if env:
        parts.append(f"{len(env)} NCCL_* change{'s' if len(env) > 1 else ''}")
    if not parts and changes:
        parts = [changes[0].text]
    return ", ".join(parts) or "no software change"


# ------------------------------------------------------------- facts other artifacts state


@dataclass(frozen=True)
class Fact:
    """One fact another artifact states about a host (a ``HostFact`` row, or a trace's)."""

    name: str  # "nccl.version", "gpu.driver_version", "nccl.env.NCCL_IB_HCA", "gpu.name", ...
    value: str
    number: float | None = None
    host: str = ""
    device: str = ""
    source: str = ""  # "nvidia_smi artifact #12": shown as where a version came from
    artifact_id: int = 0  # the artifact that states it (0: not from an artifact)
    why: str = ""  # why it describes the run: "same host n1", "same job #3", "this file"
    line: int | None = None  # the line of the file that states it, when the loader kept it


# Component -> fact names that state it, most trustworthy first (the CUDA runtime a trace was
# recorded with says more than the newest CUDA the driver supports, which nvidia-smi prints).
FACT_COMPONENTS: dict[str, tuple[str, ...]] = {
    "nccl": ("nccl.version",),
    "cuda": ("cuda.runtime_version", "gpu.cuda_version"),
    "driver": ("gpu.driver_version",),
    "kernel": ("kernel.version",),
    "nic_firmware": ("hca.firmware", "nic.firmware", "link.firmware"),
}
ENV_PREFIX = "nccl.env."
# Profile field -> the fact names it is learned from (profile_from_facts).
PROFILE_FIELD_FACTS: dict[str, tuple[str, ...]] = {
    "gpu_name": ("gpu.name",),
    "gpus_per_node": ("gpu.name", "nccl.gpu_count"),
    "nic_model": ("hca.type", "nic.part", "nic.type"),
    "nic_speed_gbps": ("port.rate_gbps", "link.speed_gbps"),
    "nics_per_node": ("port.rate_gbps", "link.speed_gbps"),
    "fabric": ("port.link_layer", "nccl.ib_devices"),
    "nvlink": ("nvlink.active",),
}


def fact_keys(name: str) -> set[str]:
    """The keys a fact name feeds: stack components, the NCCL_* variable, profile fields.
    A person detaches a source from a run per key (``FactDetachment.key``)."""
    keys = {component for component, names in FACT_COMPONENTS.items() if name in names}
    if name.startswith(ENV_PREFIX):
        keys.add(name[len(ENV_PREFIX) :])
    keys |= {field for field, names in PROFILE_FIELD_FACTS.items() if name in names}
    return keys


BENCHMARK_SOURCE = "nccl_tests artifact"  # Fact.source of facts read from a benchmark's file


def stack_from_facts(facts: list[Fact]) -> StackFacts:
    """Versions and NCCL_* variables from facts given nearest (in time) first."""
    versions: dict[str, str] = {}
    sources: dict[str, str] = {}
    for component, names in FACT_COMPONENTS.items():
        for name in names:
            hit = next((f for f in facts if f.name == name and first_word(f.value)), None)
            if hit is not None:
                # Several devices of the nearest artifact (eight compute NICs and a management
                # NIC): the version most of them run is the stack's.
                same = [
                    first_word(f.value) for f in facts if (f.name, f.source) == (name, hit.source)
                ]
                value = Counter(v for v in same if v).most_common(1)[0][0]
                versions[component] = value[:MAX_VERSION]
                sources[component] = hit.source or name
                break
    env: dict[str, str] = {}
    for f in facts:
        # Another benchmark's output (an nccl-tests file is read as an NCCL log too) is
        # another job: its NCCL_ALGO=Tree is not this run's, or every run of a sweep filed
        # after the Tree runs on the same hosts would seem to have run with Tree.
        if f.source.startswith(BENCHMARK_SOURCE):
            continue
        if f.name.startswith(ENV_PREFIX):
            key = f.name[len(ENV_PREFIX) :]
            if key.startswith("NCCL_") and key not in env and f.value.strip():
                env[key] = f.value.strip()[:500]
    return StackFacts(versions=versions, nccl_env=dict(sorted(env.items())), sources=sources)


def first_word(value: str) -> str:
    """ "28.39.1002 (MT_0000000838)" -> "28.39.1002": firmware lines carry a PSID after it."""
    words = (value or "").split()
    return words[0] if words else ""


def merge_stacks(primary: StackFacts, secondary: StackFacts) -> StackFacts:
    """``primary`` (the run's own output, its upload metadata) wins; ``secondary`` (what other
    artifacts of the same hosts say) fills the gaps, component by component and variable by
    variable."""
    versions = {**secondary.versions, **primary.versions}
    sources = {k: v for k, v in secondary.sources.items() if k not in primary.versions}
    sources.update(primary.sources)
    env = {**secondary.nccl_env, **primary.nccl_env}
    return StackFacts(
        versions={k: versions[k] for k in COMPONENTS if k in versions},
        nccl_env=dict(sorted(env.items())),
        sources=sources,
    )


_PCI_ADDRESS = re.compile(r"(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-7])")


def pci_key(device: str) -> str:
    """One spelling per PCI address, so the tools that name a GPU by it agree: nvidia-smi
    writes ``00000000:1B:00.0``, NCCL's busId becomes ``0000:1b:00.0``, lspci ``1b:00.0``.
    Anything else (a trace's ``trace:0``) is only lowercased."""
    text = device.strip().lower()
    m = _PCI_ADDRESS.fullmatch(text)
    if not m:
        return text
    domain, bus, slot, function = m.groups()
    return f"{int(domain or '0', 16):04x}:{int(bus, 16):02x}:{int(slot, 16):02x}.{function}"


def nccl_used_gpus(facts: list[Fact]) -> set[tuple[str, str]]:
    """(host, PCI address) of each GPU an NCCL_DEBUG log shows a rank running on."""
    return {(f.host, pci_key(f.device)) for f in facts if f.name == "nccl.gpu" and f.device}


def _gpu_fields(facts: list[Fact]) -> dict[str, Any]:
    """GPU name and GPUs per node.

    The name: the one most GPUs state, among the GPUs NCCL logs show the job using when
    nvidia-smi's bus ids match them (a node's display or spare GPU of another model then
    does not name the profile). GPUs per node: distinct bus ids per host that nvidia-smi (or
    a trace) lists - every GPU of the node; only when none does, the GPUs NCCL logs show a
    job using on one host (a lower bound: a job may leave GPUs idle)."""
    out: dict[str, Any] = {}
    named = [f for f in facts if f.name == "gpu.name" and f.value.strip()]
    used = nccl_used_gpus(facts)
    on_used = [f for f in named if (f.host, pci_key(f.device)) in used]
    if names := [f.value for f in on_used or named]:
        out["gpu_name"] = Counter(names).most_common(1)[0][0]
    gpus: dict[str, set[str]] = defaultdict(set)
    for f in named:
        if f.device:
            gpus[f.host].add(pci_key(f.device))
    counts = [f.number for f in facts if f.name == "nccl.gpu_count" and f.number]
    if gpus:
        out["gpus_per_node"] = max(len(v) for v in gpus.values())
    elif counts:
        out["gpus_per_node"] = int(max(counts))
    return out


_LINK_LAYERS = {
    "infiniband": "infiniband",
    "ib": "infiniband",
    "ethernet": "roce_v2",
    "roce": "roce_v2",
}


def profile_from_facts(facts: list[Fact]) -> dict[str, Any]:
    """HardwareProfile field values the facts support (only the ones they do).

    GPUs per node: distinct GPUs (bus ids) of one host (``_gpu_fields``); NICs per node the
    distinct HCAs with an active-rate port; the fabric is the ports' link layer (Ethernet
    ports of an RDMA NIC mean RoCE)."""
    out: dict[str, Any] = {}
    out.update(_gpu_fields(facts))
    rates = [f.number for f in facts if f.name in ("port.rate_gbps", "link.speed_gbps")]
    fastest = max((r for r in rates if r), default=None)
    # The fabric NICs are the fastest ones; a 100G management NIC is not part of the profile.
    fabric_nics = {
        (f.host, f.device)
        for f in facts
        if f.name in ("port.rate_gbps", "link.speed_gbps") and f.number == fastest and f.device
    }
    if fastest:
        out["nic_speed_gbps"] = int(fastest)
    models = [
        f.value.strip()
        for f in facts
        if f.name in ("hca.type", "nic.part", "nic.type")
        and (not fabric_nics or (f.host, f.device) in fabric_nics)
    ]
    if models := [m for m in models if m]:
        out["nic_model"] = Counter(models).most_common(1)[0][0][:80]
    nics: dict[str, set[str]] = defaultdict(set)
    for host, device in fabric_nics:
        nics[host].add(device)
    if nics:
        out["nics_per_node"] = max(len(v) for v in nics.values())
    layers = [
        _LINK_LAYERS.get(f.value.strip().lower()) for f in facts if f.name == "port.link_layer"
    ]
    for f in facts:  # NCCL's "NET/IB : Using [0]mlx5_0:1/RoCE" lists the same as name:port/layer
        if f.name == "nccl.ib_devices":
            layers += [
                _LINK_LAYERS.get(d.rsplit("/", 1)[-1].strip().lower()) for d in f.value.split(",")
            ]
    if layers := [x for x in layers if x]:
        out["fabric"] = Counter(layers).most_common(1)[0][0]
    links = [f for f in facts if f.name == "nvlink.active" and f.value == "true"]
    if links:
        per_gpu = Counter(f.device for f in links)
        out["nvlink"] = f"NVLink, {max(per_gpu.values())} links per GPU"
    return out
