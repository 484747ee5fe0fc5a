"""Which hardware and software a page applies to, as pure functions over plain facts.

No Django here: run, hardware-profile and incident pages turn what they know into a *facts*
dict and ask :func:`applies` / :func:`explain`. Fact keys (all optional, strings)::

    {"gpu": "NVIDIA H100 80GB HBM3", "nic": "ConnectX-7", "nic_firmware": "28.39.1002",
     "fabric": "roce", "nccl": "2.23.4", "driver": "550.54.15", "cuda": "12.4",
     "kernel": "5.15.0-91-generic", "ofed": "23.10-1.1.9.0", "doca": "2.9.1"}

A page's *applicability* ("applies_to" in the API and in front matter) constrains some
dimensions: lists for GPUs, NICs and fabrics (any entry may match), version ranges for the
software (see :mod:`knowledge.versions`)::

    {"gpu": ["H100", "H200"], "fabric": ["roce"], "nic": ["ConnectX-7"],
     "nic_firmware": ">=28.39", "nccl": ">=2.19, <2.24"}

A dimension the page does not constrain never excludes it. A constrained dimension the facts
do not mention is *unknown*: it does not exclude the page either (a run without NIC facts
still gets the RoCE page, flagged "may apply"), unless ``strict=True``.

GPU entries may be models (``H100``, ``GB200``, ``MI300X``), architectures (``Hopper``,
``Blackwell``, ``CDNA3``) or families (``MI300`` covers MI300X and MI300A). Facts may carry the
GPU name as the tools print it ("NVIDIA H100 80GB HBM3"): the model is found inside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from knowledge.versions import VersionError, VersionRange

# model -> architecture. Unknown models (next year's) are still accepted as written.
GPU_ARCHITECTURES: dict[str, str] = {
    "V100": "Volta",
    "A100": "Ampere", "A800": "Ampere", "A40": "Ampere", "A30": "Ampere", "A10": "Ampere",
    "A10G": "Ampere",
    "L4": "Ada", "L40": "Ada", "L40S": "Ada",
    "H100": "Hopper", "H800": "Hopper", "H200": "Hopper", "H20": "Hopper", "GH200": "Hopper",
    "B100": "Blackwell", "B200": "Blackwell", "GB200": "Blackwell", "B300": "Blackwell",
    "GB300": "Blackwell",
    "MI210": "CDNA2", "MI250": "CDNA2", "MI250X": "CDNA2",
    "MI300X": "CDNA3", "MI300A": "CDNA3", "MI325X": "CDNA3",
    "MI355X": "CDNA4",
}  # fmt: skip
ARCHITECTURES = tuple(dict.fromkeys(GPU_ARCHITECTURES.values()))
# The drop-down of the page list: the generations a performance team meets today.
COMMON_GPUS = ("A100", "H100", "H200", "GH200", "B200", "GB200", "B300", "MI300X", "MI325X")

# Longest names first, so "GH200" is not read as "H200" nor "L40S" as "L40".
_GPU_MODEL = re.compile(
    r"(?<![A-Z0-9])("
    + "|".join(sorted(map(re.escape, GPU_ARCHITECTURES), key=len, reverse=True))
    + r")(?![A-Z0-9])"
)

FABRICS: dict[str, str] = {
    "infiniband": "InfiniBand",
    "roce": "RoCE v2",
    "ethernet": "Ethernet (TCP sockets)",
    "efa": "AWS EFA",
    "mnnvl": "Multi-node NVLink",
}
_FABRIC_ALIASES = {
    "ib": "infiniband", "infiniband": "infiniband", "roce": "roce", "rocev2": "roce",
    "roce v2": "roce", "roce2": "roce", "ethernet": "ethernet", "tcp": "ethernet",
    "socket": "ethernet", "sockets": "ethernet", "efa": "efa", "mnnvl": "mnnvl",
    "multi-node nvlink": "mnnvl",
}  # fmt: skip

_CONNECTX = re.compile(
    r"connect-?x-?\s*(\d+)(?:\s*-?\s*(dx|lx|en|vpi))?|\bcx-?(\d)(?:\s*-?\s*(dx|lx))?\b", re.I
)
_BLUEFIELD = re.compile(r"blue-?field-?\s*(\d)", re.I)

LIST_DIMENSIONS = ("gpu", "nic", "fabric")
RANGE_DIMENSIONS = (
    "nccl", "rccl", "driver", "cuda", "rocm", "kernel", "ofed", "doca", "nic_firmware",
)  # fmt: skip
DIMENSIONS = (*LIST_DIMENSIONS, *RANGE_DIMENSIONS)
LABELS = {
    "gpu": "GPU", "nic": "NIC", "fabric": "Fabric", "nccl": "NCCL", "rccl": "RCCL",
    "driver": "Driver", "cuda": "CUDA", "rocm": "ROCm", "kernel": "Kernel", "ofed": "MLNX_OFED",
    "doca": "DOCA", "nic_firmware": "NIC firmware",
}  # fmt: skip
_ENTRY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._+/-]{0,59}$")

State = Literal["match", "mismatch", "unknown"]


class ApplicabilityError(ValueError):
    """Applicability that cannot be read; ``problems`` lists every reason at once."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


