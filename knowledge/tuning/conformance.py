"""Recipes checked on every host: each setting against what the host's own evidence says.

Pure Python: the caller (``knowledge/tuning/fleet.py``) reads the evidence into ``Evidence``
rows; this module only decides. Every verdict carries the evidence line it rests on.

What can be checked, and from what:

* ``sysctl`` items: the host's ``sysctl -a`` (facts ``sysctl.<key>``; the loader keeps the
  notable keys, docs/formats.md). Values compare as their integers when they have any
  (``4096 131072 6291456`` = ``4096\\t131072\\t6291456``), else as text;
* ``env`` items (``NCCL_*``): what the host's newest run ran with (its stack's environment)
  and ``NCCL INFO ... set by environment`` lines of NCCL logs (facts ``nccl.env.<name>``);
* ``command`` items that are ``mlnx_qos`` calls: ``--trust dscp|pcp`` against ``qos.trust``
  and ``--pfc 0,0,0,1,0,0,0,0`` against ``qos.pfc_enabled`` of the named interface (any
  interface when the evidence names none);
* ``command`` items that are ``mlxconfig ... set NAME=VALUE ...``: each parameter against
  the host's ``mlxconfig -q`` (facts ``mlxconfig.<NAME>``, ``True(1)`` matching ``1``,
  ``True`` or ``True(1)``).

Everything else (boot parameters, other commands, a key the dump did not keep, a variable no
run states) is **unknown**: absence of evidence never counts as conforming.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from knowledge.recipes import Setting

CONFORMS, DIFFERS, UNKNOWN = "conforms", "differs", "unknown"


@dataclass(frozen=True)
class Evidence:
    """One thing a host's evidence states: ``name`` as the facts name it."""

    name: str  # "sysctl.net.core.rmem_max", "qos.trust", "qos.pfc_enabled", "env.NCCL_ALGO"
    value: str
    device: str = ""
    source: str = ""  # "sysctl artifact #12, 2026-12-01", "run #40 (stack)"
    artifact_id: int | None = None


@dataclass(frozen=True)
class Check:
    setting: Setting
    verdict: str  # conforms | differs | unknown
    expected: str
    found: str  # what the evidence says ("" when it says nothing)
    line: str  # the evidence line, or why there is none
    artifact_id: int | None = None


@dataclass(frozen=True)
class HostResult:
    host: str
    checks: tuple[Check, ...]

    @property
    def verdict(self) -> str:
        verdicts = {c.verdict for c in self.checks}
        if DIFFERS in verdicts:
            return DIFFERS
        if not verdicts or UNKNOWN in verdicts:
            return UNKNOWN
        return CONFORMS

    @property
    def drifts(self) -> list[Check]:
        return [c for c in self.checks if c.verdict == DIFFERS]


@dataclass(frozen=True)
class FleetSummary:
    hosts: tuple[HostResult, ...]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        total = len(self.hosts)
        head = f"{self.counts.get(CONFORMS, 0)} of {total} host{'s' if total != 1 else ''} conform"
        drifts = [f"{h.host}: {c.line_short}" for h in self.hosts for c in map(_Short, h.drifts)][
            :5
        ]
        unknown = self.counts.get(UNKNOWN, 0)
        tail = f"; {unknown} unknown" if unknown else ""
        return head + tail + ("; " + "; ".join(drifts) if drifts else "")


@dataclass(frozen=True)
class _Short:
    check: Check

    @property
    def line_short(self) -> str:
        return describe_drift(self.check)


def describe_drift(check: Check) -> str:
    s = check.setting
    if s.kind == "command" and "--pfc" in s.value:
        want = _pfc_set(_flag(s.value, "--pfc") or "")
        have = _found_priorities(check.found)
        off = sorted(want - have)
        if off:
            return f"PFC off on priority {', '.join(map(str, off))}"
    label = s.name or s.value.split(" --")[0]
    return f"{label} is {check.found or '?'}, recipe says {check.expected}"


