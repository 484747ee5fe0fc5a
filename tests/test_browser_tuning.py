"""In a real browser: a sweep's page with its chart, "write a recipe", the recipe showing its
proof, and the recipe checked on every host."""

from __future__ import annotations

import io

import pytest

from artifacts.parsing import artifact_parse
from artifacts.runs.demo import MiB, sweep_files
from artifacts.services import artifact_ingest
from baselines.sweeps.services import sweep_create
from knowledge.models import Page, PageType

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sweep_to_recipe_to_hosts(request, live_server, editor, eager_tasks):
    ids = []
    for demo in sweep_files(values={"": (), "Tree": ((0, MiB, 1.3),)}, replicates=2):
        outcome = artifact_ingest(
            stream=io.BytesIO(demo.content), name=demo.name, host=demo.host,
            metadata=demo.metadata, enqueue=False,
        )  # fmt: skip
        artifact_parse(artifact_id=outcome.artifact.pk)  # no transaction: after_parse runs
        ids.append(outcome.artifact.pk)
    sweep = sweep_create(name="NCCL_ALGO browser sweep", artifact_ids=ids)

    page = request.getfixturevalue("browser_page")  # after the writes (see the fixture)
    if True:
        page.goto(f"{live_server.url}/baselines/sweeps/{sweep.pk}/")
        page.fill("input[name=username]", "eddie")
        page.fill("input[name=password]", "pw-eddie")
        page.click("button[type=submit]")
        page.wait_for_selector("#sweep-chart-1[data-rendered=true]")
        assert "Tree" in page.inner_text(".sweep-table")
        page.click("#write-recipe button[type=submit]")
        page.wait_for_selector("#kb-body")
        recipe = Page.objects.get(type=PageType.TUNING_RECIPE)
        assert page.url.endswith(f"/kb/{recipe.slug}/")
        body = page.inner_text("body")
        assert f"sweep #{sweep.pk}" in body and "NCCL_ALGO" in body
        page.click("#kb-recipe-hosts")
        page.wait_for_selector("#fleet-summary")
        assert "hosts conform" in page.inner_text("#fleet-summary")
        assert page.locator("#recipe-hosts tbody tr[data-host]").count() >= 1


def test_upload_files_as_a_sweep_in_the_browser(
    request, live_server, editor, eager_tasks, tmp_path
):
    paths = []
    for demo in sweep_files(values={"": (), "Ring": ((256 * MiB, 1 << 40, 1.08),)}, replicates=2):
        path = tmp_path / demo.name
        path.write_bytes(demo.content)
        paths.append(str(path))
    page = request.getfixturevalue("browser_page")
    page.goto(f"{live_server.url}/artifacts/")
    page.fill("input[name=username]", "eddie")
    page.fill("input[name=password]", "pw-eddie")
    page.click("button[type=submit]")
    page.wait_for_selector("#upload-sweep")
    page.fill("#upload-sweep", "browser folder sweep")
    page.set_input_files("#upload-input", paths)
    page.wait_for_selector("#upload-sweep-link")
    page.click("#upload-sweep-link")
    page.wait_for_selector(".sweep-table")
    assert "browser folder sweep" in page.inner_text("h1")
    from baselines.models import Sweep

    assert Sweep.objects.get(name="browser folder sweep").artifacts.count() == 4
