"""Trace pages: list (filters, pagination, CSV), trace page, job page with stragglers, diff,
the trace panel on the artifact page, login/roles, bounded queries, CSV = page numbers."""

from __future__ import annotations

import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from artifacts.models import Artifact, TraceSummary
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from artifacts.traces.templatetags import ms, pct, signed, us
from tests.artifacts.traces.factory import ingest_job
from tests.samples import sample

pytestmark = pytest.mark.django_db

NCCL = "torch_profiler/hta_nccl_data_world2_rank0.json.gz"
SLOW = [1.0, 1.0, 1.0, 1.0, 1.5, 1.0]  # rank 4 computes 50 % longer


class _Tables(HTMLParser):
    """Cell texts of every <table id=...> of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:  # type: ignore[type-arg]
        if tag == "table":
            self._table = dict(attrs).get("id")
            if self._table:
                self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table:
            if self._row:
                self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def tables(html: bytes) -> dict[str, list[list[str]]]:
    parser = _Tables()
    parser.feed(html.decode())
    return parser.tables


def csv_rows(response) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def load(path: Path, **kwargs) -> Artifact:  # type: ignore[no-untyped-def]
    with path.open("rb") as stream:
        artifact = artifact_ingest(stream=stream, name=path.name, **kwargs).artifact
    return artifact_parse(artifact_id=artifact.pk)


def number(text: str) -> float | None:
    return None if text in ("", "None") else float(text)


# ---------------------------------------------------------------------------------------
# Access
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["/traces/", "/traces/1/", "/traces/jobs/", "/traces/job/?job=x", "/traces/diff/"]
)
def test_anonymous_requests_go_to_login(client, url: str) -> None:  # type: ignore[no-untyped-def]
    response = client.get(url)
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_nav_has_a_traces_link(viewer_client) -> None:  # type: ignore[no-untyped-def]
    page = viewer_client.get("/traces/").content.decode()
    assert '<a href="/traces/" class="active">Traces</a>' in page


def test_viewers_cannot_group_traces(viewer_client) -> None:  # type: ignore[no-untyped-def]
    arts = ingest_job(3, label="", metadata=None)
    page = viewer_client.get("/traces/").content.decode()
    assert 'id="assign-job"' not in page
    viewer_client.post("/traces/assign-job/", {"trace": [a.pk for a in arts], "job": "x"})
    assert not TraceSummary.objects.filter(job_label="x").exists()


def test_editors_group_ticked_traces_into_a_job(editor_client) -> None:  # type: ignore[no-untyped-def]
    arts = ingest_job(3, label="")
    assert 'id="assign-job"' in editor_client.get("/traces/").content.decode()
    response = editor_client.post(
        "/traces/assign-job/", {"trace": [a.pk for a in arts[:2]], "job": "run-17"}
    )
    assert response.status_code == 302 and response.url == "/traces/job/?job=run-17"
    assert TraceSummary.objects.filter(job_label="run-17").count() == 2
    arts[0].refresh_from_db()
    assert arts[0].metadata["job"] == "run-17"  # survives a re-parse
    artifact_parse(artifact_id=arts[0].pk)
    assert TraceSummary.objects.get(pk=arts[0].pk).job_label == "run-17"


# ---------------------------------------------------------------------------------------
# List
# ---------------------------------------------------------------------------------------


def test_list_filters_paginates_and_exports(editor_client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PERFHUB_PAGE_SIZE = 4
    ingest_job(6, label="job-a", hosts=["a1", "a1", "a2", "a2", "a3", "a3"])
    ingest_job(2, label="job-b", hosts=["b1", "b1"])
    page = editor_client.get("/traces/", {"job": "job-a"})
    assert page.context["page"].paginator.count == 6
    assert len(page.context["page"].object_list) == 4
    assert {t.job_label for t in page.context["page"].object_list} == {"job-a"}
    assert editor_client.get("/traces/", {"rank": 1}).context["page"].paginator.count == 2
    assert editor_client.get("/traces/", {"host": "a2"}).context["page"].paginator.count == 2
    assert editor_client.get("/traces/", {"label": "job-b"}).context["page"].paginator.count == 2
    assert (
        editor_client.get("/traces/", {"since": "2024-05-29"}).context["page"].paginator.count == 8
    )  # recorded 2024-05-29 (baseTimeNanoseconds)
    assert (
        editor_client.get("/traces/", {"until": "2024-05-28"}).context["page"].paginator.count == 0
    )
    rows = csv_rows(editor_client.get("/traces/", {"job": "job-a", "format": "csv"}))
    assert len(rows) == 6 and {r["job_label"] for r in rows} == {"job-a"}
    first = TraceSummary.objects.get(pk=int(rows[0]["id"]))
    assert number(rows[0]["compute_pct"]) == first.compute_pct


def test_list_queries_do_not_grow_with_rows(editor_client, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    ingest_job(3, label="small")
    with django_assert_max_num_queries(10):
        editor_client.get("/traces/")
    ingest_job(12, label="big")
    with django_assert_max_num_queries(10):
        assert editor_client.get("/traces/").status_code == 200
    with django_assert_max_num_queries(10):
        assert editor_client.get("/traces/jobs/").status_code == 200


# ---------------------------------------------------------------------------------------
# Trace page
# ---------------------------------------------------------------------------------------


def test_trace_page_shows_both_windows_kernels_steps_collectives(editor_client) -> None:  # type: ignore[no-untyped-def]
    trace = load(sample(NCCL), label="exp").trace
    response = editor_client.get(f"/traces/{trace.pk}/")
    page = response.content.decode()
    assert response.status_code == 200
    for text in ("whole trace", "HTA window", "Two windows: which one to read", "Kernels (",
                 "ProfilerSteps (", "allreduce", "NVIDIA A100-PG509-200", "host wait",
                 "short kernels", "default_pg"):  # fmt: skip
        assert text in page, text
    assert f"{trace.steps_span_us:,.1f}" in page and f"{trace.span_us:,.1f}" in page
    figure = json.loads(
        json.loads(
            page.split('id="breakdown-figure" type="application/json">')[1].split("</script>")[0]
        )
    )
    assert figure["layout"]["barmode"] == "stack"
    assert {d["name"] for d in figure["data"]} >= {"compute", "idle", "exposed communication"}


def test_kernel_table_filters_by_type_and_csv_equals_the_page(editor_client) -> None:  # type: ignore[no-untyped-def]
    trace = load(sample(NCCL)).trace
    page = editor_client.get(f"/traces/{trace.pk}/", {"type": "communication"})
    shown = tables(page.content)["kernel-table"]
    assert shown and {row[1] for row in shown} == {"communication"}
    exported = csv_rows(
        editor_client.get(
            f"/traces/{trace.pk}/", {"format": "csv", "table": "kernels", "type": "communication"}
        )
    )
    assert len(exported) == len(shown) == trace.kernels.filter(kernel_type="communication").count()
    for row, cells in zip(exported, shown, strict=True):
        assert cells[0].startswith(row["name"][:100].rstrip("…"))
        assert cells[3] == us(float(row["sum_us"])) and cells[6] == us(float(row["max_us"]))
        assert cells[8] == pct(number(row["share_pct"]))
    # without the filter: the page shows the top 50, the CSV has every stored kernel
    everything = csv_rows(editor_client.get(f"/traces/{trace.pk}/", {"format": "csv"}))
    assert len(everything) == trace.kernels.count() > 50
    assert len(tables(editor_client.get(f"/traces/{trace.pk}/").content)["kernel-table"]) == 50


def test_every_trace_table_exports(editor_client) -> None:  # type: ignore[no-untyped-def]
    trace = load(sample(NCCL)).trace
    for table in ("breakdown", "kernel_types", "steps", "collectives", "collectives_summary",
                  "idle", "launch"):  # fmt: skip
        rows = csv_rows(
            editor_client.get(f"/traces/{trace.pk}/", {"format": "csv", "table": table})
        )
        assert rows, table
    breakdown = csv_rows(
        editor_client.get(f"/traces/{trace.pk}/", {"format": "csv", "table": "breakdown"})
    )
    assert [r["window"] for r in breakdown] == ["trace", "steps"]
    assert number(breakdown[1]["idle_us"]) == trace.steps_idle_us
    steps = csv_rows(editor_client.get(f"/traces/{trace.pk}/", {"format": "csv", "table": "steps"}))
    assert [int(s["step"]) for s in steps] == list(trace.steps.values_list("step", flat=True))
    body = json.loads(editor_client.get(f"/traces/{trace.pk}/", {"format": "json"}).content)
    assert body["rank"] == 0 and len(body["kernels"]) == trace.kernels.count()
    assert (
        editor_client.get(f"/traces/{trace.pk}/", {"format": "csv", "table": "x"}).status_code
        == 400
    )


def test_trace_page_queries_are_bounded(editor_client, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    trace = load(sample(NCCL)).trace
    with django_assert_max_num_queries(12):
        assert editor_client.get(f"/traces/{trace.pk}/", {"top": "all"}).status_code == 200


def test_cpu_only_trace_page_says_so(editor_client) -> None:  # type: ignore[no-untyped-def]
    trace = load(sample("torch_profiler/hta_no_distributedInfo_cpu_only.json.gz")).trace
    page = editor_client.get(f"/traces/{trace.pk}/").content.decode()
    assert "CPU-only trace" in page and "breakdown-figure" not in page


def test_artifact_page_links_to_its_trace(editor_client, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    trace = load(sample(NCCL), label="exp").trace
    # A fixed number: session, user, groups, artifact, bundle memberships, the fabric panel's
    # findings/events/snapshots/facts, the trace summary, runs and its job.
    with django_assert_max_num_queries(14):
        page = editor_client.get(f"/artifacts/{trace.pk}/").content.decode()
    assert 'id="trace-panel"' in page and f'href="/traces/{trace.pk}/"' in page
    assert "/traces/job/?job=exp" in page
    pending = artifact_ingest(
        stream=io.BytesIO(b'{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel"}]}'),
        name="t.json",
        enqueue=False,
    ).artifact
    page = editor_client.get(f"/artifacts/{pending.pk}/").content.decode()
    assert "appear here once the parse has finished" in page


# ---------------------------------------------------------------------------------------
# Job page
# ---------------------------------------------------------------------------------------


def test_job_page_highlights_the_slow_rank(editor_client) -> None:  # type: ignore[no-untyped-def]
    arts = ingest_job(6, slowdowns=SLOW, label="job-a")
    response = editor_client.get("/traces/job/", {"job": "job-a"})
    page = response.content.decode()
    stragglers = response.context["analysis"].stragglers
    assert {(s.rank, s.signal) for s in stragglers} == {
        (4, "step_compute"),
        (4, "collective_lateness"),
    }
    assert "rank 4 on node-0: median GPU compute per step 6.00 ms" in page
    rows = tables(response.content)["rank-table"]
    assert [r[0] for r in rows] == ["0", "1", "2", "3", "4", "5"]
    slow = arts[4].pk
    assert '<tr class="straggler" title="straggler: step_compute;collective_lateness">' in page
    assert f'href="/traces/{slow}/"' in page
    for chart in ("job-breakdown", "job-steps", "job-wait", "job-lateness"):
        assert f'id="{chart}"' in page


def test_job_csv_equals_the_page(editor_client) -> None:  # type: ignore[no-untyped-def]
    ingest_job(6, slowdowns=SLOW, label="job-a")
    response = editor_client.get("/traces/job/", {"job": "job-a"})
    shown = tables(response.content)["rank-table"]
    exported = csv_rows(editor_client.get("/traces/job/", {"job": "job-a", "format": "csv"}))
    assert len(exported) == len(shown) == 6
    for row, cells in zip(exported, shown, strict=True):
        assert cells[0] == row["rank"]
        assert cells[4] == ms(number(row["step_time_us"]))
        assert cells[5] == ms(number(row["step_compute_us"]))
        assert cells[7] == pct(number(row["compute_pct"]))
        assert cells[12] == ms(number(row["comm_wait_us"]))
        assert cells[13] == ms(number(row["lateness_us"]))
    assert exported[4]["straggler"] == "step_compute;collective_lateness"
    stragglers = csv_rows(
        editor_client.get("/traces/job/", {"job": "job-a", "format": "csv", "table": "stragglers"})
    )
    assert {r["rank"] for r in stragglers} == {"4"}
    steps = csv_rows(
        editor_client.get("/traces/job/", {"job": "job-a", "format": "csv", "table": "steps"})
    )
    assert len(steps) == 6 * 4
    assert (
        json.loads(editor_client.get("/traces/job/", {"job": "job-a", "format": "json"}).content)[
            "stragglers"
        ][0]["rank"]
        == 4
    )


def test_job_page_queries_do_not_grow_with_ranks(
    editor_client, django_assert_max_num_queries
) -> None:  # type: ignore[no-untyped-def]
    ingest_job(3, label="small")
    ingest_job(16, label="big", slowdowns=[1.0] * 15 + [2.0])
    for job in ("small", "big"):
        with django_assert_max_num_queries(10):
            assert editor_client.get("/traces/job/", {"job": job}).status_code == 200


def test_ticked_traces_and_upload_batches_are_jobs_too(editor_client, editor) -> None:  # type: ignore[no-untyped-def]
    arts = ingest_job(4, slowdowns=[1.0, 1.0, 1.0, 1.6], label="", uploaded_by=editor)
    ids = [a.pk for a in arts]
    response = editor_client.get("/traces/job/", {"trace": ids})
    assert [s.rank for s in response.context["analysis"].stragglers] == [3, 3]
    assert "Save these traces as job" in response.content.decode()
    jobs = editor_client.get("/traces/jobs/").context["page"].object_list
    assert [j.trace_ids for j in jobs] == [tuple(sorted(ids))]
    assert "upload batch" in jobs[0].title and jobs[0].ranks == 4
    assert editor_client.get("/traces/job/", {"ids": ",".join(map(str, ids))}).status_code == 200


def test_a_bad_job_selection_says_why(editor_client) -> None:  # type: ignore[no-untyped-def]
    response = editor_client.get("/traces/job/", {"job": "nope"}, follow=True)
    assert "no trace has the job label" in response.content.decode()
    response = editor_client.get("/traces/job/", {"ids": "1,x"}, follow=True)
    assert "is not a trace id" in response.content.decode()


# ---------------------------------------------------------------------------------------
# Diff page
# ---------------------------------------------------------------------------------------


def test_diff_of_two_traces_lists_the_kernels_that_changed_most(editor_client) -> None:  # type: ignore[no-untyped-def]
    fast = ingest_job(3, label="fast")
    slow = ingest_job(3, label="slow", slowdowns=[1.2, 1.2, 1.2], gemm="sm90_gemm_v2")
    response = editor_client.get("/traces/diff/", {"a": fast[0].pk, "b": slow[0].pk})
    assert response.status_code == 200
    view = response.context["view"]
    assert view.per_step  # both have ProfilerSteps
    assert view.caveats == []  # same GPU, world size and platform
    kernels = view.kernels.set_index("name")
    assert kernels.loc["sm90_gemm_v2", "change"] == "new"
    assert kernels.loc["sm90_xmma_gemm_bf16bf16_bf16f32", "change"] == "gone"
    shown = tables(response.content)["diff-kernel-table"]
    exported = csv_rows(
        editor_client.get("/traces/diff/", {"a": fast[0].pk, "b": slow[0].pk, "format": "csv"})
    )
    assert len(shown) == len(exported) == 3
    for row, cells in zip(exported, shown, strict=True):
        assert cells[6] == signed(number(row["delta_us"])) and cells[8] == row["change"]
    breakdown = csv_rows(
        editor_client.get(
            "/traces/diff/",
            {"a": fast[0].pk, "b": slow[0].pk, "format": "csv", "table": "breakdown"},
        )
    )
    compute = next(r for r in breakdown if r["metric"] == "compute_us")
    assert number(compute["a"]) == 4000.0 and number(compute["b"]) == 4800.0  # per step
    assert number(compute["delta_pct"]) == 20.0


def test_diff_of_two_jobs_compares_the_mean_rank(editor_client) -> None:  # type: ignore[no-untyped-def]
    ingest_job(4, label="before")
    ingest_job(4, label="after", slowdowns=[1.0, 1.0, 1.0, 2.0])
    response = editor_client.get(
        "/traces/diff/", {"a_job": "before", "b_job": "after", "per": "trace"}
    )
    view = response.context["view"]
    assert not view.per_step and len(view.a.traces) == len(view.b.traces) == 4
    gemm = view.kernels.set_index("name").loc["sm90_xmma_gemm_bf16bf16_bf16f32"]
    # 4 steps x 2 GEMMs x 2 ms; one rank of four at 2x: mean rank +25 %
    assert gemm["a_sum_us"] == 16_000.0 and gemm["b_sum_us"] == 20_000.0
    assert "after (4 traces)" in response.content.decode()


def test_diff_of_unlike_traces_says_what_differs(editor_client) -> None:  # type: ignore[no-untyped-def]
    small = ingest_job(2, label="two")
    large = ingest_job(4, label="four")
    response = editor_client.get("/traces/diff/", {"a": small[0].pk, "b": large[0].pk})
    assert response.context["view"].caveats == ["A and B differ in world size: 2 vs 4"]
    assert "A and B differ in world size: 2 vs 4" in response.content.decode()
    exported = editor_client.get(
        "/traces/diff/", {"a": small[0].pk, "b": large[0].pk, "format": "json"}
    ).json()
    assert exported["caveats"] == ["A and B differ in world size: 2 vs 4"]


def test_diff_picker_and_errors(editor_client) -> None:  # type: ignore[no-untyped-def]
    page = editor_client.get("/traces/diff/")
    assert page.status_code == 200 and b"Pick two traces" in page.content
    bad = editor_client.get("/traces/diff/", {"a": 999999, "b": 1})
    assert bad.status_code == 400 and b"no trace with id 999999" in bad.content
    arts = ingest_job(3, label="x")
    ticked = editor_client.get("/traces/diff/", {"trace": [arts[0].pk, arts[1].pk]})
    assert ticked.status_code == 200 and ticked.context["view"].b.traces[0].pk == arts[1].pk
    three = editor_client.get("/traces/diff/", {"trace": [a.pk for a in arts]})
    assert three.status_code == 400 and b"tick exactly two" in three.content


def test_annotations_per_domain_are_shown_and_export(editor_client) -> None:  # type: ignore[no-untyped-def]
    trace = load(sample("torch_profiler/hta_gpu_user_annotation_step_based.json.gz")).trace
    page = editor_client.get(f"/traces/{trace.pk}/")
    found = tables(page.content)
    domains = {row[0]: row for row in found["annotation-domains"]}
    # 5 steps x (Optimizer.step + Optimizer.zero_grad), host side and GPU side
    assert domains["user_annotation"][1:3] == ["10", "2"]
    assert domains["gpu_user_annotation"][1:3] == ["10", "2"]
    assert ["gpu_user_annotation", "Optimizer.step#SGD.step", "5"] in [
        row[:3] for row in found["annotations"]
    ]
    rows = csv_rows(
        editor_client.get(f"/traces/{trace.pk}/", {"format": "csv", "table": "annotations"})
    )
    by_key = {(r["domain"], r["name"]): r for r in rows}
    step = by_key[("gpu_user_annotation", "Optimizer.step#SGD.step")]
    assert (int(step["count"]), float(step["sum_us"])) == (5, 321.0)
    summary = csv_rows(
        editor_client.get(f"/traces/{trace.pk}/", {"format": "csv", "table": "annotation_domains"})
    )
    assert {r["domain"]: int(r["ranges"]) for r in summary} == {
        "gpu_user_annotation": 10,
        "user_annotation": 10,
    }


def test_job_list_filters_and_its_csv_applies_the_same_filters(editor_client, editor) -> None:  # type: ignore[no-untyped-def]
    ingest_job(3, label="llama-run-1")
    ingest_job(2, label="gpt-run-2")
    ingest_job(2, label="", uploaded_by=editor)  # an upload batch
    every = editor_client.get("/traces/jobs/").context["page"].object_list
    assert {j.title for j in every if j.label} == {"llama-run-1", "gpt-run-2"}
    assert any(not j.label for j in every)
    for query, titles in (
        ({"q": "LLAMA"}, ["llama-run-1"]),
        ({"kind": "labelled", "min_ranks": "3"}, ["llama-run-1"]),
        ({"kind": "batch"}, [j.title for j in every if not j.label]),
        ({"until": "2000-01-01"}, []),
        ({"since": "junk", "q": "gpt"}, ["gpt-run-2"]),  # junk means no filter
    ):
        page = editor_client.get("/traces/jobs/", query)
        assert [j.title for j in page.context["page"].object_list] == titles, query
        rows = csv_rows(editor_client.get("/traces/jobs/", {**query, "format": "csv"}))
        assert [r["title"] for r in rows] == titles, query
    page = editor_client.get("/traces/jobs/", {"q": "gpt"}).content.decode()
    [link] = re.findall(r'href="([^"]*format=csv[^"]*)"', page)
    assert "q=gpt" in link  # the page's CSV link keeps its filters
