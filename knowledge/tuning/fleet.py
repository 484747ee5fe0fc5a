"""A recipe against the fleet: every host's evidence read from the ``artifacts`` rows, checked
by ``conformance``, and a finding per drift linked to the recipe (docs/tuning.md).

The fleet is every host PerfHub has evidence of: hosts of ``sysctl``/``mlnx_qos``/NCCL log
facts and hosts of benchmark runs. A host's ``NCCL_*`` evidence is its newest run's stack
environment (what that job ran with), then NCCL log echoes; older runs are other jobs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from artifacts.fabric.findings import KEPT_RULES
from artifacts.fabric.models import Finding, HostFact
from artifacts.models import RunRank
from baselines.models import HardwareProfile, RunContext
from hardware.evidence import SEVERITY_RANK, WARNING
from knowledge.models import Page
from knowledge.tuning.conformance import (
    Evidence,
    FleetSummary,
    check_host,
    describe_drift,
    evidence_from_facts,
    summarise,
)

RULE = "recipe_drift"
KEPT_RULES.add(RULE)  # a rules refresh of the evidence artifact leaves these findings alone
MAX_HOSTS = 2000
# The facts a recipe item can be checked against (conformance.py says how).
_FACT_NAMES = (
    Q(name__startswith="sysctl.")
    | Q(name__startswith="qos.")
    | Q(name__startswith="nccl.env.")
    | Q(name__startswith="mlxconfig.")
)


def profile_hosts(profile: HardwareProfile) -> list[str]:
    """The hosts of a profile: those its runs ran on, and those its host mappings match
    among the hosts with evidence (a host with only a sysctl dump has no run to say)."""
    hosts = set(
        RunRank.objects.filter(run__context__profile=profile)
        .exclude(host="")
        .values_list("host", flat=True)
        .distinct()
    )
    mappings = list(profile.hosts.all())
    if mappings:
        known = HostFact.objects.filter(_FACT_NAMES).exclude(host="").values_list("host", flat=True)
        hosts |= {h for h in known.distinct() if any(m.matches(h) for m in mappings)}
    return sorted(hosts)


def recipe_profile(page: Page) -> HardwareProfile | None:
    """The profile of the sweep that proves the recipe (its pinned citation), if any."""
    citation = page.citations.filter(kind="sweep").order_by("-added_at").first()
    slug = (citation.pinned or {}).get("profile") if citation else None
    return HardwareProfile.objects.filter(slug=slug).first() if slug else None


def fleet_check(page: Page, hosts: Iterable[str] | None = None) -> FleetSummary:
    settings = page.parsed_settings
    evidence = _evidence(list(hosts) if hosts is not None else None)
    return summarise([check_host(h, settings, rows) for h, rows in sorted(evidence.items())])


def _evidence(hosts: list[str] | None) -> dict[str, list[Evidence]]:
    facts = HostFact.objects.filter(_FACT_NAMES).exclude(host="")
    ranks = RunRank.objects.exclude(host="")
    if hosts is not None:
        facts, ranks = facts.filter(host__in=hosts), ranks.filter(host__in=hosts)
    by_host: dict[str, list[Evidence]] = defaultdict(list)
    # The newest run of each host: what its latest job ran with.
    newest: dict[str, tuple[int, int, str]] = {}
    for host, run_id, artifact_id, when in (
        ranks.order_by("host", "-run__measured_at", "-run_id")
        .values_list("host", "run_id", "run__artifact_id", "run__measured_at")
        .distinct()
    ):
        if host not in newest and len(newest) < MAX_HOSTS:
            newest[host] = (run_id, artifact_id, when.strftime("%Y-%m-%d"))
    stacks = dict(
        RunContext.objects.filter(run_id__in=[r for r, _, _ in newest.values()]).values_list(
            "run_id", "stack__nccl_env"
        )
    )
    for host, (run_id, artifact_id, day) in newest.items():
        for name, value in sorted((stacks.get(run_id) or {}).items()):
            by_host[host].append(
                Evidence(
                    f"env.{name}", value, source=f"run #{run_id}, {day}", artifact_id=artifact_id
                )
            )
        by_host.setdefault(host, [])
    rows = facts.order_by("host", "-observed_at", "-id").values(
        "host", "name", "value", "device", "artifact_id", "artifact__kind", "observed_at"
    )
    for f in rows[: MAX_HOSTS * 200]:
        f["source"] = (
            f"{f['artifact__kind']} artifact #{f['artifact_id']}, {f['observed_at']:%Y-%m-%d}"
        )
        by_host[f["host"]].extend(evidence_from_facts([f]))
    return dict(by_host)


@transaction.atomic
def findings_record(page: Page, summary: FleetSummary) -> int:
    """One finding per drift (host + setting), on the artifact whose evidence shows it;
    drifts that are gone lose their finding. Returns how many drifts have one."""
    wanted: dict[tuple[int, str], tuple[str, str, str]] = {}
    for host in summary.hosts:
        for check in host.drifts:
            if check.artifact_id is None:
                continue
            key = check.setting.name or check.setting.value
            fingerprint = f"recipe:{page.pk}:{host.host}:{key}"[:255]
            wanted[(check.artifact_id, fingerprint)] = (
                host.host,
                describe_drift(check),
                check.line,
            )
    existing = {
        (f.artifact_id, f.fingerprint): f
        for f in Finding.objects.filter(
            rule=RULE,
            fingerprint__startswith=f"recipe:{page.pk}:",
            host__in=[h.host for h in summary.hosts],  # a profile's hosts: leave the others'
        )
    }
    for key, finding in existing.items():
        if key not in wanted:
            finding.delete()
    now = timezone.now()
    for (artifact_id, fingerprint), (host, what, line) in wanted.items():
        finding = existing.get((artifact_id, fingerprint)) or Finding(
            artifact_id=artifact_id, fingerprint=fingerprint, rule=RULE, observed_at=now
        )
        finding.severity = WARNING
        finding.severity_rank = SEVERITY_RANK[WARNING]
        finding.title = f"{host}: {what} (recipe “{page.title}”)"[:255]
        finding.explanation = (
            f"The tuning recipe “{page.title}” sets this differently from what the host's "
            f"evidence says: {line}."
        )
        finding.evidence = {"recipe": page.slug, "line": line}
        finding.host = host[:255]
        finding.kb_slug = page.slug
        finding.save()
    return len(wanted)
