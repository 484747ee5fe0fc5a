"""A fleet's years of nightly nccl-tests sweeps, bulk-loaded: ten million measurements.

``manage.py seed_demo --measurements 10000000`` (``load_fleet``) writes, for a fleet of
hardware profiles (H100/H200/B200 nodes on NVLink, RoCE and InfiniBand, one to four nodes),
every nccl-tests collective (all_reduce, all_gather, reduce_scatter, alltoall, broadcast,
reduce, sendrecv, gather, scatter) swept from 8 B to 16 GiB every night, for as many nights
as it takes to reach the asked number of measurement rows (36 profiles: ~2.7 years for 10
million). The software stack moves through the seven releases of ``demo_history.STACKS``
(each cluster upgrades a few nights apart), and the history holds real changes:

* NCCL 2.23.4 costs all_reduce ~8 % from 256 MiB on every RoCE cluster; 2.25.1 fixes it;
* NCCL 2.20.5 (with its kernel and OFED) costs alltoall and sendrecv ~10 % from 1 MiB on
  every InfiniBand cluster, for good;
* NCCL 2.26.2 gains reduce_scatter ~6 % from 64 MiB on NVSwitch nodes;
* driver 570.86.15 (the 2.25.1 stack) costs all_gather, broadcast, gather and scatter ~7 %
  from 16 MiB on NVSwitch nodes; 570.124.06 (the next stack) brings them back;
* on every cluster a link flaps for six nights (-6 % on large messages, then back);
* alltoall on InfiniBand switches algorithms from run to run from NCCL 2.25.1 (variance);
* single bad runs (outliers, no alert) and ~0.5 % of runs dying mid-sweep.

Each profile-night is one stored artifact (gzip) holding the real nccl-tests text, so
download and re-parse give the stored numbers. Rows go in through PostgreSQL ``COPY`` (the
printed numbers are written as they are printed, so the database holds exactly what the
text says); artifacts and runs through ``bulk_create`` in batches of a few hundred nights.
Filing is done in bulk (every series exists before the first point), then the per-series
statistics, comparisons at every stack change and change-point detection on every series
run once, as ``demo_history`` does for its smaller history.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone

from artifacts.models import Artifact, BenchmarkRun, Measurement, RunRank
from artifacts.runs.demo import CollectiveModel
from artifacts.runs.demo import HardwareProfile as DemoProfile
from artifacts.runs.partitions import ensure_partitions
from baselines.demo_history import (
    STACKS,
    START,
    RunPlan,
    Stats,
    _avg,
    _rows,
    _text,
    evaluate_history,
    semantics_of,
)
from baselines.filing import identity, series_for, series_refresh_stats, stack_get_or_create
from baselines.models import (
    HardwareProfile,
    HostProfileMapping,
    RunContext,
    SeriesPoint,
)
from baselines.versions import version_key
from hardware.gpus import gpu_generation

LABEL = "fleet-history"
MiB = 1024 * 1024
GiB = 1024 * MiB
COLLECTIVES = (
    "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce",
    "sendrecv", "gather", "scatter",
)  # fmt: skip
DEFAULT_PROFILES = 24
NIGHTS_PER_BATCH = 240  # profile-nights per transaction: ~70,000 measurement rows


@dataclass(frozen=True)
class Template:
    """A kind of cluster: what its nodes are and how fast each collective runs on it."""

    prefix: str
    description: str
    gpu_name: str
    gpu_model: str
    nodes: int
    fabric: str  # HardwareProfile.Fabric value
    nic_model: str
    bus_ids: tuple[str, ...]
    # collective -> (plateau busbw GB/s, latency us, knee bytes)
    speeds: dict[str, tuple[float, float, int]]


_NVS_H100 = {
    "all_reduce": (480.0, 11.0, 3 * MiB), "all_gather": (362.0, 10.0, 3 * MiB),
    "reduce_scatter": (358.0, 10.5, 3 * MiB), "alltoall": (342.0, 14.0, 4 * MiB),
    "broadcast": (352.0, 9.5, 2 * MiB), "reduce": (350.0, 9.8, 2 * MiB),
    "sendrecv": (368.0, 7.5, 2 * MiB), "gather": (330.0, 12.0, 3 * MiB),
    "scatter": (332.0, 12.0, 3 * MiB),
}  # fmt: skip
_ROCE_H200 = {
    "all_reduce": (358.0, 27.0, 6 * MiB), "all_gather": (338.0, 22.0, 6 * MiB),
    "reduce_scatter": (333.0, 23.0, 6 * MiB), "alltoall": (84.0, 38.0, 8 * MiB),
    "broadcast": (300.0, 20.0, 4 * MiB), "reduce": (298.0, 21.0, 4 * MiB),
    "sendrecv": (45.5, 16.0, 2 * MiB), "gather": (80.0, 30.0, 8 * MiB),
    "scatter": (81.0, 30.0, 8 * MiB),
}  # fmt: skip
_IB_H100 = {
    "all_reduce": (385.0, 45.0, 12 * MiB), "all_gather": (356.0, 50.0, 12 * MiB),
    "reduce_scatter": (351.0, 52.0, 12 * MiB), "alltoall": (44.0, 120.0, 16 * MiB),
    "broadcast": (320.0, 40.0, 8 * MiB), "reduce": (318.0, 42.0, 8 * MiB),
    "sendrecv": (46.0, 18.0, 2 * MiB), "gather": (43.0, 110.0, 16 * MiB),
    "scatter": (43.5, 110.0, 16 * MiB),
}  # fmt: skip
TEMPLATES: tuple[Template, ...] = (
    Template("h100-nvs", "1 node x 8 H100 SXM, NVLink 4 / NVSwitch", "NVIDIA H100 80GB HBM3",
             "H100", 1, "nvlink", "", ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db"),
             _NVS_H100),
    Template("h200-roce", "2 nodes x 8 H200, 8x ConnectX-7 400G RoCE v2", "NVIDIA H200",
             "H200", 2, "roce_v2", "ConnectX-7", ("19", "3b", "4c", "5d", "9b", "bb", "cb", "db"),
             _ROCE_H200),
    Template("h100-ib", "4 nodes x 8 H100 SXM, 8x ConnectX-7 NDR 400G InfiniBand",
             "NVIDIA H100 80GB HBM3", "H100", 4, "infiniband", "ConnectX-7 NDR",
             ("1b", "29", "45", "5a", "9c", "ad", "c4", "de"), _IB_H100),
    Template("b200-nvs", "1 node x 8 B200, NVLink 5 / NVSwitch", "NVIDIA B200", "B200", 1,
             "nvlink", "", ("17", "2a", "3b", "5c", "9b", "ab", "bb", "db"),
             {k: (v[0] * 1.7, v[1] * 0.9, v[2]) for k, v in _NVS_H100.items()}),
    Template("h200-ib", "2 nodes x 8 H200, 8x ConnectX-7 NDR 400G InfiniBand", "NVIDIA H200",
             "H200", 2, "infiniband", "ConnectX-7 NDR",
             ("19", "3b", "4c", "5d", "9b", "bb", "cb", "db"),
             {k: (v[0] * 1.04, v[1] * 0.8, v[2]) for k, v in _IB_H100.items()}),
)  # fmt: skip


@dataclass(frozen=True)
class FleetProfile:
    demo: DemoProfile  # what demo_history's renderer reads (hosts, GPUs, sweep)
    template: Template
    lag: int  # nights after the fleet's upgrade day this cluster upgrades
    dip_start: int | None  # first night of its flapping link, if it has one


def fleet(profiles: int, nights: int, seed: int) -> list[FleetProfile]:
    """``profiles`` clusters cycling through the templates, each a little faster or slower."""
    rng = random.Random(f"{seed}|fleet")
    out = []
    for k in range(profiles):
        template = TEMPLATES[k % len(TEMPLATES)]
        index = k // len(TEMPLATES) + 1
        speed = rng.uniform(0.97, 1.03)
        slug = f"{template.prefix}-{template.nodes}x8-c{index:02d}"
        hosts = tuple(
            f"{template.prefix}-c{index:02d}n{n:02d}" for n in range(1, template.nodes + 1)
        )
        demo = DemoProfile(
            slug=slug,
            cluster=f"{template.prefix}-c{index:02d}",
            description=template.description,
            gpu_name=template.gpu_name,
            hosts=hosts,
            gpus_per_node=8,
            bus_ids=template.bus_ids,
            dtype="float",
            min_bytes=8,
            max_bytes=16 * GiB,
            warmup_iters=5,
            iters=20,
            nccl_debug="",
            oob_prefix="10.0",
            collectives=tuple(
                CollectiveModel(name, plateau * speed, latency, knee)
                for name, (plateau, latency, knee) in template.speeds.items()
            ),
        )
        # Every cluster sees a six-night flapping link somewhere in its newest 400 nights
        # (change-point detection reads a series' newest 500 points).
        dip = rng.randrange(max(1, nights - 400), max(2, nights - 20))
        out.append(FleetProfile(demo, template, lag=(k * 3) % 10, dip_start=dip))
    return out


# The NCCL release of each stack, as sortable keys (computed once: _loss runs per row).
_NCCL_KEYS = [version_key(s["nccl"]) for s in STACKS]
_V = {v: version_key(v) for v in ("2.20.5", "2.23.4", "2.25.1", "2.26.2")}
# The collectives driver 570.86.15 slows down on NVSwitch nodes (the copy-engine paths).
_DRIVER_HIT = frozenset({"all_gather", "broadcast", "gather", "scatter"})


def _loss(plan: RunPlan, size: int) -> float:
    """Bandwidth lost (or gained, negative) to a software change, by template and stack."""
    fabric = plan.profile.slug.split("-")[1]  # nvs, roce, ib
    nccl = _NCCL_KEYS[plan.stack_index]
    if plan.collective == "all_reduce" and fabric == "roce" and _V["2.23.4"] <= nccl < _V["2.25.1"]:
        return 0.08 / (1.0 + math.exp(-3.0 * (math.log2(size) - 27)))  # from ~256 MiB
    ib_pair = plan.collective in ("alltoall", "sendrecv") and fabric == "ib"
    if ib_pair and size >= MiB and nccl >= _V["2.20.5"]:
        return 0.10
    nvs_gain = plan.collective == "reduce_scatter" and fabric == "nvs" and size >= 64 * MiB
    if nvs_gain and nccl >= _V["2.26.2"]:
        return -0.06
    driver_hit = plan.collective in _DRIVER_HIT and fabric == "nvs" and size >= 16 * MiB
    if driver_hit and _V["2.25.1"] <= nccl < _V["2.26.2"]:  # the stack with driver 570.86.15
        return 0.07
    return 0.0


def _plans(profile: FleetProfile, night: int, nights: int, rng: random.Random) -> list[RunPlan]:
    lagged = max(0, night - profile.lag)
    stack_index = min(len(STACKS) - 1, lagged * len(STACKS) // nights)
    bimodal = profile.template.fabric == "infiniband" and _NCCL_KEYS[stack_index] >= _V["2.25.1"]
    plans = []
    for collective in COLLECTIVES:
        factor = 1.0
        if profile.dip_start is not None and profile.dip_start <= night < profile.dip_start + 6:
            factor *= 0.94
        if bimodal and collective == "alltoall" and rng.random() < 0.5:
            factor *= 0.95
        if rng.random() < 1 / 300:
            factor *= 0.80
        plans.append(
            RunPlan(profile.demo, collective, night, stack_index, factor, rng.random() < 0.005)
        )
    return plans


def measurements_per_night(profiles: list[FleetProfile]) -> int:
    """Rows one night of the whole fleet writes (failures aside)."""
    from baselines.demo_history import _sizes

    return sum(len(_sizes(p.demo, c)) for p in profiles for c in COLLECTIVES)


# ----------------------------------------------------------------------------- row writers


class _Copy:
    """Rows for one table, written with ``COPY ... FROM STDIN`` on PostgreSQL (text format:
    tab-separated, ``\\N`` for NULL) and ``executemany`` elsewhere (tests on SQLite)."""

    def __init__(self, model: type[Model], fields: list[str]) -> None:
        quote = connection.ops.quote_name
        self.table = quote(model._meta.db_table)
        self.columns = ", ".join(quote(model._meta.get_field(f).column) for f in fields)
        self.width = len(fields)
        self.lines: list[str] = []
        self.rows = 0

    def add(self, line: str) -> None:
        """One row: its values already joined by tabs (no newline)."""
        self.lines.append(line)

    def flush(self) -> None:
        if not self.lines:
            return
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                with cursor.cursor.copy(f"COPY {self.table} ({self.columns}) FROM STDIN") as copy:
                    for start in range(0, len(self.lines), 20_000):
                        copy.write("\n".join(self.lines[start : start + 20_000]) + "\n")
            else:
                marks = ", ".join(["%s"] * self.width)
                cursor.executemany(
                    f"INSERT INTO {self.table} ({self.columns}) VALUES ({marks})",
                    [[None if v == "\\N" else v for v in line.split("\t")] for line in self.lines],
                )
        self.rows += len(self.lines)
        self.lines.clear()


def _when(value: Any) -> str:
    if connection.vendor == "postgresql":
        return value.isoformat(sep=" ")
    return connection.ops.adapt_datetimefield_value(value)


# --------------------------------------------------------------------------------- loading


def load_fleet_command(
    *, measurements: int, profiles: int, seed: int, uploader: Any, write: Callable[[str], None]
) -> None:
    """What ``manage.py seed_demo --measurements N`` does (the command only delegates here)."""
    from django.core.management.base import CommandError

    clock = time.perf_counter()
    try:
        stats = load_fleet(
            measurements=measurements, profiles=profiles, seed=seed, uploader=uploader, log=write
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    write(
        f"History: {stats.runs} runs ({stats.measurements} measurements, {stats.ranks} ranks) "
        f"in {stats.artifacts} artifacts; {stats.points} series points, {stats.comparisons} "
        f"comparisons, {stats.alerts} alerts in {stats.summaries} summaries; "
        f"{time.perf_counter() - clock:.0f} s in all: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in stats.seconds.items())
    )


def load_fleet(
    *,
    measurements: int = 10_000_000,
    profiles: int = DEFAULT_PROFILES,
    seed: int = 7,
    uploader: Any = None,
    log: Callable[[str], None] = print,
) -> Stats:
    """Load the fleet history (module docstring); refuses to load it twice."""
    if measurements < 1 or profiles < 1:
        raise ValueError("measurements and profiles must be >= 1")
    if Artifact.objects.filter(label=LABEL).exists():
        raise ValueError(
            f"a fleet history is already loaded (artifacts labelled {LABEL!r}); "
            "use a fresh database"
        )
    stats = Stats()
    clock = time.perf_counter()
    probe = fleet(profiles, 1000, seed)
    # ~0.5 % of runs die a third of the way through their sweep: 1 % margin so the table
    # holds at least the rows asked for (without it 10,000,000 came out as 9,986,296)
    nights = max(1, math.ceil(measurements / (measurements_per_night(probe) * 0.99)))
    members = fleet(profiles, nights, seed)
    log(f"  {profiles} profiles x {len(COLLECTIVES)} collectives x {nights} nights")
    db_profiles = _ensure_profiles(members)
    stacks = [stack_get_or_create(versions=s, nccl_env={}) for s in STACKS]
    series = _ensure_series(members, db_profiles)
    keys = [(night, p) for night in range(nights) for p in range(len(members))]
    # every month the history spans has its measurement partition before the first COPY
    # (PostgreSQL): rows go straight to their month, none wait in the default partition
    made = ensure_partitions(since=START, until=START + timedelta(days=nights + 1))
    if made:
        log(f"  {len(made)} monthly measurement partitions made")
    rng = random.Random(f"{seed}|fleet-nights")
    with _bulk_session(), _without_secondary_structures(BULK_MODELS, log):
        for start in range(0, len(keys), NIGHTS_PER_BATCH):
            with transaction.atomic():
                _load_batch(
                    [
                        (members[p], night, _plans(members[p], night, nights, rng))
                        for night, p in keys[start : start + NIGHTS_PER_BATCH]
                    ],
                    db_profiles, stacks, series, seed, uploader, stats,
                )  # fmt: skip
            if (start // NIGHTS_PER_BATCH) % 40 == 0:
                log(
                    f"  {stats.runs} runs, {stats.measurements} measurements "
                    f"({time.perf_counter() - clock:.0f} s)"
                )
        stats.seconds["rows"] = time.perf_counter() - clock
    stats.seconds["load"] = time.perf_counter() - clock
    clock = time.perf_counter()
    series_ids = {pk for sizes in series.values() for pk in sizes.values()}
    ordered = sorted(series_ids)
    for start in range(0, len(ordered), 500):  # small batches: bulk_update is one CASE per row
        series_refresh_stats(ordered[start : start + 500])
    _analyze()
    stats.seconds["series statistics"] = time.perf_counter() - clock
    evaluate_history(LABEL, series_ids, stats)
    return stats


# The big tables: their secondary indexes, unique and foreign-key constraints are dropped
# for the load and made again once at the end (a sorted index build and one validating join
# each), instead of being maintained, and checked by a trigger, row by row.
BULK_MODELS: tuple[type[Model], ...] = (RunRank, Measurement, RunContext, SeriesPoint)


@contextmanager
def _bulk_session() -> Iterator[None]:
    """Session settings for a bulk load on PostgreSQL: commits need not wait for the disk (a
    crash loses the last batches, never consistency) and index builds get memory to sort."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit = off")
        cursor.execute("SET maintenance_work_mem = '512MB'")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET synchronous_commit")
            cursor.execute("RESET maintenance_work_mem")


