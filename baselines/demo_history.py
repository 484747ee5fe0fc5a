"""A long, realistic benchmark history for demos and for the page-speed benchmark.

``seed_history(runs=10_000)`` writes ~``runs`` nccl-tests runs (≈ 29 message sizes each:
≈ 290,000 measurement rows) for the three demo clusters of ``artifacts.runs.demo``:
every night each profile runs all its collectives; the software stack moves through seven
NCCL releases (with CUDA, driver, kernel, OFED/DOCA and NIC-firmware changes along the way),
and the history holds the events a regression tracker must find:

* NCCL 2.23.4 loses ~8 % all_reduce busbw from 256 MiB on ``h200-roce-2x8`` (the demo's
  regression); NCCL 2.25.1 brings it back (an improvement);
* six nights of a flapping link on ``ib-h100-16x8``: -6 % on every large message, then back
  (a short regression with no software change);
* from NCCL 2.25.1, ``ib-h100-16x8`` alltoall switches algorithms from run to run: -5 % on
  every other run at large sizes (a variance change, not a step);
* rare single bad runs (a noisy neighbour, -20 %) - outliers, which must not alert - and
  ~0.5 % of runs dying mid-sweep with an NCCL error.

Each profile-night is one stored artifact holding the real nccl-tests text of its runs (so
download and re-parse work); the database rows are bulk-inserted with exactly the numbers
that text prints, instead of being parsed file by file, so 10,000 runs load in about a minute
on PostgreSQL. Filing, comparisons at every stack change, change-point detection on every
series and the alert summaries are then computed once, in bulk. Deterministic for a seed.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone

from artifacts.models import Artifact, BenchmarkRun, Measurement, RunRank
from artifacts.runs.demo import PROFILES, REGRESSION, SEMANTICS, Semantics
from artifacts.runs.demo import HardwareProfile as DemoProfile
from artifacts.runs.partitions import ensure_partitions
from baselines.alerting import Collector, alerts_from_comparison, history_scan, summaries_refresh
from baselines.comparing import comparison_refresh
from baselines.filing import identity, series_for, series_refresh_stats, stack_get_or_create
from baselines.models import (
    Alert,
    AlertSummary,
    HardwareProfile,
    HostProfileMapping,
    RunContext,
    SeriesPoint,
)
from baselines.versions import version_key
from hardware.gpus import gpu_generation

LABEL = "history"
MiB = 1024 * 1024
GiB = 1024 * MiB
START = datetime(2024, 1, 8, 2, 0, tzinfo=UTC)
_DTYPE_BYTES = 4  # float, as the demo clusters' job scripts use

# The collectives nccl-tests has beyond the short demo's six (the fleet history of
# baselines.bulk_history runs them all): reduce to a root, gather to and scatter from one.
EXTRA_SEMANTICS: dict[str, Semantics] = {
    "reduce": Semantics("sum", 0, False, True, "one"),
    "gather": Semantics("none", 0, True, True, "ring"),
    "scatter": Semantics("none", 0, True, True, "ring"),
}


def semantics_of(collective: str) -> Semantics:
    return SEMANTICS.get(collective) or EXTRA_SEMANTICS[collective]


def bus_factor(collective: str, nranks: int) -> float:
    """busbw / algbw, as nccl-tests' GetBw functions define it (every collective)."""
    kind = semantics_of(collective).factor_kind
    if kind == "allreduce":
        return 2.0 * (nranks - 1) / nranks
    if kind == "ring":
        return (nranks - 1) / nranks
    return 1.0


