"""Charts inside page bodies: post-mortem shortcodes, pinned per page on save."""

from __future__ import annotations

import pytest

from knowledge.models import PageEmbed
from knowledge.services import PageError, page_update

pytestmark = pytest.mark.django_db


def test_a_chart_shortcode_is_pinned_on_save_and_drawn_from_the_pin(make_page, parsed_run,
                                                                    editor_client):  # fmt: skip
    run = parsed_run()
    page = make_page(body=f"Proof:\n\n{{{{chart run={run.pk}}}}}\n")
    embed = PageEmbed.objects.get(page=page)
    assert page.body == f"Proof:\n\n{{{{chart run={run.pk} pin={embed.pk}}}}}\n"
    assert page.revisions.get().body == page.body  # the revision keeps the pinned text
    assert embed.kind == "chart" and embed.pinned["run_id"] == run.pk
    assert embed.snapshot["rows"] and embed.pinned["artifact_sha256"] == run.artifact.sha256
    html = editor_client.get(page.get_absolute_url()).content.decode()
    assert 'class="embed embed-chart"' in html and 'data-figure="embed-0-data"' in html
    assert "vendor/plotly.min.js" in html  # the page loads plotly for the embed
    # the run goes away: the page still shows what was pinned
    run.delete()
    html = editor_client.get(page.get_absolute_url()).content.decode()
    assert 'class="embed embed-chart"' in html and "not found" not in html


def test_saving_the_pinned_text_again_pins_nothing_new(make_page, parsed_run, editor):
    run = parsed_run()
    page = make_page(body=f"{{{{chart run={run.pk}}}}}\n")
    again = page_update(page=page, base_revision=page.revision, by=editor, body=page.body)
    assert again.revision == page.revision and PageEmbed.objects.count() == 1


def test_a_shortcode_that_cannot_be_pinned_is_refused_with_a_message(make_page):
    with pytest.raises(PageError) as caught:
        make_page(body="{{chart run=999999}}\n")
    assert "no run #999999" in str(caught.value.errors["body"])
    with pytest.raises(PageError, match="unknown embed"):
        make_page(title="other", body="{{nonsense id=1}}\n")


def test_a_page_cannot_show_another_pages_pin(make_page, parsed_run, editor_client):
    run = parsed_run()
    first = make_page(body=f"{{{{chart run={run.pk}}}}}\n")
    pin = PageEmbed.objects.get(page=first).pk
    second = make_page(title="Borrower", body=f"{{{{chart run={run.pk} pin={pin}}}}}\n")
    html = editor_client.get(second.get_absolute_url()).content.decode()
    assert f"embed pin={pin} not found" in html


def test_shortcodes_in_code_stay_text_and_are_not_indexed(make_page):
    from knowledge.search import search

    page = make_page(body="Write `{{chart run=1}}` to embed a run.\n")
    assert not PageEmbed.objects.filter(page=page).exists()
    assert search("embed").total == 1


def test_the_api_html_and_the_preview_draw_embeds(make_page, parsed_run, editor_api,
                                                  editor_client):  # fmt: skip
    run = parsed_run()
    page = make_page(body=f"{{{{chart run={run.pk}}}}}\n")
    detail = editor_api.get(f"/api/v1/pages/{page.slug}/").json()
    assert 'class="embed embed-chart"' in detail["html"]
    preview = editor_client.post(
        "/kb/preview/", {"body": f"{{{{chart run={run.pk}}}}}<script>x</script>"}
    ).json()["html"]
    assert 'class="embed embed-chart"' in preview and "pinned on save" in preview
    assert "<script>x" not in preview
