"""How an alert's labels become incident fields: hosts, cluster, severity, jobs, title.

``DEFAULT_LABEL_MAP`` is the documented default (docs/incidents.md, "From the alerting
stack"); a receiver's ``label_map`` (editable in the admin) overrides any of its keys. Each
field lists the label names tried in order; the first one present wins (hosts: every one
present, so ``instance`` and ``node`` both count). Pure: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_LABEL_MAP: dict[str, Any] = {
    "hosts": ["host", "hostname", "instance", "node", "nodename", "kubernetes_node"],
    "cluster": ["cluster", "cluster_name", "k8s_cluster"],
    "severity": ["severity", "priority"],
    "jobs": ["job_id", "slurm_job_id", "jobid"],
    "title": ["alertname"],
    "summary": ["summary", "description", "message"],  # annotations
    "severity_values": {
        "critical": "SEV1", "page": "SEV1", "p1": "SEV1",
        "error": "SEV2", "high": "SEV2", "major": "SEV2", "p2": "SEV2",
        "warning": "SEV3", "warn": "SEV3", "minor": "SEV3", "p3": "SEV3",
        "info": "SEV4", "low": "SEV4", "none": "SEV4", "p4": "SEV4",
    },
    "default_severity": "SEV3",
}  # fmt: skip
LIST_KEYS = ("hosts", "cluster", "severity", "jobs", "title", "summary")
SEVERITIES = ("SEV1", "SEV2", "SEV3", "SEV4")
# "h100-n001:9100" (Prometheus instance) -> "h100-n001"; IPv6 in brackets keeps its colons.
_PORT = re.compile(r"^(?P<host>\[[^\]]+\]|[^:]+):\d+$")


@dataclass(frozen=True)
class Mapped:
    hosts: tuple[str, ...]
    cluster: str
    severity: str
    jobs: tuple[str, ...]
    title: str
    summary: str


def effective(overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """The default map with a receiver's overrides applied (unknown keys refused)."""
    merged = {**DEFAULT_LABEL_MAP}
    for key, value in (overrides or {}).items():
        if key not in DEFAULT_LABEL_MAP:
            raise ValueError(
                f"unknown label map key {key!r}; one of: {', '.join(DEFAULT_LABEL_MAP)}"
            )
        if key in LIST_KEYS and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            raise ValueError(f"label map {key!r} must be a list of label names")
        if key == "severity_values" and not (
            isinstance(value, dict) and all(v in SEVERITIES for v in value.values())
        ):
            raise ValueError("severity_values maps label values to SEV1..SEV4")
        if key == "default_severity" and value not in SEVERITIES:
            raise ValueError("default_severity is one of SEV1..SEV4")
        merged[key] = value
    return merged


def apply(
    label_map: Mapping[str, Any], labels: Mapping[str, str], annotations: Mapping[str, str]
) -> Mapped:
    hosts = [_host(labels[n]) for n in label_map["hosts"] if labels.get(n)]
    severity_label = _first(label_map["severity"], labels).lower()
    values = {str(k).lower(): v for k, v in label_map["severity_values"].items()}
    return Mapped(
        hosts=tuple(dict.fromkeys(h for h in hosts if h)),
        cluster=_first(label_map["cluster"], labels),
        severity=values.get(severity_label, label_map["default_severity"]),
        jobs=tuple(labels[n] for n in label_map["jobs"] if labels.get(n)),
        title=_first(label_map["title"], labels),
        summary=_first(label_map["summary"], annotations),
    )


def _first(names: Iterable[str], values: Mapping[str, str]) -> str:
    return next((values[n] for n in names if values.get(n)), "")


def _host(value: str) -> str:
    match = _PORT.match(value.strip())
    return (match.group("host") if match else value.strip()).strip("[]")[:255]