# The software history: each stack replaces the previous one after an equal share of nights.
STACKS: tuple[dict[str, str], ...] = (
    {"nccl": "2.18.5", "cuda": "12.2", "driver": "535.129.03", "kernel": "5.15.0-91-generic",
     "ofed": "MLNX_OFED 23.10-1.1.9", "nic_firmware": "28.39.1002", "nccl_tests": "2.13.8"},
    {"nccl": "2.19.3", "cuda": "12.3", "driver": "545.23.08", "kernel": "5.15.0-91-generic",
     "ofed": "MLNX_OFED 23.10-1.1.9", "nic_firmware": "28.39.1002", "nccl_tests": "2.13.9"},
    {"nccl": "2.20.5", "cuda": "12.4", "driver": "550.54.15", "kernel": "5.15.0-105-generic",
     "ofed": "MLNX_OFED 24.01-0.3.3", "nic_firmware": "28.40.1000", "nccl_tests": "2.13.9"},
    {"nccl": "2.21.5", "cuda": "12.4", "driver": "550.90.07", "kernel": "5.15.0-105-generic",
     "ofed": "MLNX_OFED 24.01-0.3.3", "nic_firmware": "28.40.1000", "nccl_tests": "2.17.6"},
    {"nccl": "2.23.4", "cuda": "12.6", "driver": "560.35.03", "kernel": "5.15.0-105-generic",
     "ofed": "MLNX_OFED 24.07-0.6.1", "nic_firmware": "28.41.1000", "nccl_tests": "2.17.8"},
    {"nccl": "2.25.1", "cuda": "12.8", "driver": "570.86.15", "kernel": "6.8.0-51-generic",
     "ofed": "DOCA 2.9.1", "nic_firmware": "28.43.1014", "nccl_tests": "2.17.8"},
    {"nccl": "2.26.2", "cuda": "12.8", "driver": "570.124.06", "kernel": "6.8.0-51-generic",
     "ofed": "DOCA 2.9.1", "nic_firmware": "28.43.1014", "nccl_tests": "2.17.9"},
)  # fmt: skip
# Profiles upgrade a few nights apart, as clusters do.
UPGRADE_LAG_NIGHTS = {"h100-nvs-1x8": 0, "h200-roce-2x8": 2, "ib-h100-16x8": 5}
FIX_NCCL = "2.25.1"  # the release that brings the h200 all_reduce back
BIMODAL_FROM_NCCL = "2.25.1"

# What the demo generator's profiles are, in the words a profile page uses.
PROFILE_FACTS: dict[str, dict[str, Any]] = {
    "h100-nvs-1x8": {"gpu_model": "H100", "nvlink": "NVLink 4 (18 links)", "nvswitch": True,
                     "nic_model": "", "fabric": "nvlink", "host_pattern": "h100-a*"},
    "h200-roce-2x8": {"gpu_model": "H200", "nvlink": "NVLink 4 (18 links)", "nvswitch": True,
                      "nic_model": "ConnectX-7", "nic_speed_gbps": 400, "nics_per_node": 8,
                      "fabric": "roce_v2", "host_pattern": "h200-r07n*"},
    "ib-h100-16x8": {"gpu_model": "H100", "nvlink": "NVLink 4 (18 links)", "nvswitch": True,
                     "nic_model": "ConnectX-7 NDR", "nic_speed_gbps": 400, "nics_per_node": 8,
                     "fabric": "infiniband", "host_pattern": "ib-h100-n*"},
}  # fmt: skip


@dataclass(frozen=True)
class RunPlan:
    profile: DemoProfile
    collective: str
    night: int
    stack_index: int
    factor: float = 1.0  # multiplies large-message bandwidth (dips, spikes, bimodal)
    fail: bool = False


@dataclass
class Stats:
    artifacts: int = 0
    runs: int = 0
    measurements: int = 0
    ranks: int = 0
    points: int = 0
    comparisons: int = 0
    alerts: int = 0
    summaries: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


# ------------------------------------------------------------------------------- planning