# --- normalising -----------------------------------------------------------------------------


def canonical_gpu(text: str) -> str:
    """``h100`` -> ``H100``, ``hopper`` -> ``Hopper``; unknown names are kept as written."""
    raw = str(text).strip()
    upper = raw.upper()
    if upper in GPU_ARCHITECTURES:
        return upper
    for arch in ARCHITECTURES:
        if upper == arch.upper():
            return arch
    if _family_members(upper):
        return upper
    if model := gpu_model(upper):  # "NVIDIA H100 80GB HBM3" as printed by nvidia-smi
        return model
    return raw


def gpu_model(text: str) -> str | None:
    """The GPU model inside a name as tools print it: "NVIDIA H100 80GB HBM3" -> "H100"."""
    match = _GPU_MODEL.search(str(text).upper())
    return match.group(1) if match else None


def canonical_nic(text: str) -> str:
    """``cx7``, ``MT2910 Family [ConnectX-7]`` -> ``ConnectX-7``; ``cx6dx`` -> ``ConnectX-6 Dx``."""
    raw = str(text).strip()
    if match := _CONNECTX.search(raw):
        number = match.group(1) or match.group(3)
        suffix = match.group(2) or match.group(4)
        return f"ConnectX-{number}" + (f" {suffix.capitalize()}" if suffix else "")
    if match := _BLUEFIELD.search(raw):
        return f"BlueField-{match.group(1)}"
    return raw


def canonical_fabric(text: str) -> str | None:
    return _FABRIC_ALIASES.get(str(text).strip().lower())


