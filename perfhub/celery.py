"""Celery wiring: configuration comes from Django settings (CELERY_* names)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")
# Celery's Django fixup runs the system checks when a worker starts: they import every view,
# URL pattern and template library (~1.8 s of a 3 s start) and check nothing a worker uses.
# The web process, `manage.py check` and `migrate` run them. CELERY_SKIP_CHECKS= (empty)
# runs them here too.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("perfhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Families inside the artifacts app keep their own tasks modules (artifacts.fabric.tasks).


def _families() -> list[str]:
    from django.conf import settings

    return settings.PERFHUB_FAMILIES


app.autodiscover_tasks(_families)
