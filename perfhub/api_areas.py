"""The API's areas: which tag an operation gets from the package of its view, so the API docs
group operations the way the app does. Plain data: settings read it at start-up."""

from __future__ import annotations

# module prefix of a view -> tag; the first (longest) match wins
AREAS: tuple[tuple[str, str], ...] = (
    ("artifacts.runs.", "runs"),
    ("artifacts.traces.", "traces"),
    ("artifacts.nsight.", "nsight"),
    ("artifacts.fabric.", "fabric"),
    ("artifacts.metrics.", "metrics"),
    ("artifacts.bundles.", "artifacts"),
    ("artifacts.", "artifacts"),
    ("baselines.", "baselines"),
    ("reports.", "reports"),
    ("knowledge.", "knowledge"),
    ("incidents.", "incidents"),
)
TAG_DESCRIPTIONS = {
    "artifacts": "Uploads: the files kept byte for byte, their detected kind and parse state",
    "runs": "nccl-tests runs, ranks and per-size measurements",
    "traces": "PyTorch Profiler traces, trace jobs and diffs",
    "nsight": "Nsight Systems and Nsight Compute exports",
    "fabric": "NIC/GPU/host evidence: counters, rates, log events, findings, hosts",
    "metrics": "Metrics uploads and Prometheus data",
    "baselines": "Hardware profiles, software stacks, series, baselines, alerts",
    "reports": "Comparison reports and their exports",
    "knowledge": "The knowledge base: pages, recipes, search",
    "incidents": "Incidents, timelines, post-mortems, action items, tickets, bundles, webhooks",
}


def area_of(module: str) -> str:
    return next((tag for prefix, tag in AREAS if module.startswith(prefix)), "other")
