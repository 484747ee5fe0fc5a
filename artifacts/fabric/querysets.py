"""Named reads for the fabric pages and API (filters live here, not in views)."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.db.models import Count, F, Max, Q, QuerySet

from artifacts.fabric import rules
from artifacts.models import (
    Artifact,
    CounterRate,
    CounterSample,
    CounterSnapshot,
    Finding,
    HostFact,
    LogEvent,
    RunRank,
)

ACK_CHOICES = (("", "any"), ("no", "open"), ("yes", "acknowledged"))


def findings_filtered(params: Any) -> QuerySet[Finding]:
    qs = Finding.objects.select_related("artifact", "acknowledged_by")
    if severity := params.get("severity"):
        qs = qs.filter(severity=severity)
    if rule := params.get("rule"):
        qs = qs.filter(rule=rule)
    if host := params.get("host"):
        qs = qs.filter(host__icontains=host)
    if (artifact := _int(params.get("artifact"))) is not None:
        qs = qs.filter(Q(artifact_id=artifact) | Q(related_artifacts=artifact)).distinct()
    ack = params.get("acknowledged")
    if ack in ("yes", "true", "1"):
        qs = qs.filter(acknowledged_at__isnull=False)
    elif ack in ("no", "false", "0"):
        qs = qs.filter(acknowledged_at__isnull=True)
    if since := _date(params.get("since")):
        qs = qs.filter(observed_at__date__gte=since)
    if until := _date(params.get("until")):
        qs = qs.filter(observed_at__date__lte=until)
    if q := params.get("q"):
        qs = qs.filter(title__icontains=q)
    return qs.order_by("-severity_rank", "-observed_at", "-id")


def finding_rule_choices() -> list[tuple[str, str]]:
    return [(r.id, r.id) for r in rules.RULES]


def artifact_snapshots(artifact: Artifact) -> QuerySet[CounterSnapshot]:
    return artifact.counter_snapshots.annotate(samples_count=Count("samples")).order_by(
        "taken_at", "index", "id"
    )


def artifact_samples(artifact: Artifact, params: Any = None) -> QuerySet[CounterSample]:
    qs = CounterSample.objects.filter(snapshot__artifact=artifact).select_related("snapshot")
    params = params or {}
    if counter := params.get("counter"):
        qs = qs.filter(counter__icontains=counter)
    if params.get("nonzero") in ("1", "yes", "true", "on"):
        qs = qs.exclude(value=0)
    return qs.order_by("snapshot__taken_at", "snapshot__index", "snapshot_id", "counter")


def artifact_samples_by_id(artifact_id: int, params: Any = None) -> QuerySet[CounterSample]:
    return artifact_samples(Artifact(pk=artifact_id), params)


def rates_filtered(params: Any) -> QuerySet[CounterRate]:
    qs = CounterRate.objects.all()
    if (artifact := _int(params.get("artifact"))) is not None:
        qs = qs.filter(after__artifact_id=artifact)
    if host := params.get("host"):
        qs = qs.filter(host=host)
    if device := params.get("device"):
        qs = qs.filter(device=device)
    if counter := params.get("counter"):
        qs = qs.filter(counter__icontains=counter)
    if params.get("derived") in ("1", "yes", "true"):
        qs = qs.filter(derived=True)
    elif params.get("derived") in ("0", "no", "false"):
        qs = qs.filter(derived=False)
    if params.get("nonzero") in ("1", "yes", "true", "on"):
        qs = qs.exclude(Q(value=0) | Q(value__isnull=True, delta=0))
    if flag := params.get("flag"):
        qs = qs.filter(flag="" if flag == "ok" else flag)
    if since := _date(params.get("since")):
        qs = qs.filter(at__date__gte=since)
    if until := _date(params.get("until")):
        qs = qs.filter(at__date__lte=until)
    return qs.order_by("at", "host", "device", "port", "counter", "id")


def events_filtered(params: Any) -> QuerySet[LogEvent]:
    qs = LogEvent.objects.select_related("artifact")
    if (artifact := _int(params.get("artifact"))) is not None:
        qs = qs.filter(artifact_id=artifact)
    if host := params.get("host"):
        qs = qs.filter(host=host)
    if kind := params.get("kind"):
        qs = qs.filter(kind=kind)
    return qs.order_by("artifact_id", "line", "id")


def hosts_overview(params: Any = None) -> list[dict[str, Any]]:
    """Every host PerfHub has evidence for, with counts. A fixed number of queries."""
    params = params or {}
    hosts: dict[str, dict[str, Any]] = {}

    def entry(name: str) -> dict[str, Any]:
        return hosts.setdefault(
            name, {"host": name, "findings": 0, "open": 0, "critical": 0, "last_seen": None}
        )

    def seen(name: str, when: Any) -> None:
        e = entry(name)
        if when and (e["last_seen"] is None or when > e["last_seen"]):
            e["last_seen"] = when

    for name, when in (
        CounterSnapshot.objects.exclude(host="").values("host").annotate(m=Max("taken_at"))
    ).values_list("host", "m"):
        seen(name, when)
    for name, when in (
        HostFact.objects.exclude(host="").values("host").annotate(m=Max("observed_at"))
    ).values_list("host", "m"):
        seen(name, when)
    for name, when in (
        RunRank.objects.exclude(host="").values("host").annotate(m=Max("run__measured_at"))
    ).values_list("host", "m"):
        seen(name, when)
    for name, when in (
        Artifact.objects.exclude(host="").values("host").annotate(m=Max("uploaded_at"))
    ).values_list("host", "m"):
        seen(name, when)
    counts = (
        Finding.objects.exclude(host="")
        .values("host")
        .annotate(
            n=Count("id"),
            open=Count("id", filter=Q(acknowledged_at__isnull=True)),
            critical=Count(
                "id",
                filter=Q(severity=Finding.Severity.CRITICAL, acknowledged_at__isnull=True),
            ),
            m=Max("observed_at"),
        )
    )
    for row in counts:
        e = entry(row["host"])
        e.update(findings=row["n"], open=row["open"], critical=row["critical"])
        seen(row["host"], row["m"])
    rows = list(hosts.values())
    if q := params.get("q"):
        rows = [r for r in rows if q.lower() in r["host"].lower()]
    rows.sort(key=lambda r: (-r["critical"], -r["open"], r["host"]))
    return rows


def host_artifacts(host: str) -> QuerySet[Artifact]:
    """Artifacts that say anything about the host: its upload metadata or any row inside."""
    ids = (
        set(CounterSnapshot.objects.filter(host=host).values_list("artifact_id", flat=True))
        | set(HostFact.objects.filter(host=host).values_list("artifact_id", flat=True))
        | set(LogEvent.objects.filter(host=host).values_list("artifact_id", flat=True))
        | set(Finding.objects.filter(host=host).values_list("artifact_id", flat=True))
        | set(RunRank.objects.filter(host=host).values_list("run__artifact_id", flat=True))
    )
    return (
        Artifact.objects.filter(Q(host=host) | Q(pk__in=ids))
        .select_related("uploaded_by")
        .annotate(run_count=Count("runs"))
        .order_by("-uploaded_at", "-id")
    )


def host_findings(host: str) -> QuerySet[Finding]:
    return findings_filtered({"host": ""}).filter(host=host)


def host_latest_facts(host: str, limit: int = 500) -> list[HostFact]:
    """The newest value of each (device, port, fact) of the host."""
    latest: dict[tuple[str, int | None, str], HostFact] = {}
    for fact in HostFact.objects.filter(host=host).order_by("observed_at", "id")[:20000]:
        latest[(fact.device, fact.port, fact.name)] = fact
    return sorted(latest.values(), key=lambda f: (f.device, f.port or -1, f.name))[:limit]


def host_events(host: str) -> QuerySet[LogEvent]:
    """The host's log events (NCCL WARN, Xid, Fabric Manager errors...), newest first."""
    return (
        LogEvent.objects.filter(host=host)
        .select_related("artifact")
        .order_by(F("time").desc(nulls_last=True), "-id")
    )


