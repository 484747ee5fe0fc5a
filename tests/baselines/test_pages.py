"""Baselines pages: login, what they show, editor-only writes, exports, bounded queries."""

import csv
import io
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from artifacts.models import BenchmarkRun
from artifacts.runs.demo import demo_files
from baselines.models import (
    Alert,
    AlertSummary,
    Baseline,
    HardwareProfile,
    HostProfileMapping,
    Series,
    Subscription,
)
from baselines.services import artifact_evaluate
from tests.baselines.baseline_fixtures import ingest_and_parse, load_demo

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024
PAGES = [
    "/baselines/", "/baselines/profiles/", "/baselines/stacks/", "/baselines/series/",
    "/baselines/baselines/", "/baselines/alerts/", "/baselines/summaries/", "/baselines/matrix/",
    "/baselines/subscriptions/",
]  # fmt: skip


@pytest.fixture
def h200(eager_tasks, django_capture_on_commit_callbacks):
    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"])
    return HardwareProfile.objects.get(slug="h200-roce-2x8")


def first_new_run():
    return BenchmarkRun.objects.filter(nccl_version="2.23.4").order_by("measured_at").first()


@pytest.mark.parametrize("url", PAGES)
def test_anonymous_requests_go_to_login(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response.url.startswith("/login/")


@pytest.mark.parametrize("url", PAGES)
def test_pages_render_empty_and_the_nav_links_here(viewer_client, url):
    page = viewer_client.get(url)
    assert page.status_code == 200
    assert 'href="/baselines/"' in page.content.decode()


def test_home_and_summary_page_show_the_regression_and_what_changed(editor_client, h200):
    home = editor_client.get("/baselines/").content.decode()
    summary = AlertSummary.objects.get()
    assert summary.title in home
    page = editor_client.get(summary.get_absolute_url()).content.decode()
    assert "What changed" in page and "2.21.5" in page and "<b>2.23.4</b>" in page
    assert page.count('class="status status-failed">regression') == summary.regressions
    exported = editor_client.get(summary.get_absolute_url(), {"format": "json"}).json()
    assert len(exported["alerts"]) == summary.regressions


def test_run_page_shows_the_comparison_panel_and_promote_form(editor_client, h200):
    run = first_new_run()
    page = editor_client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="baseline-panel"' in page and "Comparison with baseline" in page
    assert "regressed" in page and "h200-roce-2x8" in page
    assert 'id="baseline-delta-chart"' in page  # the Δ% chart with its band
    assert "What changed since the reference" in page and "CUDA" in page
    assert 'id="promote-form"' in page


def test_viewers_see_no_promote_form_and_cannot_promote(viewer_client, h200):
    run = first_new_run()
    assert 'id="promote-form"' not in viewer_client.get(f"/runs/{run.pk}/").content.decode()
    viewer_client.post(f"/baselines/runs/{run.pk}/promote/", {"tolerance_pct": 3})
    assert not Baseline.objects.exists()


def test_promoting_a_run_pins_it_with_the_runs_before_it_on_its_stack(editor_client, h200):
    last_old = BenchmarkRun.objects.filter(nccl_version="2.21.5").order_by("measured_at").last()
    response = editor_client.post(
        f"/baselines/runs/{last_old.pk}/promote/",
        {"tolerance_pct": 2.5, "include_recent": "on", "name": ""},
    )
    baseline = Baseline.objects.get()
    assert response.status_code == 302 and response.url == baseline.get_absolute_url()
    assert baseline.runs.count() == 3 and baseline.tolerance_pct == 2.5
    assert set(baseline.runs.values_list("nccl_version", flat=True)) == {"2.21.5"}
    assert baseline.name.startswith("h200-roce-2x8 all_reduce 16r NCCL 2.21.5")
    # the next run is compared with it
    later = next(
        f
        for f in demo_files(days=7)
        if f.metadata["profile"] == "h200-roce-2x8" and f.metadata["day"] == "2025-11-09"
        and f.metadata["collective"] == "all_reduce"
    )  # fmt: skip
    artifact = ingest_and_parse(later)
    artifact_evaluate(artifact_id=artifact.pk)
    page = editor_client.get(f"/runs/{artifact.runs.get().pk}/").content.decode()
    assert f'pinned baseline <a href="{baseline.get_absolute_url()}">' in page
    detail = editor_client.get(baseline.get_absolute_url()).content.decode()
    assert "2.21.5" in detail and "remove" in detail


def test_full_comparison_page_and_its_exports(editor_client, h200):
    run = first_new_run()
    url = f"/baselines/runs/{run.pk}/comparison/"
    page = editor_client.get(url).content.decode()
    assert "Verdict" in page and "regressed" in page and "1 GiB" in page
    rows = list(
        csv.DictReader(io.StringIO(editor_client.get(url, {"format": "csv"}).content.decode()))
    )
    # sizes whose busbw prints as 0.00 (8-64 B) have nothing to compare
    assert len(rows) == 27 and rows[0]["size_bytes"] == "128"
    assert rows[-1]["change"] == "regressed" and rows[0]["change"] == "unchanged"
    assert editor_client.get(url, {"format": "json"}).json()["verdict"] == "regressed"


def test_series_chart_over_time_and_version_order_with_exports(editor_client, h200):
    series = Series.objects.get(profile=h200, size_bytes=1024 * MiB)
    for order in ("time", "version"):
        page = editor_client.get(series.get_absolute_url(), {"order": order}).content.decode()
        assert 'id="series-chart"' in page
        figure = json.loads(
            json.loads(
                page.split('id="series-figure" type="application/json">')[1].split("</script>")[0]
            )
        )
        names = [t["name"] for t in figure["data"]]
        assert any(n.startswith("NCCL 2.21.5") for n in names)
        assert any(n.startswith("NCCL 2.23.4") for n in names)
        assert "regression alert" in names  # the alert is marked
        labels = [a["text"] for a in figure["layout"]["annotations"]]
        assert any("NCCL 2.21.5 → 2.23.4" in text for text in labels)  # the stack change
    rows = list(
        csv.DictReader(
            io.StringIO(
                editor_client.get(series.get_absolute_url(), {"format": "csv"}).content.decode()
            )
        )
    )
    assert [r["nccl"] for r in rows] == ["2.21.5"] * 3 + ["2.23.4"] * 3


def test_series_list_filters_and_exports(editor_client, h200):
    page = editor_client.get("/baselines/series/", {"size_bytes": 1024 * MiB}).content.decode()
    assert "1 in all" in page
    export = editor_client.get("/baselines/series/", {"format": "csv", "profile": h200.slug})
    assert len(list(csv.reader(io.StringIO(export.content.decode())))) == 32  # header + 31 sizes


def test_alert_list_defaults_to_open_alerts_and_triage_updates_them(editor_client, editor, h200):
    alert = Alert.objects.order_by("magnitude_pct").first()
    page = editor_client.get("/baselines/alerts/").content.decode()
    assert alert.get_absolute_url() in page
    response = editor_client.post(
        alert.get_absolute_url(),
        {"status": "wontfix", "assignee": editor.pk, "notes": "expected: tuner change",
         "link_url": "https://tickets.example/NV-1", "link_label": "NV-1"},
    )  # fmt: skip
    assert response.status_code == 302
    alert.refresh_from_db()
    assert (alert.status, alert.assignee, alert.link_label) == ("wontfix", editor, "NV-1")
    assert alert.get_absolute_url() not in editor_client.get("/baselines/alerts/").content.decode()
    everything = editor_client.get("/baselines/alerts/", {"status": ""}).content.decode()
    assert alert.get_absolute_url() in everything
    detail = editor_client.get(alert.get_absolute_url()).content.decode()
    assert "NV-1" in detail and "What changed" in detail
    export = editor_client.get("/baselines/alerts/", {"format": "csv", "status": ""})
    assert len(list(csv.reader(io.StringIO(export.content.decode())))) == Alert.objects.count() + 1


def test_viewers_cannot_triage(viewer_client, h200):
    alert = Alert.objects.first()
    viewer_client.post(alert.get_absolute_url(), {"status": "invalid"})
    alert.refresh_from_db()
    assert alert.status == "untriaged"


def test_summary_status_applies_to_all_its_alerts(editor_client, h200):
    summary = AlertSummary.objects.get()
    editor_client.post(summary.get_absolute_url(), {"status": "acknowledged"})
    assert set(summary.alerts.values_list("status", flat=True)) == {"acknowledged"}
    summary.refresh_from_db()
    assert summary.open_alerts == summary.regressions


def test_version_matrix_colours_the_regressed_bucket_and_links_to_the_comparison(
    editor_client, h200
):
    page = editor_client.get("/baselines/matrix/", {"profile": h200.slug}).content.decode()
    assert "2.21.5" in page and "2.23.4" in page and "≥ 256 MiB" in page
    assert "rgba(153, 27, 27" in page  # a red cell
    assert 'data-click-links="true"' in page and "baselines_matrix.js" in page
    link = page.split("/baselines/matrix/compare/?")[1].split('"')[0].replace("&amp;", "&")
    compare = editor_client.get("/baselines/matrix/compare/?" + link)
    assert compare.status_code == 200
    export = editor_client.get("/baselines/matrix/", {"profile": h200.slug, "format": "csv"})
    rows = list(csv.DictReader(io.StringIO(export.content.decode())))
    big = [r for r in rows if r["version"] == "2.23.4" and r["bucket"] == "≥ 256 MiB"]
    assert len(big) == 1 and float(big[0]["delta_pct"]) < -6


def test_version_matrix_opens_on_the_profile_with_most_data(editor_client, h200):
    # an automatic profile of a single upload, first by name, with no series at all
    HardwareProfile.objects.create(slug="aaa-auto", name="aaa auto")
    page = editor_client.get("/baselines/matrix/").content.decode()
    assert f'<option value="{h200.slug}" selected>' in page
    assert "2.23.4" in page  # the h200 matrix, not an empty one


def test_version_matrix_figure_is_embedded_once_with_the_cells_links(editor_client, h200):
    page = editor_client.get("/baselines/matrix/", {"profile": h200.slug}).content.decode()
    start = '<script id="matrix-figure" type="application/json">'
    figure = json.loads(page.split(start)[1].split("</script>")[0])  # an object, not a string
    (heatmap,) = figure["data"]
    table = page.split('id="version-matrix"')[1].split("</table>")[0]
    rows = table.split("<tbody>")[1].split("</tr>")[:-1]
    assert heatmap["y"] == [row.split("<th>")[1].split("</th>")[0] for row in rows]
    for row, links, deltas in zip(rows, heatmap["customdata"], heatmap["z"], strict=True):
        cells = row.split("</th>")[1].split("</td>")[:-1]
        assert len(cells) == len(links) == len(deltas) == len(heatmap["x"])
        for cell, link, delta in zip(cells, links, deltas, strict=True):
            if delta is None:
                assert link == "" and "·" in cell
            else:
                assert f'href="{link.replace("&", "&amp;")}"' in cell
    (big,) = [
        i
        for i, label in enumerate(heatmap["x"])
        if label.startswith("all_reduce") and label.endswith("≥ 256 MiB")
    ]
    assert heatmap["z"][heatmap["y"].index("2.23.4")][big] < -6


def test_figure_script_keeps_the_script_element_closed():
    from baselines.templatetags.baselines_tags import figure_script

    text = json.dumps({"layout": {"title": {"text": "</script><b>a & b</b>"}}})
    html = str(figure_script(text, "f"))
    assert html.count("</script>") == 1 and html.endswith("</script>")
    inner = html.split('type="application/json">')[1].removesuffix("</script>")
    assert json.loads(inner) == json.loads(text)


def test_version_compare_page_for_the_regressed_cell(editor_client, h200):
    page = editor_client.get(
        "/baselines/matrix/compare/",
        {"profile": h200.slug, "component": "nccl", "version": "2.23.4",
         "collective": "all_reduce", "nranks": 16, "low": 256 * MiB},
    ).content.decode()  # fmt: skip
    assert "regressed" in page and "first version (2.21.5)" in page and "What changed" in page


def test_host_mappings_are_editable_on_the_profile_page(editor_client, viewer, h200):
    from django.test import Client

    viewer_client = Client()  # editor_client and viewer_client share pytest's one client
    viewer_client.force_login(viewer)
    url = f"/baselines/profiles/{h200.slug}/hosts/"
    viewer_client.post(url, {"pattern": "h200-r07n*", "priority": 0})
    assert not HostProfileMapping.objects.exists()
    editor_client.post(url, {"pattern": "h200-r07n*", "priority": 0})
    mapping = HostProfileMapping.objects.get()
    assert mapping.profile == h200
    assert "h200-r07n*" in editor_client.get(h200.get_absolute_url()).content.decode()
    editor_client.post(f"/baselines/hosts/{mapping.pk}/delete/")
    assert not HostProfileMapping.objects.exists()


def test_profiles_are_editable_by_editors(editor_client, h200):
    response = editor_client.post(
        f"/baselines/profiles/{h200.slug}/edit/",
        {"slug": h200.slug, "name": "H200 RoCE rack 7", "gpu_model": "H200",
         "gpu_generation": "Hopper", "gpus_per_node": 8, "fabric": "roce_v2",
         "nic_model": "ConnectX-7", "nic_speed_gbps": 400},
    )  # fmt: skip
    assert response.status_code == 302
    h200.refresh_from_db()
    assert (h200.fabric, h200.nic_speed_gbps, h200.auto_created) == ("roce_v2", 400, False)


def test_subscriptions_page_creates_and_validates(editor_client, h200):
    editor_client.post(
        "/baselines/subscriptions/",
        {"name": "perf", "channel": "email", "target": "not-an-address", "active": "on"},
    )
    assert not Subscription.objects.exists()
    editor_client.post(
        "/baselines/subscriptions/",
        {"name": "perf", "channel": "webhook", "target": "http://127.0.0.1:9/hook",
         "profile": h200.pk, "active": "on", "digest": "on"},
    )  # fmt: skip
    subscription = Subscription.objects.get()
    assert subscription.digest and subscription.profile == h200


LIST_PAGES = [
    "/baselines/", "/baselines/profiles/", "/baselines/stacks/", "/baselines/series/",
    "/baselines/baselines/", "/baselines/alerts/?status=", "/baselines/summaries/",
    "/baselines/subscriptions/",
]  # fmt: skip


def test_list_pages_use_a_bounded_number_of_queries(
    editor_client, editor, eager_tasks, django_capture_on_commit_callbacks
):
    """One test for all list pages: the data is loaded once, each page measured twice."""
    from baselines.services import baseline_create

    load_demo(django_capture_on_commit_callbacks, profiles=["h200-roce-2x8"])
    runs = list(BenchmarkRun.objects.filter(nccl_version="2.21.5", errors=[]))
    baseline_create(name="first", runs=runs[:1])
    Subscription.objects.create(name="a", target="a@example.com")
    few = {}
    for url in LIST_PAGES:
        editor_client.get(url)  # warm caches (session, content types)
        with CaptureQueriesContext(connection) as queries:
            editor_client.get(url)
        few[url] = len(queries)
    # More of everything: profiles, series, runs, baselines, subscriptions, alerts with
    # assignees in another summary.
    load_demo(django_capture_on_commit_callbacks, profiles=["h100-nvs-1x8"], collectives=None)
    for run in runs[1:]:
        baseline_create(name=f"b{run.pk}", runs=[run])
    Subscription.objects.create(name="b", target="b@example.com")
    template = Alert.objects.first()
    other = AlertSummary.objects.create(key="k2", profile=template.summary.profile, title="t2")
    for index, series in enumerate(Series.objects.filter(collective="alltoall")[:5]):
        Alert.objects.create(
            fingerprint=f"extra{index}", summary=other, series=series, run=template.run,
            kind="improvement", source="history", magnitude_pct=4.0, assignee=editor,
            measured_at=template.measured_at,
        )  # fmt: skip
    assert Alert.objects.count() > 10 and Series.objects.count() > 150
    for url in LIST_PAGES:
        with CaptureQueriesContext(connection) as more:
            editor_client.get(url)
        assert len(more) == few[url] <= 15, (url, [q["sql"][:120] for q in more.captured_queries])


def test_the_open_alerts_index_covers_exactly_the_open_statuses():
    """The alert list's default query is served by a partial index only while its predicate
    matches the filter the list applies (a status added to OPEN_STATUSES must reach both)."""
    index = next(i for i in Alert._meta.indexes if i.name == "alert_open_newest")
    ((lookup, statuses),) = index.condition.children
    assert lookup == "status__in" and tuple(statuses) == Alert.OPEN_STATUSES
    assert index.fields == list(Alert._meta.ordering)  # the list's order: no sort needed
