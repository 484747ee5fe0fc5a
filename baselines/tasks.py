"""Celery tasks: thin, named, idempotent wrappers around baselines services."""

from __future__ import annotations

from celery import shared_task

from baselines.notify import digests_send, summary_notify
from baselines.provenance.repair import facts_repair
from baselines.services import artifact_evaluate, hosts_refile, profile_efficiency_refresh


@shared_task(name="baselines.after_parse")
def after_parse(artifact_id: int) -> str:
    """Queued by ``artifacts.parsing.artifact_parse`` once a parse has committed."""
    return artifact_evaluate(artifact_id=artifact_id).text()


@shared_task(name="baselines.notify_summary")
def notify_summary(summary_id: int) -> int:
    return len(summary_notify(summary_id=summary_id))


@shared_task(name="baselines.send_digests")
def send_digests() -> int:
    """Run it from celery beat or cron (``manage.py send_alert_digests``), e.g. daily."""
    return digests_send()


@shared_task(name="baselines.refile_hosts")
def refile_hosts(pattern: str) -> int:
    """After a host -> profile mapping changed: re-file the runs on those hosts."""
    return hosts_refile(pattern=pattern)


@shared_task(name="baselines.repair_facts")
def repair_facts() -> str:
    """The editors' repair button: re-derive every run's stack and profile (repair.py)."""
    return "\n".join(facts_repair().lines())


@shared_task(name="baselines.profile_efficiency")
def profile_efficiency(profile_id: int) -> int:
    """After a profile's network was stated: its runs' below-peak findings, recomputed."""
    return profile_efficiency_refresh(profile_id=profile_id)
