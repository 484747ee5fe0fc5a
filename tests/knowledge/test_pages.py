"""Knowledge pages in the browser: list, detail, edit with conflict page, history, downloads."""

import csv
import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.models import Page
from knowledge.services import citation_add, page_update

pytestmark = pytest.mark.django_db

RECIPE_SETTINGS = [
    {"kind": "env", "name": "NCCL_IB_GID_INDEX", "value": "3", "note": "RoCE v2 GID"},
    {"kind": "command", "value": "mlnx_qos -i eth2 --trust dscp", "scope": "host"},
]


def form_data(page, **changes):
    data = {
        "title": page.title, "type": page.type, "topic": page.topic, "status": page.status,
        "owner": "", "tags": ", ".join(page.tags), "body": page.body,
        "gpu": ", ".join(page.applies_to.get("gpu", [])),
        "nic": "", "settings": "", "verify_interval_days": page.verify_interval_days,
        "message": "", "base_revision": page.revision,
    }  # fmt: skip
    data.update(changes)
    return data


@pytest.mark.parametrize(
    "url", ["/kb/", "/kb/new/", "/kb/stale/", "/search/?q=x", "/kb/some-page/"]
)
def test_anonymous_requests_redirect_to_login(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_list_shows_badges_freshness_and_filters(viewer_client, make_page):
    make_page(applies_to={"gpu": ["H100"], "fabric": ["roce"]}, tags=["roce"])
    make_page(title="A100 hugepages", topic="kernel", applies_to={"gpu": ["A100"]})
    page = viewer_client.get("/kb/").content.decode()
    assert "NCCL on H100 over RoCE" in page and "A100 hugepages" in page
    assert "RoCE v2" in page and "stale" in page and "#roce" in page
    filtered = viewer_client.get("/kb/", {"generation": "H100"}).content.decode()
    assert "NCCL on H100 over RoCE" in filtered and "A100 hugepages" not in filtered
    assert "New page" not in page  # viewers see no write controls


def test_list_exports_csv(viewer_client, make_page):
    make_page(applies_to={"gpu": ["H100"]})
    rows = list(
        csv.reader(io.StringIO(viewer_client.get("/kb/", {"format": "csv"}).content.decode()))
    )
    assert rows[0][:3] == ["slug", "title", "type"] and rows[1][0] == "nccl-on-h100-over-roce"
    assert rows[1][9] == "True" and "never verified" in rows[1][10]


def test_list_query_count_does_not_grow_with_pages(viewer_client, make_page):
    def count():
        with CaptureQueriesContext(connection) as ctx:
            assert viewer_client.get("/kb/").status_code == 200
        return len(ctx.captured_queries)

    make_page(applies_to={"nccl": ">=2.19", "driver": ">=550"})
    few = count()
    for n in range(12):
        make_page(
            title=f"Page {n}",
            owner="eddie",
            tags=["t"],
            applies_to={"gpu": ["H100"], "nccl": ">=2.19"},
        )
    assert count() == few
    assert few <= 14


def test_detail_renders_sanitized_body_settings_and_downloads(editor_client, make_page):
    page = make_page(
        body="Use `NCCL_IB_GID_INDEX=3`.\n\n<img src=x onerror=alert(1)>\n",
        settings=RECIPE_SETTINGS,
    )
    html = editor_client.get(f"/kb/{page.slug}/").content.decode()
    assert "<code>NCCL_IB_GID_INDEX=3</code>" in html and "onerror" not in html
    assert "export NCCL_IB_GID_INDEX=3" in html and "mlnx_qos -i eth2 --trust dscp" in html
    assert "evidence: 0 measurements" in html
    env = editor_client.get(f"/kb/{page.slug}/download.env")
    assert env["Content-Disposition"] == f'attachment; filename="{page.slug}.env"'
    assert "NCCL_IB_GID_INDEX=3\n" in env.content.decode()
    script = editor_client.get(f"/kb/{page.slug}/download.sh").content.decode()
    assert script.startswith("#!/usr/bin/env bash") and "mlnx_qos -i eth2 --trust dscp" in script
    markdown = editor_client.get(f"/kb/{page.slug}/download.md").content.decode()
    assert markdown.startswith("---\ntitle: NCCL on H100 over RoCE\n")
    assert editor_client.get(f"/kb/{page.slug}/download.exe").status_code == 404


def test_create_page_in_the_browser(editor_client):
    data = {
        "title": "DCGM diag levels",
        "type": "runbook",
        "topic": "gpu",
        "status": "draft",
        "owner": "eddie",
        "tags": "dcgm",
        "body": "Level 3 takes ~30 minutes.\n",
        "gpu": "H100, H200",
        "nic": "",
        "fabric": ["infiniband"],
        "range_driver": ">=535",
        "settings": "- kind: env\n  name: X\n  value: on\n",  # YAML 1.1 would say True
        "verify_interval_days": 90,
        "message": "first",
    }
    response = editor_client.post("/kb/new/", data)
    page = Page.objects.get()
    assert response.status_code == 302 and response.url == f"/kb/{page.slug}/"
    assert page.applies_to == {"gpu": ["H100", "H200"], "fabric": ["infiniband"], "driver": ">=535"}
    assert page.owner.username == "eddie" and page.settings == [
        {"kind": "env", "name": "X", "value": "on"}
    ]
    assert page.revisions.get().message == "first"


def test_invalid_form_shows_the_problems_and_keeps_the_text(editor_client):
    data = {
        "title": "Bad",
        "type": "runbook",
        "topic": "gpu",
        "status": "draft",
        "body": "keep me\n",
        "range_nccl": ">=2.x",
        "settings": "- kind: env\n  name: bad name\n  value: 1\n",
        "verify_interval_days": 90,
    }
    response = editor_client.post("/kb/new/", data)
    text = response.content.decode()
    assert response.status_code == 200 and Page.objects.count() == 0
    assert "nccl" in text and "bad name" in text and "keep me" in text


def test_edit_saves_a_revision(editor_client, make_page):
    page = make_page()
    response = editor_client.post(
        f"/kb/{page.slug}/edit/", form_data(page, body="Better advice.\n", message="fix")
    )
    assert response.status_code == 302
    page.refresh_from_db()
    assert page.revision == 2 and page.body == "Better advice.\n"


def test_edit_on_a_stale_revision_shows_both_versions_with_409(editor_client, make_page, viewer):
    page = make_page(body="Original text.\n")
    stale_form = form_data(page, body="My careful rewrite.\n")
    page_update(
        page=page, base_revision=1, by=viewer, body="Their quick fix.\n", message="quick fix"
    )
    response = editor_client.post(f"/kb/{page.slug}/edit/", stale_form)
    assert response.status_code == 409
    html = response.content.decode()
    assert "Their quick fix." in html and "My careful rewrite." in html and "quick fix" in html
    assert 'name="base_revision" value="2"' in html  # the retry form is based on theirs now
    page.refresh_from_db()
    assert page.body == "Their quick fix.\n" and page.revision == 2
    retry = editor_client.post(
        f"/kb/{page.slug}/edit/", form_data(page, body="My careful rewrite.\n")
    )
    assert retry.status_code == 302
    page.refresh_from_db()
    assert page.body == "My careful rewrite.\n" and page.revision == 3


def test_viewers_cannot_edit(viewer_client, make_page):
    page = make_page()
    assert viewer_client.get(f"/kb/{page.slug}/edit/").status_code == 302
    viewer_client.post(f"/kb/{page.slug}/edit/", form_data(page, body="vandalism\n"))
    viewer_client.post(
        "/kb/new/", {"title": "x", "type": "runbook", "topic": "gpu", "status": "draft"}
    )
    page.refresh_from_db()
    assert page.revision == 1 and Page.objects.count() == 1
    assert "Edit</a>" not in viewer_client.get(f"/kb/{page.slug}/").content.decode()


def test_history_diff_and_restore(editor_client, make_page, editor):
    page = make_page(body="line one\nline two\n")
    page_update(page=page, base_revision=1, by=editor, body="line one\nline 2\n", title="Renamed")
    history = editor_client.get(f"/kb/{page.slug}/history/").content.decode()
    assert "r2" in history and "r1" in history and "restore" in history
    diff = editor_client.get(f"/kb/{page.slug}/revisions/2/").content.decode()
    assert 'class="kb-diff-del">-line two' in diff and 'class="kb-diff-add">+line 2' in diff
    assert "Renamed" in diff  # field changes
    stale = editor_client.post(f"/kb/{page.slug}/revisions/1/restore/", {"base_revision": 1})
    assert stale.status_code == 302
    page.refresh_from_db()
    assert page.revision == 2  # refused: based on an old revision
    editor_client.post(f"/kb/{page.slug}/revisions/1/restore/", {"base_revision": 2})
    page.refresh_from_db()
    assert (
        page.revision == 3
        and page.body == "line one\nline two\n"
        and page.title == "NCCL on H100 over RoCE"
    )


def test_verify_in_the_browser_makes_the_page_fresh(editor_client, make_page):
    page = make_page(applies_to={"nccl": ">=2.19"})
    assert "never verified" in editor_client.get(f"/kb/{page.slug}/").content.decode()
    editor_client.post(
        f"/kb/{page.slug}/verify/",
        {"note": "2x8 H100 nccl-tests at 390 GB/s", "version_nccl": "2.23.4"},
    )
    page.refresh_from_db()
    assert page.verified_at is not None and page.verified_versions == {"nccl": "2.23.4"}
    html = editor_client.get(f"/kb/{page.slug}/").content.decode()
    assert ">fresh<" in html and "2x8 H100 nccl-tests at 390 GB/s" in html


def test_citing_a_run_shows_evidence_chart_and_backlink_on_the_run_page(
    editor_client, make_page, parsed_run
):
    run = parsed_run()
    page = make_page(applies_to={"gpu": [run.gpu or "H100"]})
    editor_client.post(
        f"/kb/{page.slug}/cite/", {"kind": "run", "object_id": run.pk, "note": "baseline"}
    )
    html = editor_client.get(f"/kb/{page.slug}/").content.decode()
    assert "evidence: 1 measurement" in html and "baseline" in html
    assert 'data-figure="kb-evidence-' in html and "plotly" in html
    run_page = editor_client.get(f"/runs/{run.pk}/").content.decode()
    assert "Cited as evidence by" in run_page and page.title in run_page


def test_run_page_lists_pages_that_apply_to_its_facts(viewer_client, make_page, parsed_run):
    run = parsed_run()
    assert run.gpu, "sample should name its GPU"
    make_page(title="Applies: same GPU", applies_to={"gpu": [run.gpu]})
    make_page(title="Other GPU only", applies_to={"gpu": ["MI300X"]})
    make_page(title="Generic page")
    html = viewer_client.get(f"/runs/{run.pk}/").content.decode()
    assert "Knowledge that applies" in html and "Applies: same GPU" in html
    assert "Other GPU only" not in html and "Generic page" not in html
    assert "Cite this run" not in html  # viewers get no cite form


def test_cite_run_form_on_the_run_page(editor_client, make_page, parsed_run):
    run = parsed_run()
    page = make_page()
    response = editor_client.post(
        f"/kb/cite-run/{run.pk}/", {"page": page.slug, "note": "from run page"}
    )
    assert response.status_code == 302 and response.url == f"/runs/{run.pk}/"
    assert page.citations.get().note == "from run page"


def test_cited_run_survives_a_reparse(editor_client, make_page, parsed_run, editor):
    from artifacts.parsing import artifact_parse

    run = parsed_run()
    page = make_page()
    citation_add(page=page, kind="run", object_id=run.pk, by=editor)
    artifact_parse(artifact_id=run.artifact_id)  # new run rows, new ids
    new_run = run.artifact.runs.get(index=run.index)
    assert new_run.pk != run.pk
    html = editor_client.get(f"/kb/{page.slug}/").content.decode()
    assert f'href="/runs/{new_run.pk}/"' in html and "(gone)" not in html
    assert page.title in editor_client.get(f"/runs/{new_run.pk}/").content.decode()


def test_stale_pages_by_owner(viewer_client, make_page):
    make_page(title="Owned stale", owner="eddie")
    make_page(title="Unowned stale")
    make_page(title="A draft", status="draft")
    html = viewer_client.get("/kb/stale/").content.decode()
    assert (
        "eddie" in html and "Owned stale" in html and "No owner" in html and "Unowned stale" in html
    )
    assert "A draft" not in html
    rows = list(
        csv.reader(io.StringIO(viewer_client.get("/kb/stale/", {"format": "csv"}).content.decode()))
    )
    assert [r[0] for r in rows[1:]] == ["eddie", "(no owner)"]


def test_search_page_with_facets_and_header_box(viewer_client, make_page):
    make_page(
        title="Slow node triage",
        topic="gpu",
        applies_to={"gpu": ["H100"]},
        body="Check Xid 79 first.\n",
    )
    html = viewer_client.get("/search/", {"q": "xid"}).content.decode()
    assert "Slow node triage" in html and "<mark>Xid</mark>" in html
    assert "1 result" in html and "H100" in html
    assert 'action="/search/"' in viewer_client.get("/").content.decode()  # the header search box
    assert "Nothing matches" in viewer_client.get("/search/", {"q": "zzzzqqq"}).content.decode()


def test_preview_is_sanitized(editor_client):
    html = editor_client.post("/kb/preview/", {"body": "**b** <script>x</script>"}).json()["html"]
    assert "<strong>b</strong>" in html and "<script" not in html


def test_a_stale_edit_of_other_lines_is_offered_merged(editor_client, make_page, viewer):
    page = make_page(body="Intro.\n\nPFC on priority 3.\n\nECN on.\n")
    stale_form = form_data(page, body="Intro, rewritten.\n\nPFC on priority 3.\n\nECN on.\n")
    page_update(
        page=page, base_revision=1, by=viewer, message="dcqcn",
        body="Intro.\n\nPFC on priority 3.\n\nECN on, DCQCN defaults.\n",
    )  # fmt: skip
    response = editor_client.post(f"/kb/{page.slug}/edit/", stale_form)
    assert response.status_code == 409 and 'id="kb-merged"' in response.content.decode()
    merged = response.context["form"].data["body"]
    assert merged == "Intro, rewritten.\n\nPFC on priority 3.\n\nECN on, DCQCN defaults.\n"
    page.refresh_from_db()
    assert page.revision == 2  # nothing saved until the user saves the merge


def test_overlapping_stale_edits_are_not_merged(editor_client, make_page, viewer):
    page = make_page(body="One line.\n")
    stale_form = form_data(page, body="My line.\n")
    page_update(page=page, base_revision=1, by=viewer, body="Their line.\n", message="x")
    response = editor_client.post(f"/kb/{page.slug}/edit/", stale_form)
    assert response.status_code == 409 and 'id="kb-merged"' not in response.content.decode()
    assert response.context["form"].data["body"] == "My line.\n"
