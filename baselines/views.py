"""Pages of the baselines app. Adapters: read a queryset or call a service, then render."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from artifacts import exports
from artifacts.models import BenchmarkRun
from baselines import charts, querysets, services
from baselines.alert_charts import alert_charts, summary_charts
from baselines.comparing import comparison_preview, stack_of, version_comparison
from baselines.forms import (
    AlertFilterForm,
    BaselineForm,
    MappingForm,
    MatrixForm,
    ProfileForm,
    PromoteForm,
    SeriesFilterForm,
    StackForm,
    SubscriptionForm,
    SummaryStatusForm,
    TriageForm,
)
from baselines.limits.matrix_cells import efficiency_view
from baselines.models import (
    Alert,
    AlertSummary,
    Baseline,
    HardwareProfile,
    HostProfileMapping,
    RunContext,
    Series,
    SoftwareStack,
    Subscription,
)
from baselines.provenance.entries import borrowed_summary
from perfhub.roles import can_edit

View = Callable[..., HttpResponse]


def editor_only(view: View) -> View:
    """POST views that change data: viewers get a message and nothing changes."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not can_edit(request.user):
            messages.error(request, "Changing this needs the editor role.")
            return redirect(request.META.get("HTTP_REFERER") or reverse("baselines:home"))
        return view(request, *args, **kwargs)

    return wrapper


def _page(request: HttpRequest, queryset: QuerySet | list) -> Page:
    return Paginator(queryset, settings.PERFHUB_PAGE_SIZE).get_page(request.GET.get("page"))


def _errors(request: HttpRequest, exc: ValidationError) -> None:
    for message in exc.messages:
        messages.error(request, message)


# -------------------------------------------------------------------------------- overview


def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "baselines/home.html",
        {
            "summaries": querysets.summaries_filtered({"status": "open"})[:10],
            "profiles": querysets.profiles_with_counts(),
            "open_alerts": querysets.open_alert_count(),
        },
    )


# -------------------------------------------------------------------------------- profiles


def profile_list(request: HttpRequest) -> HttpResponse:
    profiles = querysets.profiles_with_counts()
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "profiles.csv",
            ["slug", "name", "gpu_model", "gpu_generation", "gpus_per_node", "nic_model",
             "nic_speed_gbps", "fabric", "runs", "series", "open_alerts"],
            [
                (p.slug, p.name, p.gpu_model, p.gpu_generation, p.gpus_per_node, p.nic_model,
                 p.nic_speed_gbps, p.fabric, p.run_count, p.series_count, p.open_alerts)  # type: ignore[attr-defined]
                for p in profiles
            ],
        )  # fmt: skip
    return render(request, "baselines/profile_list.html", {"profiles": profiles})


def profile_detail(request: HttpRequest, slug: str) -> HttpResponse:
    profile = get_object_or_404(HardwareProfile, slug=slug)
    series = querysets.series_filtered({"profile": slug})
    return render(
        request,
        "baselines/profile_detail.html",
        {
            "profile": profile,
            "mappings": profile.hosts.all(),
            "mapping_form": MappingForm(),
            "series_page": _page(request, series),
            "runs": querysets.profile_runs(profile)[:20],
            "baselines": querysets.baselines_filtered({"profile": slug})[:20],
        },
    )