def check_host(host: str, settings: Sequence[Setting], evidence: Iterable[Evidence]) -> HostResult:
    rows = list(evidence)
    return HostResult(host, tuple(_check(s, rows) for s in settings))


def summarise(results: Sequence[HostResult]) -> FleetSummary:
    counts = {CONFORMS: 0, DIFFERS: 0, UNKNOWN: 0}
    for r in results:
        counts[r.verdict] += 1
    order = {DIFFERS: 0, UNKNOWN: 1, CONFORMS: 2}
    return FleetSummary(tuple(sorted(results, key=lambda r: (order[r.verdict], r.host))), counts)


# --------------------------------------------------------------------------- the checks


def _check(setting: Setting, rows: list[Evidence]) -> Check:
    if setting.kind == "sysctl":
        return _compare(setting, setting.value, _find(rows, f"sysctl.{setting.name}"), _numbers)
    if setting.kind == "env":
        return _compare(setting, setting.value, _find(rows, f"env.{setting.name}"), str.strip)
    if setting.kind == "command":
        return _command(setting, rows)
    return Check(setting, UNKNOWN, setting.value, "", "no host evidence shows boot parameters")


def _find(rows: list[Evidence], name: str, device: str = "") -> Evidence | None:
    hits = [r for r in rows if r.name == name and (not device or r.device in ("", device))]
    return hits[0] if hits else None  # rows come newest first


def _compare(setting: Setting, expected: str, found: Evidence | None, norm: object) -> Check:
    if found is None:
        what = {
            "sysctl": "no sysctl -a of this host states it",
            "env": "no run or NCCL log of this host states it",
        }.get(setting.kind, "")
        return Check(setting, UNKNOWN, expected, "", what)
    same = norm(found.value) == norm(expected)  # type: ignore[operator]
    line = f"{found.name.split('.', 1)[1]} = {found.value}  ({found.source})"
    return Check(
        setting, CONFORMS if same else DIFFERS, expected, found.value, line, found.artifact_id
    )


def _numbers(text: str) -> object:
    numbers = re.findall(r"-?\d+", text)
    return tuple(numbers) if numbers else " ".join(text.split()).lower()


def _command(setting: Setting, rows: list[Evidence]) -> Check:
    try:
        words = shlex.split(setting.value)
    except ValueError:
        words = setting.value.split()
    tool = words[0].rsplit("/", 1)[-1] if words else ""
    if tool == "mlxconfig":
        return _mlxconfig(setting, words, rows)
    if tool != "mlnx_qos":
        return Check(setting, UNKNOWN, setting.value, "", "no evidence reader for this command")
    device = _flag(setting.value, "-i") or ""
    trust, pfc = _flag(setting.value, "--trust"), _flag(setting.value, "--pfc")
    if trust is None and pfc is None:
        return Check(setting, UNKNOWN, setting.value, "", "only --trust and --pfc are checked")
    parts: list[Check] = []
    if trust is not None:
        found = _find(rows, "qos.trust", device)
        parts.append(_compare(setting, trust, found, str.lower))
    if pfc is not None:
        found = _find(rows, "qos.pfc_enabled", device)
        if found is None:
            parts.append(Check(setting, UNKNOWN, pfc, "", _no_qos(rows, device)))
        else:
            same = _found_priorities(found.value) == _pfc_set(pfc)
            line = f"PFC enabled on {found.value}  ({found.device}, {found.source})"
            parts.append(
                Check(
                    setting,
                    CONFORMS if same else DIFFERS,
                    pfc,
                    found.value,
                    line,
                    found.artifact_id,
                )
            )
    for verdict in (DIFFERS, UNKNOWN):
        hit = next((p for p in parts if p.verdict == verdict), None)
        if hit:
            return hit
    return Check(
        setting,
        CONFORMS,
        setting.value,
        "; ".join(p.found for p in parts),
        "; ".join(p.line for p in parts),
        parts[0].artifact_id,
    )


