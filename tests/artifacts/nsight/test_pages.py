"""Nsight pages: login, tables, filters, exports that hold the page's numbers, bounded queries."""

from __future__ import annotations

import json

import pytest

from tests.artifacts.nsight.helpers import (
    NCU_TEXT,
    NCU_TORCH,
    REP,
    RTX3060,
    STATS_PADDLE,
    csv_rows,
    page_rows,
    parsed,
    parsed_bytes,
    parsed_path,
)
from tests.artifacts.nsight.parsers import nsys_synthetic
from tests.artifacts.nsight.parsers.test_ncu_csv import NEW_DETAILS

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(tmp_path):
    return parsed_path(nsys_synthetic.build(tmp_path / "job.sqlite"), label="job-7")


@pytest.mark.parametrize("url", ["/nsight/", "/nsight/systems/1/", "/nsight/compute/1/"])
def test_anonymous_requests_go_to_login(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_systems_page_shows_every_summary_and_the_chart(viewer_client, job):
    page = viewer_client.get(f"/nsight/systems/{job.pk}/").content.decode()
    for title in ("GPU kernels", "Memory operations", "CUDA API calls", "NVTX ranges", "GPUs"):
        assert title in page
    assert 'data-figure="utilisation-figure"' in page and "vendor/plotly.min.js" in page
    kernels = page_rows(page, "table-kernels")
    assert [r[0][:13] for r in kernels] == ["ncclDevKernel", "gemm_kernel(f"]
    assert kernels[0][1] == "yes" and kernels[1][1] == ""  # the NCCL flag
    assert 'class="nccl"' in page
    assert "node-a" in page and "550.54.15" in page


@pytest.mark.parametrize(
    "table", ["kernels", "memory", "api", "osrt", "ranges", "nvtx_domains", "gpus"]
)
def test_systems_csv_holds_the_numbers_on_the_page(viewer_client, job, table):
    page = viewer_client.get(f"/nsight/systems/{job.pk}/").content.decode()
    response = viewer_client.get(f"/nsight/systems/{job.pk}/", {"format": "csv", "table": table})
    assert response["Content-Disposition"].startswith("attachment;")
    rows = csv_rows(response.content)
    on_page = page_rows(page, f"table-{table}")
    assert rows[1:] == on_page and on_page


def test_kernel_numbers_are_microseconds_of_the_export(viewer_client, job):
    rows = csv_rows(
        viewer_client.get(
            f"/nsight/systems/{job.pk}/", {"format": "csv", "table": "kernels"}
        ).content
    )
    header, nccl, gemm = rows
    record = dict(zip(header, gemm, strict=True))
    # 5 gemm kernels: 100, 200, 300, 400 and 600 ns; launched 50 ns (x4) and 300 ns ahead
    assert (record["instances"], record["total_us"], record["med_us"]) == ("5", "1.600", "0.300")
    assert (record["launch_api"], record["avg_launch_us"]) == ("cudaLaunchKernel", "0.100")
    assert dict(zip(header, nccl, strict=True))["nccl"] == "yes"


def test_kernel_filters_apply_to_the_page_and_the_csv(viewer_client, job):
    url = f"/nsight/systems/{job.pk}/"
    page = viewer_client.get(url, {"nccl": "1"}).content.decode()
    assert len(page_rows(page, "table-kernels")) == 1
    export = csv_rows(viewer_client.get(url, {"nccl": "1", "format": "csv"}).content)
    assert len(export) == 2 and export[1][1] == "yes"
    by_name = csv_rows(viewer_client.get(url, {"q": "gemm", "format": "csv"}).content)
    assert [r[0][:4] for r in by_name[1:]] == ["gemm"]
    by_count = page_rows(
        viewer_client.get(url, {"sort": "count"}).content.decode(), "table-kernels"
    )
    assert by_count[0][2] == "5"


def test_utilisation_csv_has_one_row_per_bin_and_gpu(viewer_client, job):
    rows = csv_rows(
        viewer_client.get(
            f"/nsight/systems/{job.pk}/", {"format": "csv", "table": "utilisation"}
        ).content
    )
    assert rows[0] == ["device", "bin_start_ms", "busy_pct", "nccl_pct"]
    assert len(rows) == 1 + 2 * 100
    assert rows[1 + 52] == ["0", "0.005200", "50.00", "0.00"]  # the memset half of bin 52
    assert rows[1 + 100 + 10][2] == "100.00" and rows[1 + 100 + 10][3] == ""


def test_json_export_holds_the_summary(viewer_client, job):
    response = viewer_client.get(f"/nsight/systems/{job.pk}/", {"format": "json"})
    body = json.loads(response.content)
    assert body["kind"] == "nsys_sqlite" and len(body["kernels"]) == 2
    assert body["kernels"][0]["is_nccl"] is True and body["driver_version"] == "550.54.15"


def test_unknown_table_and_wrong_kind_are_refused(viewer_client, job):
    response = viewer_client.get(f"/nsight/systems/{job.pk}/", {"format": "csv", "table": "x"})
    assert response.status_code == 400 and b"has no table 'x'" in response.content
    assert viewer_client.get(f"/nsight/compute/{job.pk}/").status_code == 404


def test_stats_output_page_has_tables_but_no_timeline(viewer_client):
    artifact = parsed(STATS_PADDLE)
    page = viewer_client.get(f"/nsight/systems/{artifact.pk}/").content.decode()
    assert "only an SQLite export has the timeline" in page
    assert len(page_rows(page, "table-kernels")) == 27
    assert page_rows(page, "table-api")[0][:2] == ["cudaMalloc", "195"]


def test_nsys_rep_page_says_how_to_export(viewer_client):
    artifact = parsed(REP)
    page = viewer_client.get(f"/nsight/systems/{artifact.pk}/").content.decode()
    assert "nsys export --type sqlite --lazy=false p4arth_my_vector_add_report.nsys-rep" in page
    detail = viewer_client.get(f"/artifacts/{artifact.pk}/").content.decode()
    assert 'id="nsight-panel"' in detail and "nsys export --type sqlite" in detail


def test_artifact_page_links_to_the_nsight_page_without_extra_queries(
    viewer_client, job, django_assert_max_num_queries
):
    other = parsed(RTX3060)
    page = viewer_client.get(f"/artifacts/{job.pk}/").content.decode()
    assert f'href="/nsight/systems/{job.pk}/"' in page and "2 kernels" in page
    with django_assert_max_num_queries(20) as one:
        viewer_client.get(f"/artifacts/{other.pk}/")
    with django_assert_max_num_queries(len(one.captured_queries)):
        viewer_client.get(f"/artifacts/{job.pk}/")


def test_compute_page_table_equals_the_csv_and_shows_metrics_and_rules(viewer_client, tmp_path):
    artifact = parsed_bytes(NEW_DETAILS.encode(), "ncu_details.csv", tmp_path)
    assert artifact.kind == "ncu_csv"
    page = viewer_client.get(f"/nsight/compute/{artifact.pk}/").content.decode()
    on_page = page_rows(page, "table-kernels")
    export = csv_rows(
        viewer_client.get(f"/nsight/compute/{artifact.pk}/", {"format": "csv"}).content
    )
    assert export[1:] == on_page
    assert export[0][:5] == ["id", "name", "grid", "block", "duration_us"]
    assert on_page[0][4:10] == ["1234.560", "88.40", "71.25", "65.10", "45.67", "128"]
    for text in ("GPU Speed Of Light Throughput", "Launch Statistics", "Occupancy", "SOLBottleneck",
                 "Compute is more heavily utilized", "est. global speedup 11.6%"):  # fmt: skip
        assert text in page


def test_compute_metrics_csv_and_filters(viewer_client):
    artifact = parsed(NCU_TORCH)
    url = f"/nsight/compute/{artifact.pk}/"
    metrics = csv_rows(viewer_client.get(url, {"format": "csv", "table": "metrics"}).content)
    assert metrics[0] == ["kernel_id", "kernel", "section", "metric", "unit", "value"]
    assert len(metrics) == 1 + 140
    assert metrics[3][3:] == ["gpu__time_duration.sum", "nsecond", "5824"]
    sgemm = page_rows(viewer_client.get(url, {"q": "sgemm"}).content.decode(), "table-kernels")
    assert [r[1] for r in sgemm] == ["ampere_sgemm_32x32_sliced1x4_tn"]
    slowest = page_rows(
        viewer_client.get(url, {"sort": "duration"}).content.decode(), "table-kernels"
    )
    assert slowest[0][1] == "ampere_sgemm_32x32_sliced1x4_tn" and slowest[0][4] == "16.704"


def test_text_page_artifacts_have_the_compute_page(viewer_client):
    artifact = parsed(NCU_TEXT)
    page = viewer_client.get(f"/nsight/compute/{artifact.pk}/").content.decode()
    assert len(page_rows(page, "table-kernels")) == 14 and "default domain:0,convLayer" in page


def test_list_filters_exports_and_keeps_queries_bounded(
    viewer_client, job, django_assert_max_num_queries
):
    parsed(NCU_TORCH, label="ncu-run")
    page = viewer_client.get("/nsight/", {"kind": "ncu_csv"}).content.decode()
    assert "yktian_ncu_csv_details_nvtx_torch_gcn.txt" in page and "job.sqlite" not in page
    assert f'href="/nsight/systems/{job.pk}/"' in viewer_client.get("/nsight/").content.decode()
    rows = csv_rows(viewer_client.get("/nsight/", {"format": "csv", "label": "job-7"}).content)
    assert [r[1] for r in rows[1:]] == ["job.sqlite"]
    with django_assert_max_num_queries(10) as few:
        viewer_client.get("/nsight/")
    parsed(REP)
    parsed(STATS_PADDLE)
    with django_assert_max_num_queries(len(few.captured_queries)):
        viewer_client.get("/nsight/")


def test_systems_page_queries_are_bounded(viewer_client, job, django_assert_max_num_queries):
    with django_assert_max_num_queries(15):
        viewer_client.get(f"/nsight/systems/{job.pk}/")


def test_systems_page_summarises_nvtx_per_domain(viewer_client, tmp_path):
    import sqlite3

    path = nsys_synthetic.build(tmp_path / "domains.sqlite")
    conn = sqlite3.connect(path)
    conn.executemany(
        "INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, NULL, NULL, NULL, ?, 1, NULL, NULL, ?)",
        [(10, None, 75, "NCCL", 5), (1000, 1500, 59, "ncclAllReduce", 5)],
    )
    conn.commit()
    conn.close()
    artifact = parsed_path(path)
    page = viewer_client.get(f"/nsight/systems/{artifact.pk}/").content.decode()
    rows = {r[0]: r for r in page_rows(page, "table-nvtx_domains")}
    assert rows["NCCL"][1:4] == ["5", "1", "1"] and rows["NCCL"][4] == "0.500"
    assert rows["default"][2] == "3"  # the synthetic export's step, step, epoch
    assert "nvtx_domains" not in page.split('id="nvtx-domains"')[0]  # not dumped as a fact
