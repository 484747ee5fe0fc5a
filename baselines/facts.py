"""Facts about hardware and software read from what artifacts say. Pure: no Django imports.

* ``gpu_model("NVIDIA H100 80GB HBM3")`` -> ``"H100"``, ``gpu_generation("H100")`` -> Hopper.
* ``stack_facts(run_facts, metadata)`` -> the software-stack components and the ``NCCL_*``
  environment, from the benchmark's own output first (the version line nccl-tests prints is
  what was really loaded) and the upload metadata second.
"""

from __future__ import annotations

import re
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

# (pattern on the model name, generation); first match wins, so longer names come first.
_GENERATIONS: tuple[tuple[str, str], ...] = (
    (r"^GB[23]00", "Blackwell"),
    (r"^B[123]00", "Blackwell"),
    (r"^GH200", "Hopper"),
    (r"^H(100|200|800|20)\b", "Hopper"),
    (r"^A(100|800|10|30|40)\b", "Ampere"),
    (r"^L(4|40S?)\b", "Ada Lovelace"),
    (r"^V100", "Volta"),
    (r"^MI3\d\d", "CDNA 3"),
    (r"^MI2\d\d", "CDNA 2"),
)
_MODEL = re.compile(r"\b(GB\d{3}|GH\d{3}|[ABHLV]\d{2,3}S?|MI\d{3}[AX]?)\b", re.IGNORECASE)


def gpu_model(name: str) -> str:
    """The model in a GPU name as drivers print it ("Tesla V100-SXM2-16GB" -> "V100")."""
    match = _MODEL.search(name or "")
    return match.group(1).upper() if match else (name or "").strip()[:60]


def gpu_generation(model: str) -> str:
    for pattern, generation in _GENERATIONS:
        if re.match(pattern, model or "", re.IGNORECASE):
            return generation
    return ""


@dataclass(frozen=True)
class StackFacts:
    """Versions by component (only the known ones) and the NCCL_* environment."""

    versions: dict[str, str] = field(default_factory=dict)
    nccl_env: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # component -> where it came from


def stack_facts(run: Mapping[str, Any], metadata: Mapping[str, Any]) -> StackFacts:
    """Components from the run (``nccl_version``, ``nccl_tests_version``), then metadata.

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
