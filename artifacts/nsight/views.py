"""Nsight pages: the list of Nsight artifacts, the Nsight Systems page and the Nsight Compute
page of one artifact. Adapters: read querysets, format with tables.py, render or export."""

from __future__ import annotations

from typing import Any

import pandas as pd
from django import forms
from django.conf import settings
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render

from artifacts import exports
from artifacts.models import Artifact, NsightApiStat, NsightMemStat, NsightRange, NsightReport
from artifacts.nsight import tables
from artifacts.nsight.querysets import (
    NCU_KERNEL_SORTS,
    NCU_KINDS,
    NSIGHT_KINDS,
    NSYS_KERNEL_SORTS,
    NSYS_KINDS,
    ncu_kernels,
    nsight_artifacts,
    nsys_api,
    nsys_kernels,
)
from artifacts.parsers import kind_label
from charts.figures import gpu_utilisation_timeline

# Tables other than the paginated kernels show this many rows; the CSV always has them all.
PAGE_ROWS = 200


class NsightFilterForm(forms.Form):
    kind = forms.ChoiceField(
        required=False,
        choices=[("", "any")] + [(k, kind_label(k)) for k in NSIGHT_KINDS],
    )
    label = forms.CharField(required=False)
    host = forms.CharField(required=False)
    q = forms.CharField(required=False, label="File name")


def nsight_list(request: HttpRequest) -> HttpResponse:
    artifacts = nsight_artifacts(request.GET)
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            "nsight.csv",
            ["id", "name", "kind", "status", "label", "host", "uploaded_at", "summary"],
            (
                (a.pk, a.original_name, a.kind, a.status, a.label, a.host, a.uploaded_at,
                 _summary_text(a.summary))
                for a in artifacts
            ),
        )  # fmt: skip
    page = Paginator(artifacts, settings.PERFHUB_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "nsight/nsight_list.html",
        {"form": NsightFilterForm(request.GET), "page": page},
    )


def nsys_detail(request: HttpRequest, pk: int) -> HttpResponse:
    artifact = get_object_or_404(Artifact.objects.select_related("uploaded_by"), pk=pk)
    if artifact.kind not in NSYS_KINDS:
        raise Http404("not an Nsight Systems artifact")
    report = NsightReport.objects.filter(artifact=artifact).first()
    fmt = request.GET.get("format")
    if fmt == "csv":
        return _nsys_csv(request, artifact, report)
    if fmt == "json":
        return exports.json_response(f"nsys-{artifact.pk}.json", _nsys_json(artifact, report))
    kernels = nsys_kernels(artifact, request.GET)
    kernel_page = Paginator(kernels, settings.PERFHUB_PAGE_SIZE).get_page(request.GET.get("page"))
    context: dict[str, Any] = {
        "artifact": artifact,
        "report": report,
        "kernel_page": kernel_page,
        "kernels": _table("kernels", tables.NSYS_TABLES, kernel_page.object_list),
        "kernel_sorts": list(NSYS_KERNEL_SORTS),
        "chart": None,
    }
    if report is not None:
        for key, items in _nsys_sections(artifact, report).items():
            context[key] = _table(key, tables.NSYS_TABLES, items[:PAGE_ROWS], total=len(items))
        points = tables.utilisation_points(report.utilisation)
        if points:
            context["chart"] = gpu_utilisation_timeline(pd.DataFrame(points)).to_json()
    return render(request, "nsight/nsys_detail.html", context)


def ncu_detail(request: HttpRequest, pk: int) -> HttpResponse:
    artifact = get_object_or_404(Artifact.objects.select_related("uploaded_by"), pk=pk)
    if artifact.kind not in NCU_KINDS:
        raise Http404("not an Nsight Compute artifact")
    kernels = ncu_kernels(artifact, request.GET)
    fmt = request.GET.get("format")
    if fmt == "csv":
        table = request.GET.get("table", "kernels")
        if table not in tables.NCU_TABLES:
            return _bad_table(table, tables.NCU_TABLES)
        _title, columns = tables.NCU_TABLES[table]
        items = tables.metric_rows(kernels) if table == "metrics" else kernels
        return exports.csv_response(
            f"ncu-{artifact.pk}-{table}.csv", tables.header(columns), tables.rows(columns, items)
        )
    if fmt == "json":
        payload = {
            "artifact": artifact.pk,
            "kind": artifact.kind,
            "kernels": list(kernels.values()),
        }
        return exports.json_response(f"ncu-{artifact.pk}.json", payload)
    page = Paginator(kernels, settings.PERFHUB_PAGE_SIZE).get_page(request.GET.get("page"))
    table = _table("kernels", tables.NCU_TABLES, page.object_list)
    return render(
        request,
        "nsight/ncu_detail.html",
        {
            "artifact": artifact,
            "page": page,
            "table": table,
            "rows": list(zip(page.object_list, table["cells"], strict=True)),
            "sorts": list(NCU_KERNEL_SORTS),
            "total": page.paginator.count,
        },
    )


def _nsys_sections(artifact: Artifact, report: NsightReport) -> dict[str, list[Any]]:
    return {
        "memory": list(NsightMemStat.objects.filter(artifact=artifact)),
        "api": list(nsys_api(artifact, NsightApiStat.Api.CUDA)),
        "osrt": list(nsys_api(artifact, NsightApiStat.Api.OSRT)),
        "ranges": list(NsightRange.objects.filter(artifact=artifact)),
        "gpus": list(report.gpus),
        "nvtx_domains": list((report.target or {}).get("nvtx_domains") or []),
    }


def _nsys_csv(
    request: HttpRequest, artifact: Artifact, report: NsightReport | None
) -> HttpResponse:
    table = request.GET.get("table", "kernels")
    if table not in tables.NSYS_TABLES:
        return _bad_table(table, tables.NSYS_TABLES)
    _title, columns = tables.NSYS_TABLES[table]
    items: Any
    if table == "kernels":
        items = nsys_kernels(artifact, request.GET)
    elif report is None:
        items = []
    elif table == "utilisation":
        items = tables.utilisation_points(report.utilisation)
    else:
        items = _nsys_sections(artifact, report)[table]
    return exports.csv_response(
        f"nsys-{artifact.pk}-{table}.csv", tables.header(columns), tables.rows(columns, items)
    )


def _nsys_json(artifact: Artifact, report: NsightReport | None) -> dict[str, Any]:
    from artifacts.nsight.serializers import (
        nsys_payload,  # the API's shape, shared with the JSON export
    )

    return nsys_payload(artifact, report)


def _table(
    key: str,
    registry: dict[str, tuple[str, tuple[tables.Column, ...]]],
    items: Any,
    total: int | None = None,
) -> dict[str, Any]:
    title, columns = registry[key]
    body = tables.rows(columns, items)
    return {
        "key": key,
        "title": title,
        "columns": columns,
        "rows": body,
        "cells": [list(zip(columns, row, strict=True)) for row in body],
        "total": len(body) if total is None else total,
    }


def _bad_table(table: str, registry: dict[str, Any]) -> HttpResponse:
    return HttpResponseBadRequest(
        f"this page has no table {table!r}; tables: {', '.join(registry)}",
        content_type="text/plain; charset=utf-8",
    )


def _summary_text(summary: dict[str, Any]) -> str:
    return "; ".join(f"{k}={v}" for k, v in (summary or {}).items() if k != "warnings")