def profile_edit(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    profile = get_object_or_404(HardwareProfile, slug=slug) if slug else HardwareProfile()
    if request.method == "POST":
        if not can_edit(request.user):
            messages.error(request, "Changing a profile needs the editor role.")
            return redirect("baselines:profile-list")
        form = ProfileForm(request.POST, instance=profile)
        if form.is_valid():
            saved = services.profile_save(profile=form.save(commit=False))
            messages.success(request, f"Profile {saved} saved.")
            return redirect(saved)
    else:
        form = ProfileForm(instance=profile)
    return render(request, "baselines/profile_form.html", {"form": form, "profile": profile})


@require_POST
@editor_only
def profile_network(request: HttpRequest, slug: str) -> HttpResponse:
    """Adopt a reference design for the profile, or state NICs per node and their rate
    (the run page's "Against the hardware" panel posts here), then go back."""
    profile = get_object_or_404(HardwareProfile, slug=slug)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = profile.get_absolute_url()
    try:
        services.profile_network_set(
            profile=profile,
            design=request.POST.get("design", "").strip(),
            nics_per_node=_positive_int(request.POST.get("nics_per_node")),
            nic_speed_gbps=_positive_int(request.POST.get("nic_speed_gbps")),
        )
    except ValidationError as exc:
        _errors(request, exc)
    else:
        messages.success(
            request,
            f"Profile {profile} now states {profile.nics_per_node} NICs x "
            f"{profile.nic_speed_gbps} Gb/s per node: its runs are measured against it.",
        )
    return redirect(back or profile.get_absolute_url())


def _positive_int(text: str | None) -> int | None:
    try:
        value = int(float(text or ""))
    except ValueError:
        return None
    return value if value > 0 else None


@require_POST
@editor_only
def mapping_add(request: HttpRequest, slug: str) -> HttpResponse:
    profile = get_object_or_404(HardwareProfile, slug=slug)
    form = MappingForm(request.POST)
    if form.is_valid():
        try:
            mapping = services.mapping_create(
                pattern=form.cleaned_data["pattern"],
                profile=profile,
                priority=form.cleaned_data["priority"] or 0,
            )
        except ValidationError as exc:
            _errors(request, exc)
        else:
            messages.success(
                request, f"Hosts {mapping.pattern} now map to {profile}; their runs are re-filed."
            )
    else:
        messages.error(request, "; ".join(e for errs in form.errors.values() for e in errs))
    return redirect(profile)


@require_POST
@editor_only
def mapping_delete(request: HttpRequest, pk: int) -> HttpResponse:
    mapping = get_object_or_404(HostProfileMapping.objects.select_related("profile"), pk=pk)
    profile = mapping.profile
    services.mapping_delete(mapping=mapping)
    messages.success(request, f"Mapping {mapping.pattern} removed; its runs are re-filed.")
    return redirect(profile)


# ---------------------------------------------------------------------------------- stacks


def stack_list(request: HttpRequest) -> HttpResponse:
    stacks = querysets.stacks_with_counts()
    if request.GET.get("format") == "csv":
        fields = ["nccl", "cuda", "driver", "kernel", "pytorch", "ofed", "nic_firmware"]
        return exports.csv_response(
            "stacks.csv",
            ["id", *fields, "nccl_tests", "nccl_env", "runs"],
            [
                (s.pk, *(getattr(s, f) for f in fields), s.nccl_tests, s.nccl_env, s.run_count)  # type: ignore[attr-defined]
                for s in stacks
            ],
        )
    return render(request, "baselines/stack_list.html", {"page": _page(request, stacks)})


def stack_detail(request: HttpRequest, pk: int) -> HttpResponse:
    stack = get_object_or_404(SoftwareStack, pk=pk)
    if request.method == "POST":
        if not can_edit(request.user):
            messages.error(request, "Editing a stack needs the editor role.")
            return redirect(stack)
        form = StackForm(request.POST, instance=stack)
        if form.is_valid():
            try:
                services.stack_update(stack=stack, **form.cleaned_data)
            except ValidationError as exc:
                _errors(request, exc)
            else:
                messages.success(request, "Stack saved.")
                return redirect(stack)
    else:
        form = StackForm(instance=stack)
    runs = (
        BenchmarkRun.objects.filter(context__stack=stack)
        .select_related("artifact", "context__profile")
        .order_by("-measured_at", "-id")[:20]
    )
    return render(
        request, "baselines/stack_detail.html", {"stack": stack, "form": form, "runs": runs}
    )


# ---------------------------------------------------------------------------------- series


def series_list(request: HttpRequest) -> HttpResponse:
    options = querysets.series_filter_options()
    form = SeriesFilterForm(request.GET, options=options)
    series = querysets.series_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "series.csv",
            ["id", "profile", "benchmark", "collective", "dtype", "redop", "nranks", "nnodes",
             "size_bytes", "metric", "unit", "direction", "points", "last_value",
             "last_measured_at"],
            series.values_list(
                "id", "profile__slug", "benchmark", "collective", "dtype", "redop", "nranks",
                "nnodes", "size_bytes", "metric", "unit", "direction", "point_count",
                "last_value", "last_measured_at",
            ),
        )  # fmt: skip
    return render(
        request, "baselines/series_list.html", {"form": form, "page": _page(request, series)}
    )


