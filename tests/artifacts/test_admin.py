"""The admin lists every evidence model of the artifacts app, read-only."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.urls import reverse

from artifacts import models
from tests.artifacts.traces.factory import ingest_job

EVIDENCE = [
    models.TraceSummary,
    models.TraceKernelStat,
    models.TraceStep,
    models.TraceCollective,
    models.NsightReport,
    models.NsightKernelStat,
    models.NsightMemStat,
    models.NsightApiStat,
    models.NsightRange,
    models.NcuKernel,
    models.CounterSnapshot,
    models.CounterSample,
    models.CounterRate,
    models.LogEvent,
    models.HostFact,
    models.Finding,
]


@pytest.fixture
def admin_user_client(client: Any, django_user_model: Any) -> Any:
    user = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_every_evidence_model_is_registered_and_lists(admin_user_client: Any) -> None:
    ingest_job(2, label="admin-job")
    for model in EVIDENCE:
        assert admin.site.is_registered(model), model.__name__
        meta = model._meta
        url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
        response = admin_user_client.get(url, {"q": "node"})
        assert response.status_code == 200, (model.__name__, response.status_code)
        # derived rows cannot be added by hand: they come from parsing
        add = reverse(f"admin:{meta.app_label}_{meta.model_name}_add")
        assert admin_user_client.get(add).status_code == 403, model.__name__


@pytest.mark.django_db
def test_trace_rows_are_shown_but_not_editable(admin_user_client: Any) -> None:
    artifacts = ingest_job(2, label="admin-job")
    trace = models.TraceSummary.objects.get(artifact=artifacts[0])
    url = reverse("admin:artifacts_tracesummary_change", args=[trace.pk])
    response = admin_user_client.get(url)
    assert response.status_code == 200
    body = response.content.decode()
    assert "admin-job" in body and "sm90_xmma_gemm" in body  # the kernel inline
    assert 'name="job_label"' not in body  # read-only: no input for it
    changelist = admin_user_client.get(reverse("admin:artifacts_tracesummary_changelist"))
    assert "admin-job" in changelist.content.decode()


def test_non_admins_are_sent_to_the_login_page(viewer_client: Any) -> None:
    response = viewer_client.get(reverse("admin:artifacts_tracesummary_changelist"))
    assert response.status_code == 302 and "/login/" in response["Location"]
