"""Page aliases, and the findings rules' knowledge topics resolving to real starter pages."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from knowledge.importexport import export_page, page_import, parse_page
from knowledge.models import Page, PageAlias, PageStatus
from knowledge.services import PageError, page_create, page_set_aliases

pytestmark = pytest.mark.django_db


@pytest.fixture
def starter_pages(db):  # type: ignore[no-untyped-def]
    call_command("load_kb", stdout=io.StringIO())


def test_every_findings_rule_links_to_a_published_starter_page(starter_pages, editor_client):
    from artifacts.fabric.rules import RULES

    topics = {rule.kb for rule in RULES if rule.kb}
    assert topics, "the rules name knowledge topics"
    for topic in sorted(topics):
        url = reverse("kb-page", args=[topic])
        response = editor_client.get(url)
        if response.status_code == 302:  # an alias: one redirect to the page itself
            response = editor_client.get(response["Location"])
        assert response.status_code == 200, f"rule topic {topic!r}: {url} does not resolve"
        page = response.context["page"]
        assert page.status == PageStatus.PUBLISHED, topic


def test_a_finding_links_through_to_its_page(starter_pages, editor_client):
    from artifacts.models import Finding

    finding = Finding(kb_slug="gpu-throttling")
    response = editor_client.get(finding.kb_url)
    assert response.status_code == 302 and response["Location"] == "/kb/gpu-clock-throttling/"
    assert "clock event reasons" in editor_client.get(response["Location"]).content.decode()


def test_an_unknown_slug_is_still_a_404(editor_client, db):
    assert editor_client.get("/kb/no-such-topic/").status_code == 404


def test_aliases_are_validated(make_page, editor):
    first = make_page(title="First")
    second = make_page(title="Second")
    assert page_set_aliases(page=first, aliases="old-first, Old-First ,roce-topic")
    assert sorted(first.aliases.values_list("slug", flat=True)) == ["old-first", "roce-topic"]
    assert not page_set_aliases(page=first, aliases=["roce-topic", "old-first"])  # no change
    for bad, reason in [
        (["first"], "slug of another page"),
        (["roce-topic"], "already an alias of 'First'"),
        (["Not A Slug!"], "lower-case letters"),
        (["stale"], "reserved"),
    ]:
        with pytest.raises(PageError, match=reason):
            page_set_aliases(page=second, aliases=bad)
    with pytest.raises(PageError, match="is an alias of 'First'"):
        page_create(by=editor, title="x", type="runbook", topic="gpu", slug="roce-topic")
    assert not page_set_aliases(page=second, aliases=["second"])  # its own slug: nothing to do
    page_set_aliases(page=first, aliases=[])
    assert not PageAlias.objects.exists()


def test_aliases_round_trip_through_front_matter(make_page, editor):
    page = make_page(title="Renamed page")
    page_set_aliases(page=page, aliases=["old-name", "a-topic"])
    text = export_page(page)
    assert "aliases:\n- a-topic\n- old-name\n" in text
    assert parse_page(text).aliases == ["a-topic", "old-name"]
    Page.objects.all().delete()
    assert page_import(text, by=editor).action == "created"
    again = Page.objects.get()
    assert export_page(again) == text
    # an import that only changes the aliases updates them, without a new revision
    changed = text.replace("- old-name\n", "- older-name\n")
    outcome = page_import(changed, by=editor)
    assert outcome.action == "updated" and again.revisions.count() == 1
    assert sorted(again.aliases.values_list("slug", flat=True)) == ["a-topic", "older-name"]


def test_the_editor_sets_aliases_and_the_page_shows_them(make_page, editor_client):
    page = make_page(title="Edited aliases")
    from knowledge.forms import PageForm

    data = {k: v for k, v in PageForm.initial_for(page).items() if v is not None}
    data.update(aliases="legacy-name", fabric=[])
    response = editor_client.post(f"/kb/{page.slug}/edit/", data)
    assert response.status_code == 302
    assert editor_client.get("/kb/legacy-name/")["Location"] == page.get_absolute_url()
    html = editor_client.get(page.get_absolute_url()).content.decode()
    assert "/kb/legacy-name/" in html
    # a clash is a form error, and nothing is saved
    other = make_page(title="Other")
    data.update(aliases=other.slug)
    response = editor_client.post(f"/kb/{page.slug}/edit/", data)
    assert response.status_code == 200 and "slug of another page" in response.content.decode()
    assert list(page.aliases.values_list("slug", flat=True)) == ["legacy-name"]


def test_the_api_shows_aliases(make_page, viewer_api):
    page = make_page(title="Has aliases")
    page_set_aliases(page=page, aliases=["b-alias", "a-alias"])
    body = viewer_api.get(f"/api/v1/pages/{page.slug}/").json()
    assert body["aliases"] == ["a-alias", "b-alias"]