def series_detail(request: HttpRequest, pk: int) -> HttpResponse:
    series = get_object_or_404(Series.objects.select_related("profile"), pk=pk)
    order = request.GET.get("order") if request.GET.get("order") in charts.ORDERS else "time"
    component = request.GET.get("component") or "nccl"
    chart = charts.series_chart(series, order=order, component=component)
    fmt = request.GET.get("format")
    columns = ["run_id", "measured_at", "value", "stack_id", "nccl", "cuda", "driver"]
    rows = [
        (p["run_id"], p["measured_at"].isoformat(), p["value"], p["stack_id"],
         p["stack__nccl"], p["stack__cuda"], p["stack__driver"])
        for p in chart.points
    ]  # fmt: skip
    if fmt == "csv":
        return exports.csv_response(f"series-{series.pk}.csv", columns, rows)
    if fmt == "json":
        return exports.json_response(
            f"series-{series.pk}.json",
            {
                "series": series.pk,
                "identity": series.identity_text(),
                "profile": series.profile.slug,
                "unit": series.unit,
                "points": [dict(zip(columns, r, strict=True)) for r in rows],
            },
        )
    return render(
        request,
        "baselines/series_detail.html",
        {
            "series": series,
            "chart": chart,
            "order": order,
            "component": component,
            "components": charts.VERSION_FIELDS,
            "siblings": querysets.series_siblings(series).only("pk", "size_bytes"),
            "alerts": querysets.alerts_filtered({"series": series.pk})[:50],
            "stack_sources": _stack_sources(chart.points),
        },
    )


def _stack_sources(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per stack of the series, its newest run and the facts other artifacts gave it (one
    query): a stack's versions are only as good as their sources."""
    newest: dict[int, int] = {}
    for p in points:
        newest[p["stack_id"]] = p["run_id"]
    contexts = RunContext.objects.filter(run_id__in=list(newest.values())).values(
        "run_id", "stack_id", "provenance"
    )
    by_run = {c["run_id"]: c for c in contexts}
    return [
        {
            "stack_id": stack_id,
            "run_id": run_id,
            "borrowed": borrowed_summary(by_run.get(run_id, {}).get("provenance") or []),
        }
        for stack_id, run_id in newest.items()
    ]


# ------------------------------------------------------------------------------- baselines


def baseline_list(request: HttpRequest) -> HttpResponse:
    baselines = querysets.baselines_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "baselines.csv",
            ["id", "name", "profile", "collective", "dtype", "nranks", "tolerance_pct", "active",
             "runs", "created_at"],
            [
                (b.pk, b.name, b.profile.slug, b.collective, b.dtype, b.nranks, b.tolerance_pct,
                 b.active, b.run_count, b.created_at.isoformat())  # type: ignore[attr-defined]
                for b in baselines
            ],
        )  # fmt: skip
    return render(request, "baselines/baseline_list.html", {"page": _page(request, baselines)})


