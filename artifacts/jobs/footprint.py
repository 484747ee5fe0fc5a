"""Where and when an artifact's evidence happened: its hosts and its time range.

Read from the rows its parse stored (run ranks, host facts, trace summaries), else from the
upload (host, capture time). Two artifacts with the same hosts whose ranges overlap (within
``SLACK``: snapshots are points in time) describe one job.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from artifacts.fabric.models import HostFact
from artifacts.models.core import Artifact
from artifacts.runs.models import RunRank
from artifacts.traces.models import TraceSummary

SLACK = timedelta(minutes=10)
# A fleet snapshot naming hundreds of hosts is no job's world.
MAX_HOSTS = 512


@dataclass(frozen=True)
class Footprint:
    hosts: tuple[str, ...]
    start: datetime
    end: datetime

    @property
    def hosts_key(self) -> str:
        return hosts_key(self.hosts)


def hosts_key(hosts: list[str] | tuple[str, ...]) -> str:
    """One indexed value per host set (names lowercased: DNS names are case-blind)."""
    if not hosts:
        return ""
    joined = "\n".join(sorted({h.lower() for h in hosts}))
    return hashlib.sha1(joined.encode()).hexdigest()


def artifact_footprint(artifact: Artifact) -> Footprint:
    hosts: set[str] = set()
    times: list[datetime] = []
    ranks = RunRank.objects.filter(run__artifact=artifact).order_by()
    hosts |= set(ranks.values_list("host", flat=True).distinct()[: MAX_HOSTS + 1])
    times += [t for t in artifact.runs.order_by().values_list("measured_at", flat=True)[:1000]]
    facts = HostFact.objects.filter(artifact=artifact).order_by()
    hosts |= set(facts.values_list("host", flat=True).distinct()[: MAX_HOSTS + 1])
    span = [t for t in facts.values_list("observed_at", flat=True).distinct()[:1000]]
    times += span
    trace = TraceSummary.objects.filter(artifact=artifact).only("host", "recorded_at").first()
    if trace is not None:
        hosts.add(trace.host)
        times.append(trace.recorded_at)
    hosts.discard("")
    if not hosts and artifact.host:
        hosts.add(artifact.host)
    if not times:
        times.append(artifact.captured_at or artifact.uploaded_at)
    if len(hosts) > MAX_HOSTS:
        hosts = set()
    return Footprint(tuple(sorted(hosts)), min(times), max(times))
