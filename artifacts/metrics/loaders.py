"""Loaders for metrics uploads (benchmark runs) and monitoring data (Prometheus scrapes and
query results, into counter snapshots).

Both kinds emit the shared counter row shape, so they land in the same CounterSnapshot/
CounterSample tables as ethtool or sysfs readings, and the fabric pairing and rules treat
them alike. Label facts (GPU UUID and model, driver version, kernel release) become
HostFacts. Called inside the parse transaction (see artifacts/loaders.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from artifacts.fabric.loaders import (
    FactBuffer,
    clear_fabric_rows,
    load_counter_samples,
    observed_at,
)
from artifacts.models import Artifact
from perfhub.hooks import Hook


def load_prometheus(artifact: Artifact, result: Any) -> None:
    clear_fabric_rows(artifact)
    load_counter_samples(artifact, result.samples)
    first = min((s.captured_at for s in result.samples if s.captured_at), default=None)
    facts = FactBuffer(artifact, observed_at(artifact, first))
    for fact in result.facts:
        facts.add(fact.name, fact.value, host=fact.host, device=fact.device)
    facts.save()


# Metrics uploads become benchmark runs whose points the baselines app defines, so it provides
# the loader (BaselinesConfig.ready); without it the parse fails naming the missing hook.
store_metrics_runs: Hook[Callable[[Artifact, Any], None]] = Hook("store a metrics upload's runs")


def load_metrics_upload(artifact: Artifact, result: Any) -> None:
    store_metrics_runs(artifact, result)


METRICS_LOADERS: dict[str, Callable[[Artifact, Any], None]] = {
    "metrics": load_metrics_upload,
    "prometheus_text": load_prometheus,
    "prometheus_range": load_prometheus,
}
