"""REST endpoints for PyTorch Profiler traces, jobs and diffs. Adapters only."""

from __future__ import annotations

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import Prefetch, QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from artifacts.models import TraceCollective, TraceKernelStat, TraceStep, TraceSummary
from artifacts.traces.jobs import (
    build_diff,
    build_job_view,
    default_per_step,
    diff_payload,
    job_payload,
)
from artifacts.traces.models import WINDOWS
from artifacts.traces.querysets import (
    SelectionError,
    diff_selections,
    job_selection,
    jobs_filtered,
    trace_jobs,
    traces_filtered,
)
from artifacts.traces.serializers import (
    AssignJobSerializer,
    DiffSerializer,
    JobListSerializer,
    JobViewSerializer,
    TraceBriefSerializer,
    TraceDetailSerializer,
)
from artifacts.traces.services import TraceJobError, trace_job_assign

_TRACE_FILTERS = [
    OpenApiParameter("job", str, description="exact job label"),
    OpenApiParameter("rank", int),
    OpenApiParameter("host", str, description="host contains"),
    OpenApiParameter("label", str, description="exact artifact label"),
    OpenApiParameter("gpu", str, description="GPU name contains"),
    OpenApiParameter("q", str, description="file name contains"),
    OpenApiParameter("since", str, description="recorded on or after YYYY-MM-DD"),
    OpenApiParameter("until", str, description="recorded on or before YYYY-MM-DD"),
    OpenApiParameter("cpu_only", bool),
]
_WINDOW = OpenApiParameter(
    "window",
    str,
    enum=list(WINDOWS),
    description="trace: the whole trace (default); steps: HTA's default window",
)
_JOB = [
    OpenApiParameter("job", str, description="job label"),
    OpenApiParameter("ids", str, description="or trace ids, comma-separated"),
    _WINDOW,
]
_DIFF = [
    OpenApiParameter("a", int, description="trace id of side A"),
    OpenApiParameter("b", int, description="trace id of side B"),
    OpenApiParameter("a_job", str, description="or a job label for side A"),
    OpenApiParameter("b_job", str, description="or a job label for side B"),
    OpenApiParameter("a_ids", str, description="or trace ids of side A, comma-separated"),
    OpenApiParameter("b_ids", str, description="or trace ids of side B, comma-separated"),
    _WINDOW,
    OpenApiParameter(
        "per", str, enum=["step", "trace"], description="per ProfilerStep or per trace"
    ),
    OpenApiParameter("top", int, description="kernels listed (default 50, at most 500)"),
]


def _window(request: Request) -> str:
    window = request.query_params.get("window") or "trace"
    return window if window in WINDOWS else "trace"


class TraceViewSet(viewsets.ReadOnlyModelViewSet):
    """Traces (one per rank), the jobs they form, and diffs between traces or jobs."""

    filter_backends: list[type] = []
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> QuerySet[TraceSummary]:
        if self.action == "retrieve":
            return TraceSummary.objects.select_related("artifact").prefetch_related(
                Prefetch("kernels", queryset=TraceKernelStat.objects.order_by("-sum_us", "id")),
                Prefetch("steps", queryset=TraceStep.objects.order_by("index")),
                Prefetch("collectives", queryset=TraceCollective.objects.order_by("index")),
            )
        return traces_filtered(self.request.query_params)

    def get_serializer_class(self) -> type:
        return TraceDetailSerializer if self.action == "retrieve" else TraceBriefSerializer

    @extend_schema(parameters=_TRACE_FILTERS)
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        description="One trace with both breakdown windows, every stored kernel (top 500 by "
        "time), every ProfilerStep and the first 1000 collectives."
    )
    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(
        responses=JobListSerializer(many=True),
        parameters=[OpenApiParameter("page", int)],
        description="Jobs: traces sharing a job label (upload metadata `job`, else the "
        "label), then upload batches of unlabelled multi-rank traces.",
    )
    @action(detail=False, methods=["get"])
    def jobs(self, request: Request) -> Response:
        jobs = jobs_filtered(trace_jobs(), request.query_params)  # the page's filters
        paginator = Paginator(jobs, settings.PERFHUB_PAGE_SIZE)
        page = paginator.get_page(request.query_params.get("page"))
        rows = [{**vars(job), "query": job.query} for job in page.object_list]
        return Response(
            {
                "count": paginator.count,
                "page": page.number,
                "pages": paginator.num_pages,
                "results": JobListSerializer(rows, many=True).data,
            }
        )

    @extend_schema(
        responses={200: JobViewSerializer, 400: None},
        parameters=_JOB,
        description="Per-rank table of a job and its stragglers (median/MAD outliers of "
        "step time, GPU compute per step and collective arrival lateness).",
    )
    @action(detail=False, methods=["get"])
    def job(self, request: Request) -> Response:
        try:
            selection = job_selection(request.query_params)
        except SelectionError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        view = build_job_view(selection, window=_window(request))
        return Response(JobViewSerializer(job_payload(view)).data)

    @extend_schema(
        responses={200: DiffSerializer, 400: None},
        parameters=_DIFF,
        description="Two traces or two jobs compared (B - A): breakdown deltas and the "
        "kernels whose total time changed most. Job sides are the mean rank.",
    )
    @action(detail=False, methods=["get"])
    def diff(self, request: Request) -> Response:
        params = request.query_params
        try:
            a, b = diff_selections(params)
        except SelectionError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        per = params.get("per")
        per_step = default_per_step(a, b) if per not in ("step", "trace") else per == "step"
        view = build_diff(a, b, window=_window(request), per_step=per_step)
        payload = diff_payload(view)
        payload["kernels"] = payload["kernels"][: _top(params.get("top"))]
        return Response(DiffSerializer(payload).data)

    @extend_schema(
        request=AssignJobSerializer,
        responses={200: None, 400: None},
        description="Group traces into a job (editors). The label is stored in each "
        "artifact's metadata as `job`, so re-parses keep it; an empty job ungroups.",
    )
    @action(detail=False, methods=["post"], url_path="assign-job")
    def assign_job(self, request: Request) -> Response:
        form = AssignJobSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            changed = trace_job_assign(
                trace_ids=form.validated_data["traces"], job=form.validated_data["job"]
            )
        except TraceJobError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"changed": changed, "job": form.validated_data["job"].strip()})


def _top(value: str | None) -> int:
    try:
        return max(1, min(500, int(value or 50)))
    except ValueError:
        return 50