def baseline_detail(request: HttpRequest, pk: int) -> HttpResponse:
    baseline = get_object_or_404(
        Baseline.objects.select_related("profile", "stack", "created_by"), pk=pk
    )
    if request.method == "POST":
        if not can_edit(request.user):
            messages.error(request, "Changing a baseline needs the editor role.")
            return redirect(baseline)
        if remove := request.POST.get("remove_run"):
            run = get_object_or_404(BenchmarkRun, pk=remove)
            services.baseline_remove_run(baseline=baseline, run=run)
            messages.success(request, f"Run {run.pk} removed from the baseline.")
            return redirect(baseline)
        form = BaselineForm(request.POST, instance=baseline)
        if form.is_valid():
            services.baseline_update(baseline=baseline, **form.cleaned_data)
            messages.success(request, "Baseline saved.")
            return redirect(baseline)
    else:
        form = BaselineForm(instance=baseline)
    runs = baseline.runs.select_related("artifact", "context__stack").order_by("-measured_at")
    return render(
        request,
        "baselines/baseline_detail.html",
        {"baseline": baseline, "form": form, "runs": runs},
    )


@require_POST
@editor_only
def run_promote(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(BenchmarkRun.objects.select_related("artifact"), pk=run_id)
    context = querysets.run_context(run)
    choices = querysets.baselines_for_identity(run, context.profile) if context else None
    form = PromoteForm(request.POST, baselines=choices)
    if not form.is_valid():
        messages.error(request, "; ".join(e for errs in form.errors.values() for e in errs))
        return redirect(run)
    try:
        baseline = services.baseline_promote_run(
            run=run,
            user=request.user,
            name=form.cleaned_data["name"],
            tolerance_pct=form.cleaned_data["tolerance_pct"],
            include_recent=form.cleaned_data["include_recent"],
            add_to=form.cleaned_data["add_to"],
        )
    except ValidationError as exc:
        _errors(request, exc)
        return redirect(run)
    messages.success(
        request, f"Run {run.pk} is in baseline “{baseline}”; later runs are compared with it."
    )
    return redirect(baseline)


def run_comparison(request: HttpRequest, run_id: int) -> HttpResponse:
    """The full comparison of one run with its reference: per size, chart, what changed."""
    run = get_object_or_404(BenchmarkRun.objects.select_related("artifact"), pk=run_id)
    comparison = querysets.run_comparison(run)
    context = querysets.run_context(run)
    result = comparison.result if comparison else None
    if comparison is None and (preview := comparison_preview(run)) is not None:
        result = preview["result"].json
    fmt = request.GET.get("format")
    if fmt == "json":
        return exports.json_response(
            f"run-{run.pk}-comparison.json", {"run": run.pk, **(result or {})}
        )
    if fmt == "csv":
        columns = ["size_bytes", "reference", "candidate", "delta_pct", "low_pct", "high_pct",
                   "change", "n_reference", "n_candidate", "method"]  # fmt: skip
        sizes = (result or {}).get("sizes", [])
        return exports.csv_response(
            f"run-{run.pk}-comparison.csv", columns, [[s.get(c) for c in columns] for s in sizes]
        )
    reference_stack = comparison.reference_stack if comparison else None
    changes = reference_stack.diff(context.stack) if reference_stack and context else []
    return render(
        request,
        "baselines/run_comparison.html",
        {
            "run": run,
            "comparison": comparison,
            "context": context,
            "result": result,
            "figure": charts.comparison_figure(result) if result else None,
            "changes": changes,
            "reference_stack": reference_stack,
            "reference_runs": BenchmarkRun.objects.filter(
                pk__in=comparison.reference_run_ids if comparison else []
            ).select_related("artifact"),
            "alerts": Alert.objects.filter(run=run).select_related("series", "summary"),
        },
    )


# ---------------------------------------------------------------------------------- alerts


def alert_list(request: HttpRequest) -> HttpResponse:
    options = querysets.alert_filter_options()
    params = request.GET.copy()
    if "status" not in params:
        params["status"] = "open"  # what needs triage, unless asked otherwise
    form = AlertFilterForm(params, options=options)
    alerts = querysets.alerts_filtered(params)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "alerts.csv",
            ["id", "kind", "status", "profile", "collective", "nranks", "size_bytes",
             "magnitude_pct", "low_pct", "high_pct", "value_before", "value_after", "source",
             "summary_id", "run_id", "measured_at", "assignee"],
            alerts.values_list(
                "id", "kind", "status", "series__profile__slug", "series__collective",
                "series__nranks", "series__size_bytes", "magnitude_pct", "low_pct", "high_pct",
                "value_before", "value_after", "source", "summary_id", "run_id", "measured_at",
                "assignee__username",
            ),
        )  # fmt: skip
    return render(
        request, "baselines/alert_list.html", {"form": form, "page": _page(request, alerts)}
    )


