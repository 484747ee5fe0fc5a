"""Repair what was filed before facts were scoped: derive each run's stack and profile
again (``filing.run_derive``), re-file the runs whose stack or profile moves (their series
points, comparisons and alerts follow), and say what moved.

Automatic profiles first forget the fields they learned from facts (NIC model, speed and
count, NVLink, fabric: a borrowed RoCE log made InfiniBand profiles "RoCE v2"); their runs
teach them again from the host facts that describe them. Profiles a person edited are
theirs and are not touched. Runs filed in bulk from generated history (no facts from other
artifacts, profiles that learned nothing) are skipped by ``suspects_only``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast

from artifacts.jobs.services import job_assign
from artifacts.models import Artifact, BenchmarkRun, HostFact, TraceSummary
from baselines.filing import LEARNABLE, profile_learn, run_derive
from baselines.models import (
    HardwareProfile,
    HostProfileMapping,
    RunContext,
    SeriesPoint,
    SoftwareStack,
)
from baselines.services import runs_evaluate

BATCH = 200


@dataclass(frozen=True)
class Moved:
    run_id: int
    before_profile: str
    after_profile: str
    before_stack: str
    after_stack: str

    def text(self) -> str:
        parts = []
        if self.before_profile != self.after_profile:
            parts.append(f"profile {self.before_profile} -> {self.after_profile}")
        if self.before_stack != self.after_stack:
            parts.append(f"stack [{self.before_stack}] -> [{self.after_stack}]")
        return f"run {self.run_id}: " + "; ".join(parts)


@dataclass
class RepairReport:
    checked: int = 0
    moved: list[Moved] = field(default_factory=list)
    unlearned: dict[str, dict[str, object]] = field(default_factory=dict)  # slug -> old values
    relearned: dict[str, dict[str, object]] = field(default_factory=dict)  # slug -> new values
    series: set[int] = field(default_factory=set)
    jobs_assigned: int = 0
    dry_run: bool = False

    def lines(self) -> Iterator[str]:
        verb = "would move" if self.dry_run else "moved"
        yield f"{self.jobs_assigned} artifact(s) given their job"
        yield f"{self.checked} run(s) checked, {len(self.moved)} {verb}"
        for slug, old in sorted(self.unlearned.items()):
            new = self.relearned.get(slug, {})
            changes = [
                f"{k} {old[k] or '(blank)'} -> {new.get(k) or '(blank)'}"
                for k in old
                if old[k] != new.get(k)
            ]
            if changes:
                yield f"profile {slug}: " + ", ".join(changes)
        yield from (m.text() for m in self.moved)
        if not self.dry_run:
            yield f"{len(self.series)} series re-filed"


def _stack_text(versions: dict[str, str], env: dict[str, str]) -> str:
    parts = [f"{k} {v}" for k, v in sorted(versions.items())]
    parts += [f"{k}={v}" for k, v in sorted(env.items())]
    return ", ".join(parts) or "(empty)"


def suspect_runs() -> QuerySet[BenchmarkRun]:
    """Runs that may have borrowed: a stack component from another artifact, or a profile
    that learned fields from facts."""
    cited = RunContext.objects.annotate(text=Cast("stack_sources", TextField())).filter(
        text__contains="artifact #"
    )
    learned = (
        Q(context__profile__auto_created=True)
        & (
            ~Q(context__profile__fabric=HardwareProfile.Fabric.OTHER)
            | ~Q(context__profile__nic_model="")
            | Q(context__profile__nic_speed_gbps__isnull=False)
            | ~Q(context__profile__nvlink="")
        )
    )  # fmt: skip
    return BenchmarkRun.objects.filter(Q(pk__in=cited.values("run_id")) | learned)


def facts_repair(
    *,
    dry_run: bool = False,
    suspects_only: bool = False,
    notify: bool = False,
    progress: Callable[[str], None] | None = None,
) -> RepairReport:
    """See the module docstring. ``dry_run``: derive and report, change nothing."""
    if dry_run:
        # Deriving may create automatic profiles (a GPU now known): roll everything back.
        with transaction.atomic():
            report = _repair(dry_run=True, suspects_only=suspects_only, notify=False,
                             progress=progress)  # fmt: skip
            transaction.set_rollback(True)
        return report
    return _repair(dry_run=False, suspects_only=suspects_only, notify=notify, progress=progress)


def _repair(
    *,
    dry_run: bool,
    suspects_only: bool,
    notify: bool,
    progress: Callable[[str], None] | None,
) -> RepairReport:
    report = RepairReport(dry_run=dry_run)
    # Files parsed before jobs existed have none: give them theirs first (their stated ids,
    # parents, hosts and times), oldest first, as the pipeline would have.
    runs = suspect_runs() if suspects_only else BenchmarkRun.objects.all()
    unassigned = Artifact.objects.filter(
        status=Artifact.Status.PARSED, job_membership__isnull=True
    ).order_by("captured_at", "uploaded_at", "pk")
    if suspects_only:
        # Only files that state facts, and those of the suspect runs: a generated history
        # of plain nccl-tests tables (36,864 files) shares nothing and needs no jobs now;
        # its files get theirs when next parsed.
        unassigned = unassigned.filter(
            Q(pk__in=HostFact.objects.values("artifact_id"))
            | Q(pk__in=TraceSummary.objects.values("artifact_id"))
            | Q(pk__in=runs.values("artifact_id"))
        )
    for artifact in unassigned.iterator(chunk_size=500):
        report.jobs_assigned += job_assign(artifact=artifact) is not None
    runs = runs.filter(context__isnull=False)
    profile_ids = set(runs.values_list("context__profile_id", flat=True).distinct())
    profiles = HardwareProfile.objects.filter(pk__in=profile_ids, auto_created=True)
    with transaction.atomic():
        for profile in profiles:
            report.unlearned[profile.slug] = {f: getattr(profile, f) for f in LEARNABLE}
            if not dry_run:
                for name in LEARNABLE:
                    blank = HardwareProfile._meta.get_field(name).get_default()
                    setattr(profile, name, blank)
                profile.learned = {}
                profile.save(update_fields=[*LEARNABLE, "learned"])
    mappings = list(HostProfileMapping.objects.select_related("profile"))
    ids = list(runs.order_by("pk").values_list("pk", flat=True).distinct())
    for start in range(0, len(ids), BATCH):
        batch = list(
            BenchmarkRun.objects.filter(pk__in=ids[start : start + BATCH])
            .select_related("artifact", "context__profile", "context__stack")
            .prefetch_related("ranks", "measurements")
            .order_by("pk")
        )
        moved_runs: list[BenchmarkRun] = []
        with transaction.atomic():
            for run in batch:
                report.checked += 1
                context = run.context
                derived = run_derive(run=run, mappings=mappings)
                fingerprint = SoftwareStack.compute_fingerprint(
                    {k: v for k, v in derived.stack.versions.items() if v},
                    {str(k): str(v) for k, v in sorted(derived.stack.nccl_env.items())},
                )
                old = context.stack
                if derived.match.profile.pk != context.profile_id or fingerprint != old.fingerprint:
                    report.moved.append(
                        Moved(
                            run.pk,
                            context.profile.slug,
                            derived.match.profile.slug,
                            _stack_text(old.versions(), old.nccl_env),
                            _stack_text(derived.stack.versions, derived.stack.nccl_env),
                        )
                    )
                    moved_runs.append(run)
                if dry_run:
                    continue
                profile_learn(derived.match.profile, derived.hardware, derived.learned_from)
                RunContext.objects.filter(pk=context.pk).update(
                    provenance=derived.provenance, stack_sources=derived.stack.sources
                )
        if moved_runs and not dry_run:
            moved_ids = [r.pk for r in moved_runs]
            before = set(
                SeriesPoint.objects.filter(run_id__in=moved_ids).values_list("series_id", flat=True)
            )
            runs_evaluate(runs=moved_runs, notify=notify)
            after = SeriesPoint.objects.filter(run_id__in=moved_ids).values_list(
                "series_id", flat=True
            )
            report.series |= before | set(after)
        if progress:
            progress(f"{report.checked}/{len(ids)} runs checked, {len(report.moved)} moved")
    for slug in report.unlearned:
        profile = HardwareProfile.objects.get(slug=slug)
        report.relearned[slug] = {f: getattr(profile, f) for f in LEARNABLE}
    if dry_run:
        report.relearned = dict(report.unlearned)
    return report
