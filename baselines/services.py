"""Writes of the baselines app: ``<entity>_<verb>(*, ...)``, atomic, notifications on commit.

The pipeline entry point is :func:`artifact_evaluate`, run by the Celery task
``baselines.after_parse`` once an artifact's parse has committed:

    file each run (profile, stack, series points)            baselines.filing
    -> compare it, and the runs right after it, with their    baselines.comparing
       reference (pinned baseline or recent runs)               + baselines.curve_compare
    -> alerts for what changed, change points of the series   baselines.alerting
       it touched                                              + baselines.detect
    -> summaries per software change, notifications           baselines.notify

It is idempotent: evaluating an artifact twice leaves the same rows (and sends nothing twice).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from artifacts.jobs.services import job_assign
from artifacts.models import Artifact, BenchmarkRun, JobMember, RunRank
from baselines.alerting import Collector, alerts_from_comparison, history_scan, summaries_refresh
from baselines.comparing import RECENT_RUNS, comparison_refresh, earlier_runs, identity_runs
from baselines.evidence_store import evidence_refresh
from baselines.filing import FiledRun, run_file, run_is_usable
from baselines.limits.findings import efficiency_findings_refresh
from baselines.models import (
    Alert,
    AlertSummary,
    Baseline,
    HardwareProfile,
    HostProfileMapping,
    RunContext,
    SoftwareStack,
    Subscription,
)
from baselines.provenance.host_facts import FACT_KINDS, FACTS_WINDOW
from perfhub import dispatch
from perfhub.locks import serialize


@dataclass
class Evaluation:
    """What one evaluation did (for tests, logs and the task's return value)."""

    runs: int = 0
    comparisons: int = 0
    alerts: int = 0
    new_summary_ids: list[int] = field(default_factory=list)
    notified_summary_ids: list[int] = field(default_factory=list)

    def text(self) -> str:
        return (
            f"{self.runs} run(s) filed, {self.comparisons} comparison(s), "
            f"{self.alerts} alert(s), {len(self.new_summary_ids)} new summary(ies), "
            f"{len(self.notified_summary_ids)} to notify"
        )


# --------------------------------------------------------------------------------- pipeline


def artifact_evaluate(*, artifact_id: int, notify: bool = True) -> Evaluation:
    """File, compare and scan the runs of one parsed artifact (see the module docstring)."""
    artifact = Artifact.objects.filter(pk=artifact_id).first()
    if artifact is None or artifact.status != Artifact.Status.PARSED:
        return Evaluation()
    with transaction.atomic():
        evidence_refresh(artifact)  # perftest, traces, counters: their numbers as runs
        # Evidence runs name hosts the parse did not store: the job may follow from them.
        job_assign(artifact=artifact)
    runs = list(
        artifact.runs.select_related("artifact")
        .prefetch_related("ranks", "measurements")
        .order_by("index")
    )
    evaluation = runs_evaluate(runs=runs, notify=notify)
    others = runs_near_facts(artifact, on_hosts=artifact.kind in FACT_KINDS)
    if others:
        # nvidia-smi, NCCL logs, ibstat... uploaded after the runs they describe, or a file
        # of the same job: re-file those runs so they pick up what this artifact states.
        nearby = runs_evaluate(runs=others, notify=notify)
        evaluation.comparisons += nearby.comparisons
        evaluation.alerts += nearby.alerts
        evaluation.new_summary_ids += nearby.new_summary_ids
        evaluation.notified_summary_ids += nearby.notified_summary_ids
    return evaluation


MAX_REFILED_RUNS = 500


def runs_near_facts(artifact: Artifact, *, on_hosts: bool = True) -> list[BenchmarkRun]:
    """Runs an artifact's facts may describe: those of its job, and (``on_hosts``: a kind
    that states host facts) those on its hosts within the facts window. Never runs that only
    share its upload label."""
    facts = artifact.host_facts.order_by()
    hosts = set(facts.values_list("host", flat=True).distinct()) - {""}
    times = list(facts.values_list("observed_at", flat=True)[:1])
    trace = getattr(artifact, "trace", None) if artifact.kind == "torch_trace" else None
    if trace is not None:
        hosts |= {trace.host} - {""}
        times.append(trace.recorded_at)
    if artifact.host:
        hosts.add(artifact.host)
    job_id = JobMember.objects.filter(artifact=artifact).values_list("job_id", flat=True).first()
    where = Q(pk__in=[])
    if on_hosts and times and hosts:
        at = times[0]
        on_hosts = Q(ranks__host__in=sorted(hosts)) | Q(artifact__host__in=sorted(hosts))
        where |= on_hosts & Q(measured_at__range=(at - FACTS_WINDOW, at + FACTS_WINDOW))
    if job_id is not None:
        where |= Q(artifact__job_membership__job_id=job_id)
    ids = (
        BenchmarkRun.objects.filter(where)
        .exclude(artifact=artifact)
        .filter(context__isnull=False)
        .order_by("-measured_at")
        .values_list("pk", flat=True)
        .distinct()[:MAX_REFILED_RUNS]
    )
    return list(
        BenchmarkRun.objects.filter(pk__in=list(ids))
        .select_related("artifact")
        .prefetch_related("ranks", "measurements")
        .order_by("measured_at", "id")
    )


def runs_evaluate(*, runs: Sequence[BenchmarkRun], notify: bool = True) -> Evaluation:
    evaluation = Evaluation()
    if not runs:
        return evaluation
    collector = Collector()
    with transaction.atomic():
        # Workers filing one job's files re-file each other's runs and share series: one
        # filing at a time (parsing, the long part, stays parallel).
        serialize("filing")
        mappings = list(HostProfileMapping.objects.select_related("profile"))
        filed = [run_file(run=run, mappings=mappings) for run in runs]
        # Runs far below their hardware's peak become findings (docs/efficiency.md).
        efficiency_findings_refresh(runs=[f.run for f in filed])
        # One evaluation per profile at a time: two workers filing runs of the same series
        # must not both decide they raise the first alert of a change.
        profile_ids = sorted({f.context.profile_id for f in filed})
        list(HardwareProfile.objects.select_for_update().filter(pk__in=profile_ids))
        evaluation.runs = len(filed)
        for run, context in _runs_to_compare(filed):
            outcome = comparison_refresh(run=run, context=context)
            evaluation.comparisons += outcome.comparison is not None
            evaluation.alerts += len(
                alerts_from_comparison(
                    outcome, run=run, stack_id=context.stack_id, collector=collector
                )
            )
        series_ids = {sid for f in filed for sid in f.series_ids}
        evaluation.alerts += len(history_scan(series_ids, collector=collector))
        summaries_refresh(collector.touched_summary_ids)
        evaluation.new_summary_ids = sorted(
            AlertSummary.objects.filter(pk__in=collector.new_summary_ids).values_list(
                "pk", flat=True
            )
        )
        # Notify once per summary, when its change is confirmed (two runs, or the history).
        due = AlertSummary.objects.filter(
            pk__in=collector.touched_summary_ids, confirmed=True, notified_at__isnull=True
        )
        ready = sorted(due.values_list("pk", flat=True))
        if ready:
            due.update(notified_at=timezone.now())
            if notify:
                transaction.on_commit(lambda: _notify(ready))
        evaluation.notified_summary_ids = ready
    return evaluation


def _runs_to_compare(filed: list[FiledRun]) -> list[tuple[BenchmarkRun, RunContext]]:
    """Each filed run; the runs right after it, whose automatic reference includes it; and the
    runs just before it on its stack, whose evidence it adds to. Workers may file runs out of
    time order: the result must not depend on that order."""
    chosen: dict[int, tuple[BenchmarkRun, RunContext]] = {}
    for f in sorted(filed, key=lambda f: (f.run.measured_at, f.run.pk)):
        if run_is_usable(f.run):
            chosen[f.run.pk] = (f.run, f.context)
        # The first run of a new stack counts the runs after it as evidence: refresh it.
        same_stack_before = (
            earlier_runs(f.run, f.context.profile_id)
            .filter(context__stack_id=f.context.stack_id)
            .select_related("context")[:RECENT_RUNS]
        )
        for run in same_stack_before:
            chosen.setdefault(run.pk, (run, run.context))
        later = (
            identity_runs(f.run, f.context.profile_id)
            .filter(
                Q(measured_at__gt=f.run.measured_at)
                | Q(measured_at=f.run.measured_at, pk__gt=f.run.pk)
            )
            .select_related("context")
            .order_by("measured_at", "id")[:RECENT_RUNS]
        )
        for run in later:
            chosen.setdefault(run.pk, (run, run.context))
    return sorted(chosen.values(), key=lambda pair: (pair[0].measured_at, pair[0].pk))


def _notify(summary_ids: list[int]) -> None:
    for summary_id in summary_ids:
        dispatch.send("baselines.notify_summary", summary_id)


# -------------------------------------------------------------------------------- baselines


def baseline_create(
    *,
    name: str,
    runs: Sequence[BenchmarkRun],
    tolerance_pct: float = 3.0,
    notes: str = "",
    created_by: Any = None,
) -> Baseline:
    """A baseline pinning these runs. They must share profile and benchmark identity."""
    if not runs:
        raise ValidationError("a baseline needs at least one run")
    contexts = {c.run_id: c for c in RunContext.objects.filter(run__in=runs)}
    missing = [r.pk for r in runs if r.pk not in contexts]
    if missing:
        raise ValidationError(f"run(s) {missing} are not filed under a hardware profile yet")
    failed = [r.pk for r in runs if not run_is_usable(r)]
    if failed:
        raise ValidationError(f"run(s) {failed} failed; a baseline needs successful runs")
    identities = {(contexts[r.pk].profile_id, r.benchmark, r.collective, r.nranks) for r in runs}
    if len(identities) > 1:
        raise ValidationError(
            "the runs of a baseline must share hardware profile, benchmark, collective and "
            "rank count"
        )
    if not 0 <= tolerance_pct <= 100:
        raise ValidationError("tolerance must be between 0 and 100 percent")
    first = runs[0]
    stacks = {contexts[r.pk].stack_id for r in runs}
    with transaction.atomic():
        baseline = Baseline.objects.create(
            name=name.strip()[:120] or _default_name(first, contexts[first.pk]),
            profile_id=contexts[first.pk].profile_id,
            benchmark=first.benchmark,
            collective=first.collective,
            dtype=first.dtype,
            nranks=first.nranks or 0,
            stack_id=stacks.pop() if len(stacks) == 1 else None,
            tolerance_pct=tolerance_pct,
            notes=notes,
            created_by=created_by if getattr(created_by, "pk", None) else None,
        )
        baseline.runs.set(runs)
    return baseline


def _default_name(run: BenchmarkRun, context: RunContext) -> str:
    stack = context.stack.nccl and f"NCCL {context.stack.nccl}"
    parts = [context.profile.slug, run.collective, f"{run.nranks}r", stack or ""]
    return " ".join(p for p in parts if p)[:120]


def baseline_promote_run(
    *,
    run: BenchmarkRun,
    user: Any,
    name: str = "",
    tolerance_pct: float = 3.0,
    include_recent: bool = True,
    add_to: Baseline | None = None,
) -> Baseline:
    """ "Promote to baseline" on the run page: a new baseline of this run (plus, by default,
    the runs just before it on the same stack, so the baseline has a spread), or this run
    added to an existing baseline of the same identity."""
    context = RunContext.objects.select_related("profile", "stack").filter(run=run).first()
    if context is None:
        raise ValidationError("this run is not filed under a hardware profile yet")
    if add_to is not None:
        if (add_to.profile_id, add_to.collective, add_to.nranks) != (
            context.profile_id,
            run.collective,
            run.nranks or 0,
        ):
            raise ValidationError(f"baseline {add_to} is for another profile or benchmark")
        add_to.runs.add(run)
        return add_to
    runs = [run]
    if include_recent:
        earlier = (
            identity_runs(run, context.profile_id)
            .filter(context__stack_id=context.stack_id, measured_at__lte=run.measured_at)
            .exclude(pk=run.pk)
            .order_by("-measured_at", "-id")[: RECENT_RUNS - 1]
        )
        runs += list(earlier)
    return baseline_create(name=name, runs=runs, tolerance_pct=tolerance_pct, created_by=user)


def baseline_update(*, baseline: Baseline, **changes: Any) -> Baseline:
    allowed = {"name", "tolerance_pct", "active", "notes"}
    unknown = set(changes) - allowed
    if unknown:
        raise ValidationError(f"cannot change {sorted(unknown)} of a baseline")
    for key, value in changes.items():
        setattr(baseline, key, value)
    baseline.full_clean(exclude=["runs"])
    baseline.save()
    return baseline


def baseline_remove_run(*, baseline: Baseline, run: BenchmarkRun) -> Baseline:
    baseline.runs.remove(run)
    return baseline


# ----------------------------------------------------------------------------------- alerts

_TRIAGE_FIELDS = ("status", "assignee", "notes", "link_url", "link_label")


def alert_update(*, alert: Alert, **changes: Any) -> Alert:
    """Triage: status, assignee, notes, link (URL + label, or ``link_object`` any row)."""
    link_object = changes.pop("link_object", None)
    unknown = set(changes) - set(_TRIAGE_FIELDS)
    if unknown:
        raise ValidationError(f"cannot change {sorted(unknown)} of an alert")
    if "status" in changes and changes["status"] not in Alert.Status.values:
        raise ValidationError(
            f"unknown status {changes['status']!r}; known: {', '.join(Alert.Status.values)}"
        )
    with transaction.atomic():
        for key, value in changes.items():
            setattr(alert, key, value)
        if link_object is not None:
            alert.link_object = link_object
        alert.full_clean(exclude=["summary", "series", "run", "previous_run"])
        alert.save()
        summaries_refresh([alert.summary_id])
    return alert


def summary_set_status(*, summary: AlertSummary, status: str, assignee: Any = None) -> int:
    """One status (and optionally one assignee) for every alert of a summary."""
    if status not in Alert.Status.values:
        raise ValidationError(f"unknown status {status!r}")
    with transaction.atomic():
        changes: dict[str, Any] = {"status": status}
        if assignee is not None:
            changes["assignee"] = assignee
        count = summary.alerts.update(**changes)
        summaries_refresh([summary.pk])
    return count


# ------------------------------------------------------------------ profiles, hosts, stacks


def profile_save(*, profile: HardwareProfile) -> HardwareProfile:
    profile.full_clean()
    profile.auto_created = False  # someone looked at it
    profile.save()
    return profile


def profile_network_set(
    *,
    profile: HardwareProfile,
    design: str = "",
    nics_per_node: int | None = None,
    nic_speed_gbps: int | None = None,
) -> HardwareProfile:
    """State a profile's network: adopt a reference design (``hardware.reference``) or give
    NICs per node and their rate. Efficiency is computed on read, so every run on the
    profile is measured against it at once (stated, no longer assumed)."""
    from hardware.reference import DESIGNS_BY_KEY

    if design:
        chosen = DESIGNS_BY_KEY.get(design)
        if chosen is None:
            raise ValidationError(
                f"unknown reference design {design!r}; known: {', '.join(DESIGNS_BY_KEY)}"
            )
        nics_per_node, nic_speed_gbps = chosen.nics_per_node, int(chosen.nic_gbit)
        profile.nic_model = profile.nic_model or chosen.nic_model
        profile.gpus_per_node = profile.gpus_per_node or chosen.gpus_per_node
        if profile.fabric == HardwareProfile.Fabric.OTHER and chosen.fabric in ("infiniband",):
            profile.fabric = HardwareProfile.Fabric.INFINIBAND
        elif profile.fabric == HardwareProfile.Fabric.OTHER and chosen.fabric == "roce":
            profile.fabric = HardwareProfile.Fabric.ROCE_V2
        note = f"Network: {chosen.label} (adopted reference design; {chosen.source})."
        profile.topology_notes = "\n".join(x for x in (profile.topology_notes, note) if x)
    if not nics_per_node or not nic_speed_gbps or nics_per_node < 1 or nic_speed_gbps < 1:
        raise ValidationError("give NICs per node and their rate in Gb/s (both positive)")
    profile.nics_per_node = int(nics_per_node)
    profile.nic_speed_gbps = int(nic_speed_gbps)
    with transaction.atomic():
        saved = profile_save(profile=profile)
        # the below-peak findings of its runs are stored: recompute them against the network
        dispatch.enqueue("baselines.profile_efficiency", saved.pk)
    return saved


def profile_efficiency_refresh(*, profile_id: int) -> int:
    """Rewrite the below-peak findings of every run filed on the profile (after its limits
    changed); returns how many hold."""
    runs = BenchmarkRun.objects.filter(context__profile_id=profile_id, benchmark="nccl-tests")
    return efficiency_findings_refresh(runs=runs.iterator(chunk_size=500))


def mapping_create(
    *, pattern: str, profile: HardwareProfile, priority: int = 0
) -> HostProfileMapping:
    """Map hosts to a profile; runs already stored on matching hosts are re-filed (Celery)."""
    pattern = pattern.strip()
    if not pattern:
        raise ValidationError("a host pattern is needed, e.g. h200-r07n* or ib-h100-n0[0-9]*")
    if HostProfileMapping.objects.filter(pattern=pattern).exists():
        raise ValidationError(f"the pattern {pattern!r} is already mapped")
    with transaction.atomic():
        mapping = HostProfileMapping.objects.create(
            pattern=pattern[:200], profile=profile, priority=priority
        )
        _refile_on_commit(pattern)
    return mapping


def mapping_delete(*, mapping: HostProfileMapping) -> None:
    with transaction.atomic():
        pattern = mapping.pattern
        mapping.delete()
        _refile_on_commit(pattern)


def _refile_on_commit(pattern: str) -> None:
    dispatch.enqueue("baselines.refile_hosts", pattern)


def hosts_refile(*, pattern: str) -> int:
    """Re-evaluate the artifacts whose runs ran on hosts matching ``pattern``."""
    hosts = [
        h
        for h in RunRank.objects.order_by().values_list("host", flat=True).distinct()
        if h and fnmatch.fnmatchcase(h.lower(), pattern.lower())
    ]
    artifact_ids = sorted(
        set(
            Artifact.objects.filter(runs__ranks__host__in=hosts, status=Artifact.Status.PARSED)
            .values_list("pk", flat=True)
            .distinct()
        )
    )
    for artifact_id in artifact_ids:
        artifact_evaluate(artifact_id=artifact_id, notify=False)
    return len(artifact_ids)


def stack_update(*, stack: SoftwareStack, **changes: Any) -> SoftwareStack:
    """Edit versions/environment; refuses to make a stack identical to another one."""
    for key, value in changes.items():
        setattr(stack, key, value)
    fingerprint = SoftwareStack.compute_fingerprint(stack.versions(), stack.nccl_env or {})
    clash = SoftwareStack.objects.filter(fingerprint=fingerprint).exclude(pk=stack.pk).first()
    if clash:
        raise ValidationError(f"an identical stack already exists (#{clash.pk}: {clash})")
    stack.save()
    return stack


# ---------------------------------------------------------------------------- subscriptions


def subscription_save(*, subscription: Subscription) -> Subscription:
    if subscription.channel == Subscription.Channel.WEBHOOK:
        if not subscription.target.startswith(("http://", "https://")):
            raise ValidationError("a webhook target must be an http:// or https:// URL")
    else:
        from django.core.validators import validate_email

        for address in (a.strip() for a in subscription.target.split(",")):
            if address:
                validate_email(address)
    subscription.full_clean()
    subscription.save()
    return subscription


def runs_of(ids: Iterable[int]) -> list[BenchmarkRun]:
    return list(BenchmarkRun.objects.filter(pk__in=list(ids)).select_related("artifact"))