def alert_detail(request: HttpRequest, pk: int) -> HttpResponse:
    alert = get_object_or_404(
        Alert.objects.select_related(
            "series__profile", "summary", "run__artifact", "previous_run", "stack_before",
            "stack_after", "assignee",
        ),
        pk=pk,
    )  # fmt: skip
    if request.method == "POST":
        if not can_edit(request.user):
            messages.error(request, "Triage needs the editor role.")
            return redirect(alert)
        form = TriageForm(request.POST, instance=Alert.objects.get(pk=alert.pk))
        if form.is_valid():
            services.alert_update(
                alert=alert, **{k: form.cleaned_data[k] for k in form.cleaned_data}
            )
            messages.success(request, "Alert updated.")
            return redirect(alert)
    else:
        form = TriageForm(instance=alert)
    changes = alert.stack_before.diff(alert.stack_after) if alert.stack_before else []
    return render(
        request,
        "baselines/alert_detail.html",
        {"alert": alert, "form": form, "changes": changes, **alert_charts(alert)},
    )


def summary_list(request: HttpRequest) -> HttpResponse:
    summaries = querysets.summaries_filtered(request.GET)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "alert-summaries.csv",
            ["id", "title", "profile", "regressions", "improvements", "variance_changes",
             "open_alerts", "created_at"],
            summaries.values_list(
                "id", "title", "profile__slug", "regressions", "improvements",
                "variance_changes", "open_alerts", "created_at",
            ),
        )  # fmt: skip
    return render(request, "baselines/summary_list.html", {"page": _page(request, summaries)})


def summary_detail(request: HttpRequest, pk: int) -> HttpResponse:
    summary = get_object_or_404(
        AlertSummary.objects.select_related("profile", "stack_before", "stack_after", "first_run"),
        pk=pk,
    )
    if request.method == "POST":
        if not can_edit(request.user):
            messages.error(request, "Triage needs the editor role.")
            return redirect(summary)
        form = SummaryStatusForm(request.POST)
        if form.is_valid():
            count = services.summary_set_status(
                summary=summary,
                status=form.cleaned_data["status"],
                assignee=form.cleaned_data["assignee"],
            )
            messages.success(request, f"{count} alert(s) updated.")
            return redirect(summary)
    alerts = querysets.alerts_filtered({"summary": summary.pk})
    if request.GET.get("format") == "json":
        return exports.json_response(
            f"alert-summary-{summary.pk}.json",
            {
                "id": summary.pk,
                "title": summary.title,
                "profile": summary.profile.slug,
                "change": summary.change_text,
                "alerts": list(
                    alerts.values(
                        "id", "kind", "status", "series__collective", "series__nranks",
                        "series__size_bytes", "magnitude_pct", "low_pct", "high_pct", "run_id",
                    )
                ),
            },
        )  # fmt: skip
    before, after = summary.stack_before, summary.stack_after
    changes = before.diff(after) if before and after and before.pk != after.pk else []
    rows = list(alerts)  # the table, and the charts' choice of the worst alert
    return render(
        request,
        "baselines/summary_detail.html",
        {
            "summary": summary,
            "alerts": rows,
            "changes": changes,
            "form": SummaryStatusForm(),
            **summary_charts(summary, rows),
        },
    )


# -------------------------------------------------------------------------- version views


