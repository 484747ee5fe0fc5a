"""REST endpoints of the baselines app. Adapters only: validate, call a service or a
queryset, render. Permissions: every call needs a user; writes need the editor role."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from artifacts.models import BenchmarkRun
from baselines import querysets, services
from baselines.comparing import comparison_preview
from baselines.limits.reads import Unavailable, run_efficiency
from baselines.models import (
    Alert,
    AlertSummary,
    Baseline,
    HardwareProfile,
    HostProfileMapping,
    Series,
    SoftwareStack,
    Subscription,
)
from baselines.serializers import (
    AlertSerializer,
    AlertSummarySerializer,
    AlertUpdateSerializer,
    AssumedEfficiencySerializer,
    BaselineCreateSerializer,
    BaselineSerializer,
    BaselineUpdateSerializer,
    HostMappingSerializer,
    ProfileNetworkSerializer,
    ProfileSerializer,
    RunComparisonSerializer,
    RunEfficiencySerializer,
    SeriesPointSerializer,
    SeriesSerializer,
    StackSerializer,
    SubscriptionSerializer,
)


def _service_call(call: Any, *args: Any, **kwargs: Any) -> Any:
    """Services raise Django's ValidationError; the API answers 400 with its messages."""
    try:
        return call(*args, **kwargs)
    except ValidationError as exc:
        raise ApiValidationError({"detail": exc.messages}) from exc


class ProfileViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = ProfileSerializer
    filter_backends: list[type] = []
    queryset = HardwareProfile.objects.prefetch_related("hosts").order_by("slug")

    def perform_create(self, serializer: ProfileSerializer) -> None:
        serializer.instance = services.profile_save(
            profile=HardwareProfile(**serializer.validated_data)
        )

    def perform_update(self, serializer: ProfileSerializer) -> None:
        profile = serializer.instance
        for key, value in serializer.validated_data.items():
            setattr(profile, key, value)
        _service_call(services.profile_save, profile=profile)

    @extend_schema(
        request=ProfileNetworkSerializer,
        responses={200: ProfileSerializer},
        description="State the profile's network: adopt a reference design (`design`, a "
        "key from a run's efficiency candidates) or give `nics_per_node` and "
        "`nic_speed_gbps`. Runs on the profile are then measured against it (stated).",
    )
    @action(detail=True, methods=["post"], url_path="network")
    def network(self, request: Request, pk: Any = None) -> Response:
        profile = self.get_object()
        body = ProfileNetworkSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        saved = _service_call(services.profile_network_set, profile=profile, **body.validated_data)
        return Response(ProfileSerializer(saved, context={"request": request}).data)


class HostMappingViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Host pattern -> profile. Creating or deleting one re-files the runs of those hosts."""

    serializer_class = HostMappingSerializer
    filter_backends: list[type] = []
    queryset = HostProfileMapping.objects.select_related("profile")

    def perform_create(self, serializer: HostMappingSerializer) -> None:
        serializer.instance = _service_call(
            services.mapping_create,
            pattern=serializer.validated_data["pattern"],
            profile=serializer.validated_data["profile"],
            priority=serializer.validated_data.get("priority", 0),
        )

    def perform_destroy(self, instance: HostProfileMapping) -> None:
        services.mapping_delete(mapping=instance)


class StackViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Software stacks, in version order. Editing refuses to duplicate another stack."""

    serializer_class = StackSerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[SoftwareStack]:
        qs = SoftwareStack.objects.order_by("nccl_key", "cuda_key", "driver_key", "id")
        if nccl := self.request.query_params.get("nccl"):
            qs = qs.filter(nccl=nccl)
        return qs

    @extend_schema(parameters=[OpenApiParameter("nccl", str, description="exact NCCL version")])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    def perform_update(self, serializer: StackSerializer) -> None:
        _service_call(services.stack_update, stack=serializer.instance, **serializer.validated_data)


