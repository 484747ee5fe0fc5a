"""Series from evidence other than nccl-tests: what each kind's numbers become. Pure.

Every evidence that yields a number becomes *evidence runs*: one per curve or scalar, each
a list of points (metric, unit, which way is better, message size or 0, print resolution).
``baselines.evidence_store`` writes them as ``BenchmarkRun`` rows (points in
``extra["evidence"]``), so filing, baselines, comparisons, change-point detection and
alerts treat them exactly like nccl-tests runs. One run carries one metric: a comparison
compares one curve (perftest bandwidth per size) or one number (tokens/s) at a time.

* perftest (``ib_write_bw``, ``ib_send_lat``...): bandwidth per size (``bw_avg_gbps``,
  higher is better) or typical latency per size (``t_typical_us``, lower is better);
* PyTorch Profiler traces: mean step time (ms, lower) and GPU idle % (lower), one series
  per rank of a job;
* counter rates (fabric): a host's goodput (Gb/s, higher), pause share and ECN-marked share
  (%, lower), summed/maxed over its ports per snapshot pair, one series per host;
* metrics uploads (``artifacts.metrics.parsers.metrics``): each benchmark x metric as given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

PERFTEST = "perftest"
TRACE = "torch-trace"
COUNTERS = "fabric"
# perftest prints bandwidth and latency with two decimals, in the unit of its header.
_PERFTEST_GBPS_PER_UNIT = {"gb/sec": 1.0, "mb/sec": 8e-3, "mib/sec": 8 * 1.048576e-3}


@dataclass(frozen=True)
class EvidencePoint:
    metric: str
    unit: str
    direction: str  # "higher" | "lower"
    value: float
    size_bytes: int = 0
    resolution: float = 0.0
    n: int = 1  # how many repeats the value averages

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "unit": self.unit,
            "direction": self.direction,
            "value": self.value,
            "size_bytes": self.size_bytes,
            "resolution": self.resolution,
            "n": self.n,
        }


@dataclass(frozen=True)
class EvidenceRun:
    benchmark: str  # max 40 characters: perftest, torch-trace, megatron-gpt3, ...
    collective: str  # the test or metric: ib_write_bw, step_time, tokens_per_s
    points: tuple[EvidencePoint, ...]
    nranks: int | None = None
    nhosts: int | None = None
    # Part of the series identity: a trace rank ("rank 3") keeps each rank its own series.
    dtype: str = ""
    gpu: str = ""
    nccl_version: str = ""
    hosts: tuple[str, ...] = ()
    measured_at: str | None = None  # ISO text from the file; None: the artifact's time
    errors: tuple[str, ...] = ()
    # upload-metadata-like facts of the record (profile, stack versions, NCCL_* variables)
    metadata: dict[str, Any] = field(default_factory=dict)

    def extra(self) -> dict[str, Any]:
        return {
            "points": [p.to_json() for p in self.points],
            "hosts": list(self.hosts),
            "metadata": self.metadata,
        }


def _slug(text: str, limit: int = 40) -> str:
    return re.sub(r"\s+", "_", text.strip())[:limit]


# ----------------------------------------------------------------------------- perftest


def perftest_runs(result: Any) -> list[EvidenceRun]:
    """One run per perftest invocation: its curve over message sizes."""
    out = []
    for run in result.runs:
        tool = run.tool or (run.test or "perftest")
        name = _slug(f"{tool} {run.qps}qp" if run.qps and run.qps > 1 else tool)
        step = 0.01 * _PERFTEST_GBPS_PER_UNIT.get((run.bw_unit or "").lower(), 1.0)
        points: list[EvidencePoint] = []
        for row in run.rows:
            if run.measure == "lat" and row.t_typical_us is not None:
                points.append(
                    EvidencePoint("t_typical_us", "µs", "lower", row.t_typical_us, row.bytes, 0.01)
                )
            elif run.measure != "lat" and row.bw_avg_gbps is not None:
                points.append(
                    EvidencePoint("bw_avg_gbps", "Gb/s", "higher", row.bw_avg_gbps, row.bytes, step)
                )
        out.append(
            EvidenceRun(
                benchmark=PERFTEST,
                collective=name,
                points=tuple(points),
                nranks=2,
                nhosts=None,
                hosts=(run.host,) if run.host else (),
                errors=tuple(run.errors),
            )
        )
    return out


# -------------------------------------------------------------------------------- traces


def trace_runs(summary: Mapping[str, Any]) -> list[EvidenceRun]:
    """Step time and GPU idle % of one rank's trace (TraceSummary columns)."""
    job = str(summary.get("job_label") or "").strip()
    benchmark = _slug(f"{TRACE}:{job}" if job else TRACE)
    rank = summary.get("rank")
    common: dict[str, Any] = {
        "nranks": summary.get("world_size"),
        "dtype": f"rank {rank}" if rank is not None else "",
        "gpu": summary.get("gpu") or "",
        "nccl_version": summary.get("nccl_version") or "",
        "hosts": (summary["host"],) if summary.get("host") else (),
    }
    out = []
    step = summary.get("step_mean_us")
    if step:
        point = EvidencePoint("step_time_ms", "ms", "lower", float(step) / 1000.0)
        out.append(EvidenceRun(benchmark, "step_time", (point,), **common))
    idle = summary.get("idle_pct")
    if idle is not None and not summary.get("cpu_only"):
        point = EvidencePoint("gpu_idle_pct", "%", "lower", float(idle))
        out.append(EvidenceRun(benchmark, "gpu_idle", (point,), **common))
    return out


