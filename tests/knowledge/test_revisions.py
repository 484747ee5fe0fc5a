"""Revisions: every content change is numbered, with author and message; no lost updates."""

import pytest

from knowledge.models import Page
from knowledge.services import PageError, RevisionConflict, page_create, page_restore, page_update

pytestmark = pytest.mark.django_db


def test_create_makes_revision_one_and_a_slug(make_page, editor):
    page = make_page(tags="NCCL, roce , nccl", applies_to={"gpu": "h100"})
    assert page.revision == 1 and page.slug == "nccl-on-h100-over-roce"
    assert page.tags == ["nccl", "roce"] and page.applies_to == {"gpu": ["H100"]}
    first = page.revisions.get()
    assert first.number == 1 and first.author == editor and first.message == "Created"
    assert make_page().slug == "nccl-on-h100-over-roce-2"


def test_update_makes_a_new_revision_with_author_and_message(make_page, editor):
    page = make_page()
    saved = page_update(
        page=page, base_revision=1, by=editor, body="New text.\n", message="tighten"
    )
    assert saved.revision == 2
    latest = saved.revisions.order_by("-number").first()
    assert (latest.number, latest.body, latest.message, latest.author) == (
        2,
        "New text.\n",
        "tighten",
        editor,
    )
    assert saved.revisions.get(number=1).body.startswith("Set **NCCL_IB_GID_INDEX**")


def test_saving_the_same_content_makes_no_revision(make_page, editor):
    page = make_page()
    same = page_update(page=page, base_revision=1, by=editor, body=page.body, title=page.title)
    assert same.revision == 1 and page.revisions.count() == 1


def test_a_stale_base_revision_is_refused_and_nothing_is_lost(make_page, editor, viewer):
    page = make_page()
    page_update(page=page, base_revision=1, by=editor, body="Alice's text.\n")
    with pytest.raises(RevisionConflict) as excinfo:
        page_update(page=page, base_revision=1, by=viewer, body="Bob's text.\n")
    assert excinfo.value.page.revision == 2 and "revision 2" in str(excinfo.value)
    page.refresh_from_db()
    assert page.body == "Alice's text.\n" and page.revision == 2
    # Bob re-bases on revision 2: his save now goes through
    assert page_update(page=page, base_revision=2, by=viewer, body="Bob's text.\n").revision == 3


def test_restore_is_a_new_revision_with_the_old_content(make_page, editor):
    page = make_page(applies_to={"gpu": ["H100"]})
    page_update(
        page=page, base_revision=1, by=editor, body="Wrong advice.\n", applies_to={"gpu": ["A100"]}
    )
    restored = page_restore(page=page, number=1, base_revision=2, by=editor)
    assert restored.revision == 3 and restored.applies_to == {"gpu": ["H100"]}
    assert restored.body.startswith("Set **NCCL_IB_GID_INDEX**")
    assert restored.gpu_index == "|H100|Hopper|"
    third = restored.revisions.get(number=3)
    assert third.restored_from == 1 and "Restored revision 1" in third.message
    with pytest.raises(RevisionConflict):
        page_restore(page=page, number=1, base_revision=2, by=editor)


def test_invalid_content_lists_every_problem(editor, db):
    with pytest.raises(PageError) as excinfo:
        page_create(
            by=editor,
            title="",
            type="essay",
            topic="nccl",
            applies_to={"nccl": ">=2.x"},
            settings=[{"kind": "env", "name": "bad name", "value": "1"}],
        )
    assert set(excinfo.value.errors) == {"title", "type", "applies_to", "settings"}
    assert Page.objects.count() == 0


def test_reserved_and_duplicate_slugs_are_refused(make_page, editor):
    make_page(slug="roce-setup")
    with pytest.raises(PageError, match="already exists"):
        make_page(slug="roce-setup")
    with pytest.raises(PageError, match="reserved"):
        make_page(slug="stale")
    assert make_page(title="New").slug == "new-2"