def host_topology(facts: list[HostFact]) -> dict[str, list[dict[str, Any]]]:
    """The NCCL topology facts (``topo.gpu.*``, ``topo.net.*``) of a host as one row per GPU
    and per NIC, for the host page."""
    gpus: dict[str, dict[str, Any]] = {}
    nets: dict[tuple[str, int | None], dict[str, Any]] = {}
    for f in facts:
        if f.name.startswith("topo.gpu."):
            gpu = gpus.setdefault(f.device, {"device": f.device})
            gpu[f.name.removeprefix("topo.gpu.")] = f.value
        elif f.name.startswith("topo.net."):
            row = nets.setdefault((f.device, f.port), {"device": f.device, "port": f.port})
            row[f.name.removeprefix("topo.net.")] = f.value
    return {
        "gpus": sorted(gpus.values(), key=lambda g: (_int(g.get("dev")) or 0, g["device"])),
        "nets": sorted(nets.values(), key=lambda n: (n["device"], n["port"] or 0)),
    }


def host_rate_counters(host: str) -> list[str]:
    return list(
        CounterRate.objects.filter(host=host)
        .exclude(value__isnull=True)
        .order_by("counter")
        .values_list("counter", flat=True)
        .distinct()
    )


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _date(value: Any) -> date | None:
    try:
        return date.fromisoformat(str(value)) if value else None
    except ValueError:
        return None
