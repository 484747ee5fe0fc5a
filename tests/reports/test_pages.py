"""Report pages: login, builder, permalink page, versions, rebuild, list bounds, Compare."""

from __future__ import annotations

import csv
import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from artifacts.models import BenchmarkRun
from reports.models import Report
from reports.services import report_create, report_rebuild

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/reports/", "/reports/new/", "/reports/1/", "/reports/1/export/"])
def test_anonymous_page_requests_redirect_to_login(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_nav_links_to_reports(editor_client):
    assert 'href="/reports/"' in editor_client.get("/").content.decode()


def test_run_list_compare_sends_the_ticked_runs_to_the_builder(editor_client, pair):
    runs = list(BenchmarkRun.objects.filter(collective="alltoall").order_by("pk"))
    page = editor_client.get("/runs/").content.decode()
    assert 'action="/reports/new/"' in page and f'name="run" value="{runs[0].pk}"' in page
    builder = editor_client.get("/reports/new/", {"run": [r.pk for r in runs]}).content.decode()
    for run in runs:
        assert f'name="run" value="{run.pk}" checked' in builder


def test_builder_post_saves_the_report_and_opens_its_permalink(editor_client, pair):
    runs = [r.pk for r in BenchmarkRun.objects.filter(collective="sendrecv")]
    response = editor_client.post(
        "/reports/new/",
        {"kind": "runs", "title": "sendrecv G1 vs G8", "run": runs, "group_by": "artifact"},
    )
    report = Report.objects.get()
    assert response.status_code == 302 and response.url == f"/reports/{report.pk}/"
    page = editor_client.get(response.url).content.decode()
    assert "sendrecv G1 vs G8" in page and 'id="table-deltas"' in page
    assert 'data-figure="figure-1"' in page and "vendor/plotly.min.js" in page
    assert f"{{{{report id={report.pk} chart=curves-sendrecv}}}}" in page  # embed snippet
    assert pair[0].sha256[:16] in page  # pinned inputs


def test_builder_explains_a_request_that_cannot_make_a_report(editor_client, pair):
    run = BenchmarkRun.objects.filter(collective="sendrecv").first()
    response = editor_client.post(
        "/reports/new/", {"kind": "runs", "title": "one", "run": [run.pk]}, follow=True
    )
    assert "nothing to compare" in response.content.decode()
    assert not Report.objects.exists()


def test_viewer_reads_reports_but_cannot_build_or_rebuild(viewer_client, pair_report, pair):
    page = viewer_client.get(f"/reports/{pair_report.pk}/").content.decode()
    assert "Re-build" not in page and "G1 vs G8" in page
    viewer_client.post(f"/reports/{pair_report.pk}/rebuild/")
    runs = [r.pk for r in BenchmarkRun.objects.all()]
    viewer_client.post("/reports/new/", {"kind": "runs", "title": "x", "run": runs})
    assert Report.objects.count() == 1


def test_rebuild_button_makes_version_two_and_both_pages_list_the_versions(
    editor_client, pair_report
):
    response = editor_client.post(f"/reports/{pair_report.pk}/rebuild/")
    v2 = Report.objects.get(version=2)
    assert response.url == f"/reports/{v2.pk}/"
    old = editor_client.get(f"/reports/{pair_report.pk}/").content.decode()
    assert "A newer version exists" in old and f'href="/reports/{v2.pk}/">v2</a>' in old
    new = editor_client.get(f"/reports/{v2.pk}/").content.decode()
    assert f'href="/reports/{pair_report.pk}/">v1</a>' in new and "<b>v2</b> (this)" in new


def test_report_list_filters_exports_csv_and_shows_latest_versions(
    editor_client, pair_report, pair
):
    report_rebuild(report=pair_report)
    other = report_create(kind="runs", title="other one", artifact_ids=[a.pk for a in pair])
    page = editor_client.get("/reports/").content.decode()
    assert "other one" in page and "v2" in page
    assert f'href="/reports/{pair_report.pk}/"' not in page  # v1 is superseded by v2
    assert "G1 vs G8" not in editor_client.get("/reports/", {"q": "other"}).content.decode()
    rows = list(
        csv.reader(io.StringIO(editor_client.get("/reports/", {"format": "csv"}).content.decode()))
    )
    assert rows[0][:4] == ["id", "title", "kind", "version"] and len(rows) == 3
    assert {int(r[0]) for r in rows[1:]} == {other.pk, Report.objects.get(version=2).pk}


def test_report_list_query_count_does_not_grow_with_the_reports(editor_client, pair_report):
    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert editor_client.get("/reports/").status_code == 200
        return len(ctx.captured_queries)

    few = queries()
    for _ in range(6):
        report_rebuild(report=pair_report)
    Report.objects.bulk_create(
        Report(kind="runs", title=f"r{i}", status="ready", summary=["x"]) for i in range(20)
    )
    assert queries() == few <= 8


def test_builder_offers_traces_and_counters_and_builds_from_ticked_artifacts(editor_client, parsed):
    a = parsed("torch_profiler/hta_alexnet_cuda_sync.json.gz")
    b = parsed("torch_profiler/hta_gpu_user_annotation_step_based.json.gz")
    page = editor_client.get("/reports/new/", {"kind": "traces"}).content.decode()
    assert f'name="artifact" value="{a.pk}"' in page and "two jobs (by job label)" in page
    response = editor_client.post(
        "/reports/new/",
        {"kind": "traces", "title": "two traces", "artifact": [a.pk, b.pk], "group_by": "artifact"},
    )
    report = Report.objects.get()
    assert response.url == f"/reports/{report.pk}/" and report.kind == "traces"
    shown = editor_client.get(response.url).content.decode()
    assert 'id="table-kernels"' in shown and 'id="chart-breakdown"' in shown
    counters = editor_client.get("/reports/new/", {"kind": "counters"}).content.decode()
    assert "Nothing uploaded of this kind yet." in counters