def normalize_applicability(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """The canonical form stored on a page; raises ApplicabilityError with every problem.

    List dimensions accept a list or a comma-separated string; empty values are dropped, so
    the result holds only the dimensions that constrain something.
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ApplicabilityError(['applies_to must be an object, e.g. {"gpu": ["H100"]}'])
    problems: list[str] = []
    unknown = sorted(set(raw) - set(DIMENSIONS))
    if unknown:
        problems.append(
            f"unknown applicability key(s) {', '.join(unknown)}; known: {', '.join(DIMENSIONS)}"
        )
    result: dict[str, Any] = {}
    for dim in LIST_DIMENSIONS:
        entries = _as_list(raw.get(dim), dim, problems)
        canonical: list[str] = []
        for entry in entries:
            value = _canonical_entry(dim, entry, problems)
            if value and value not in canonical:
                canonical.append(value)
        if canonical:
            result[dim] = canonical
    for dim in RANGE_DIMENSIONS:
        spec = raw.get(dim)
        if spec in (None, "", [], "*", "any"):
            continue
        if isinstance(spec, list):
            spec = ", ".join(str(s) for s in spec)
        try:
            parsed = VersionRange.parse(str(spec))
        except VersionError as exc:
            problems.append(f"{dim}: {exc}")
            continue
        if not parsed.is_any:
            result[dim] = str(parsed)
    if problems:
        raise ApplicabilityError(problems)
    return result


def _as_list(value: Any, dim: str, problems: list[str]) -> list[str]:
    if value in (None, ""):
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    problems.append(f"{dim}: expected a list of names, got {type(value).__name__}")
    return []


def _canonical_entry(dim: str, entry: str, problems: list[str]) -> str | None:
    if not _ENTRY.match(entry):
        problems.append(f"{dim}: {entry!r} is not a name (letters, digits, . _ - + / and spaces)")
        return None
    if dim == "gpu":
        return canonical_gpu(entry)
    if dim == "nic":
        return canonical_nic(entry)
    fabric = canonical_fabric(entry)
    if fabric is None:
        problems.append(f"fabric: {entry!r} is not one of {', '.join(FABRICS)}")
    return fabric


def normalize_facts(raw: Mapping[str, Any]) -> dict[str, str]:
    """Facts with empty values dropped and NIC/fabric names made canonical."""
    facts: dict[str, str] = {}
    for key in DIMENSIONS:
        value = raw.get(key)
        if value in (None, ""):
            continue
        text = str(value).strip()
        if key == "nic":
            text = canonical_nic(text)
        elif key == "fabric":
            text = canonical_fabric(text) or text.lower()
        if text:
            facts[key] = text
    return facts


# --- matching --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    dimension: str
    wanted: str
    have: str | None
    state: State

    @property
    def label(self) -> str:
        return LABELS[self.dimension]


def explain(applicability: Mapping[str, Any], facts: Mapping[str, Any]) -> tuple[Verdict, ...]:
    """One verdict per dimension the page constrains, in a stable order."""
    known = normalize_facts(facts)
    verdicts: list[Verdict] = []
    for dim in DIMENSIONS:
        wanted = applicability.get(dim)
        if not wanted:
            continue
        have = known.get(dim)
        verdicts.append(Verdict(dim, describe(dim, wanted), have, _state(dim, wanted, have)))
    return tuple(verdicts)


def _state(dim: str, wanted: Any, have: str | None) -> State:
    if have is None:
        return "unknown"
    if dim == "gpu":
        return "match" if any(gpu_matches(entry, have) for entry in wanted) else "mismatch"
    if dim in LIST_DIMENSIONS:
        return "match" if have.lower() in {w.lower() for w in wanted} else "mismatch"
    try:
        version_range = VersionRange.parse(str(wanted))
    except VersionError:
        return "unknown"  # stored data is validated; never let a bad row break a page
    return "match" if version_range.contains(have) else "mismatch"


def gpu_matches(entry: str, fact: str) -> bool:
    """Whether one GPU entry of a page (model, architecture or family) covers a GPU fact."""
    wanted = canonical_gpu(entry).upper()
    model = gpu_model(fact)
    if model is None:  # a GPU we do not know yet: compare the words
        words = set(re.split(r"[^A-Z0-9]+", str(fact).upper()))
        return wanted in words or wanted == str(fact).strip().upper()
    return (
        wanted == model
        or wanted == GPU_ARCHITECTURES[model].upper()
        or model in _family_members(wanted)
    )


def _family_members(prefix: str) -> set[str]:
    """``MI300`` -> {MI300X, MI300A}: known models that are the prefix plus letters only."""
    return {m for m in GPU_ARCHITECTURES if m.startswith(prefix) and m[len(prefix) :].isalpha()} - {
        prefix
    }


def applies(
    applicability: Mapping[str, Any], facts: Mapping[str, Any], *, strict: bool = False
) -> bool:
    """No constrained dimension contradicts the facts (strict: and none is unknown)."""
    states = {v.state for v in explain(applicability, facts)}
    if "mismatch" in states:
        return False
    return not (strict and "unknown" in states)


def relevance(applicability: Mapping[str, Any], facts: Mapping[str, Any]) -> int | None:
    """How many dimensions positively match; None when one contradicts the facts.

    "Pages that apply to this run" are the ones with relevance >= 1: a page that constrains
    nothing applies everywhere and would drown the specific ones.
    """
    verdicts = explain(applicability, facts)
    if any(v.state == "mismatch" for v in verdicts):
        return None
    return sum(v.state == "match" for v in verdicts)


# --- presenting ------------------------------------------------------------------------------


def describe(dim: str, wanted: Any) -> str:
    if dim in LIST_DIMENSIONS:
        names = [FABRICS.get(w, w) if dim == "fabric" else w for w in wanted]
        return ", ".join(names)
    try:
        return VersionRange.parse(str(wanted)).describe()
    except VersionError:
        return str(wanted)


@dataclass(frozen=True)
class Badge:
    dimension: str
    label: str
    text: str
    filter_param: str = ""  # query parameter of the page list that finds similar pages
    filter_value: str = ""


def badges(applicability: Mapping[str, Any]) -> list[Badge]:
    result: list[Badge] = []
    for dim in DIMENSIONS:
        wanted = applicability.get(dim)
        if not wanted:
            continue
        if dim == "gpu":
            result += [Badge(dim, LABELS[dim], g, "generation", g) for g in wanted]
        elif dim == "fabric":
            result += [Badge(dim, LABELS[dim], FABRICS.get(f, f), "fabric", f) for f in wanted]
        elif dim == "nic":
            result += [Badge(dim, LABELS[dim], n, "nic", n) for n in wanted]
        else:
            result.append(Badge(dim, LABELS[dim], describe(dim, wanted)))
    return result


def gpu_index_terms(gpus: Iterable[str]) -> list[str]:
    """Everything a "generation" filter should find a page by.

    A page for ``Hopper`` is found by H100, H200, ... and a page for ``H100`` by Hopper;
    ``MI300`` expands to its members.
    """
    terms: list[str] = []
    for entry in gpus:
        canonical = canonical_gpu(entry)
        upper = canonical.upper()
        found = [canonical]
        if upper in GPU_ARCHITECTURES:
            found.append(GPU_ARCHITECTURES[upper])
        members = sorted(_family_members(upper))
        found += members + sorted({GPU_ARCHITECTURES[m] for m in members})
        found += sorted(m for m, arch in GPU_ARCHITECTURES.items() if arch.upper() == upper)
        terms += found
    return list(dict.fromkeys(terms))


def generation_choices() -> list[tuple[str, str]]:
    return [(g, g) for g in COMMON_GPUS] + [(a, f"{a} (architecture)") for a in ARCHITECTURES]