# ------------------------------------------------------------------------------ counters

# Derived rates (artifacts.fabric.rates) that describe how well a fabric does its job.
_SUMMED = re.compile(r"^(tx|rx)_(rdma|vport|port)?_?\w*gbps$")
_MAXED = re.compile(r"(pause_duration_pct|ecn_marked_share_pct)$")


def counter_runs(
    rates: Iterable[Mapping[str, Any]], *, host: str, measured_at: str | None = None
) -> list[EvidenceRun]:
    """Per host: goodput summed over ports (higher is better) and the worst pause / ECN
    share of any port (lower is better), for the artifact's latest snapshot pair."""
    sums: dict[str, float] = {}
    maxes: dict[str, float] = {}
    units: dict[str, str] = {}
    for r in rates:
        counter, value = str(r["counter"]), r.get("value")
        if value is None or r.get("flag"):
            continue
        if r.get("unit") == "Gb/s" and _SUMMED.match(counter):
            sums[counter] = sums.get(counter, 0.0) + float(value)
        elif _MAXED.search(counter):
            maxes[counter] = max(maxes.get(counter, 0.0), float(value))
        else:
            continue
        units[counter] = str(r.get("unit") or "")
    # One series per host: the host is part of the benchmark name (fabric:h200-r07n03).
    benchmark = _slug(f"{COUNTERS}:{host}" if host else COUNTERS)
    hosts = (host,) if host else ()
    out = []
    for counter, total in sorted(sums.items()):
        point = EvidencePoint(counter, units[counter], "higher", total)
        out.append(EvidenceRun(benchmark, _slug(counter), (point,), hosts=hosts))
    for counter, worst in sorted(maxes.items()):
        point = EvidencePoint(counter, units[counter], "lower", worst)
        out.append(EvidenceRun(benchmark, _slug(counter), (point,), hosts=hosts))
    return [replace(r, measured_at=measured_at) for r in out]


# ------------------------------------------------------------------------------- metrics


def metrics_runs(result: Any) -> list[EvidenceRun]:
    """One run per benchmark x metric (x context) of a metrics upload; sizes are its curve."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for r in result.records:
        context = (r.measured_at, r.host, r.hosts, r.profile, r.gpu, r.nranks, r.nnodes)
        stack = (tuple(sorted(r.stack.items())), tuple(sorted(r.env.items())))
        key = (r.benchmark, r.metric, *context, *stack)
        groups.setdefault(key, []).append(r)
    out = []
    for records in groups.values():
        first = records[0]
        points = tuple(
            EvidencePoint(
                r.metric, r.unit, r.direction, r.value, r.size_bytes, r.resolution, len(r.values)
            )
            for r in sorted(records, key=lambda r: r.size_bytes)
        )
        metadata: dict[str, Any] = {**first.stack, **first.env}
        if first.profile:
            metadata["profile"] = first.profile
        hosts = first.hosts or ((first.host,) if first.host else ())
        out.append(
            EvidenceRun(
                benchmark=first.benchmark,
                collective=first.metric,
                points=points,
                nranks=first.nranks,
                nhosts=first.nnodes or (len(set(hosts)) if hosts else None),
                gpu=first.gpu or "",
                nccl_version=first.stack.get("nccl", ""),
                hosts=hosts,
                measured_at=first.measured_at,
                metadata=metadata,
            )
        )
    return out
