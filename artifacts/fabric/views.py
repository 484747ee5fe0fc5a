"""Fabric pages: findings, an artifact's counters, a host over time, the fleet comparison.

Adapters only: read a queryset (querysets.py) or a comparison (fleet.py), render or export.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from django.conf import settings
from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from artifacts import exports
from artifacts.fabric import fleet, querysets
from artifacts.fabric.forms import AcknowledgeForm, FindingFilterForm, FleetForm, RateFilterForm
from artifacts.fabric.services import FindingError, finding_acknowledge, finding_unacknowledge
from artifacts.models import Artifact, CounterRate, Finding
from charts.figures import counter_timeline, host_value_bars, pairwise_heatmap
from perfhub.roles import can_edit

FINDING_COLUMNS = (
    "id", "severity", "rule", "title", "host", "device", "port", "artifact_id",
    "observed_at", "acknowledged_at", "kb_slug",
)  # fmt: skip
RATE_COLUMNS = (
    "at", "host", "device", "port", "counter", "derived", "delta", "dt_seconds", "value",
    "unit", "flag", "before_id", "after_id",
)  # fmt: skip
SAMPLE_COLUMNS = (
    "snapshot_id", "snapshot__index", "snapshot__host", "snapshot__device", "snapshot__port",
    "snapshot__taken_at", "counter", "value", "unit",
)  # fmt: skip


def finding_list(request: HttpRequest) -> HttpResponse:
    findings = querysets.findings_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "findings.csv", FINDING_COLUMNS, findings.values_list(*FINDING_COLUMNS)
        )
    return render(
        request,
        "fabric/finding_list.html",
        {"form": FindingFilterForm(request.GET), "page": _page(request, findings)},
    )


def finding_detail(request: HttpRequest, pk: int) -> HttpResponse:
    finding = get_object_or_404(
        Finding.objects.select_related("artifact", "acknowledged_by"), pk=pk
    )
    if request.GET.get("format") == "json":
        body = {c: getattr(finding, c) for c in FINDING_COLUMNS}
        body |= {"explanation": finding.explanation, "evidence": finding.evidence}
        body["related_artifacts"] = list(finding.related_artifacts.values_list("id", flat=True))
        return exports.json_response(f"finding-{finding.pk}.json", body)
    return render(
        request,
        "fabric/finding_detail.html",
        {
            "finding": finding,
            "related": finding.related_artifacts.order_by("-uploaded_at")[:50],
            "form": AcknowledgeForm(),
        },
    )


@require_POST
def finding_acknowledge_view(request: HttpRequest, pk: int) -> HttpResponse:
    finding = get_object_or_404(Finding, pk=pk)
    if not can_edit(request.user):
        messages.error(request, "Acknowledging findings needs the editor role.")
        return redirect(finding)
    if request.POST.get("action") == "reopen":
        finding_unacknowledge(finding=finding)
        messages.success(request, "Finding re-opened.")
        return redirect(finding)
    form = AcknowledgeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(e for errs in form.errors.values() for e in errs))
        return redirect(finding)
    try:
        finding_acknowledge(finding=finding, user=request.user, note=form.cleaned_data["note"])
    except FindingError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Finding acknowledged.")
    return redirect(request.POST.get("next") or finding.get_absolute_url())


def artifact_counters(request: HttpRequest, pk: int) -> HttpResponse:
    artifact = get_object_or_404(Artifact, pk=pk)
    fmt, what = request.GET.get("format"), request.GET.get("what", "rates")
    if what == "samples":
        samples = querysets.artifact_samples(artifact, request.GET)
        if fmt == "csv":
            return exports.csv_response(
                f"artifact-{pk}-samples.csv", SAMPLE_COLUMNS, samples.values_list(*SAMPLE_COLUMNS)
            )
    rates = querysets.rates_filtered({**request.GET.dict(), "artifact": pk})
    if fmt == "csv":
        return exports.csv_response(
            f"artifact-{pk}-rates.csv", RATE_COLUMNS, rates.values_list(*RATE_COLUMNS)
        )
    if fmt == "json":
        return exports.json_response(
            f"artifact-{pk}-rates.json", list(rates.values(*RATE_COLUMNS)[:100_000])
        )
    return render(
        request,
        "fabric/artifact_counters.html",
        {
            "artifact": artifact,
            "snapshots": querysets.artifact_snapshots(artifact)[:500],
            "form": RateFilterForm(request.GET),
            "page": _page(request, rates.select_related("before", "after")),
            "samples_page": _page(
                request, querysets.artifact_samples(artifact, request.GET), param="spage"
            ),
        },
    )


def host_list(request: HttpRequest) -> HttpResponse:
    hosts = querysets.hosts_overview(request.GET)
    if request.GET.get("format") == "csv":
        columns = ("host", "findings", "open", "critical", "last_seen")
        return exports.csv_response("hosts.csv", columns, ([h[c] for c in columns] for h in hosts))
    return render(request, "fabric/host_list.html", {"page": _page(request, hosts)})


def host_detail(request: HttpRequest, host: str) -> HttpResponse:
    counters = querysets.host_rate_counters(host)
    counter = request.GET.get("counter") or _default_counter(counters)
    rates = querysets.rates_filtered({"host": host}).filter(counter=counter) if counter else None
    if request.GET.get("format") == "csv":
        every = querysets.rates_filtered({**request.GET.dict(), "host": host})
        return exports.csv_response(
            f"host-{host}-rates.csv", RATE_COLUMNS, every.values_list(*RATE_COLUMNS)
        )
    chart = None
    unit = ""
    if rates is not None:
        frame = pd.DataFrame(
            list(rates.exclude(value__isnull=True).values("at", "device", "value", "unit")[:5000])
        )
        if len(frame):
            unit = str(frame["unit"].iloc[0])
            chart = counter_timeline(frame, title=f"{counter} on {host}", unit=unit).to_json()
    findings = querysets.host_findings(host)
    artifacts = querysets.host_artifacts(host)
    facts = querysets.host_latest_facts(host)
    events = querysets.host_events(host)
    return render(
        request,
        "fabric/host_detail.html",
        {
            "host": host,
            "findings": findings[:200],
            "findings_count": findings.count(),
            "artifacts": artifacts[:200],
            "facts": facts,
            "topology": querysets.host_topology(facts),
            "events": events[:100],
            "events_count": events.count(),
            "counters": counters,
            "counter": counter,
            "chart": chart,
            "latest_rates": _latest_rates(host),
        },
    )


def fleet_view(request: HttpRequest) -> HttpResponse:
    params = request.GET
    counters = fleet.fleet_counters()
    mode = params.get("mode") or "counter"
    facts = fleet.fleet_facts() if mode == "fact" else []
    data = params.copy()
    if "collective" not in data:  # show the pairwise default in its box instead of an empty one
        data["collective"] = "all_reduce"
    form = FleetForm(data, counters=counters, facts=facts)
    context: dict[str, Any] = {"form": form, "mode": mode, "comparison": None}
    since, until = querysets._date(params.get("since")), querysets._date(params.get("until"))
    label = params.get("label", "")
    if mode == "pairwise":
        metric = params.get("metric") or "avg_busbw_gbps"
        if metric not in fleet.RUN_METRICS:
            metric = "avg_busbw_gbps"
        collective = params.get("collective", "all_reduce")
        pairwise = fleet.pairwise_runs(
            collective=collective, metric=metric, since=since, until=until, label=label
        )
        comparison = pairwise.hosts
        context["pairs"] = pairwise.pairs.to_dict("records")
        if len(pairwise.matrix):
            context["heatmap"] = pairwise_heatmap(
                pairwise.matrix, title=f"{collective or 'all collectives'}: {metric}", unit="GB/s"
            ).to_json()
    elif mode == "fact":
        name = params.get("fact", "")
        direction = params.get("direction") or "both"
        if direction not in ("high", "low", "both"):
            direction = "both"
        fact = (
            fleet.fact_by_host(name, since=since, until=until, direction=direction, label=label)
            if name
            else None
        )
        comparison = fact.hosts if fact else None
        context["fact"] = fact
    elif mode == "ratio":
        metric = params.get("ratio") or "cnp_ratio"
        if metric not in fleet.RATIO_METRICS:
            metric = "cnp_ratio"
        ratio = fleet.ratio_by_host(metric, since=since, until=until, label=label)
        comparison = ratio.hosts
        context["ratio"] = ratio
    else:
        counter = params.get("counter") or _default_counter(counters)
        direction = params.get("direction") or "high"
        if direction not in ("high", "low", "both"):
            direction = "high"
        comparison = (
            fleet.counter_by_host(
                counter, since=since, until=until, direction=direction, label=label
            )
            if counter
            else None
        )
        context["counter"] = counter
    if comparison is not None:
        rows = fleet.comparison_rows(comparison)
        if params.get("format") in ("csv", "json"):
            columns: tuple[str, ...] = ("host", "value", "device", "readings", "z", "outlier")
            if mode == "ratio":
                columns += ("numerator", "denominator")
            name = f"fleet-{comparison.metric}"
            if params["format"] == "json":
                payload = {
                    "metric": comparison.metric,
                    "unit": comparison.unit,
                    "median": comparison.outliers.median,
                    "mad": comparison.outliers.mad,
                    "outliers": comparison.outliers.names,
                    **_ratio_payload(context.get("ratio")),
                    **({"majority": context["fact"].majority} if context.get("fact") else {}),
                    "hosts": [{c: _plain(r.get(c)) for c in columns} for r in rows],
                }
                return exports.json_response(f"{name}.json", payload)
            return exports.csv_response(
                f"{name}.csv", columns, ([_plain(r.get(c)) for c in columns] for r in rows)
            )
        context["comparison"] = comparison
        context["rows"] = rows
        if rows and not (context.get("fact") and not context["fact"].numeric):
            context["bars"] = host_value_bars(
                comparison.table,
                title=f"{comparison.metric} per host",
                unit=comparison.unit,
                median=comparison.outliers.median,
            ).to_json()
    return render(request, "fabric/fleet.html", context)


def _ratio_payload(ratio: fleet.RatioComparison | None) -> dict[str, Any]:
    if ratio is None:
        return {}
    return {
        "numerator": ratio.ratio.numerator,
        "denominator": ratio.ratio.denominator,
        "fleet_value": ratio.fleet_value,
        "numerator_total": ratio.numerator_total,
        "denominator_total": ratio.denominator_total,
    }


def _latest_rates(host: str, limit: int = 300) -> list[CounterRate]:
    """The newest clean rate of each (device, port, counter) of the host that is not zero."""
    latest: dict[tuple[str, int | None, str], CounterRate] = {}
    qs = (
        CounterRate.objects.filter(host=host, flag="")
        .exclude(value__isnull=True)
        .exclude(value=0)
        .order_by("at", "id")
    )
    for rate in qs[:50_000]:
        latest[(rate.device, rate.port, rate.counter)] = rate
    rows = sorted(latest.values(), key=lambda r: (not r.derived, r.device, r.port or -1, r.counter))
    return rows[:limit]


def _default_counter(counters: list[str]) -> str:
    for preferred in ("rx_prio3_pause", "tx_goodput_gbps", "port_xmit_data"):
        if preferred in counters:
            return preferred
    return counters[0] if counters else ""


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "item"):
        return value.item()  # numpy scalars
    return value


def _page(request: HttpRequest, rows: Any, *, param: str = "page") -> Page:
    paginator = Paginator(rows, settings.PERFHUB_PAGE_SIZE)
    return paginator.get_page(request.GET.get(param))
