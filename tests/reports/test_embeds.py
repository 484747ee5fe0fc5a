"""Embedding reports in post-mortems and KB pages: pinned to the version, escaped."""

from __future__ import annotations

import pytest

from reports.embeds import ReportEmbedError, pin_report, render_pinned, render_report_embed
from reports.services import report_create, report_rebuild

pytestmark = pytest.mark.django_db


def test_a_chart_embed_is_pinned_to_its_report_version(pair_report):
    pin = pin_report({"id": str(pair_report.pk), "chart": "curves-alltoall"})
    assert pin.pinned == {
        "report_id": pair_report.pk,
        "version": 1,
        "lineage": str(pair_report.lineage),
        "title": "G1 vs G8",
    }
    report_rebuild(report=pair_report)
    html = str(render_pinned(pin, interactive=True, dom_id="e1"))
    assert 'data-figure="e1-data"' in html and f"/reports/{pair_report.pk}/" in html
    assert f"report #{pair_report.pk} v1" in html


def test_table_and_whole_report_embeds(pair_report):
    table = str(render_report_embed(pair_report.pk, table="deltas"))
    assert "<table" in table and "+74.01" in table and "change-" not in table.split("<tbody>")[0]
    whole = str(render_report_embed(pair_report.pk))
    assert pair_report.summary[0] in whole and "data-figure" in whole


def test_static_embed_draws_an_inline_svg_for_exports(pair_report):
    html = str(render_report_embed(pair_report.pk, chart="delta-alltoall", interactive=False))
    assert "<svg" in html and "data-figure" not in html and "<a href" not in html


def test_bad_embeds_say_what_exists(pair_report):
    with pytest.raises(ReportEmbedError, match="no report #999"):
        pin_report({"id": "999"})
    with pytest.raises(ReportEmbedError, match=r"has no chart 'nope'.*curves-alltoall"):
        pin_report({"id": str(pair_report.pk), "chart": "nope"})
    with pytest.raises(ReportEmbedError, match="needs id="):
        pin_report({})


def test_titles_are_escaped(pair, editor):
    report = report_create(
        kind="runs", title="<script>alert(1)</script>", artifact_ids=[a.pk for a in pair]
    )
    html = str(render_report_embed(report.pk))
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_report_is_registered_in_the_incidents_embed_registry(pair_report):
    embeds = pytest.importorskip("documents.embeds")
    assert "report" in embeds.EMBED_KINDS
    kind = embeds.EMBED_KINDS["report"]
    pinned = kind.pin({"id": str(pair_report.pk), "table": "verdicts"})
    assert "alltoall" in kind.render(pinned, interactive=False, dom_id="x")
    with pytest.raises(embeds.EmbedError, match="no report #4242"):
        kind.pin({"id": "4242"})