_SERIES_FILTERS = [
    OpenApiParameter("profile", str, description="profile slug"),
    OpenApiParameter(
        "benchmark", str, description="nccl-tests, perftest, torch-trace:<job>, a metrics name"
    ),
    OpenApiParameter("collective", str, description="collective, perftest tool or metric"),
    OpenApiParameter("nranks", int),
    OpenApiParameter("size_bytes", int),
    OpenApiParameter("metric", str),
    OpenApiParameter("dtype", str),
    OpenApiParameter("alerts", str, enum=["open"], description="only series with open alerts"),
]


class SeriesViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = SeriesSerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[Series]:
        return querysets.series_filtered(self.request.query_params)

    @extend_schema(parameters=_SERIES_FILTERS)
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(responses=SeriesPointSerializer(many=True))
    @action(detail=True, methods=["get"])
    def points(self, request: Request, pk: str | None = None) -> Response:
        """The series' points, oldest first (the newest 5000)."""
        series = self.get_object()
        return Response(SeriesPointSerializer(querysets.series_points(series), many=True).data)


class BaselineViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = BaselineSerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[Baseline]:
        return querysets.baselines_filtered(self.request.query_params).prefetch_related("runs")

    @extend_schema(
        parameters=[
            OpenApiParameter("profile", str),
            OpenApiParameter("collective", str),
            OpenApiParameter("active", bool),
        ]
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=BaselineCreateSerializer, responses={201: BaselineSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        form = BaselineCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        baseline = _service_call(
            services.baseline_create, created_by=request.user, **form.validated_data
        )
        body = BaselineSerializer(baseline, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=BaselineUpdateSerializer, responses=BaselineSerializer)
    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        form = BaselineUpdateSerializer(data=request.data, partial=kwargs.get("partial", False))
        form.is_valid(raise_exception=True)
        baseline = _service_call(
            services.baseline_update, baseline=self.get_object(), **form.validated_data
        )
        return Response(BaselineSerializer(baseline, context={"request": request}).data)


_ALERT_FILTERS = [
    OpenApiParameter("status", str, description="a status, or 'open' (untriaged, acknowledged, "
                     "investigating); default: all"),
    OpenApiParameter("kind", str, enum=[k.value for k in Alert.Kind]),
    OpenApiParameter("profile", str, description="profile slug"),
    OpenApiParameter("collective", str),
    OpenApiParameter("summary", int),
    OpenApiParameter("series", int),
    OpenApiParameter("assignee", str, description="user name, or 'none'"),
    OpenApiParameter("source", str, enum=[s.value for s in Alert.Source]),
    OpenApiParameter("since", str, description="YYYY-MM-DD"),
    OpenApiParameter("until", str, description="YYYY-MM-DD"),
]  # fmt: skip


class AlertViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = AlertSerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[Alert]:
        return querysets.alerts_filtered(self.request.query_params)

    @extend_schema(parameters=_ALERT_FILTERS)
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(request=AlertUpdateSerializer, responses=AlertSerializer)
    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Triage: status, assignee, notes, link."""
        form = AlertUpdateSerializer(data=request.data, partial=kwargs.get("partial", False))
        form.is_valid(raise_exception=True)
        alert = _service_call(services.alert_update, alert=self.get_object(), **form.validated_data)
        return Response(AlertSerializer(alert, context={"request": request}).data)


class AlertSummaryViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = AlertSummarySerializer
    filter_backends: list[type] = []

    def get_queryset(self) -> QuerySet[AlertSummary]:
        return querysets.summaries_filtered(self.request.query_params)

    @extend_schema(
        parameters=[
            OpenApiParameter("profile", str),
            OpenApiParameter("status", str, enum=["open"]),
            OpenApiParameter("kind", str, enum=[k.value for k in Alert.Kind]),
        ]
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)


class SubscriptionViewSet(viewsets.ModelViewSet):
    serializer_class = SubscriptionSerializer
    filter_backends: list[type] = []
    queryset = Subscription.objects.select_related("profile", "owner")

    def perform_create(self, serializer: SubscriptionSerializer) -> None:
        subscription = Subscription(owner=self.request.user, **serializer.validated_data)
        serializer.instance = _service_call(services.subscription_save, subscription=subscription)

    def perform_update(self, serializer: SubscriptionSerializer) -> None:
        subscription = serializer.instance
        for key, value in serializer.validated_data.items():
            setattr(subscription, key, value)
        _service_call(services.subscription_save, subscription=subscription)


class RunComparisonView(APIView):
    """The per-size comparison of one run's busbw curve with its baseline."""

    @extend_schema(
        responses={200: RunComparisonSerializer},
        description="Per message size: Δ% with its uncertainty band and the change; the curve "
        "verdict (improved / regressed / mixed / unchanged) with the size ranges that changed; "
        "the software-stack diff against the reference. 404 when the run has nothing to be "
        "compared with (first run of its benchmark on its profile, or a failed run).",
        operation_id="runs_comparison_retrieve",
    )
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(BenchmarkRun, pk=pk)
        context = querysets.run_context(run)
        comparison = querysets.run_comparison(run)
        if comparison is not None:
            result, stored = comparison.result, True
            reference, baseline = comparison.reference, comparison.baseline_id
            ref_ids, ref_stack = comparison.reference_run_ids, comparison.reference_stack
        else:
            preview = comparison_preview(run)
            if preview is None:
                return Response(
                    {"detail": "nothing to compare this run with (first of its benchmark on "
                     "its profile, failed, or not filed yet)"},
                    status=status.HTTP_404_NOT_FOUND,
                )  # fmt: skip
            ref = preview["reference"]
            result, stored = preview["result"].json, False
            reference, baseline = ref.kind, ref.baseline.pk if ref.baseline else None
            ref_ids = list(ref.run_ids)
            ref_stack = SoftwareStack.objects.filter(pk=ref.stack_id).first()
        changes = ref_stack.diff(context.stack) if ref_stack and context else []
        body = {
            "run": run.pk,
            "stored": stored,
            "profile": context.profile.slug if context else None,
            "reference": reference,
            "baseline": baseline,
            "reference_run_ids": ref_ids,
            "reference_stack": ref_stack.pk if ref_stack else None,
            "stack": context.stack_id if context else None,
            **{k: result.get(k) for k in ("verdict", "summary", "method", "noise_pct",
                                          "tolerance_pct", "sizes", "ranges")},
            "what_changed": [c.__dict__ for c in changes],
            "provenance": context.provenance if context else [],
        }  # fmt: skip
        return Response(RunComparisonSerializer(body).data)


class RunEfficiencyView(APIView):
    """One run against its hardware's limits (docs/efficiency.md)."""

    @extend_schema(
        responses={
            200: PolymorphicProxySerializer(
                component_name="RunEfficiencyStatedOrAssumed",
                serializers=[RunEfficiencySerializer, AssumedEfficiencySerializer],
                resource_type_field_name=None,
            ),
            404: OpenApiResponse(description="no such run, or its hardware limits are unknown "
                                 "and no reference design fits (``detail`` says which input "
                                 "is missing)"),
        },
        description="The run measured against what its hardware can do: the bottleneck of "
        "its collective and topology (NVLink, per-node network, PCIe), the peak busbw it "
        "implies, every input with its source, and per message size busbw as % of the peak.",
        operation_id="runs_efficiency_retrieve",
    )  # fmt: skip
    def get(self, request: Request, pk: int) -> Response:
        result = run_efficiency(get_object_or_404(BenchmarkRun, pk=pk))
        if isinstance(result, Unavailable) and result.candidates:
            # nothing states the network: the run under each reference design, assumed
            return Response(AssumedEfficiencySerializer(result.to_json()).data)
        if isinstance(result, Unavailable):
            return Response({"detail": result.reason}, status=status.HTTP_404_NOT_FOUND)
        return Response(RunEfficiencySerializer(result.to_json()).data)
