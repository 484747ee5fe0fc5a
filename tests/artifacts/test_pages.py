"""Server-rendered pages: login everywhere, filters, exports, downloads, bounded queries."""

import csv
import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from artifacts.models import BenchmarkRun
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from tests.samples import sample

pytestmark = pytest.mark.django_db

PAIR_OK = "nccl_tests/xxrjun_pair_N2_G1_ok.log"


def parsed(relative=PAIR_OK, **kwargs):
    path = sample(relative)
    with path.open("rb") as stream:
        artifact = artifact_ingest(stream=stream, name=path.name, **kwargs).artifact
    return artifact_parse(artifact_id=artifact.pk)


@pytest.mark.parametrize("url", ["/", "/artifacts/", "/runs/", "/account/token/", "/api-docs/"])
def test_anonymous_page_requests_redirect_to_login(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_login_page_is_styled_like_the_app_and_logs_in(client, editor):
    page = client.get("/login/")
    assert page.status_code == 200 and b"perfhub.css" in page.content
    response = client.post("/login/", {"username": "eddie", "password": "pw-eddie"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_artifact_list_filters_and_exports_csv(editor_client):
    parsed(label="nightly")
    parsed("nccl_tests/xxrjun_smoke_N2_G1.log", label="adhoc")
    page = editor_client.get("/artifacts/", {"label": "nightly"})
    assert b"xxrjun_pair_N2_G1_ok.log" in page.content
    assert b"xxrjun_smoke_N2_G1.log" not in page.content
    export = editor_client.get("/artifacts/", {"format": "csv"})
    rows = list(csv.reader(io.StringIO(export.content.decode())))
    assert rows[0][:3] == ["id", "name", "kind"] and len(rows) == 3


def test_artifact_detail_shows_status_and_runs(editor_client):
    artifact = parsed()
    page = editor_client.get(f"/artifacts/{artifact.pk}/").content.decode()
    assert "parsed" in page and "alltoall" in page and "Re-parse" in page


def test_viewer_sees_no_write_controls_and_cannot_reparse(viewer_client):
    artifact = parsed()
    page = viewer_client.get(f"/artifacts/{artifact.pk}/").content.decode()
    assert (
        "Re-parse" not in page
        and "Drop evidence files" not in viewer_client.get("/").content.decode()
    )
    viewer_client.post(f"/artifacts/{artifact.pk}/reparse/")
    artifact.refresh_from_db()
    assert artifact.status == "parsed"


def test_download_is_an_attachment_with_nosniff(editor_client):
    artifact = parsed()
    response = editor_client.get(f"/artifacts/{artifact.pk}/download/")
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Type"] == "application/octet-stream"
    assert b"".join(response.streaming_content) == sample(PAIR_OK).read_bytes()


def test_run_detail_embeds_a_bandwidth_chart_and_exports_the_same_numbers(editor_client):
    run = parsed().runs.get(collective="sendrecv")
    page = editor_client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="busbw-chart"' in page and "vendor/plotly.min.js" in page
    assert "busbw out-of-place" in page and "16 GiB" in page
    rows = list(
        csv.DictReader(
            io.StringIO(editor_client.get(f"/runs/{run.pk}/?format=csv").content.decode())
        )
    )
    assert len(rows) == 10
    assert float(rows[-1]["oop_busbw_gbps"]) == 13.59 and rows[-1]["ip_wrong"] == ""
    body = editor_client.get(f"/runs/{run.pk}/?format=json").json()
    assert body["collective"] == "sendrecv" and len(body["measurements"]) == 10


def test_plotly_js_is_served_locally(editor_client):
    response = editor_client.get("/static/vendor/plotly.min.js")
    assert response.status_code == 200


def test_run_list_filters_by_collective_and_host(editor_client):
    parsed()
    page = editor_client.get("/runs/", {"collective": "alltoall"}).content.decode()
    assert ">alltoall</a>" in page and ">sendrecv</a>" not in page
    assert "No runs match" in editor_client.get("/runs/", {"host": "nowhere"}).content.decode()
    export = editor_client.get("/runs/", {"format": "csv"}).content.decode()
    assert len(list(csv.reader(io.StringIO(export)))) == 3


@pytest.mark.parametrize("url", ["/", "/artifacts/", "/runs/"])
def test_list_pages_use_a_bounded_number_of_queries(editor_client, url):
    parsed()
    parsed("nccl_tests/xxrjun_singlenode_G8_h100.log")
    editor_client.get(url)  # warm caches (session, content types)
    with CaptureQueriesContext(connection) as few:
        editor_client.get(url)
    parsed("nccl_tests/xxrjun_multinode_N10_G1_10ranks_h100.log")
    parsed("nccl_tests/xxrjun_smoke_N2_G1.log")
    with CaptureQueriesContext(connection) as more:
        editor_client.get(url)
    assert BenchmarkRun.objects.count() > 10
    assert len(more) == len(few) <= 15


def test_artifact_lists_count_runs_per_listed_artifact_without_grouping_every_run():
    from artifacts.querysets import artifacts_filtered

    several, one = parsed("nccl_tests/xxrjun_multinode_N10_G8_80ranks_h100.log"), parsed()
    listed = {a.pk: a.run_count for a in artifacts_filtered({})}
    assert listed == {a.pk: BenchmarkRun.objects.filter(artifact=a).count() for a in (several, one)}
    assert listed[several.pk] > 1
    # grouped, the database would count every run of every artifact before a page's LIMIT
    assert 'GROUP BY "artifacts_artifact"."id"' not in str(artifacts_filtered({})[:8].query)
