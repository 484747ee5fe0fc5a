"""Static files as production serves them (and `make run`): hashed names cached for a year,
brotli and gzip copies chosen per request, no inline uploads among them."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.template import Context, Template

pytestmark = pytest.mark.django_db


@pytest.fixture
def collected(settings, tmp_path):  # type: ignore[no-untyped-def]
    """A small asset collected into a fresh STATIC_ROOT by the production storage."""
    source = tmp_path / "assets"
    (source / "vendor").mkdir(parents=True)
    (source / "vendor" / "chart.js").write_text("/* a chart library */\n" + "var x = 1;\n" * 4000)
    settings.STATICFILES_DIRS = [source]
    settings.STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder"]
    settings.STATIC_ROOT = tmp_path / "root"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    call_command("collectstatic", "--noinput", stdout=io.StringIO())
    return settings.STATIC_ROOT


def test_collected_files_get_hashed_names_and_compressed_copies(collected):
    names = sorted(p.name for p in (collected / "vendor").iterdir())
    hashed = [n for n in names if n.startswith("chart.") and n.endswith(".js") and n != "chart.js"]
    assert len(hashed) == 1
    assert {f"{hashed[0]}.br", f"{hashed[0]}.gz"} <= set(names)
    url = Template("{% load static %}{% static 'vendor/chart.js' %}").render(Context())
    assert url == f"/static/vendor/{hashed[0]}"


def test_hashed_files_are_cached_for_a_year_and_sent_compressed(collected, client):
    url = Template("{% load static %}{% static 'vendor/chart.js' %}").render(Context())
    response = client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "br"
    cache = response["Cache-Control"]
    assert "immutable" in cache and "max-age=315360000" in cache
    plain = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert plain["Content-Encoding"] == "gzip"
