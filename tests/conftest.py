"""Shared fixtures. Tests talk to the real database (SQLite file, or PostgreSQL in CI).

Django is imported inside the fixtures, so the pure parser tests also run with
``-p no:django`` (no settings needed).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

# Property tests check behaviour, not speed: on a loaded 2-core CI machine one example can
# pass Hypothesis's default 200 ms deadline, which would fail a correct test.
hypothesis_settings.register_profile("perfhub", deadline=None)
hypothesis_settings.load_profile("perfhub")


@pytest.fixture(autouse=True)
def _isolated_storage(request, tmp_path_factory) -> Path | None:  # type: ignore[no-untyped-def]
    """Each test stores uploads in its own folder, never in the developer's var/media, and
    names static files plainly (whatever a `make run` left collected in var/static)."""
    if not request.config.pluginmanager.hasplugin("django"):
        return None
    settings = request.getfixturevalue("settings")
    media = tmp_path_factory.mktemp("media")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(media)},
        },
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    return media


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Run Celery tasks in-process (unit tests of the pipeline; the worker test uses a real one)."""
    from perfhub.celery import app as celery_app

    celery_app.conf.task_always_eager = True
    celery_app.conf.task_eager_propagates = True
    yield
    celery_app.conf.task_always_eager = False


def _user(username: str, group: str | None) -> Any:
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username=username, password="pw-" + username)
    if group:
        # get_or_create: transactional tests flush the groups the data migration made
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


@pytest.fixture
def editor(db) -> Any:  # type: ignore[no-untyped-def]
    return _user("eddie", "editor")


@pytest.fixture
def viewer(db) -> Any:  # type: ignore[no-untyped-def]
    return _user("vera", "viewer")


@pytest.fixture
def editor_client(client, editor):  # type: ignore[no-untyped-def]
    client.force_login(editor)
    return client


@pytest.fixture
def viewer_client(client, viewer):  # type: ignore[no-untyped-def]
    client.force_login(viewer)
    return client


@pytest.fixture
def editor_api(editor) -> Any:  # type: ignore[no-untyped-def]
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(editor)
    return api


@pytest.fixture
def viewer_api(viewer) -> Any:  # type: ignore[no-untyped-def]
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(viewer)
    return api


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture
def browser_page() -> Iterator[Any]:
    """A Playwright page in Debian's chromium; skips with a clear message where there is none.

    Tests that write to the database should do so before asking for this fixture: Playwright
    runs in greenlets, and ORM calls from there open a second connection.
    """
    if not os.path.exists(CHROMIUM):
        pytest.skip("no chromium at /usr/bin/chromium (apt-get install chromium); CI installs it")
    playwright_api = pytest.importorskip("playwright.sync_api")
    # Playwright's sync API runs an event loop; Django must allow ORM calls from this thread.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page()
        page.set_default_timeout(30_000)
        yield page
        browser.close()