def _plans(runs: int, seed: int) -> list[RunPlan]:
    per_night = sum(len(p.collectives) for p in PROFILES)
    nights = max(1, math.ceil(runs / per_night))
    rng = random.Random(f"{seed}|history")
    # Half-way between two upgrades of ib-h100 (they come every nights/len(STACKS) nights), so
    # the dip is not mistaken for what an upgrade did.
    dip_start = UPGRADE_LAG_NIGHTS["ib-h100-16x8"] + int(nights * 2.5 / len(STACKS)) - 3
    plans: list[RunPlan] = []
    for night in range(nights):
        for profile in PROFILES:
            lagged = max(0, night - UPGRADE_LAG_NIGHTS.get(profile.slug, 0))
            stack_index = min(len(STACKS) - 1, lagged * len(STACKS) // nights)
            for model in profile.collectives:
                if len(plans) >= runs:
                    return plans
                factor = 1.0
                if profile.slug == "ib-h100-16x8" and dip_start <= night < dip_start + 6:
                    factor *= 0.94  # the flapping link
                if (
                    profile.slug == "ib-h100-16x8"
                    and model.name == "alltoall"
                    and version_key(STACKS[stack_index]["nccl"]) >= version_key(BIMODAL_FROM_NCCL)
                    and rng.random() < 0.5
                ):
                    factor *= 0.95  # the other algorithm
                if rng.random() < 1 / 300:
                    factor *= 0.80  # a noisy neighbour, one run only
                plans.append(
                    RunPlan(profile, model.name, night, stack_index, factor, rng.random() < 0.005)
                )
    return plans


# --------------------------------------------------------------------------------- physics


# The nightly history job of every cluster sweeps from 8 B (the short demo's ib-h100 job
# starts at 1 MiB): 10,000 runs are then ~300,000 measurement rows, as issue #5 sizes it.
HISTORY_MIN_BYTES = 8


def _sizes(profile: DemoProfile, collective: str) -> list[int]:
    minimum = min(profile.min_bytes, HISTORY_MIN_BYTES)
    if semantics_of(collective).count_per_rank:
        minimum = max(minimum, _DTYPE_BYTES * profile.ranks)
    sizes, size = [], minimum
    while size <= profile.max_bytes:
        sizes.append(size)
        size *= 2
    return sizes


def _loss(plan: RunPlan, size: int) -> float:
    """The deliberate NCCL regression (same shape as the short demo's)."""
    nccl = version_key(STACKS[plan.stack_index]["nccl"])
    if (plan.profile.slug, plan.collective) != (REGRESSION.profile, REGRESSION.collective):
        return 0.0
    if not (version_key(REGRESSION.nccl) <= nccl < version_key(FIX_NCCL)):
        return 0.0
    centre = math.log2(REGRESSION.onset_bytes) - 1
    return REGRESSION.loss / (1.0 + math.exp(-3.0 * (math.log2(size) - centre)))


# printf-style formats per (width, decimals): ~4x cheaper than nested f-string specs, and
# _fit runs six times per row (ten million rows for the fleet history).
_FORMATS = {w: tuple(f"%{w}.{d}f" for d in (2, 1, 0)) for w in (6, 7)}


def _fit(value: float, width: int) -> str:
    """As nccl-tests prints: the most decimals (2, 1, 0) that fit the column."""
    for fmt in _FORMATS[width]:
        text = fmt % value
        if len(text) <= width:
            return text
    return f"{value:{width}.1e}"


class _Side(NamedTuple):  # a tuple: cheaper to make than a frozen dataclass, read the same
    time: str
    algbw: str
    busbw: str


def _side(size: int, time_us: float, factor: float) -> _Side:
    algbw = size / (time_us * 1e3)
    return _Side(_fit(time_us, 7), _fit(algbw, 6), _fit(algbw * factor, 6))


def _rows(
    plan: RunPlan, rng: random.Random, loss_of: Callable[[RunPlan, int], float] | None = None
) -> list[tuple[int, int, _Side, _Side]]:
    """One run's rows; ``loss_of(plan, size)`` is the share of bandwidth a software change
    costs (default: the demo's NCCL 2.23.4 regression)."""
    profile, model = plan.profile, plan.profile.model(plan.collective)
    factor = bus_factor(plan.collective, profile.ranks)
    drift = 1.0 + rng.uniform(-0.008, 0.008)
    in_place = 1.0 + rng.uniform(-0.003, 0.005)
    rows = []
    for size in _sizes(profile, plan.collective):
        loss = (loss_of or _loss)(plan, size)
        if size >= 64 * MiB:
            loss = 1.0 - (1.0 - loss) * plan.factor
        peak = model.plateau_busbw / factor * (1.0 - loss)
        wire = size / (peak * 1e3)
        base = (model.latency_us + wire * (1.0 + (model.knee_bytes / size) ** 0.6)) * drift
        sigma = 0.006 if size < MiB else 0.003
        t_oop = base * (1.0 + max(-0.01, min(0.01, rng.gauss(0.0, sigma))))
        t_ip = base * in_place * (1.0 + max(-0.01, min(0.01, rng.gauss(0.0, sigma))))
        count = size // _DTYPE_BYTES
        if semantics_of(plan.collective).count_per_rank:
            count //= profile.ranks
        rows.append((size, count, _side(size, t_oop, factor), _side(size, t_ip, factor)))
    return rows


# ------------------------------------------------------------------------------- rendering


def _text(plan: RunPlan, rows: list[tuple[int, int, _Side, _Side]]) -> tuple[str, int]:
    """One run as nccl-tests prints it; returns (text, how many rows it reached)."""
    profile, stack = plan.profile, STACKS[plan.stack_index]
    semantics = semantics_of(plan.collective)
    major, minor, patch = (int(x) for x in stack["nccl"].split("."))
    code = major * 10000 + minor * 100 + patch
    lines = [
        f"# nccl-tests version {stack['nccl_tests']} nccl-headers={code} nccl-library={code}",
        f"# Collective test starting: {plan.collective}_perf",
        f"# nThread 1 nGpus 1 minBytes {rows[0][0]} maxBytes {profile.max_bytes} step: 2(factor)"
        f" warmup iters: {profile.warmup_iters} iters: {profile.iters} agg iters: 1 "
        "validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for node, host in enumerate(profile.hosts):
        for local in range(profile.gpus_per_node):
            rank = node * profile.gpus_per_node + local
            lines.append(
                f"#  Rank {rank:2d} Group  0 Pid {40000 + rank:6d} on {host:>10} device "
                f"{local:2d} [0000:{profile.bus_ids[local]}:00] {profile.gpu_name}"
            )
    lines += [
        "#",
        "#                                                              out-of-place"
        "                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong ",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
        "     (us)  (GB/s)  (GB/s)        ",
    ]
    stop = len(rows) * 2 // 3 if plan.fail else len(rows)
    for size, count, oop, ip in rows[:stop]:
        wrong_ip = "       0" if semantics.in_place_checked else "    N/A"
        lines.append(
            f"{size:12d}  {count:12d}  {'float':>8}  {semantics.redop:>6}  {semantics.root:6d}"
            f"  {oop.time}  {oop.algbw}  {oop.busbw}       0  {ip.time}  {ip.algbw}  {ip.busbw}"
            f"{wrong_ip}"
        )
    if plan.fail:
        host = profile.hosts[-1]
        lines.append(
            f"{host}: Test NCCL failure common.cu:1005 'unhandled system error (run with "
            "NCCL_DEBUG=INFO for details) / Call to ibv_post_send failed'"
        )
        return "\n".join(lines) + "\n", stop
    lines += [
        "# Out of bounds values : 0 OK",
        f"# Avg bus bandwidth    : {_avg(rows):g} ",
        "#",
        f"# Collective test concluded: {plan.collective}_perf",
        "#",
    ]
    return "\n".join(lines) + "\n", stop


# --------------------------------------------------------------------------------- loading


def _profile_fields(demo: DemoProfile) -> tuple[dict[str, Any], str]:
    facts = dict(PROFILE_FACTS.get(demo.slug, {}))
    pattern = facts.pop("host_pattern", "")
    return {
        "name": demo.description[:120],
        "gpu_generation": gpu_generation(facts.get("gpu_model", "")),
        "gpus_per_node": demo.gpus_per_node,
        "topology_notes": f"cluster {demo.cluster}: {demo.description}",
        "auto_created": False,
        **facts,
    }, pattern


def _ensure_profiles() -> dict[str, HardwareProfile]:
    profiles = {}
    for demo in PROFILES:
        fields, pattern = _profile_fields(demo)
        profile, _ = HardwareProfile.objects.update_or_create(slug=demo.slug, defaults=fields)
        if pattern:
            HostProfileMapping.objects.get_or_create(pattern=pattern, defaults={"profile": profile})
        profiles[demo.slug] = profile
    return profiles


def demo_profiles_state() -> list[HardwareProfile]:
    """The short demo's profiles, stating their GPUs and networks before its runs are filed,
    so multi-node runs show % of peak from the first screen. Idempotent and gentle: an
    existing profile only gains what it leaves blank (an editor's choices stay)."""
    out = []
    for demo in PROFILES:
        fields, _pattern = _profile_fields(demo)
        profile, created = HardwareProfile.objects.get_or_create(slug=demo.slug, defaults=fields)
        if not created:
            blank = {k: v for k, v in fields.items() if v and not getattr(profile, k)}
            if profile.fabric == HardwareProfile.Fabric.OTHER and fields.get("fabric"):
                blank["fabric"] = fields["fabric"]
            blank.pop("auto_created", None)
            if blank:
                for key, value in blank.items():
                    setattr(profile, key, value)
                profile.save(update_fields=list(blank))
        out.append(profile)
    return out


def seed_history_command(
    *, runs: int, seed: int, uploader: Any, write: Callable[[str], None]
) -> None:
    """What ``manage.py seed_demo --runs N`` does (the command only delegates here)."""
    try:
        stats = seed_history(runs=runs, seed=seed, uploader=uploader, log=write)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    write(
        f"History: {stats.runs} runs ({stats.measurements} measurements, {stats.ranks} ranks) in "
        f"{stats.artifacts} artifacts; {stats.points} series points, {stats.comparisons} "
        f"comparisons, {stats.alerts} alerts in {stats.summaries} summaries. "
        + ", ".join(f"{k} {v:.1f} s" for k, v in stats.seconds.items())
    )


def seed_history(
    *, runs: int, seed: int = 7, uploader: Any = None, log: Callable[[str], None] = print
) -> Stats:
    """Load the history (see the module docstring). Refuses to load it twice."""

    if runs < 1:
        raise ValueError("runs must be >= 1")
    if Artifact.objects.filter(label=LABEL).exists():
        raise ValueError(
            f"a history is already loaded (artifacts labelled {LABEL!r}); use a fresh database"
        )
    stats = Stats()
    clock = time.perf_counter()
    profiles = _ensure_profiles()
    stacks = [stack_get_or_create(versions=s, nccl_env={}) for s in STACKS]
    plans = _plans(runs, seed)
    nights: dict[tuple[str, int], list[RunPlan]] = defaultdict(list)
    for plan in plans:
        nights[(plan.profile.slug, plan.night)].append(plan)
    series_ids: set[int] = set()
    keys = list(nights)
    # the months the history spans get their measurement partitions before the first row
    # (PostgreSQL; otherwise the rows would wait in the default partition)
    last_night = max(plan.night for plan in plans)
    ensure_partitions(since=START, until=START + timedelta(days=last_night + 1))
    batch = 60
    for start in range(0, len(keys), batch):
        with transaction.atomic():
            for key in keys[start : start + batch]:
                _load_night(nights[key], profiles, stacks, seed, uploader, stats, series_ids)
        log(f"  {stats.runs} runs, {stats.measurements} measurements loaded")
    stats.seconds["load"] = time.perf_counter() - clock
    clock = time.perf_counter()
    series_refresh_stats(series_ids)
    evaluate_history(LABEL, series_ids, stats)
    return stats


def evaluate_history(label: str, series_ids: set[int], stats: Stats) -> None:
    """Comparisons where they say something, change points of every series, summaries:
    the detection pass over the whole history, timed."""
    clock = time.perf_counter()
    collector = Collector()
    with transaction.atomic():
        for run, context in _runs_to_compare(label):
            outcome = comparison_refresh(run=run, context=context)
            stats.comparisons += outcome.comparison is not None
            alerts_from_comparison(outcome, run=run, stack_id=context.stack_id, collector=collector)
    stats.seconds["compare"] = time.perf_counter() - clock
    clock = time.perf_counter()
    with transaction.atomic():
        history_scan(series_ids, collector=collector)
        summaries_refresh(collector.touched_summary_ids)
        # History is not news: nobody is notified about it, now or when a live run touches it.
        AlertSummary.objects.filter(notified_at__isnull=True).update(notified_at=timezone.now())
    stats.seconds["detect"] = time.perf_counter() - clock
    stats.alerts = Alert.objects.count()
    stats.summaries = AlertSummary.objects.count()


def _load_night(
    plans: list[RunPlan],
    profiles: dict[str, HardwareProfile],
    stacks: list[Any],
    seed: int,
    uploader: Any,
    stats: Stats,
    series_ids: set[int],
) -> None:
    first = plans[0]
    profile = first.profile
    when = START + timedelta(days=first.night)
    stack = STACKS[first.stack_index]
    rendered = []
    for index, plan in enumerate(plans):
        rng = random.Random(f"{seed}|{profile.slug}|{plan.night}|{plan.collective}")
        rows = _rows(plan, rng)
        text, reached = _text(plan, rows)
        rendered.append((index, plan, rows[:reached], text))
    content = "".join(text for *_, text in rendered).encode("ascii")
    digest = hashlib.sha256(content).hexdigest()
    name = default_storage.save(f"artifacts/{digest[:2]}/{digest}", ContentFile(content))
    artifact = Artifact.objects.create(
        file=name,
        original_name=f"{when.date().isoformat()}_{profile.slug}_nightly.log",
        sha256=digest,
        size=len(content),
        kind="nccl_tests",
        kind_detected="nccl_tests",
        status=Artifact.Status.PARSED,
        parser_version="history",
        progress_bytes=len(content),
        progress_total=len(content),
        parsed_at=when,
        captured_at=when,
        uploaded_by=uploader if getattr(uploader, "pk", None) else None,
        label=LABEL,
        host=profile.hosts[0],
        metadata={"profile": profile.slug, "cluster": profile.cluster, **stack},
        summary={"runs": len(plans), "generated": "seed_demo --runs"},
    )
    stats.artifacts += 1
    runs = BenchmarkRun.objects.bulk_create(
        [
            BenchmarkRun(
                artifact=artifact,
                index=index,
                benchmark="nccl-tests",
                collective=plan.collective,
                nccl_tests_version=stack["nccl_tests"],
                nccl_version=stack["nccl"],
                params={"minBytes": rows[0][0], "maxBytes": profile.max_bytes, "step": 2,
                        "step_kind": "factor", "warmup_iters": profile.warmup_iters,
                        "iters": profile.iters, "nThread": 1, "nGpus": 1},
                nranks=profile.ranks,
                nhosts=profile.nodes,
                gpu=profile.gpu_name,
                dtype="float",
                avg_busbw_gbps=None if plan.fail else _avg(rows),
                max_busbw_gbps=max(float(s.busbw) for _, _, o, i in rows for s in (o, i)),
                out_of_bounds=None if plan.fail else 0,
                complete=not plan.fail,
                errors=["unhandled system error / Call to ibv_post_send failed"]
                if plan.fail
                else [],
                measured_at=when + timedelta(minutes=3 * index),
            )
            for index, plan, rows, _ in rendered
        ]
    )  # fmt: skip
    stats.runs += len(runs)
    _insert_rows(
        RunRank,
        ["run", "rank", "host", "device", "busid", "gpu"],
        [
            (
                run.pk,
                node * profile.gpus_per_node + local,
                host,
                local,
                f"0000:{profile.bus_ids[local]}:00",
                profile.gpu_name,
            )
            for run in runs
            for node, host in enumerate(profile.hosts)
            for local in range(profile.gpus_per_node)
        ],
    )
    stats.ranks += len(runs) * profile.ranks
    measurements = []
    for run, (_, plan, rows, _) in zip(runs, rendered, strict=True):
        semantics = semantics_of(plan.collective)
        ip_wrong = 0 if semantics.in_place_checked else None
        at = _db_datetime(run.measured_at)  # the partition key, copied from the run
        for size, count, oop, ip in rows:
            measurements.append(
                (run.pk, at, size, count, "float", semantics.redop, semantics.root,
                 float(oop.time), float(oop.algbw), float(oop.busbw), 0, float(ip.time),
                 float(ip.algbw), float(ip.busbw), ip_wrong)
            )  # fmt: skip
    _insert_rows(
        Measurement,
        ["run", "measured_at", "size_bytes", "count", "dtype", "redop", "root", "oop_time_us",
         "oop_algbw_gbps", "oop_busbw_gbps", "oop_wrong", "ip_time_us", "ip_algbw_gbps",
         "ip_busbw_gbps", "ip_wrong"],
        measurements,
    )  # fmt: skip
    stats.measurements += len(measurements)
    # Filing, as baselines.filing does it for one run, for the whole night at once.
    db_profile, db_stack = profiles[profile.slug], stacks[first.stack_index]
    RunContext.objects.bulk_create(
        [
            RunContext(
                run=run,
                profile=db_profile,
                stack=db_stack,
                matched_by="upload metadata profile",
                stack_sources={"nccl": "benchmark output"},
            )
            for run in runs
        ]
    )
    usable = [(run, rows, plan) for run, (_, plan, rows, _) in zip(runs, rendered, strict=True)]
    usable = [u for u in usable if not u[2].fail]
    wanted = [
        identity(run, size_bytes=size, dtype="float", redop=semantics_of(plan.collective).redop)
        for run, rows, plan in usable
        for size, *_ in rows
    ]
    series = series_for(db_profile, wanted)
    points = [
        (
            series[
                identity(
                    run, size_bytes=size, dtype="float", redop=semantics_of(plan.collective).redop
                )
            ].pk,
            run.pk,
            db_stack.pk,
            _db_datetime(run.measured_at),
            float(oop.busbw),
        )
        for run, rows, plan in usable
        for size, _, oop, _ in rows
    ]
    _insert_rows(SeriesPoint, ["series", "run", "stack", "measured_at", "value"], points)
    stats.points += len(points)
    series_ids.update(s.pk for s in series.values())


def _insert_rows(model: type[Model], fields: list[str], rows: list[tuple[Any, ...]]) -> None:
    """Plain rows straight into the table: COPY on PostgreSQL, executemany elsewhere. Model
    instances cost more than the database here (300,000 rows), and nothing needs their ids."""
    if not rows:
        return
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(model._meta.get_field(f).column) for f in fields)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(fields))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)


