"""Evidence runs as rows: ``BenchmarkRun`` per curve or scalar of a non-nccl-tests artifact.

``evidence.py`` says what numbers each kind yields; this module stores them so that the rest
of the pipeline (filing, comparisons, detection, alerts, run pages) needs no second path:

* metrics uploads: written by their loader (``load_metrics``) inside the parse transaction,
  like nccl-tests runs;
* perftest, traces and counter snapshots, whose loaders belong to other apps: derived in the
  after-parse task (``evidence_refresh``), from the stored rows (traces, counters) or by
  reading the small perftest file again.

Rows are matched by (artifact, index) and updated in place, so a re-parse keeps run ids:
baselines that pin a run and alerts that point at it survive it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import pandas as pd
from django.conf import settings
from django.db.models import Q

from artifacts.models import Artifact, BenchmarkRun, CounterSample, CounterSnapshot, RunRank
from artifacts.parsers import ParseError, get_parser
from artifacts.parsers.streams import open_decompressed
from artifacts.times import aware_datetime
from baselines import evidence
from baselines.filing import EVIDENCE

log = logging.getLogger(__name__)

OWN_RUNS_KINDS = frozenset({"nccl_tests", "metrics"})  # their loaders write the runs
COUNTER_KINDS = frozenset({"ethtool_stats", "rdma_counters"})
MAX_PERFTEST_BYTES = 8 * 1024 * 1024  # perftest output is kilobytes; bigger is not perftest


def runs_store(artifact: Artifact, specs: Sequence[evidence.EvidenceRun]) -> list[BenchmarkRun]:
    """Make the artifact's runs exactly these (update in place by index, drop the rest)."""
    existing = {r.index: r for r in artifact.runs.all()}
    stored = []
    for index, spec in enumerate(specs):
        fields = {
            "benchmark": spec.benchmark[:40],
            "collective": spec.collective[:40],
            "nccl_version": spec.nccl_version[:40],
            "nranks": spec.nranks,
            "nhosts": spec.nhosts,
            "gpu": spec.gpu[:120],
            "dtype": spec.dtype[:20],
            "complete": True,
            "errors": list(spec.errors),
            "extra": {EVIDENCE: spec.extra()},
            "measured_at": _time(spec.measured_at) or artifact.captured_at or artifact.uploaded_at,
        }
        run = existing.pop(index, None)
        if run is None:
            run = BenchmarkRun.objects.create(artifact=artifact, index=index, **fields)
        else:
            for name, value in fields.items():
                setattr(run, name, value)
            run.save()
        # One rank row per host the evidence names (no GPU, no device): host queries - facts
        # of the same host, host -> profile re-filing - find evidence runs like nccl-tests ones.
        run.ranks.all().delete()
        RunRank.objects.bulk_create(
            RunRank(run=run, rank=k, host=host[:255])
            for k, host in enumerate(dict.fromkeys(spec.hosts))
        )
        stored.append(run)
    BenchmarkRun.objects.filter(pk__in=[r.pk for r in existing.values()]).delete()
    return stored


def _time(text: str | None) -> datetime | None:
    try:
        return aware_datetime(text) if text else None
    except ValueError:
        return None


def load_metrics(artifact: Artifact, result: Any) -> None:
    """Loader of the ``metrics`` kind (registered in ``artifacts.loaders``)."""
    runs_store(artifact, evidence.metrics_runs(result))


# --------------------------------------------------------------------- derived after parse


def evidence_refresh(artifact: Artifact) -> None:
    """(Re)derive the evidence runs of an artifact whose own loader writes none."""
    if artifact.kind in OWN_RUNS_KINDS:
        return
    runs = list(artifact.runs.all())
    if any(EVIDENCE not in (r.extra or {}) for r in runs):
        return  # the kind's own loader wrote these runs (a parser that yields benchmark runs)
    specs: list[evidence.EvidenceRun] = []
    if artifact.kind == "perftest":
        specs = _perftest_specs(artifact)
    elif artifact.kind == "torch_trace":
        specs = _trace_specs(artifact)
    elif artifact.kind in COUNTER_KINDS:
        specs = _counter_specs(artifact)
    if specs or runs:
        runs_store(artifact, specs)


def _perftest_specs(artifact: Artifact) -> list[evidence.EvidenceRun]:
    if artifact.size > MAX_PERFTEST_BYTES:
        return []
    try:
        with artifact.file.open("rb") as raw:
            stream = open_decompressed(
                raw,
                compressed_size=artifact.size,
                max_ratio=settings.PERFHUB_MAX_GZIP_RATIO,
                max_bytes=MAX_PERFTEST_BYTES,
            )
            result = get_parser("perftest").parse(stream)
    except (ParseError, OSError) as exc:  # parsed a moment ago; storage may have hiccuped
        log.warning("perftest artifact %s: evidence not derived: %s", artifact.pk, exc)
        return []
    return evidence.perftest_runs(result)


def _trace_specs(artifact: Artifact) -> list[evidence.EvidenceRun]:
    trace = getattr(artifact, "trace", None)
    if trace is None:
        return []
    fields = ("job_label", "rank", "world_size", "gpu", "nccl_version", "host", "step_mean_us")
    summary = {name: getattr(trace, name) for name in fields}
    summary["idle_pct"] = trace.idle_pct
    summary["cpu_only"] = trace.cpu_only
    return [_at(run, trace.recorded_at.isoformat()) for run in evidence.trace_runs(summary)]


def _at(run: evidence.EvidenceRun, when: str) -> evidence.EvidenceRun:
    return replace(run, measured_at=run.measured_at or when)


def _counter_specs(artifact: Artifact) -> list[evidence.EvidenceRun]:
    """Rates of the artifact's latest snapshots against the snapshot just before each (this
    upload's, or an earlier upload's of the same device), computed read-only: the fabric
    task stores its own CounterRate rows, perhaps at this very moment."""
    from artifacts.fabric import rates

    own = list(
        artifact.counter_snapshots.order_by("taken_at").values(
            "id", "artifact_id", "taken_at", "source", "host", "device", "port"
        )
    )
    if not own:
        return []
    latest: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in own:
        latest[(row["source"], row["host"], row["device"], row["port"])] = row
    rows = list(latest.values())
    wanted = {r["id"] for r in rows}
    for row in list(rows):
        port = Q(port__isnull=True) if row["port"] is None else Q(port=row["port"])
        before = (
            CounterSnapshot.objects.filter(
                port, source=row["source"], host=row["host"], device=row["device"]
            )
            .filter(taken_at__lt=row["taken_at"])
            .order_by("-taken_at", "-id")
            .values("id", "artifact_id", "taken_at", "source", "host", "device", "port")
            .first()
        )
        if before is not None:
            rows.append(before)
    if len(rows) == len(wanted):
        return []  # one reading per device: no rate yet
    snapshots = pd.DataFrame(rows).rename(columns={"id": "snapshot_id"})
    snapshots["port"] = snapshots["port"].astype("object")
    samples = pd.DataFrame(
        CounterSample.objects.filter(snapshot_id__in=list(snapshots["snapshot_id"])).values(
            "snapshot_id", "counter", "value", "unit"
        ),
        columns=list(rates.SAMPLE_COLUMNS),
    )
    frame = rates.compute_rates(snapshots, samples, only_after=wanted)
    if frame.empty:
        return []
    out: list[evidence.EvidenceRun] = []
    for host, part in frame.groupby("host", sort=True):
        at = pd.Timestamp(part["at"].max()).isoformat()
        out += evidence.counter_runs(
            part.to_dict("records"), host=str(host or artifact.host), measured_at=at
        )
    return out