def version_matrix(request: HttpRequest) -> HttpResponse:
    profiles = querysets.profiles_by_data()
    params = request.GET.copy()
    if profiles and not params.get("profile"):
        params["profile"] = profiles[0]
    params.setdefault("component", "nccl")
    form = MatrixForm(params, profiles=profiles)
    view = None
    profile = None
    if form.is_valid():
        profile = HardwareProfile.objects.get(slug=form.cleaned_data["profile"])
        view = charts.version_matrix_for(profile, form.cleaned_data["component"])
        if form.cleaned_data.get("value") == "efficiency":
            view = efficiency_view(profile, view)  # cells as % of the hardware's peak
        if request.GET.get("format") == "csv":
            return exports.csv_response(
                f"version-matrix-{profile.slug}-{view.component}.csv",
                ["version", "collective", "nranks", "bucket", "delta_pct", "sizes", "runs"],
                [
                    (row["version"], col.collective, col.nranks, col.bucket,
                     round(cell.delta_pct, 3), cell.sizes, cell.runs)
                    for row in view.rows
                    for col, (cell, *_) in zip(view.matrix.columns, row["cells"], strict=True)
                    if cell is not None
                ],
            )  # fmt: skip
    return render(
        request,
        "baselines/version_matrix.html",
        {
            "form": form,
            "view": view,
            "profile": profile,
            "component_label": charts.component_label(params.get("component", "nccl")),
        },
    )


def version_compare(request: HttpRequest) -> HttpResponse:
    """A matrix cell: the runs on one version against the benchmark's reference."""
    profile = get_object_or_404(HardwareProfile, slug=request.GET.get("profile", ""))
    component = request.GET.get("component", "nccl")
    if component not in charts.VERSION_FIELDS:
        raise Http404("unknown component")
    try:
        nranks = int(request.GET.get("nranks") or 0)
        low = int(request.GET.get("low") or 0)
        high = int(request.GET.get("high") or 2**62)
    except ValueError as exc:
        raise Http404("nranks, low and high must be integers") from exc
    found = version_comparison(
        profile_id=profile.pk,
        component=component,
        version=request.GET.get("version", ""),
        collective=request.GET.get("collective", ""),
        nranks=nranks,
    )
    before, after = stack_of(found.reference_stack_id), stack_of(found.candidate_stack_id)
    sizes = found.result.json["sizes"] if found.result else []
    return render(
        request,
        "baselines/version_compare.html",
        {
            "profile": profile,
            "component": component,
            "component_label": charts.component_label(component),
            "version": request.GET.get("version", ""),
            "collective": request.GET.get("collective", ""),
            "nranks": nranks,
            "low": low,
            "high": high,
            "found": found,
            "sizes": sizes,
            "figure": charts.comparison_figure(
                found.result.json, label=request.GET.get("version", "")
            )
            if found.result
            else None,
            "changes": before.diff(after) if before and after and before.pk != after.pk else [],
        },
    )


# --------------------------------------------------------------------------- subscriptions


def subscription_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        if not can_edit(request.user):
            messages.error(request, "Managing subscriptions needs the editor role.")
            return redirect("baselines:subscription-list")
        instance = None
        if pk := request.POST.get("id"):
            instance = get_object_or_404(Subscription, pk=pk)
        if request.POST.get("delete") and instance is not None:
            instance.delete()
            messages.success(request, f"Subscription {instance.name} deleted.")
            return redirect("baselines:subscription-list")
        form = SubscriptionForm(request.POST, instance=instance)
        if form.is_valid():
            subscription = form.save(commit=False)
            if subscription.owner_id is None:
                subscription.owner = request.user
            try:
                services.subscription_save(subscription=subscription)
            except ValidationError as exc:
                _errors(request, exc)
            else:
                messages.success(request, f"Subscription {subscription.name} saved.")
                return redirect("baselines:subscription-list")
    else:
        form = SubscriptionForm()
    return render(
        request,
        "baselines/subscription_list.html",
        {"form": form, "subscriptions": querysets.subscriptions_list()},
    )
