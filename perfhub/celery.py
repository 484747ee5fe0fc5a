"""Celery wiring: configuration comes from Django settings (CELERY_* names)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")

app = Celery("perfhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Families inside the artifacts app keep their own tasks modules (artifacts.fabric.tasks).


def _families() -> list[str]:
    from django.conf import settings

    return settings.PERFHUB_FAMILIES


app.autodiscover_tasks(_families)
