"""Filing a parsed run: which hardware profile, which software stack, which series points.

Called inside the after-parse transaction (``baselines.services.artifact_evaluate``) and by
the bulk demo generator. Everything here is idempotent: filing a run twice leaves the same
rows as filing it once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Avg, Count, Max, OuterRef, Subquery
from django.utils.text import slugify

from artifacts.models import BenchmarkRun, JobMember
from baselines.facts import (
    PROFILE_FIELD_FACTS,
    StackFacts,
    merge_stacks,
    profile_from_facts,
    stack_facts,
    stack_from_facts,
)
from baselines.models import (
    FactDetachment,
    HardwareProfile,
    HostProfileMapping,
    RunContext,
    Series,
    SeriesPoint,
    SeriesStackStats,
    SoftwareStack,
)
from baselines.provenance.entries import run_provenance
from baselines.provenance.host_facts import RunScope, run_facts
from hardware.gpus import gpu_generation, gpu_model

METRIC = "busbw"  # nccl-tests series track out-of-place bus bandwidth (in-place if missing)
# nccl-tests prints busbw with "%6.2f": two decimals whatever the magnitude.
BUSBW_RESOLUTION = 0.01
EVIDENCE = "evidence"  # BenchmarkRun.extra key of runs made from other evidence (see evidence.py)
PROFILE_METADATA_KEYS = ("profile", "hardware_profile")


@dataclass(frozen=True)
class ProfileMatch:
    profile: HardwareProfile
    matched_by: str


def run_is_usable(run: BenchmarkRun) -> bool:
    """Failed runs (NCCL errors) are kept out of series and baselines: their numbers describe
    a broken fabric, not the stack. Truncated runs count for the sizes they reached."""
    return not run.errors


# --------------------------------------------------------------------------------- profiles


def profile_match(
    *,
    hosts: Iterable[str],
    gpu: str,
    gpus_per_node: int | None,
    metadata: Mapping[str, Any],
    mappings: list[HostProfileMapping] | None = None,
) -> ProfileMatch:
    """The profile a run belongs to, in order of how explicit the evidence is:

    1. upload metadata ``profile``: a profile slug (created when new: the uploader said so);
    2. host mappings: the profile most of the run's hosts map to (priority breaks ties);
    3. a profile whose ``gpu_match`` text is in the GPU name (several: the one with the
       run's GPUs per node, else the longest match);
    4. otherwise an automatic profile per GPU model and GPUs per node, to be edited.
    """
    for key in PROFILE_METADATA_KEYS:
        if slug := slugify(str(metadata.get(key) or ""))[:80]:
            profile = _profile_get_or_create(
                slug, defaults=_auto_profile_fields(gpu, gpus_per_node, name=slug)
            )
            return ProfileMatch(profile, f"upload metadata {key}={slug}")
    if mappings is None:
        mappings = list(HostProfileMapping.objects.select_related("profile"))
    chosen_per_host = []
    for host in set(hosts):
        hits = [m for m in mappings if m.matches(host)]
        if hits:
            chosen_per_host.append(max(hits, key=lambda m: (m.priority, len(m.pattern))))
    if chosen_per_host:
        votes = Counter(m.profile_id for m in chosen_per_host)
        mapping = max(
            chosen_per_host, key=lambda m: (votes[m.profile_id], m.priority, len(m.pattern))
        )
        return ProfileMatch(mapping.profile, f"host mapping {mapping.pattern}")
    if gpu:
        candidates = [
            p for p in HardwareProfile.objects.exclude(gpu_match="") if p.matches_gpu(gpu)
        ]
        if candidates:
            same_size = [p for p in candidates if p.gpus_per_node == gpus_per_node]
            pool = same_size or candidates
            chosen = max(pool, key=lambda p: (len(p.gpu_match), -p.pk))
            return ProfileMatch(chosen, f"GPU name contains {chosen.gpu_match!r}")
    model = gpu_model(gpu) if gpu else "unknown-gpu"
    slug = slugify(f"auto-{model}-{gpus_per_node or 'x'}gpu")[:80]
    name = f"{model} x{gpus_per_node or '?'} (automatic)"
    profile = _profile_get_or_create(slug, defaults=_auto_profile_fields(gpu, gpus_per_node, name))
    return ProfileMatch(profile, "automatic (GPU model and GPUs per node)")


def _auto_profile_fields(gpu: str, gpus_per_node: int | None, name: str) -> dict[str, Any]:
    model = gpu_model(gpu) if gpu else ""
    return {
        "name": name,
        "gpu_model": model,
        "gpu_generation": gpu_generation(model),
        "gpus_per_node": gpus_per_node,
        "auto_created": True,
    }


def _profile_get_or_create(slug: str, *, defaults: dict[str, Any]) -> HardwareProfile:
    try:
        with transaction.atomic():  # a concurrent worker may create the same slug
            return HardwareProfile.objects.get_or_create(slug=slug, defaults=defaults)[0]
    except IntegrityError:
        return HardwareProfile.objects.get(slug=slug)


# ----------------------------------------------------------------------------------- stacks


def stack_get_or_create(
    *, versions: Mapping[str, str], nccl_env: Mapping[str, str]
) -> SoftwareStack:
    """The stack row with exactly these versions and environment (made when new)."""
    clean_versions = {k: v for k, v in versions.items() if v}
    env = {str(k): str(v) for k, v in sorted(nccl_env.items())}
    fingerprint = SoftwareStack.compute_fingerprint(clean_versions, env)
    existing = SoftwareStack.objects.filter(fingerprint=fingerprint).first()
    if existing:
        return existing
    try:
        with transaction.atomic():
            stack = SoftwareStack(nccl_env=env, **clean_versions)
            stack.save()
            return stack
    except IntegrityError:
        return SoftwareStack.objects.get(fingerprint=fingerprint)


# ------------------------------------------------------------------------------------ filing


@dataclass(frozen=True)
class FiledRun:
    run: BenchmarkRun
    context: RunContext
    series_ids: tuple[int, ...]


@dataclass(frozen=True)
class Derivation:
    """What a run's evidence says it ran on and with, and where each fact came from."""

    match: ProfileMatch
    hardware: dict[str, Any]
    stack: StackFacts
    provenance: list[dict[str, Any]]
    learned_from: dict[str, str]  # profile field -> the sources of its facts


def run_scope(run: BenchmarkRun) -> RunScope:
    """The run's file, job, hosts and time: what decides which facts describe it."""
    artifact = run.artifact
    evidence = (run.extra or {}).get(EVIDENCE) or {}
    ranks = list(run.ranks.all())
    hosts = [r.host for r in ranks if r.host] or [str(h) for h in evidence.get("hosts") or []]
    hosts = hosts or ([artifact.host] if artifact.host else [])
    job_id = (
        JobMember.objects.filter(artifact_id=artifact.pk).values_list("job_id", flat=True).first()
    )
    return RunScope(artifact.pk, job_id, tuple(dict.fromkeys(hosts)), run.measured_at)


def run_derive(
    *, run: BenchmarkRun, mappings: list[HostProfileMapping] | None = None
) -> Derivation:
    """Profile and stack of a run from its own output, its upload metadata, and the facts
    that describe it (``host_facts.run_facts``: same file, same job, same host)."""
    artifact = run.artifact
    evidence = (run.extra or {}).get(EVIDENCE) or {}
    scope = run_scope(run)
    per_host = Counter(r.host for r in run.ranks.all() if r.host)
    # Evidence runs name their hosts with one rank row each: no count of GPUs there.
    gpus_per_node = max(per_host.values()) if per_host and not evidence else None
    metadata = {**(artifact.metadata or {}), **(evidence.get("metadata") or {})}
    detached = FactDetachment.objects.filter(artifact_id=artifact.pk).values_list(
        "source_id", "key"
    )
    facts = run_facts(scope, detached=list(detached))
    hardware = profile_from_facts(facts)
    gpu = run.gpu or hardware.get("gpu_name", "")
    match = profile_match(
        hosts=scope.hosts,
        gpu=gpu,
        gpus_per_node=gpus_per_node or hardware.get("gpus_per_node"),
        metadata=metadata,
        mappings=mappings,
    )
    own = stack_facts(
        {
            "nccl_version": run.nccl_version,
            "nccl_tests_version": run.nccl_tests_version,
            "env": (run.extra or {}).get("env") or {},
        },
        metadata,
    )
    merged = merge_stacks(own, stack_from_facts(facts))
    learned = {
        field: ", ".join(dict.fromkeys(f.source for f in facts if f.name in names))[:300]
        for field, names in PROFILE_FIELD_FACTS.items()
        if field in hardware
    }
    return Derivation(match, hardware, merged, run_provenance(own, facts, merged), learned)


def run_file(*, run: BenchmarkRun, mappings: list[HostProfileMapping] | None = None) -> FiledRun:
    """Give a run its profile and stack and (re)write its series points.

    What the run's own output and upload metadata do not say, the facts that describe it may
    (``host_facts``): its own file, its job's evidence, its hosts' snapshots.
    """
    derived = run_derive(run=run, mappings=mappings)
    profile_learn(derived.match.profile, derived.hardware, derived.learned_from)
    stack = stack_get_or_create(versions=derived.stack.versions, nccl_env=derived.stack.nccl_env)
    context, _ = RunContext.objects.update_or_create(
        run=run,
        defaults={
            "profile": derived.match.profile,
            "stack": stack,
            "matched_by": derived.match.matched_by[:120],
            "stack_sources": derived.stack.sources,
            "provenance": derived.provenance,
        },
    )
    series_ids = _write_points(run, derived.match.profile, stack)
    return FiledRun(run, context, series_ids)


_FILLABLE = ("gpus_per_node", "nic_model", "nic_speed_gbps", "nics_per_node", "nvlink")
# What an automatic profile may have learned from facts (and the repair may unlearn).
LEARNABLE = (*_FILLABLE[1:], "fabric")


def profile_learn(
    profile: HardwareProfile, hardware: Mapping[str, Any], sources: Mapping[str, str]
) -> None:
    """An automatic profile learns what the host facts of its runs say (blank fields only),
    and remembers where each came from; a profile someone edited is theirs and stays as
    they left it."""
    if not profile.auto_created or not hardware:
        return
    changed = [f for f in _FILLABLE if hardware.get(f) and not getattr(profile, f)]
    for name in changed:
        setattr(profile, name, hardware[name])
    if hardware.get("fabric") and profile.fabric == HardwareProfile.Fabric.OTHER:
        profile.fabric = hardware["fabric"]
        changed.append("fabric")
    if not profile.gpu_model and hardware.get("gpu_name"):
        profile.gpu_model = gpu_model(hardware["gpu_name"])
        profile.gpu_generation = gpu_generation(profile.gpu_model)
        changed += ["gpu_model", "gpu_generation"]
    if changed:
        learned = dict(profile.learned or {})
        for name in changed:
            origin = sources.get("gpu_name" if name.startswith("gpu_") else name)
            if origin:
                learned[name] = origin
        profile.learned = learned
        profile.save(update_fields=[*changed, "learned"])


@dataclass(frozen=True)
class _Point:
    key: tuple[Any, ...]
    value: float
    unit: str
    direction: str
    resolution: float


def _points_of(run: BenchmarkRun) -> list[_Point]:
    """nccl-tests: busbw per size from the measurements. Other evidence: the points the run
    carries in ``extra["evidence"]`` (perftest sizes, trace step time, metrics uploads)."""
    if not run_is_usable(run):
        return []
    evidence = (run.extra or {}).get(EVIDENCE)
    if evidence:
        points = []
        for p in evidence.get("points") or []:
            key = (
                run.benchmark,
                run.collective or "",
                run.dtype or "",
                "",
                run.nranks or 0,
                run.nhosts or 0,
                int(p.get("size_bytes") or 0),
                str(p["metric"])[:40],
            )
            points.append(
                _Point(
                    key,
                    float(p["value"]),
                    str(p.get("unit") or "")[:20],
                    "lower" if p.get("direction") == "lower" else "higher",
                    float(p.get("resolution") or 0.0),
                )
            )
        return points
    values: dict[tuple[int, str, str], float] = {}
    for m in run.measurements.all():
        value = m.oop_busbw_gbps if m.oop_busbw_gbps is not None else m.ip_busbw_gbps
        if value is not None:
            values[(m.size_bytes, m.dtype or run.dtype, m.redop)] = value
    return [
        _Point(
            identity(run, size_bytes=size, dtype=dtype, redop=redop),
            value,
            "GB/s",
            "higher",
            BUSBW_RESOLUTION,
        )
        for (size, dtype, redop), value in values.items()
    ]


def _write_points(
    run: BenchmarkRun, profile: HardwareProfile, stack: SoftwareStack
) -> tuple[int, ...]:
    """Replace the run's points; returns the series touched (old and new ones)."""
    before = set(SeriesPoint.objects.filter(run=run).values_list("series_id", flat=True))
    SeriesPoint.objects.filter(run=run).delete()
    points = list({p.key: p for p in _points_of(run)}.values())
    series = series_for(profile, [p.key for p in points], traits={p.key: p for p in points})
    SeriesPoint.objects.bulk_create(
        SeriesPoint(
            series_id=series[p.key].pk,
            run=run,
            stack=stack,
            measured_at=run.measured_at,
            value=p.value,
        )
        for p in points
    )
    touched = before | {s.pk for s in series.values()}
    series_refresh_stats(touched)
    return tuple(sorted(touched))


def identity(run: BenchmarkRun, *, size_bytes: int, dtype: str, redop: str) -> tuple[Any, ...]:
    """A series identity without the profile: benchmark, collective, dtype, redop, nranks,
    nnodes, size, metric."""
    return (
        run.benchmark or "nccl-tests",
        run.collective or "",
        dtype or "",
        redop or "",
        run.nranks or 0,
        run.nhosts or 0,
        int(size_bytes),
        METRIC,
    )


_IDENTITY_FIELDS = (
    "benchmark", "collective", "dtype", "redop", "nranks", "nnodes", "size_bytes", "metric",
)  # fmt: skip


def series_for(
    profile: HardwareProfile,
    identities: list[tuple[Any, ...]],
    traits: Mapping[tuple[Any, ...], Any] | None = None,
) -> dict[tuple[Any, ...], Series]:
    """Series rows for these identities on a profile, created when missing (order kept).

    ``traits`` gives new series their unit, direction and print resolution (an object with
    those attributes per identity); without it a series is busbw in GB/s, higher is better.
    """
    wanted = list(dict.fromkeys(identities))
    found = _existing_series(profile, wanted)
    missing = [i for i in wanted if i not in found]
    if missing:
        Series.objects.bulk_create(
            [
                Series(
                    profile=profile,
                    **dict(zip(_IDENTITY_FIELDS, i, strict=True)),
                    **_traits(traits, i),
                )
                for i in missing
            ],
            ignore_conflicts=True,  # a concurrent filing may have made some of them
        )
        found = _existing_series(profile, wanted)
    return {i: found[i] for i in wanted}


def _traits(traits: Mapping[tuple[Any, ...], Any] | None, key: tuple[Any, ...]) -> dict[str, Any]:
    point = traits.get(key) if traits else None
    if point is None:
        return {"unit": "GB/s", "direction": "higher", "resolution": BUSBW_RESOLUTION}
    return {"unit": point.unit, "direction": point.direction, "resolution": point.resolution}


def _existing_series(
    profile: HardwareProfile, wanted: list[tuple[Any, ...]]
) -> dict[tuple[Any, ...], Series]:
    if not wanted:
        return {}
    collectives = {i[1] for i in wanted}
    nranks = {i[4] for i in wanted}
    rows = Series.objects.filter(profile=profile, collective__in=collectives, nranks__in=nranks)
    by_identity = {tuple(getattr(s, f) for f in _IDENTITY_FIELDS): s for s in rows}
    return {i: by_identity[i] for i in wanted if i in by_identity}


def series_refresh_stats(series_ids: Iterable[int]) -> None:
    """Point count and latest value of each series (denormalised for the list pages)."""
    ids = list(series_ids)
    if not ids:
        return
    stats = {
        row["series_id"]: row
        for row in SeriesPoint.objects.filter(series_id__in=ids)
        .values("series_id")
        .annotate(n=Count("id"), last=Max("measured_at"))
    }
    newest = SeriesPoint.objects.filter(series=OuterRef("pk")).order_by("-measured_at", "-run_id")
    changed = list(
        Series.objects.filter(pk__in=ids).annotate(newest=Subquery(newest.values("value")[:1]))
    )
    for series in changed:
        row = stats.get(series.pk)
        series.point_count = row["n"] if row else 0
        series.last_measured_at = row["last"] if row else None
        series.last_value = series.newest
    Series.objects.bulk_update(changed, ["point_count", "last_measured_at", "last_value"])
    stack_stats_refresh(ids)


def stack_stats_refresh(series_ids: Iterable[int]) -> None:
    """Recompute the per-(series, stack) point counts and means of these series."""
    ids = list(series_ids)
    rows = (
        SeriesPoint.objects.filter(series_id__in=ids)
        .values("series_id", "stack_id")
        .annotate(n=Count("id"), mean=Avg("value"))
        .order_by()
    )
    fresh = [
        SeriesStackStats(
            series_id=r["series_id"], stack_id=r["stack_id"], points=r["n"], mean=r["mean"]
        )
        for r in rows
    ]
    SeriesStackStats.objects.filter(series_id__in=ids).delete()
    SeriesStackStats.objects.bulk_create(fresh, batch_size=2000)