def _db_datetime(value: datetime) -> Any:
    # SQLite stores datetimes as text in Django's own format; PostgreSQL takes them as they are.
    if connection.vendor == "postgresql":
        return value
    return connection.ops.adapt_datetimefield_value(value)


def _avg(rows: list[tuple[int, int, _Side, _Side]]) -> float:
    """The footer's "Avg bus bandwidth", as the parser reads it back (%g: 6 digits)."""
    values = [float(s.busbw) for _, _, o, i in rows for s in (o, i)]
    return float(f"{sum(values) / len(values):g}")


def _runs_to_compare(label: str = LABEL) -> list[tuple[BenchmarkRun, RunContext]]:
    """The first run of every benchmark on every new stack, and the newest run of each:
    where a comparison can say something the history does not."""
    contexts = (
        RunContext.objects.filter(run__artifact__label=label, run__errors=[])
        .select_related("run")
        .order_by("profile_id", "run__collective", "run__nranks", "run__measured_at", "run_id")
    )
    chosen: list[tuple[BenchmarkRun, RunContext]] = []
    previous: RunContext | None = None
    for context in contexts.iterator(chunk_size=2000):
        run = context.run
        same_identity = previous is not None and (
            previous.profile_id,
            previous.run.collective,
            previous.run.nranks,
        ) == (context.profile_id, run.collective, run.nranks)
        if same_identity and previous is not None and previous.stack_id != context.stack_id:
            chosen.append((run, context))
        if previous is not None and not same_identity:
            chosen.append((previous.run, previous))  # the newest run of the previous identity
        previous = context
    if previous is not None:
        chosen.append((previous.run, previous))
    return chosen