@contextmanager
def _without_secondary_structures(
    models: tuple[type[Model], ...], log: Callable[[str], None]
) -> Iterator[None]:
    """Drop the tables' indexes (not the primary keys) and unique/foreign-key constraints,
    and restore exactly what was there afterwards, whatever happens in between. Inside a
    transaction (tests) the tables are left as they are: DDL there would wait on the
    transaction's own deferred constraint checks."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield
        return
    quote = connection.ops.quote_name
    saved: list[tuple[str, str, str, str]] = []  # (kind, table, name, definition)
    with connection.cursor() as cursor:
        for model in models:
            table = model._meta.db_table
            cursor.execute(
                "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conrelid = %s::regclass AND contype IN ('u', 'f')",
                [table],
            )
            constraints = cursor.fetchall()
            cursor.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
                "AND tablename = %s AND indexname NOT IN "
                "(SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass)",
                [table, table],
            )
            indexes = cursor.fetchall()
            for name, kind, definition in constraints:
                cursor.execute(f"ALTER TABLE {quote(table)} DROP CONSTRAINT {quote(name)}")
                saved.append((kind, table, name, definition))
            for name, definition in indexes:
                cursor.execute(f"DROP INDEX {quote(name)}")
                saved.append(("i", table, name, definition))
    try:
        yield
    finally:
        clock = time.perf_counter()
        order = {"i": 0, "u": 1, "f": 2}  # indexes first: the FK checks use them
        with connection.cursor() as cursor:
            for kind, table, name, definition in sorted(saved, key=lambda s: order[s[0]]):
                if kind == "i":
                    # a partitioned table's index reads "ON ONLY parent": made that way it
                    # would cover no partition (and stay invalid); without ONLY it covers all
                    cursor.execute(definition.replace(" ON ONLY ", " ON ", 1))
                else:
                    cursor.execute(
                        f"ALTER TABLE {quote(table)} ADD CONSTRAINT {quote(name)} {definition}"
                    )
        log(f"  indexes and constraints made again in {time.perf_counter() - clock:.0f} s")


def _analyze() -> None:
    """Fresh planner statistics and visibility maps for the new rows: the pages' plans depend
    on the statistics (autovacuum may not have looked at ten million new rows yet), and
    counts and index-only scans need the visibility map (VACUUM sets it)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        if connection.in_atomic_block:  # VACUUM cannot run in a transaction (tests)
            cursor.execute("ANALYZE")
            return
        for model in (Artifact, BenchmarkRun, *BULK_MODELS):
            cursor.execute(f"VACUUM ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
        cursor.execute("ANALYZE")


def _ensure_profiles(members: list[FleetProfile]) -> dict[str, HardwareProfile]:
    out = {}
    for member in members:
        t, demo = member.template, member.demo
        profile, _ = HardwareProfile.objects.update_or_create(
            slug=demo.slug,
            defaults={
                "name": f"{demo.cluster}: {t.description}"[:120],
                "gpu_model": t.gpu_model,
                "gpu_generation": gpu_generation(t.gpu_model),
                "gpus_per_node": 8,
                "nvlink": "NVLink 5 (18 links)" if t.gpu_model == "B200" else "NVLink 4 (18 links)",
                "nvswitch": True,
                "nic_model": t.nic_model,
                "nic_speed_gbps": 400 if t.nic_model else None,
                "nics_per_node": 8 if t.nic_model else None,
                "fabric": t.fabric,
                "topology_notes": f"cluster {demo.cluster}: {t.description}",
                "auto_created": False,
            },
        )
        HostProfileMapping.objects.get_or_create(
            pattern=f"{demo.cluster}n*", defaults={"profile": profile}
        )
        out[demo.slug] = profile
    return out


def _ensure_series(
    members: list[FleetProfile], db_profiles: dict[str, HardwareProfile]
) -> dict[tuple[str, str], dict[int, int]]:
    """Every series the history will fill, made before the first point (one query per
    profile): (profile slug, collective) -> {size: series id}."""
    from baselines.demo_history import _sizes

    out: dict[tuple[str, str], dict[int, int]] = {}
    for member in members:
        demo = member.demo
        wanted: dict[tuple[Any, ...], tuple[str, int]] = {}
        for collective in COLLECTIVES:
            shape = BenchmarkRun(
                benchmark="nccl-tests", collective=collective, nranks=demo.ranks, nhosts=demo.nodes
            )
            redop = semantics_of(collective).redop
            for size in _sizes(demo, collective):
                key = identity(shape, size_bytes=size, dtype="float", redop=redop)
                wanted[key] = (collective, size)
        for key, row in series_for(db_profiles[demo.slug], list(wanted)).items():
            collective, size = wanted[key]
            out.setdefault((demo.slug, collective), {})[size] = row.pk
    return out


def _rendered(
    member: FleetProfile, night: int, plans: list[RunPlan], seed: int
) -> Iterator[tuple[int, RunPlan, list[Any], str]]:
    for index, plan in enumerate(plans):
        rng = random.Random(f"{seed}|{member.demo.slug}|{night}|{plan.collective}")
        rows = _rows(plan, rng, _loss)
        text, reached = _text(plan, rows)
        yield index, plan, rows[:reached], text


def _load_batch(
    nights: list[tuple[FleetProfile, int, list[RunPlan]]],
    db_profiles: dict[str, HardwareProfile],
    stacks: list[Any],
    series: dict[tuple[str, str], dict[int, int]],
    seed: int,
    uploader: Any,
    stats: Stats,
) -> None:
    uploader = uploader if getattr(uploader, "pk", None) else None
    artifacts, rendered_nights = [], []
    for member, night, plans in nights:
        demo = member.demo
        when = START + timedelta(days=night)
        stack = STACKS[plans[0].stack_index]
        rendered = list(_rendered(member, night, plans, seed))
        raw = "".join(text for *_, text in rendered).encode("ascii")
        content = gzip.compress(raw, compresslevel=1, mtime=0)  # ~5x smaller on disk
        digest = hashlib.sha256(content).hexdigest()
        name = default_storage.save(f"artifacts/{digest[:2]}/{digest}", ContentFile(content))
        artifacts.append(
            Artifact(
                file=name,
                original_name=f"{when.date().isoformat()}_{demo.slug}_nightly.log.gz",
                sha256=digest,
                size=len(content),
                kind="nccl_tests",
                kind_detected="nccl_tests",
                status=Artifact.Status.PARSED,
                parser_version="history",
                progress_bytes=len(raw),
                progress_total=len(raw),
                parsed_at=when,
                captured_at=when,
                uploaded_by=uploader,
                label=LABEL,
                host=demo.hosts[0],
                metadata={"profile": demo.slug, "cluster": demo.cluster, **stack},
                summary={"runs": len(plans), "generated": "seed_demo --measurements"},
            )
        )
        rendered_nights.append((member, when, stack, plans[0].stack_index, rendered))
    # bulk_create skips signals: the knowledge index of artifacts is not fed generated logs
    Artifact.objects.bulk_create(artifacts, batch_size=500)
    stats.artifacts += len(artifacts)
    runs: list[BenchmarkRun] = []
    for artifact, (member, when, stack, _, rendered) in zip(
        artifacts, rendered_nights, strict=True
    ):
        demo = member.demo
        for index, plan, rows, _ in rendered:
            busbw = [float(s.busbw) for _, _, o, i in rows for s in (o, i)]
            runs.append(
                BenchmarkRun(
                    artifact=artifact, index=index, benchmark="nccl-tests",
                    collective=plan.collective, nccl_tests_version=stack["nccl_tests"],
                    nccl_version=stack["nccl"],
                    params={"minBytes": rows[0][0], "maxBytes": demo.max_bytes, "step": 2,
                            "step_kind": "factor", "warmup_iters": demo.warmup_iters,
                            "iters": demo.iters, "nThread": 1, "nGpus": 1},
                    nranks=demo.ranks, nhosts=demo.nodes, gpu=demo.gpu_name, dtype="float",
                    avg_busbw_gbps=None if plan.fail else _avg(rows),
                    max_busbw_gbps=max(busbw) if busbw else None,
                    out_of_bounds=None if plan.fail else 0,
                    complete=not plan.fail,
                    errors=["unhandled system error / Call to ibv_post_send failed"]
                    if plan.fail else [],
                    measured_at=when + timedelta(minutes=3 * index),
                )
            )  # fmt: skip
    BenchmarkRun.objects.bulk_create(runs, batch_size=2000)
    stats.runs += len(runs)

    ranks = _Copy(RunRank, ["run", "rank", "host", "device", "busid", "gpu"])
    measurements = _Copy(
        Measurement,
        ["run", "measured_at", "size_bytes", "count", "dtype", "redop", "root", "oop_time_us",
         "oop_algbw_gbps", "oop_busbw_gbps", "oop_wrong", "ip_time_us", "ip_algbw_gbps",
         "ip_busbw_gbps", "ip_wrong"],
    )  # fmt: skip
    contexts = _Copy(
        RunContext,
        ["run", "profile", "stack", "matched_by", "stack_sources", "provenance", "filed_at"],
    )
    points = _Copy(SeriesPoint, ["series", "run", "stack", "measured_at", "value"])
    filed_at = _when(timezone.now())
    sources = json.dumps({"nccl": "benchmark output"})
    # Bulk rows record only where the NCCL version came from (stack_sources); the run page
    # lists those when a run has no provenance entries. Re-filing a run writes them.
    provenance = "[]"
    run_iter = iter(runs)
    for member, _, _, stack_index, rendered in rendered_nights:
        demo = member.demo
        profile_id, stack_id = db_profiles[demo.slug].pk, stacks[stack_index].pk
        rank_tails = [
            f"{node * demo.gpus_per_node + local}\t{host}\t{local}\t"
            f"0000:{demo.bus_ids[local]}:00\t{demo.gpu_name}"
            for node, host in enumerate(demo.hosts)
            for local in range(demo.gpus_per_node)
        ]
        for _, plan, rows, _ in rendered:
            run = next(run_iter)
            pk = run.pk
            for tail in rank_tails:
                ranks.add(f"{pk}\t{tail}")
            contexts.add(
                f"{pk}\t{profile_id}\t{stack_id}\tupload metadata profile\t{sources}\t"
                f"{provenance}\t{filed_at}"
            )
            semantics = semantics_of(plan.collective)
            ip_wrong = "0" if semantics.in_place_checked else "\\N"
            at = _when(run.measured_at)
            head = f"{pk}\t{at}\t"  # the run's time: the partition key of the measurements
            middle = f"\tfloat\t{semantics.redop}\t{semantics.root}\t"
            series_of_size = series[(demo.slug, plan.collective)]
            for size, count, oop, ip in rows:
                # the printed strings themselves: the database parses them as the parser does
                measurements.add(
                    f"{head}{size}\t{count}{middle}{oop.time.strip()}\t{oop.algbw.strip()}\t"
                    f"{oop.busbw.strip()}\t0\t{ip.time.strip()}\t{ip.algbw.strip()}\t"
                    f"{ip.busbw.strip()}\t{ip_wrong}"
                )
                if not plan.fail:
                    points.add(
                        f"{series_of_size[size]}\t{pk}\t{stack_id}\t{at}\t{oop.busbw.strip()}"
                    )
    for table in (ranks, contexts, measurements, points):
        table.flush()
    stats.ranks += ranks.rows
    stats.measurements += measurements.rows
    stats.points += points.rows
