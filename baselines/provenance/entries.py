"""Where each fact of a run came from and why it applies. Pure: no Django imports.

``run_provenance`` lists, per stack component, ``NCCL_*`` variable and profile field, every
value a source stated: the run's own output and upload metadata, and each other artifact
(with the line, when known, and the scope: this file, same job, same host). Exactly one
entry per stack key is ``used``; when sources disagree all of them are listed and nothing is
averaged: the run's own output wins, then the nearest scope, then the nearest in time.
"""

from __future__ import annotations

from typing import Any

from baselines.facts import (
    COMPONENT_LABELS,
    COMPONENTS,
    ENV_PREFIX,
    FACT_COMPONENTS,
    PROFILE_FIELD_FACTS,
    Fact,
    StackFacts,
    first_word,
)

MAX_PER_KEY = 6  # a key's distinct (source, value) pairs shown; the rest are more of the same
PROFILE_LABELS = {
    "gpu_name": "GPU",
    "gpus_per_node": "GPUs per node",
    "nic_model": "NIC model",
    "nic_speed_gbps": "NIC speed (Gb/s)",
    "nics_per_node": "NICs per node",
    "fabric": "fabric",
    "nvlink": "NVLink",
}


def _own_why(source: str) -> str:
    return "the run's own output" if source == "benchmark output" else "its upload metadata"


def _entry(kind: str, key: str, label: str, fact: Fact, value: str, used: bool) -> dict[str, Any]:
    return {
        "kind": kind,
        "key": key,
        "label": label,
        "value": value,
        "source": fact.source,
        "artifact": fact.artifact_id or None,
        "line": fact.line,
        "why": fact.why,
        "used": used,
    }


def run_provenance(own: StackFacts, facts: list[Fact], merged: StackFacts) -> list[dict[str, Any]]:
    """Every stated value per key (see the module docstring); JSON-ready dicts."""
    out: list[dict[str, Any]] = []
    for component in COMPONENTS:
        label = COMPONENT_LABELS[component]
        if component in own.versions:
            source = own.sources.get(component, "")
            out.append(
                {
                    "kind": "stack", "key": component, "label": label,
                    "value": own.versions[component], "source": source, "artifact": None,
                    "line": None, "why": _own_why(source), "used": True,
                }
            )  # fmt: skip
        names = FACT_COMPONENTS.get(component, ())
        stated = [f for f in facts if f.name in names and first_word(f.value)]
        chosen = merged.sources.get(component) if component not in own.versions else None
        out += _distinct(
            "stack", component, label, stated, lambda f: first_word(f.value), chosen,
            merged.versions.get(component),
        )  # fmt: skip
    env_keys = sorted(
        set(own.nccl_env)
        | {f.name[len(ENV_PREFIX) :] for f in facts if f.name.startswith(ENV_PREFIX + "NCCL_")}
    )
    for key in env_keys:
        if key in own.nccl_env:
            out.append(
                {
                    "kind": "env", "key": key, "label": key, "value": own.nccl_env[key],
                    "source": "upload metadata", "artifact": None, "line": None,
                    "why": "its upload metadata", "used": True,
                }
            )  # fmt: skip
        stated = [f for f in facts if f.name == ENV_PREFIX + key and f.value.strip()]
        first = stated[0].source if stated and key not in own.nccl_env else None
        out += _distinct(
            "env", key, key, stated, lambda f: f.value.strip(), first, merged.nccl_env.get(key)
        )
    for field, names in PROFILE_FIELD_FACTS.items():
        if field == "gpus_per_node":
            continue  # counted from the GPU names: their entries say it
        stated = [f for f in facts if f.name in names and f.value.strip()]
        out += _distinct(
            "hardware", field, PROFILE_LABELS[field], stated, lambda f: f.value.strip(), None, None
        )
    return out


def _distinct(
    kind: str,
    key: str,
    label: str,
    stated: list[Fact],
    value_of: Any,
    chosen_source: str | None,
    chosen_value: str | None,
) -> list[dict[str, Any]]:
    """One entry per (source, value): eight NICs stating one firmware are one entry."""
    seen: set[tuple[str, str]] = set()
    out: list[dict[str, Any]] = []
    for fact in stated:
        value = str(value_of(fact))
        if (fact.source, value) in seen:
            continue
        seen.add((fact.source, value))
        used = chosen_source == fact.source and chosen_value == value
        if len(out) < MAX_PER_KEY or used:
            out.append(_entry(kind, key, label, fact, value, used))
    return out


def disagreements(entries: list[dict[str, Any]]) -> set[str]:
    """Keys whose sources state more than one value."""
    values: dict[tuple[str, str], set[str]] = {}
    for e in entries:
        values.setdefault((e["kind"], e["key"]), set()).add(str(e["value"]))
    return {key for (_, key), seen in values.items() if len(seen) > 1}


def borrowed_summary(entries: list[dict[str, Any]]) -> list[str]:
    """The used values another artifact supplied, one line each ("driver 560.35.03 from
    nvidia_smi artifact #12 (same host n1)"): what a series page says about its stacks."""
    return [
        f"{e['label']} {e['value']} from {e['source']} ({e['why']})"
        for e in entries
        if e.get("used") and e.get("artifact")
    ]
