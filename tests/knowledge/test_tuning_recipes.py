"""Recipes proved by runs: "write a recipe" from a sweep cites the sweep and its runs, states
the scope and where the value wins; a later sweep that disagrees marks the recipe for review."""

from __future__ import annotations

from datetime import timedelta

import pytest

from artifacts.runs.demo import FIRST_DAY, MiB, sweep_files
from baselines.models import HardwareProfile
from baselines.sweeps.services import sweep_create
from knowledge.models import Page, PageType, RecipeReview
from tests.baselines.baseline_fixtures import ingest_and_parse

pytestmark = pytest.mark.django_db
TREE_WINS_SMALL = {"": (), "Tree": ((0, MiB, 1.3),)}
TREE_LOSES_SMALL = {"": (), "Tree": ((0, MiB, 0.75),)}


def make_sweep(capture, values, *, day=FIRST_DAY, name="algo"):
    artifacts = []
    for demo in sweep_files(values=values, replicates=3, day=day):
        with capture(execute=True):
            artifacts.append(ingest_and_parse(demo))
    return sweep_create(name=name, artifact_ids=[a.pk for a in artifacts])


@pytest.fixture
def proved(eager_tasks, django_capture_on_commit_callbacks, editor_client):
    sweep = make_sweep(django_capture_on_commit_callbacks, TREE_WINS_SMALL)
    HardwareProfile.objects.filter(slug="h200-roce-2x8").update(
        gpu_model="H200", gpu_generation="Hopper", nic_model="ConnectX-7", fabric="roce_v2"
    )
    panel = editor_client.get(sweep.get_absolute_url()).content.decode()
    assert 'id="write-recipe"' in panel and "Tree (wins" in panel
    response = editor_client.post(f"/kb/sweeps/{sweep.pk}/recipe/", {"value": "Tree"})
    page = Page.objects.get(type=PageType.TUNING_RECIPE)
    assert response.status_code == 302 and response.url == page.get_absolute_url()
    return sweep, page


def test_write_a_recipe_from_a_sweep(proved, editor_client) -> None:
    sweep, page = proved
    [setting] = page.settings
    assert (setting["kind"], setting["name"], setting["value"]) == ("env", "NCCL_ALGO", "Tree")
    assert f"sweep #{sweep.pk}" in setting["note"] and "all_reduce 16r" in setting["note"]
    assert page.applies_to == {
        "gpu": ["Hopper"], "nic": ["ConnectX-7"], "fabric": ["roce"], "nccl": "==2.23.4"
    }  # fmt: skip
    assert "## Where Tree wins" in page.body and "1 MiB" in page.body
    kinds = sorted(page.citations.values_list("kind", flat=True))
    assert kinds.count("run") == 6 and kinds.count("sweep") == 1
    assert page.evidence_count == 6  # the runs are the measurements
    html = editor_client.get(page.get_absolute_url()).content.decode()
    assert f"sweep #{sweep.pk} algo" in html and "runs on h200-roce-2x8" in html
    # the sweep page now names the recipe it proves
    assert page.title in editor_client.get(sweep.get_absolute_url()).content.decode()


def test_writing_again_updates_the_same_recipe(proved, editor_client) -> None:
    sweep, page = proved
    editor_client.post(f"/kb/sweeps/{sweep.pk}/recipe/", {"value": "Tree"})
    assert Page.objects.filter(type=PageType.TUNING_RECIPE).count() == 1
    assert Page.objects.get(pk=page.pk).revision == page.revision  # nothing changed


def test_a_later_sweep_that_disagrees_marks_the_recipe_for_review(
    proved, eager_tasks, django_capture_on_commit_callbacks, viewer_client
) -> None:
    _, page = proved
    later = make_sweep(
        django_capture_on_commit_callbacks, TREE_LOSES_SMALL, day=FIRST_DAY + timedelta(days=9),
        name="algo again",
    )  # fmt: skip
    html = viewer_client.get(later.get_absolute_url()).content.decode()
    assert "marked for review" in html
    [review] = RecipeReview.objects.filter(page=page)
    assert review.sweep_id == later.pk and "NCCL_ALGO=(default) wins" in review.reason
    assert "Needs review" in viewer_client.get(page.get_absolute_url()).content.decode()
    viewer_client.get(later.get_absolute_url())
    assert RecipeReview.objects.count() == 1  # once per sweep


def test_an_agreeing_sweep_raises_no_review(
    proved, eager_tasks, django_capture_on_commit_callbacks, viewer_client
) -> None:
    later = make_sweep(
        django_capture_on_commit_callbacks, TREE_WINS_SMALL, day=FIRST_DAY + timedelta(days=9)
    )
    viewer_client.get(later.get_absolute_url())
    assert not RecipeReview.objects.exists()


def test_viewers_cannot_write_recipes(
    eager_tasks, django_capture_on_commit_callbacks, viewer_client
) -> None:
    sweep = make_sweep(django_capture_on_commit_callbacks, TREE_WINS_SMALL)
    assert 'id="write-recipe"' not in viewer_client.get(sweep.get_absolute_url()).content.decode()
    viewer_client.post(f"/kb/sweeps/{sweep.pk}/recipe/", {"value": "Tree"})
    assert not Page.objects.filter(type=PageType.TUNING_RECIPE).exists()