def _mlxconfig(setting: Setting, words: list[str], rows: list[Evidence]) -> Check:
    """``mlxconfig -d DEV [-y] set A=1 B=2``: every parameter must match ``mlxconfig -q``."""
    if "set" not in words:
        return Check(setting, UNKNOWN, setting.value, "", "only mlxconfig set is checked")
    device = _flag(setting.value, "-d") or ""
    pairs = [w.split("=", 1) for w in words[words.index("set") + 1 :] if "=" in w]
    if not pairs:
        return Check(setting, UNKNOWN, setting.value, "", "mlxconfig set names no parameter")
    parts = []
    for name, want in pairs:
        hits = [r for r in rows if r.name == f"mlxconfig.{name}"]
        found = next((r for r in hits if device and r.device == device), hits[0] if hits else None)
        if found is None:
            why = (
                "no mlxconfig -q of this host"
                if not any(r.name.startswith("mlxconfig.") for r in rows)
                else f"the host's mlxconfig -q does not show {name}"
            )
            parts.append(Check(setting, UNKNOWN, f"{name}={want}", "", why))
            continue
        same = bool(_mlx_forms(found.value) & _mlx_forms(want))
        line = f"{name} = {found.value}  ({found.device}, {found.source})"
        parts.append(
            Check(
                setting,
                CONFORMS if same else DIFFERS,
                f"{name}={want}",
                f"{name}={found.value}",
                line,
                found.artifact_id,
            )
        )
    return _combined(setting, parts)


def _mlx_forms(value: str) -> set[str]:
    """``True(1)`` -> {"true", "1", "true(1)"}: mlxconfig prints a name and its code."""
    text = value.strip().lower()
    match = re.fullmatch(r"(.*?)\((\w+)\)", text)
    forms = {text}
    if match:
        forms |= {match.group(1).strip(), match.group(2)}
    return forms | ({"1"} if text == "true" else {"0"} if text == "false" else set())


def _combined(setting: Setting, parts: list[Check]) -> Check:
    """One verdict for a command of several checks: any difference, else any unknown."""
    for verdict in (DIFFERS, UNKNOWN):
        hit = next((p for p in parts if p.verdict == verdict), None)
        if hit:
            return Check(setting, verdict, hit.expected, hit.found, hit.line, hit.artifact_id)
    return Check(
        setting,
        CONFORMS,
        setting.value,
        "; ".join(p.found for p in parts),
        "; ".join(p.line for p in parts),
        parts[0].artifact_id,
    )


def _no_qos(rows: list[Evidence], device: str) -> str:
    if any(r.name.startswith("qos.") for r in rows):
        return "the host's mlnx_qos output shows no PFC table" + (
            f" for {device}" if device else ""
        )
    return "no mlnx_qos output of this host"


def _flag(command: str, flag: str) -> str | None:
    match = re.search(rf"(?:^|\s){re.escape(flag)}(?:\s+|=)(\S+)", command)
    return match.group(1) if match else None


def _pfc_set(text: str) -> set[int]:
    """``0,0,0,1,0,0,0,0`` (mlnx_qos --pfc) -> {3}."""
    return {i for i, v in enumerate(text.split(",")) if v.strip() == "1"}


def _found_priorities(value: str) -> set[int]:
    """The ``qos.pfc_enabled`` fact as stored: ``[3]``, ``[3, 4]`` or ``none``."""
    return {int(n) for n in re.findall(r"\d+", value)}


def evidence_from_facts(facts: Iterable[Mapping[str, object]]) -> list[Evidence]:
    """Evidence rows from fact dicts (name, value, device, source, artifact_id), newest first."""
    out = []
    for f in facts:
        name = str(f["name"])
        if name.startswith("nccl.env."):
            name = "env." + name.removeprefix("nccl.env.")
        out.append(
            Evidence(
                name,
                str(f["value"]),
                str(f.get("device") or ""),
                str(f.get("source") or ""),
                f.get("artifact_id"),
            )  # type: ignore[arg-type]
        )
    return out
