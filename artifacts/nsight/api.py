"""REST endpoints for the Nsight summaries of one artifact. Read-only adapters."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from artifacts.models import Artifact, NcuKernel, NsightReport
from artifacts.nsight.querysets import NCU_KERNEL_SORTS, NCU_KINDS, NSYS_KINDS, ncu_kernels
from artifacts.nsight.serializers import (
    NcuKernelSerializer,
    NcuSummarySerializer,
    NsysSummarySerializer,
    nsys_payload,
)


class NsysSummaryView(APIView):
    @extend_schema(
        responses=NsysSummarySerializer,
        description="Nsight Systems summary of one artifact (SQLite export, nsys stats output "
        "or .nsys-rep): session facts, GPUs, binned GPU utilisation, and the kernel, memory, "
        "CUDA API, OS runtime and NVTX range summaries (times in ns, at most 5000 rows each).",
    )
    def get(self, request: Request, pk: int) -> Response:
        artifact = get_object_or_404(Artifact, pk=pk, kind__in=NSYS_KINDS)
        report = NsightReport.objects.filter(artifact=artifact).first()
        return Response(NsysSummarySerializer(nsys_payload(artifact, report)).data)


class NcuSummaryView(APIView):
    @extend_schema(
        responses=NcuSummarySerializer,
        description="Nsight Compute summary of one artifact; its kernels are at `kernels_url`.",
    )
    def get(self, request: Request, pk: int) -> Response:
        artifact = get_object_or_404(Artifact, pk=pk, kind__in=NCU_KINDS)
        url = request.build_absolute_uri(reverse("api-ncu-kernels", args=[artifact.pk]))
        body = {
            "artifact": artifact.pk,
            "kind": artifact.kind,
            "status": artifact.status,
            "warnings": list(artifact.warnings or []),
            "summary": artifact.summary or {},
            "kernels": NcuKernel.objects.filter(artifact=artifact).count(),
            "kernels_url": url,
        }
        return Response(NcuSummarySerializer(body).data)


@extend_schema(
    parameters=[
        OpenApiParameter("q", str, description="kernel name contains"),
        OpenApiParameter("sort", str, enum=list(NCU_KERNEL_SORTS)),
    ],
    description="Profiled kernels with key metrics, every metric and the rule messages.",
)
class NcuKernelList(generics.ListAPIView):
    serializer_class = NcuKernelSerializer
    filter_backends: list[type] = []  # filtering is done by ncu_kernels

    def get_queryset(self) -> QuerySet[NcuKernel]:
        artifact = get_object_or_404(Artifact, pk=self.kwargs["pk"], kind__in=NCU_KINDS)
        return ncu_kernels(artifact, self.request.query_params)
